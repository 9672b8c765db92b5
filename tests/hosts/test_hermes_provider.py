"""The Hermes memory provider driven the way Hermes' MemoryManager drives it, on a real project and store.

Hermes itself is not needed here (the provider is duck-typed against its ABC); ``test_hermes_real.py``
runs the real Hermes. These pin the mapping: what each Hermes call does to memory.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hindsight_hooks.hosts import hermes as hermes_mod
from hindsight_hooks.hosts.hermes import HindsightHooksProvider, active_provider, register, retain_view
from hindsight_hooks.hosts.hermes_plugin import NOT_ACTIVE, on_post_llm_call, register_session_surface

from ..plugin.hostkit import LOCAL_CONFIG, Project, isolated, job_text  # noqa: F401  (isolated is a fixture)

BLOCK = "<hindsight-memory>\nRelevant memory:\n1. we use Redis\n</hindsight-memory>"


@pytest.fixture
def project(tmp_path: Path, isolated: Path) -> Project:  # noqa: F811
    return Project(tmp_path / "repo", LOCAL_CONFIG)


def _turn(user: str, answer: str = "Noted.") -> list[dict[str, Any]]:
    return [{"role": "user", "content": user}, {"role": "assistant", "content": answer}]


def _opened(project: Project, session_id: str = "h-1") -> HindsightHooksProvider:
    provider = HindsightHooksProvider(cwd=project.root)
    provider.initialize(session_id, hermes_home=str(project.root / "hh"), platform="cli", agent_context="primary")
    return provider


def test_a_retained_turn_comes_back_as_the_block_text_of_the_next_prefetch(project: Project) -> None:
    provider = _opened(project)
    try:
        assert provider.name == "hindsight_hooks" and provider.is_available()
        assert provider.session_id == "h-1" and active_provider("h-1") is provider
        provider.sync_turn("", "", messages=[{"role": "system", "content": "sys"}, *_turn("We picked Redis 7.")])
        # the turn is in the conversation Hermes sends with this prompt: not repeated (ADR 183)
        assert "Redis 7" not in provider.prefetch("Which Redis version did we pick?")
        assert provider.prefetch("   ") == ""
    finally:
        provider.shutdown()
    assert active_provider("h-1") is None
    later = _opened(project, "h-2")  # the next session does not have it in view: memory brings it
    try:
        text = later.prefetch("Which Redis version did we pick?")
        assert text.startswith("<hindsight-memory>") and "Redis 7" in text
    finally:
        later.shutdown()
    assert any("Redis 7" in content for _, content in project.units())
    assert not any(content == "sys" for _, content in project.units())


def test_the_end_of_turn_hook_only_queues_and_sync_turn_delivers(project: Project) -> None:
    provider = _opened(project)
    try:
        history = _turn("The staging host is kestrel.")
        on_post_llm_call(session_id="h-1", conversation_history=history)
        jobs = project.queue_jobs()
        assert len(jobs) == 1 and "kestrel" in job_text(jobs[0])  # on disk, not delivered
        assert not any("kestrel" in c for _, c in project.units())
        provider.sync_turn("The staging host is kestrel.", "Noted.", messages=history)  # nothing new: no 2nd job
        assert len(project.queue_jobs()) == 1, "nothing new for the cursor: no second job (delivery waits)"
        provider.sync_turn("x", "y", messages=[*history, *_turn("And the build host is osprey.")])
        assert project.queue_jobs() == [], "sync_turn delivered everything queued for the bank"
        texts = [c for _, c in project.units()]
        assert sum("kestrel" in t for t in texts) == 1, "queued once by the hook, never twice"
        assert any("osprey" in t for t in texts)
    finally:
        provider.shutdown()


def test_sync_turn_without_messages_retains_the_pair(project: Project) -> None:
    provider = _opened(project)
    try:
        provider.sync_turn("Our CI runs on Buildkite.", "Noted.")
    finally:
        provider.shutdown()
    assert any("Buildkite" in c for _, c in project.units())


def test_tools_before_and_after_initialize_and_a_call(project: Project) -> None:
    provider = HindsightHooksProvider(cwd=project.root)
    before = {s["name"] for s in provider.get_tool_schemas()}  # Hermes indexes names before initialize
    assert {"hindsight_recall", "hindsight_retain", "hindsight_reflect"} <= before
    assert json.loads(provider.handle_tool_call("hindsight_recall", {"query": "x"}))["error"]
    provider.initialize("h-2", hermes_home="x", platform="cli")
    try:
        schemas = provider.get_tool_schemas()
        recall = next(s for s in schemas if s["name"] == "hindsight_recall")
        assert recall["parameters"]["type"] == "object" and "$defs" not in json.dumps(recall["parameters"])
        assert "hindsight_retain_global" not in {s["name"] for s in schemas}  # no user bank configured
        stored = json.loads(
            provider.handle_tool_call("hindsight_retain", {"items": [{"content": "Deploys on Fridays."}]})
        )
        assert "result" in stored, stored
        found = json.loads(provider.handle_tool_call("hindsight_recall", {"query": "deploys Fridays"}))
        assert "Fridays" in found["result"]
        bad = json.loads(provider.handle_tool_call("hindsight_recall", {}))
        assert "query" in bad["error"]
        assert provider.command("/hindsight:mode read-only").startswith("mode=read-only")
    finally:
        provider.shutdown()


def test_subagents_read_but_never_retain(project: Project) -> None:
    provider = HindsightHooksProvider(cwd=project.root)
    provider.initialize("h-sub", hermes_home="x", platform="cli", agent_context="subagent")
    try:
        provider.sync_turn("", "", messages=_turn("A subagent's scratch note: ignore."))
    finally:
        provider.shutdown()
    assert not any("scratch" in c for _, c in project.units())


def test_session_switch_keeps_compression_and_opens_new_for_reset(project: Project) -> None:
    provider = _opened(project, "h-a")
    try:
        first_host = provider.host
        provider.on_session_switch("h-a-cont", parent_session_id="h-a", reset=False, reason="compression")
        assert provider.host is first_host and provider.session_id == "h-a"
        assert hermes_mod._active.get("h-a-cont") is provider  # the continuation's hooks find this session
        provider.on_session_switch("h-a", rewound=True)
        assert provider.host is first_host
        provider.on_session_switch("h-b", reset=True)
        assert provider.host is not first_host and provider.session_id == "h-b"
        assert active_provider("h-b") is provider
        assert {k for k, v in hermes_mod._active.items() if v is provider} == {"h-b"}
    finally:
        provider.shutdown()


def test_pre_compress_and_session_end_retain_and_add_nothing_to_the_summary(project: Project) -> None:
    provider = _opened(project)
    try:
        assert provider.on_pre_compress(_turn("Old turn: the queue is Kafka.")) == ""
        provider.on_session_end([*_turn("Old turn: the queue is Kafka."), *_turn("Last: logs go to Loki.")])
    finally:
        provider.shutdown()
    texts = [c for _, c in project.units()]
    assert any("Kafka" in t for t in texts) and any("Loki" in t for t in texts)


def test_a_broken_config_never_raises_into_hermes(project: Project) -> None:
    (project.state / "config.toml").write_text("backend = [unclosed\n", encoding="utf-8")
    provider = _opened(project)
    try:
        assert provider.prefetch("anything") == ""
        provider.sync_turn("a", "b", messages=_turn("a"))
        provider.persist_turn(_turn("a"))
        assert provider.get_tool_schemas() == []
        assert "error" in json.loads(provider.handle_tool_call("hindsight_recall", {"query": "q"}))
        assert provider.on_pre_compress(_turn("a")) == ""
    finally:
        provider.shutdown()
    provider.shutdown()  # twice is fine


def test_constructing_is_free_and_set_up_needs_nothing(project: Project) -> None:
    provider = HindsightHooksProvider(cwd=project.root)
    assert provider.host is None and provider.get_config_schema() == [] and provider.backup_paths() == []
    assert provider.system_prompt_block() == "" and provider.prefetch("q") == ""
    provider.shutdown()
    assert not (project.state / "retain-queue.jsonl").exists()


def test_retain_view_drops_instructions_and_our_block() -> None:
    view = retain_view(
        [
            {"role": "system", "content": "rules"},
            {"role": "user", "content": "Question", "api_content": "Question\n\n<memory-context>\n" + BLOCK},
            {"role": "assistant", "content": "Answer " + BLOCK},
        ]
    )
    assert view == [
        {"role": "user", "content": "Question"},
        {"role": "assistant", "content": [{"type": "text", "text": "Answer "}]},
    ]


class _OldContext:
    """Hermes 0.19.0's memory-provider context: it can register the provider and nothing else useful."""

    def __init__(self) -> None:
        self.provider: Any = None
        self.hooks: list[str] = []

    def register_memory_provider(self, provider: Any) -> None:
        self.provider = provider

    def register_hook(self, *args: Any, **kwargs: Any) -> None:
        self.hooks.append(args[0])


