"""``hindsight-hooks hook claude-code <event>`` as real child processes: fail-open, bounded, and
retaining exactly the new part of a real session file, with and without the warm helper.

Every call is the command line the installer writes; what it did is read from the real files
(the SQLite store, the queue, the hook state) and from a real loopback server that accepts
connections and never answers.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..plugin.hostkit import LOCAL_CONFIG, HangingServer, Project, closed_port_url, wait_until
from .claude_lines import ClaudeSession
from .hookproc import HookRunner

LIMIT_MS = 2500
"""The hook's own deadline in these tests (HINDSIGHT_HOOK_DEADLINE_MS)."""
GENEROUS_S = 20.0
"""A bound on a whole hook process on a loaded machine: far above the limit, far below a hang."""


@pytest.fixture(params=["in-process", "helper"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path / "repo", LOCAL_CONFIG)


@pytest.fixture
def runner(tmp_path: Path, mode: str) -> Iterator[HookRunner]:
    home = tmp_path / "home"
    home.mkdir()
    r = HookRunner(home, helper=mode == "helper", env={"HINDSIGHT_HOOK_DEADLINE_MS": str(LIMIT_MS)})
    yield r
    r.close()


def _session(tmp_path: Path, project: Project) -> ClaudeSession:
    return ClaudeSession(tmp_path / "home" / ".claude" / "projects" / "repo" / "s1.jsonl", project.root)


def _warm(runner: HookRunner, session: ClaudeSession) -> None:
    """In helper mode, the first call only starts the helper: make sure it serves the next ones."""
    if runner.helper:
        runner.run("SessionStart", session.event("SessionStart", source="startup"))
        assert runner.wait_for_helper(), "the helper did not start"


def _queue_drained(project: Project) -> bool:
    return project.queue_path.exists() and project.queue_jobs() == []


# --------------------------------------------------------------------------- fail-open


def test_stdin_that_is_not_json_gets_an_empty_answer_and_one_notice(tmp_path: Path, runner: HookRunner) -> None:
    cwd = tmp_path / "somewhere"
    cwd.mkdir()
    first = runner.run("UserPromptSubmit", b"this is not json {", cwd=cwd)
    assert first.returncode == 0
    assert first.context == ""
    assert "not a JSON object" in first.notice
    again = runner.run("UserPromptSubmit", b"[1, 2, 3]", cwd=cwd)
    assert again.returncode == 0 and again.answer == {}  # told once, not on every prompt


def test_a_hanging_server_costs_one_bounded_wait_then_recall_cools_down(
    tmp_path: Path, runner: HookRunner, mode: str
) -> None:
    server = HangingServer()
    try:
        project = Project(tmp_path / "repo", {"backend": "hindsight", "notifications": {"startup": False}})
        runner.env["HINDSIGHT_BASE_URL"] = server.url
        s = _session(tmp_path, project)
        s.turn("which cache did we pick?", "Let me check.")
        _warm(runner, s)
        accepted = server.accepted
        first = runner.run("UserPromptSubmit", s.event("UserPromptSubmit", prompt="which cache did we pick?"))
        assert first.returncode == 0
        assert first.context == ""
        assert "limit" in first.notice
        assert first.elapsed_s < GENEROUS_S
        assert server.accepted > accepted  # it really waited on the server
        accepted = server.accepted
        second = runner.run("UserPromptSubmit", s.event("UserPromptSubmit", prompt="and the queue?"))
        assert second.returncode == 0 and second.answer == {}  # no memory, no second notice
        assert server.accepted == accepted  # the cooldown skipped the server
    finally:
        server.close()


def test_a_refused_server_answers_at_once_with_empty_context(tmp_path: Path, runner: HookRunner) -> None:
    project = Project(tmp_path / "repo", {"backend": "hindsight", "notifications": {"startup": False}})
    runner.env["HINDSIGHT_BASE_URL"] = closed_port_url()
    s = _session(tmp_path, project)
    s.turn("hello", "hi")
    result = runner.run("UserPromptSubmit", s.event("UserPromptSubmit", prompt="what did we decide?"))
    assert result.returncode == 0
    assert result.context == ""
    assert result.elapsed_s < GENEROUS_S


@pytest.mark.parametrize("event", ["UserPromptSubmit", "Stop", "SessionEnd", "PreCompact", "SessionStart"])
def test_corrupt_state_files_never_break_a_hook(
    tmp_path: Path, runner: HookRunner, project: Project, event: str
) -> None:
    s = _session(tmp_path, project)
    s.turn("We decided to use Postgres 16 for the cache", "Noted.")
    state = project.state
    (state / "retain-cursors.json").write_bytes(b"{not json")
    (state / "retain-queue.jsonl").write_bytes(b'{"half a job"\n\x00\xff garbage\n')
    (state / "hosts").mkdir(exist_ok=True)
    for name in ("claude-code-0000000000000000.json", "worker.lock"):
        (state / "hosts" / name).write_bytes(b"\xff\xfe not json")
    (state / "session-meta").mkdir(exist_ok=True)
    (state / "session-meta" / "x.json").write_text("[", encoding="utf-8")
    result = runner.run(event, s.event(event, prompt="what cache?", last_assistant_message="Noted."))
    assert result.returncode == 0
    assert isinstance(result.answer, dict)
    assert result.elapsed_s < GENEROUS_S


def test_a_broken_project_config_is_reported_once_and_memory_stays_off(
    tmp_path: Path, runner: HookRunner, project: Project
) -> None:
    (project.state / "config.toml").write_text("backend = [unclosed\n", encoding="utf-8")
    s = _session(tmp_path, project)
    s.turn("hello", "hi")
    first = runner.run("UserPromptSubmit", s.event("UserPromptSubmit", prompt="hello again"))
    assert first.returncode == 0 and first.context == ""
    second = runner.run("UserPromptSubmit", s.event("UserPromptSubmit", prompt="and again"))
    assert second.returncode == 0 and second.context == ""
    assert "systemMessage" not in second.answer


def test_unknown_hosts_and_events_still_answer_json(tmp_path: Path, runner: HookRunner, project: Project) -> None:
    s = _session(tmp_path, project)
    assert runner.run("Notification", s.event("Notification")).answer == {}
    unknown = runner.run("Stop", s.event("Stop"), host="no-such-agent")
    assert unknown.returncode == 0 and unknown.answer == {}


# --------------------------------------------------------------------------- retain and recall


def test_stop_retains_each_new_message_once_and_never_our_block(
    tmp_path: Path, runner: HookRunner, project: Project
) -> None:
    s = _session(tmp_path, project)
    _warm(runner, s)
    s.turn("We decided to use Postgres 16 for the cache", "Noted: Postgres 16 for the cache.")
    first = runner.run("Stop", s.event("Stop", last_assistant_message="Noted: Postgres 16 for the cache."))
    assert first.returncode == 0 and first.answer == {}
    assert wait_until(lambda: project.unit_count("Postgres 16") == 2 and _queue_drained(project), 60)

    block = (
        "<hindsight-memory>\nRelevant prior memory.\n1. user: We decided to use Postgres 16 for the cache\n"
        "</hindsight-memory>"
    )
    s.turn("Which queue do we use?", "Redis streams, as before.", block=block)
    again = runner.run("Stop", s.event("Stop", last_assistant_message="Redis streams, as before."))
    assert again.returncode == 0
    assert wait_until(lambda: project.unit_count("Redis streams") == 1 and _queue_drained(project), 60)
    assert project.unit_count("Postgres 16") == 2  # the first turn was not retained again
    assert project.unit_count("hindsight-memory") == 0
    assert project.unit_count("Relevant prior memory") == 0

    runner.run("Stop", s.event("Stop", last_assistant_message="Redis streams, as before."))  # nothing new
    runner.run("SessionEnd", s.event("SessionEnd", reason="exit"))
    assert wait_until(lambda: _queue_drained(project), 60)
    assert project.unit_count("Redis streams") == 1


def test_after_compaction_only_the_new_turn_is_retained(tmp_path: Path, runner: HookRunner, project: Project) -> None:
    s = _session(tmp_path, project)
    s.turn("alpha decision: use tabs", "ok alpha")
    assert runner.run("Stop", s.event("Stop", last_assistant_message="ok alpha")).returncode == 0
    assert wait_until(lambda: project.unit_count("alpha") == 2 and _queue_drained(project), 60)
    assert runner.run("PreCompact", s.event("PreCompact", trigger="manual")).returncode == 0
    s.compact("Summary: alpha decision about tabs")
    s.turn("beta decision: use spaces", "ok beta")
    assert runner.run("Stop", s.event("Stop", last_assistant_message="ok beta")).returncode == 0
    assert wait_until(lambda: project.unit_count("beta") == 2 and _queue_drained(project), 60)
    assert project.unit_count("alpha") == 2
    assert project.unit_count("Summary") == 0


def test_after_compaction_the_turns_it_replaced_come_back_in_the_block(
    tmp_path: Path, runner: HookRunner, project: Project
) -> None:
    """The transcript file keeps the turns before a compaction, but the model is no longer sent them:
    recall brings them back, and leaves out only what follows the compaction (ADR 183)."""
    s = _session(tmp_path, project)
    s.turn("alpha decision: the cache uses tabs qq1", "ok alpha qq2")
    assert runner.run("Stop", s.event("Stop", last_assistant_message="ok alpha qq2")).returncode == 0
    assert wait_until(lambda: project.unit_count("qq1") == 1 and _queue_drained(project), 60)
    s.user("what did we decide for the cache?")
    before = runner.run("UserPromptSubmit", s.event("UserPromptSubmit", prompt="what did we decide for the cache?"))
    assert "qq1" not in before.context  # still in the conversation the model is sent
    s.say("You decided tabs.")
    s.compact("Summary: a decision about the cache")
    s.user("remind me: what did we decide for the cache?")
    after = runner.run(
        "UserPromptSubmit", s.event("UserPromptSubmit", prompt="remind me: what did we decide for the cache?")
    )
    assert after.returncode == 0 and "qq1" in after.context


def test_session_two_is_given_what_session_one_decided(tmp_path: Path, runner: HookRunner, project: Project) -> None:
    one = _session(tmp_path, project)
    _warm(runner, one)
    one.turn("We decided to use Postgres 16 for the cache", "Noted.")
    runner.run("Stop", one.event("Stop", last_assistant_message="Noted."))
    runner.run("SessionEnd", one.event("SessionEnd", reason="exit"))
    assert wait_until(lambda: project.unit_count("Postgres 16") == 1 and _queue_drained(project), 60)

    two = ClaudeSession(one.path.with_name("s2.jsonl"), project.root, session_id="second-session")
    two.user("Which database do we use for the cache?")
    result = runner.run(
        "UserPromptSubmit", two.event("UserPromptSubmit", prompt="Which database do we use for the cache?")
    )
    assert result.returncode == 0
    assert result.context.startswith("<hindsight-memory>")
    assert "Postgres 16" in result.context
    assert result.answer["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"


def test_state_files_are_private(tmp_path: Path, runner: HookRunner, project: Project) -> None:
    s = _session(tmp_path, project)
    runner.run("UserPromptSubmit", b"nope", cwd=project.root)
    runner.run("Stop", s.event("Stop"))
    files = [p for p in (project.state / "hosts").iterdir() if p.suffix == ".json"]
    assert files
    for path in files:
        assert os.stat(path).st_mode & 0o077 == 0, path
    assert json.loads(files[0].read_text(encoding="utf-8"))  # the notice was recorded


def test_a_socket_in_a_folder_others_can_write_is_never_spoken_to(tmp_path: Path, project: Project) -> None:
    import socket
    import threading

    from hindsight_hooks.hosts.hookclient import socket_path

    home = tmp_path / "home"
    home.mkdir()
    runner = HookRunner(home, helper=True)
    try:
        os.chmod(runner.runtime, 0o777)  # as if someone else had made the folder in /tmp
        squatter = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        squatter.bind(socket_path(runner.env))
        squatter.listen(8)
        heard: list[bytes] = []

        def listen() -> None:
            while True:
                try:
                    conn, _ = squatter.accept()
                except OSError:
                    return
                heard.append(conn.recv(65536))
                conn.close()

        threading.Thread(target=listen, daemon=True).start()
        s = _session(tmp_path, project)
        s.turn("the secret launch date is in May", "ok")
        result = runner.run("UserPromptSubmit", s.event("UserPromptSubmit", prompt="when is the launch?"))
        assert result.returncode == 0 and isinstance(result.answer, dict)
        squatter.close()
        assert heard == []
        assert [p.name for p in runner.runtime.iterdir()] == [Path(socket_path(runner.env)).name]  # no helper
    finally:
        runner.close()
