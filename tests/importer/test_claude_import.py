"""Importing Claude Code sessions (issue 10 item 7, ADR-110), on the real embedded store.

Transcripts are real files written line by line in the shapes Claude Code 2.1.197 writes
(``tests/hosts/claude_lines.py``, read off the real program), under a tmp ``$HOME`` in the
folder Claude Code itself uses. The hooks are the real ``hindsight-hooks hook claude-code``
child processes. What is checked is what ends up in the store's units, queue, manifest,
checkpoint and retain cursor: a session reaches memory once, whether the hooks, an import,
or both carried it there.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

from hindsight_hooks.hooks import Host, RecordingUI

from ..chat.conftest import SCRIPT
from ..hosts.claude_lines import ClaudeSession
from ..hosts.hookproc import HookRunner
from ..plugin.hostkit import LOCAL_CONFIG, Project, merged, wait_until
from .host_sessions_kit import BLOCK, cli_env, count_when_ready, delivered, hooks, hooks_sid, import_cmd, repo, texts

__all__ = ["hooks", "repo"]  # fixtures


def claude_folder(home: Path, cwd: Path) -> Path:
    """Where the real Claude Code 2.1.197 put a session run in ``cwd``: every character outside
    [a-zA-Z0-9] of the folder became '-' (seen: /tmp/h13/My.Proj_dir x -> -tmp-h13-My-Proj-dir-x)."""
    return home / ".claude" / "projects" / "".join(c if c.isascii() and c.isalnum() else "-" for c in str(cwd))


def session_in(repo: Project, session_id: str, cwd: Path | None = None) -> ClaudeSession:
    cwd = cwd or repo.root
    return ClaudeSession(claude_folder(repo.root.parent / "home", cwd) / f"{session_id}.jsonl", cwd, session_id)


def three_turns(s: ClaudeSession) -> None:
    s.turn("We decided to use Postgres 16 for the cache", "Noted: Postgres 16 for the cache.")
    s.turn("Which queue do we use?", "Redis streams, as before.", block=BLOCK)
    s.turn("And the deploy target?", "Fly.io in two regions.")


def once_each(repo: Project) -> bool:
    """Each message of :func:`three_turns` is stored once ("Postgres 16" is in a prompt and its reply)."""
    counts = {said: repo.unit_count(said) for said in ("Postgres 16", "Redis streams", "Fly.io", "deploy target")}
    return counts == {"Postgres 16": 2, "Redis streams": 1, "Fly.io": 1, "deploy target": 1}


# -- one session, start to end ----------------------------------------------------------------------


def test_a_claude_code_transcript_imports_into_the_project_bank(repo: Project) -> None:
    s = session_in(repo, "5d1c3a2e-claude-one")
    s.turn("We decided to use Postgres 16 for the cache", "Noted: Postgres 16 for the cache.")
    call = s.tool_call("Bash", {"command": "ls"}, text="Let me look.")
    s.tool_result(call, "permission denied: /srv", is_error=True)
    s.say("The listing failed; Fly.io it is.")
    s.turn("Which queue do we use?", "Redis streams, as before.", block=BLOCK)
    s.side("a subagent's own chatter zz-side")
    abandoned = s.leaf
    s.turn("Rewound prompt yy-abandoned", "Rewound reply yy-abandoned")
    s.leaf = abandoned  # the person rewound: the next prompt continues from before that turn
    s.compact("Summary: xx-summary of everything above")
    s.turn("And the deploy target?", "Fly.io in two regions.")

    result = import_cmd(repo, f"import-file {s.path} --yes")

    assert result.level == "info", result.text
    assert result.data["counts"] == {"completed": 1, "queued": 0, "skipped": 0, "failed": 0}
    stored = "\n".join(texts(repo))
    for said in ("Postgres 16 for the cache", "permission denied", "Redis streams", "Fly.io in two regions"):
        assert said in stored
    for never in ("hindsight-memory", "recalled line", "zz-side", "yy-abandoned", "xx-summary"):
        assert never not in stored
    [(_bank, doc_id, text)] = repo.documents()
    sid = hooks_sid(repo.root, s.session_id)
    assert doc_id.startswith(f"hh-import:{sid}:leaf:")
    body = json.loads(text)
    assert (body["host"], body["host_session_id"], body["session_id"]) == ("claude-code", s.session_id, sid)
    assert body["cwd"] == os.path.realpath(repo.root) and body["session_file"] == str(s.path)
    assert len(body["messages"]) == 9  # 3 turns, the tool call and its failed result, the reply after it
    cursor = json.loads((repo.state / "retain-cursors.json").read_text())["sessions"][sid]
    assert cursor["index"] == 8  # the hooks' cursor of this session now covers all nine


def test_a_session_that_says_no_time_is_not_dated_1970(repo: Project) -> None:
    """ADR 207: with no line time that reads (a hand-made or damaged file), the import used the
    session's start, and with none of that either, epoch 0: every memory said on 1970-01-01, the
    oldest of the store, so a later change of mind ranked below what it changed. Now such a
    message carries no time, and the store dates it when it is stored."""
    s = session_in(repo, "no-time-session")
    s.clock = 5000  # 10:83:20: no such minute
    s.turn("Change of plan: GitHub Pages instead of Netlify", "Moved the docs deploy to GitHub Pages.")

    result = import_cmd(repo, f"import-file {s.path} --yes")

    assert result.level == "info", result.text
    [(_bank, _doc_id, text)] = repo.documents()
    messages = json.loads(text)["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert all("timestamp" not in m for m in messages)
    conn = sqlite3.connect(f"file:{repo.db}?mode=ro", uri=True)
    try:
        said = [str(r[0] or r[1]) for r in conn.execute("SELECT occurred_at, created_at FROM units")]
    finally:
        conn.close()
    assert len(said) == 2 and all(when >= "2026" for when in said), said


def test_dry_run_writes_nothing_and_a_second_import_adds_nothing(repo: Project) -> None:
    s = session_in(repo, "dry-run-session")
    three_turns(s)

    preview = import_cmd(repo, f"import-file {s.path} --dry-run --json")
    assert preview.level == "info", preview.text
    assert [d["would_write"] for d in preview.data["documents"]] == [False]
    assert preview.data["summary"]["messages"] == 6
    for name in ("import-manifest.json", "import-checkpoint.json", "retain-cursors.json", "retain-queue.jsonl"):
        assert not (repo.state / name).exists(), name
    assert texts(repo) == []

    first = import_cmd(repo, f"import-file {s.path}", answers=["Import"])
    assert first.level == "info", first.text
    before = sorted(texts(repo))
    manifest = json.loads((repo.state / "import-manifest.json").read_text())
    assert len(before) == 6 and len(manifest["imports"]) == 1

    again = import_cmd(repo, f"import-file {s.path} --yes")
    assert again.level == "info"
    assert again.text.startswith("nothing to import")
    assert "6 of its 6 message(s) are already taken care of" in again.text
    assert sorted(texts(repo)) == before
    assert repo.queue_jobs() == []
    assert json.loads((repo.state / "import-manifest.json").read_text()) == manifest


# -- the hooks and the importer share one record of what is in memory --------------------------


def test_the_hooks_do_not_retain_again_what_an_import_stored(repo: Project, hooks: HookRunner) -> None:
    s = session_in(repo, "imported-then-resumed")
    three_turns(s)
    assert import_cmd(repo, f"import-file {s.path} --yes").level == "info"
    assert repo.unit_count("Postgres 16") == 2

    # claude --resume: the same session goes on, now with our hooks installed
    s.turn("Also: the cache TTL is 30 minutes", "Noted: TTL 30 minutes.")
    done = hooks.run("Stop", s.event("Stop", last_assistant_message="Noted: TTL 30 minutes."), cwd=repo.root)
    assert done.returncode == 0 and done.answer == {}
    assert wait_until(lambda: delivered(repo, "TTL", 2), 60)
    assert once_each(repo)
    assert len(texts(repo)) == 8


def test_an_import_takes_only_what_the_hooks_have_not_retained(repo: Project, hooks: HookRunner) -> None:
    s = session_in(repo, "live-then-imported")
    s.turn("We decided to use Postgres 16 for the cache", "Noted: Postgres 16 for the cache.")
    stop = s.event("Stop", last_assistant_message="Noted: Postgres 16 for the cache.")
    assert hooks.run("Stop", stop, cwd=repo.root).returncode == 0
    assert wait_until(lambda: delivered(repo, "Postgres 16", 2), 60)
    # the hooks were removed for a while; two more turns were never retained
    s.turn("Which queue do we use?", "Redis streams, as before.", block=BLOCK)
    s.turn("And the deploy target?", "Fly.io in two regions.")

    preview = import_cmd(repo, f"import-file {s.path} --dry-run --json")
    [doc] = preview.data["documents"]
    assert doc["message_range"] == {"start": 2, "end": 5}
    assert "2 of its 6 message(s) are already taken care of" in preview.data["notes"][0]
    result = import_cmd(repo, f"import-file {s.path} --yes")

    assert result.data["counts"]["completed"] == 1, result.text
    assert repo.unit_count("Postgres 16") == 2  # not a second time
    assert repo.unit_count("Redis streams") == 1 and repo.unit_count("Fly.io") == 1
    assert repo.unit_count("recalled line") == 0
    # and the next Stop of the session has nothing left to retain
    hooks.run("Stop", s.event("Stop", last_assistant_message="Fly.io in two regions."), cwd=repo.root)
    hooks.run("SessionEnd", s.event("SessionEnd", reason="exit"), cwd=repo.root)
    assert wait_until(lambda: repo.queue_jobs() == [], 60)
    assert len(texts(repo)) == 6


def test_a_session_the_person_set_read_only_is_not_imported_behind_their_back(
    repo: Project, hooks: HookRunner, tmp_path: Path
) -> None:
    s = session_in(repo, "kept-out")
    switch = subprocess.run(  # what the installed /hindsight:mode command runs for this session
        [str(SCRIPT), "mode", "read-only", "--session-file", f".hindsight/sessions/{s.session_id}.jsonl"],
        cwd=repo.root,
        env=cli_env(tmp_path / "home"),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert switch.returncode == 0, switch.stdout + switch.stderr
    s.turn("Private: my salary is 123k zz-private", "Noted, not stored.")
    stop = hooks.run("Stop", s.event("Stop", last_assistant_message="Noted, not stored."), cwd=repo.root)
    assert stop.returncode == 0
    sid = hooks_sid(repo.root, s.session_id)
    assert wait_until(lambda: (repo.state / "retain-cursors.json").exists(), 60)
    assert json.loads((repo.state / "retain-cursors.json").read_text())["sessions"][sid]["index"] == 1
    assert count_when_ready(repo, "zz-private") <= 0

    result = import_cmd(repo, f"import-file {s.path} --yes")

    assert result.text.startswith("nothing to import"), result.text
    assert "2 of its 2 message(s) are already taken care of" in result.text
    assert count_when_ready(repo, "zz-private") <= 0 and repo.queue_jobs() == []


# -- damaged files ------------------------------------------------------------------------------------


def test_damaged_lines_are_reported_by_number_and_the_rest_imported(repo: Project) -> None:
    s = session_in(repo, "damaged-session")
    s.turn("We decided to use Postgres 16 for the cache", "Noted: Postgres 16 for the cache.")
    s.write_raw('{"type":"user","message":{"content":"secret-ish torn line qq-torn\n')  # not JSON
    s.turn("Which queue do we use?", "Redis streams, as before.")
    s.write_raw('{"parentUuid":"x","type":"assistant","message":{"content":"cut off qq-cut')  # no newline: cut off
    lines = s.path.read_text().splitlines()
    torn = next(i for i, line in enumerate(lines, 1) if "qq-torn" in line)

    result = import_cmd(repo, f"import-file {s.path} --yes")

    assert result.level == "warning", result.text
    assert f"2 unparsable line(s) skipped (lines {torn}, {len(lines)})" in result.text
    assert "the last line is cut off" in result.text
    assert "qq-" not in result.text
    assert repo.unit_count("Postgres 16") == 2 and repo.unit_count("Redis streams") == 1
    assert repo.unit_count("qq-") == 0
    assert s.path.read_text().splitlines() == lines  # the source is never modified


def test_a_file_that_only_looks_like_a_transcript_is_refused_not_filed_elsewhere(repo: Project) -> None:
    empty = repo.root / "empty.jsonl"
    empty.write_text("")
    garbage = repo.root / "garbage.jsonl"
    garbage.write_text("not json\nstill not json\n")
    assert import_cmd(repo, f"import-file {empty} --yes").level == "warning"
    refused = import_cmd(repo, f"import-file {garbage} --yes")
    assert refused.level == "error" and "line 1" in refused.text
    assert texts(repo) == [] and repo.queue_jobs() == []


# -- a run killed with SIGKILL --------------------------------------------------------------------------

CHILD = textwrap.dedent(
    """
    import sys, time
    from hindsight_hooks.hooks import Host, RecordingUI

    class StallingUI(RecordingUI):
        def notify(self, text, level="info"):
            super().notify(text, level)
            if text.startswith("import: 1/"):
                print("DELIVERED-ONE", flush=True)
                time.sleep(300)

    root, transcript = sys.argv[1], sys.argv[2]
    with Host(root, session_file=None, host_name="agent", ui=StallingUI()) as host:
        print("RESULT", host.command("/hindsight:import-file " + transcript + " --yes").text, flush=True)
    """
)


def _kill_after_first_delivery(repo: Project, transcript: Path) -> None:
    script = repo.root.parent / "child_import.py"
    script.write_text(CHILD)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(repo.root), str(transcript)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        seen = []
        for line in proc.stdout:
            seen.append(line)
            if line.startswith("DELIVERED-ONE"):
                break
        assert seen and seen[-1].startswith("DELIVERED-ONE"), (seen, proc.stderr.read() if proc.stderr else "")
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()
    assert proc.returncode == -signal.SIGKILL


def test_a_killed_import_resumes_and_stores_every_message_once(repo: Project, hooks: HookRunner) -> None:
    repo.configure(merged(LOCAL_CONFIG, {"import": {"turns_per_document": 1}}))
    s = session_in(repo, "killed-import")
    three_turns(s)

    _kill_after_first_delivery(repo, s.path)

    checkpoint = json.loads((repo.state / "import-checkpoint.json").read_text())
    assert sorted(d["status"] for d in checkpoint["documents"].values()) == ["completed", "queued", "queued"]
    assert checkpoint["source_messages"] == [[0, 5]]
    assert len(repo.queue_jobs()) == 2 and len(texts(repo)) == 2
    sid = hooks_sid(repo.root, s.session_id)
    assert json.loads((repo.state / "retain-cursors.json").read_text())["sessions"][sid]["index"] == 5

    resumed = import_cmd(repo, f"import-file {s.path} --yes")

    assert resumed.data["counts"] == {"completed": 2, "queued": 0, "skipped": 1, "failed": 0}, resumed.text
    assert [d["skip_reason"] for d in resumed.data["documents"] if d["status"] == "skipped"] == ["already-imported"]
    assert repo.queue_jobs() == []
    assert once_each(repo)
    assert len(texts(repo)) == 6
    assert len(json.loads((repo.state / "import-manifest.json").read_text())["imports"]) == 3

    # nothing more on a third run, nor from the session's own Stop hook
    assert import_cmd(repo, f"import-file {s.path} --yes").text.startswith("nothing to import")
    hooks.run("Stop", s.event("Stop", last_assistant_message="Fly.io in two regions."), cwd=repo.root)
    assert wait_until(lambda: repo.queue_jobs() == [], 60)
    assert len(texts(repo)) == 6


# -- discovery -------------------------------------------------------------------------------------------


def test_import_project_sessions_finds_this_projects_claude_code_sessions(repo: Project, tmp_path: Path) -> None:
    home = tmp_path / "home"
    ours = session_in(repo, "ours")
    ours.turn("We decided to use Postgres 16 for the cache", "Noted.")
    api = repo.root / "api"
    api.mkdir()
    sub = session_in(repo, "in-a-subfolder", cwd=api)
    sub.turn("The api service listens on port 8080", "Noted the port.")
    other = tmp_path / "billing"
    other.mkdir()
    stray = ClaudeSession(claude_folder(home, repo.root) / "stray.jsonl", other, "stray")
    stray.turn("billing uses MySQL zz-foreign", "ok")
    sibling = tmp_path / "repo-api"  # its folder name starts like a subfolder's of repo
    sibling.mkdir()
    ClaudeSession(claude_folder(home, sibling) / "sib.jsonl", sibling, "sib").turn("sibling zz-sibling", "ok")

    env = cli_env(home)
    done = subprocess.run(
        [str(SCRIPT), "import-project-sessions", "--yes", "--json"],
        cwd=repo.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(done.stdout)
    assert data["counts"] == {"completed": 2, "queued": 0, "skipped": 0, "failed": 0}
    assert "2 Claude Code session(s)" in data["scope"]
    [refused] = data["refused"]
    assert refused["file"] == str(stray.path)
    assert str(other) in refused["reason"] and str(repo.root) in refused["reason"]
    stored = "\n".join(texts(repo))
    assert "Postgres 16" in stored and "port 8080" in stored
    assert "zz-" not in stored
    assert (api / ".hindsight" / "retain-cursors.json").exists()  # where that session's hooks keep it


def test_a_project_without_claude_code_sessions_reads_as_before(repo: Project) -> None:
    result = import_cmd(repo, "import-project-sessions --yes")
    assert result.text == "no session file: this session is not saved to disk, so there is no session folder to search"


def test_the_current_session_can_be_a_claude_code_transcript(repo: Project) -> None:
    s = session_in(repo, "current-one")
    three_turns(s)
    with Host(repo.root, session_file=s.path, host_name="agent", ui=RecordingUI()) as host:
        result = host.command("/hindsight:import --yes")
    assert result.data is not None
    assert result.data["counts"]["completed"] == 1, result.text
    assert once_each(repo)
    [(_bank, doc_id, _text)] = repo.documents()
    assert doc_id.startswith(f"hh-import:{hooks_sid(repo.root, s.session_id)}:")
