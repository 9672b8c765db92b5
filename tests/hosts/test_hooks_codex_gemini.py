"""``hindsight-hooks hook codex|gemini <event>`` as real child processes: fail-open, bounded, and
retaining exactly the new part of a real transcript file in each host's shape.

Every call is the command line the installer writes; what it did is read from the real files
(the SQLite store, the queue, the hook state) and from a real loopback server that accepts
connections and never answers.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hindsight_hooks.hosts.gemini_transcript import COMMAND_MARKER

from ..plugin.hostkit import LOCAL_CONFIG, HangingServer, Project, wait_until
from .codex_lines import CodexRollout
from .gemini_lines import GeminiSession
from .hookproc import HookRunner

LIMIT_MS = 2500
GENEROUS_S = 20.0
"""A bound on a whole hook process on a loaded machine: far above the limit, far below a hang."""
BLOCK = (
    "<hindsight-memory>\nRelevant prior memory.\n1. user: We decided to use Postgres 16 for the cache\n"
    "</hindsight-memory>"
)


@dataclass(frozen=True)
class Kit:
    """One host's event names and transcript writer."""

    host: str
    start: str
    prompt: str
    retain: str
    compact: str
    end: str
    reply_field: str

    def session(self, tmp_path: Path, project: Project, name: str = "s1") -> CodexRollout | GeminiSession:
        if self.host == "codex":
            return CodexRollout(tmp_path / "home" / ".codex" / "sessions" / f"rollout-{name}.jsonl", project.root, name)
        return GeminiSession(
            tmp_path / "home" / ".gemini" / "tmp" / "repo" / "chats" / f"{name}.jsonl", project.root, name
        )

    def events(self) -> list[str]:
        return [self.start, self.prompt, self.retain, self.compact, self.end]


CODEX = Kit("codex", "SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd", "last_assistant_message")
GEMINI = Kit("gemini", "SessionStart", "BeforeAgent", "AfterAgent", "PreCompress", "SessionEnd", "prompt_response")


@pytest.fixture(params=[CODEX, GEMINI], ids=["codex", "gemini"])
def kit(request: pytest.FixtureRequest) -> Kit:
    value = request.param
    assert isinstance(value, Kit)
    return value


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path / "repo", LOCAL_CONFIG)


@pytest.fixture
def runner(tmp_path: Path) -> Iterator[HookRunner]:
    home = tmp_path / "home"
    home.mkdir()
    r = HookRunner(home, helper=False, env={"HINDSIGHT_HOOK_DEADLINE_MS": str(LIMIT_MS)})
    yield r
    r.close()


def _drained(project: Project) -> bool:
    return project.queue_path.exists() and project.queue_jobs() == []


def _count(project: Project, text: str) -> int:
    """``project.unit_count``, or 0 while a worker is still creating the store's tables."""
    try:
        return project.unit_count(text)
    except sqlite3.OperationalError:
        return 0


def _turn(kit: Kit, s: CodexRollout | GeminiSession, prompt: str, reply: str, block: str | None = None) -> None:
    if isinstance(s, CodexRollout):
        s.exchange(prompt, reply, block=block)
    else:
        s.exchange(prompt, reply, context=block)


def _retain(kit: Kit, runner: HookRunner, s: CodexRollout | GeminiSession, reply: str) -> dict[str, Any]:
    result = runner.run(kit.retain, s.event(kit.retain, **{kit.reply_field: reply}), host=kit.host)
    assert result.returncode == 0
    return result.answer


# --------------------------------------------------------------------------- fail-open


def test_stdin_that_is_not_json_gets_an_empty_answer_and_one_notice(
    tmp_path: Path, runner: HookRunner, kit: Kit
) -> None:
    cwd = tmp_path / "somewhere"
    cwd.mkdir()
    first = runner.run(kit.prompt, b"this is not json {", cwd=cwd, host=kit.host)
    assert first.returncode == 0
    assert first.context == ""
    assert "not a JSON object" in first.notice
    again = runner.run(kit.prompt, b"[1, 2, 3]", cwd=cwd, host=kit.host)
    assert again.returncode == 0 and again.answer == {}  # told once, not on every prompt