class _FullContext(_OldContext):
    """A newer Hermes (or a general plugin's) context: commands and hooks too."""

    def __init__(self) -> None:
        super().__init__()
        self.commands: dict[str, Any] = {}

    def register_command(self, name: str, handler: Any, description: str = "", args_hint: str = "") -> None:
        self.commands[name] = (handler, description, args_hint)


def test_register_on_old_and_new_hermes_contexts(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project.root)
    old = _OldContext()
    register(old)
    assert isinstance(old.provider, HindsightHooksProvider) and old.hooks == []
    new = _FullContext()
    register(new)
    assert isinstance(new.provider, HindsightHooksProvider)
    assert new.hooks == ["post_llm_call"]
    assert {"hindsight", "hindsight:mode", "hindsight:queue"} <= set(new.commands)
    handler, description, hint = new.commands["hindsight:mode"]
    assert description and "read-only" in hint
    assert handler("read-only") == NOT_ACTIVE  # no session open in this process
    provider = _opened(project, "h-cmd")
    try:
        assert "read-only" in handler("read-only")
        assert "read-only" in new.commands["hindsight:session"][0]("")
    finally:
        provider.shutdown()
    plugin_ctx = _FullContext()
    register_session_surface(plugin_ctx)
    assert set(plugin_ctx.commands) == set(new.commands)
    assert hermes_mod.PROVIDER_NAME == "hindsight_hooks"