def test_a_hanging_server_costs_one_bounded_wait_then_recall_cools_down(
    tmp_path: Path, runner: HookRunner, kit: Kit
) -> None:
    server = HangingServer()
    try:
        project = Project(tmp_path / "repo", {"backend": "hindsight", "notifications": {"startup": False}})
        runner.env["HINDSIGHT_BASE_URL"] = server.url
        s = kit.session(tmp_path, project)
        _turn(kit, s, "which cache did we pick?", "Let me check.")
        first = runner.run(kit.prompt, s.event(kit.prompt, prompt="which cache did we pick?"), host=kit.host)
        assert first.returncode == 0
        assert first.context == ""
        assert "limit" in first.notice
        assert first.elapsed_s < GENEROUS_S
        assert server.accepted > 0  # it really waited on the server
        accepted = server.accepted
        second = runner.run(kit.prompt, s.event(kit.prompt, prompt="and the queue?"), host=kit.host)
        assert second.returncode == 0 and second.answer == {}  # no memory, no second notice
        assert server.accepted == accepted  # the cooldown skipped the server
    finally:
        server.close()


def test_corrupt_state_files_never_break_a_hook(tmp_path: Path, runner: HookRunner, project: Project, kit: Kit) -> None:
    s = kit.session(tmp_path, project)
    _turn(kit, s, "We decided to use Postgres 16 for the cache", "Noted.")
    state = project.state
    (state / "retain-cursors.json").write_bytes(b"{not json")
    (state / "retain-queue.jsonl").write_bytes(b'{"half a job"\n\x00\xff garbage\n')
    (state / "hosts").mkdir(exist_ok=True)
    for name in (f"{kit.host}-0000000000000000.json", "worker.lock", "gemini-current.json"):
        (state / "hosts" / name).write_bytes(b"\xff\xfe not json")
    (state / "session-meta").mkdir(exist_ok=True)
    (state / "session-meta" / "x.json").write_text("[", encoding="utf-8")
    s.write_raw('{"broken": ')  # a half-written transcript line too
    for event in kit.events():
        extra = {"prompt": "what cache?", kit.reply_field: "Noted."}
        result = runner.run(event, s.event(event, **extra), host=kit.host)
        assert result.returncode == 0, event
        assert isinstance(result.answer, dict), event
        assert result.elapsed_s < GENEROUS_S, event


def test_a_transcript_path_that_does_not_exist_is_no_memory_not_an_error(
    tmp_path: Path, runner: HookRunner, project: Project, kit: Kit
) -> None:
    payload = {"session_id": "gone", "transcript_path": str(tmp_path / "nope.jsonl"), "cwd": str(project.root)}
    for event in kit.events():
        result = runner.run(event, {**payload, "hook_event_name": event, "prompt": "hello"}, host=kit.host)
        assert result.returncode == 0, event
        assert "hook failed" not in result.notice, event  # the adapter raised nothing


# --------------------------------------------------------------------------- retain and recall


def test_each_new_message_is_retained_once_and_never_our_block(
    tmp_path: Path, runner: HookRunner, project: Project, kit: Kit
) -> None:
    s = kit.session(tmp_path, project)
    _turn(kit, s, "We decided to use Postgres 16 for the cache", "Noted: Postgres 16 for the cache.")
    assert _retain(kit, runner, s, "Noted: Postgres 16 for the cache.") == {}
    assert wait_until(lambda: _count(project, "Postgres 16") == 2 and _drained(project), 60)

    _turn(kit, s, "Which queue do we use?", "Redis streams, as before.", block=BLOCK)
    _retain(kit, runner, s, "Redis streams, as before.")
    assert wait_until(lambda: _count(project, "Redis streams") == 1 and _drained(project), 60)
    assert project.unit_count("Postgres 16") == 2  # the first turn was not retained again
    assert project.unit_count("hindsight-memory") == 0
    assert project.unit_count("Relevant prior memory") == 0

    _retain(kit, runner, s, "Redis streams, as before.")  # nothing new
    assert runner.run(kit.end, s.event(kit.end, reason="exit"), host=kit.host).returncode == 0
    assert wait_until(lambda: _drained(project), 60)
    assert project.unit_count("Redis streams") == 1


def test_session_two_is_given_what_session_one_decided(tmp_path: Path, project: Project, kit: Kit) -> None:
    home = tmp_path / "home"
    home.mkdir()
    runner = HookRunner(home, helper=True, env={"HINDSIGHT_HOOK_DEADLINE_MS": "8000"})
    try:
        one = kit.session(tmp_path, project, "first")
        runner.run(kit.start, one.event(kit.start, source="startup"), host=kit.host)
        assert runner.wait_for_helper(), "the helper did not start"
        _turn(kit, one, "We decided to use Postgres 16 for the cache", "Noted.")
        _retain(kit, runner, one, "Noted.")
        runner.run(kit.end, one.event(kit.end, reason="exit"), host=kit.host)
        assert wait_until(lambda: _count(project, "Postgres 16") == 1 and _drained(project), 60)

        two = kit.session(tmp_path, project, "second")
        question = "Which database do we use for the cache?"
        result = runner.run(kit.prompt, two.event(kit.prompt, prompt=question), host=kit.host)
        assert result.returncode == 0
        assert result.context.startswith("<hindsight-memory>")
        assert "Postgres 16" in result.context
        assert result.answer["hookSpecificOutput"]["hookEventName"] == kit.prompt
    finally:
        runner.close()


def test_gemini_after_a_compression_only_the_new_turn_is_retained(
    tmp_path: Path, runner: HookRunner, project: Project
) -> None:
    s = GEMINI.session(tmp_path, project)
    assert isinstance(s, GeminiSession)
    s.exchange("alpha decision: use tabs", "ok alpha")
    kept_user = s.user("beta decision: use spaces")
    kept_reply = s.reply("ok beta")
    _retain(GEMINI, runner, s, "ok beta")
    assert wait_until(lambda: _count(project, "decision") == 2 and _drained(project), 60)
    assert runner.run("PreCompress", s.event("PreCompress", trigger="auto"), host="gemini").returncode == 0
    s.compress("<state_snapshot>\nSummary: alpha tabs, beta spaces\n</state_snapshot>", [kept_user, kept_reply])
    s.exchange("gamma decision: use both", "ok gamma")
    _retain(GEMINI, runner, s, "ok gamma")
    assert wait_until(lambda: _count(project, "gamma") == 2 and _drained(project), 60)
    assert project.unit_count("alpha") == 2 and _count(project, "beta") == 2
    assert project.unit_count("Summary") == 0 and _count(project, "additional context") == 0


def test_gemini_our_command_gets_no_recall_and_every_prompt_marks_the_current_session(
    tmp_path: Path, runner: HookRunner, project: Project
) -> None:
    s = GEMINI.session(tmp_path, project, "typed-here")
    s.exchange("We decided to use Postgres 16 for the cache", "Noted.")
    _retain(GEMINI, runner, s, "Noted.")
    assert wait_until(lambda: _count(project, "Postgres 16") >= 1 and _drained(project), 60)
    expansion = f"{COMMAND_MARKER}\nmode: read-only (Postgres 16 cache)\n\nShow the user the output above."
    result = runner.run("BeforeAgent", s.event("BeforeAgent", prompt=expansion), host="gemini")
    assert result.returncode == 0 and result.answer == {}
    current = json.loads((project.state / "hosts" / "gemini-current.json").read_text(encoding="utf-8"))
    assert current == {"session_id": "typed-here"}
