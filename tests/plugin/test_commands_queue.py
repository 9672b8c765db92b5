"""Queue, flush, last-recall, recall-cleanup and init commands through ``Host.command`` (docs/commands.md,
docs/commands.md#hindsightrecall-cleanup).

Failures are real: the embedded store's write lock held by another process, or the Hindsight
URL pointed at a closed loopback port; queue files are read back from disk.
"""

from __future__ import annotations

import json
import os
import stat
import tomllib
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from hindsight_hooks.hooks import Host, assistant_message, user_message

from .cmdkit import Kit, closed_port_url, hs_kit_fixture, kit_fixture, local_kit_fixture, store_locked  # noqa: F401  (fixtures)

QUEUE_USAGE = "usage: /hindsight:queue [--jobs] [--json] [--requeue-dead]"


def outage(kit: Kit, session: str = "down") -> tuple[Host, AbstractContextManager[Any]]:
    """A started host whose deliveries fail inside the returned block: the store's write lock held
    by another process (local), or the URL on a closed loopback port (hindsight)."""
    if kit.backend == "local":
        kit.configure(sections={"retain": {"flush_timeout_ms": 500}})  # a tool's attempt waits at most this
        host = kit.host(session)
        assert host.command("/hindsight").data is not None  # store opened and banks ensured first
        return host, store_locked(kit.db)
    kit.configure(sections={"hindsight": {"timeout_ms": 1500}})
    kit.use_url(closed_port_url())
    return kit.host(session), nullcontext()


def recover(kit: Kit) -> None:
    if kit.backend == "hindsight":
        assert kit.url is not None
        kit.use_url(kit.url)


def test_queue_report_when_empty_and_bad_arguments(kit: Kit) -> None:
    host = kit.host()
    r = host.command("/hindsight:queue")
    assert r.level == "info"
    assert r.text.splitlines() == [
        "active: 0 (due 0, waiting 0)",
        "dead-letter: 0",
        "malformed: 0",
        "next attempt: -",
        "last error: -",
        "last outcome: -",
        f"path: {kit.queue_file}",
    ]
    j = host.command("/hindsight:queue --json")
    report = json.loads(j.text)
    assert report == j.data
    assert {"queue_path", "dead_letter_path", "malformed_path", "active", "dead_letter"} <= set(report)
    assert set(report["active"]) >= {
        "valid",
        "malformed",
        "error",
        "due",
        "waiting",
        "oldest_created_at",
        "next_attempt_at",
        "last_error",
    }
    assert set(report["dead_letter"]) == {"valid", "malformed", "error"}
    for bad in ("--all", "jobs", "--jobs --nope"):
        u = host.command(f"/hindsight:queue {bad}")
        assert (u.level, u.text) == ("warning", QUEUE_USAGE)
    f = host.command("/hindsight:flush")
    assert (f.level, f.text) == ("info", "sent 0, dead-lettered 0, remaining 0, quarantined 0, waiting 0")
    assert f.data == {
        "sent": 0,
        "dead_lettered": 0,
        "remaining": 0,
        "quarantined": 0,
        "waiting": 0,
        "errors": {},
        "waited_for": None,
        "waited_s": 0.0,
        "in_flight": 0,
    }
    u = host.command("/hindsight:flush now")
    assert (u.level, u.text) == ("warning", "usage: /hindsight:flush [--due]")


def test_dead_letters_are_reported_requeued_and_flushed(kit: Kit) -> None:
    # Dead only after max_attempts AND dead_letter_after_ms since the first failure (docs/queue.md#retries).
    kit.configure(sections={"queue": {"max_attempts": 2, "dead_letter_after_ms": 1}})
    content = "Dead letter content about the billing service."
    host, failing = outage(kit)
    with failing:
        result = host.call_tool("hindsight_retain", {"items": [{"content": content}], "async": False})
        assert "dead_lettered" not in result.details  # one attempt: queued, to be retried
        (job,) = kit.jobs()
        assert job["attempts"] == 1
        flushed = host.command("/hindsight:flush")
    assert flushed.level == "warning" and flushed.data is not None
    assert flushed.data["dead_lettered"] == 1 and flushed.data["remaining"] == 0
    assert "dead-lettered 1" in flushed.text
    assert kit.jobs() == []
    recover(kit)
    host = kit.host()
    q = host.command("/hindsight:queue")
    assert q.level == "warning" and "dead-letter: 1" in q.text and "active: 0" in q.text
    jobs = host.command("/hindsight:queue --jobs")
    assert jobs.level == "warning" and jobs.data is not None
    (view,) = jobs.data["jobs"]
    assert view["bank_id"] == kit.project_bank and view["source"] == "tool"
    assert f"- {view['id']} bank={kit.project_bank} source=tool attempts=2" in jobs.text
    dumped = jobs.text + json.dumps(jobs.data) + host.command("/hindsight:queue --json --jobs").text
    assert "billing" not in dumped  # never content
    doctor = host.command("/hindsight:doctor")
    assert "warn queue: active 0, dead 1" in doctor.text and "--requeue-dead" in doctor.text
    re = host.command("/hindsight:queue --requeue-dead")
    assert (re.level, re.text) == ("info", "requeued 1 dead-letter job(s)")
    (job,) = kit.jobs()
    assert job["attempts"] == 0 and not job.get("last_error")
    again = host.command("/hindsight:queue --requeue-dead")
    assert again.text == "requeued 0 dead-letter job(s)"
    f = host.command("/hindsight:flush")
    assert f.level == "info" and f.data is not None and f.data["sent"] == 1
    assert kit.texts(kit.project_bank) == [content]
    assert host.command("/hindsight:queue").level == "info"


def test_flush_due_leaves_a_job_in_backoff_that_plain_flush_sends(kit: Kit) -> None:
    """``--due`` is the delivery worker's flush: backoff is kept; the person's flush forces."""
    content = "A retry that waits its turn about the billing service."
    host, failing = outage(kit)
    with failing:
        host.call_tool("hindsight_retain", {"items": [{"content": content}], "async": False})
    (job,) = kit.jobs()
    assert job["attempts"] == 1 and job["next_attempt_at"]  # failed once: in backoff now
    recover(kit)
    host = kit.host()
    due = host.command("/hindsight:flush --due")
    assert due.data is not None and due.data["sent"] == 0 and due.data["waiting"] == 1
    assert kit.jobs()[0]["attempts"] == 1 and kit.texts(kit.project_bank) == []
    forced = host.command("/hindsight:flush")
    assert forced.level == "info" and forced.data is not None and forced.data["sent"] == 1
    assert kit.texts(kit.project_bank) == [content] and kit.jobs() == []


def test_malformed_lines_are_flagged_then_quarantined_by_flush(kit: Kit) -> None:
    host = kit.host()
    kit.state.mkdir(exist_ok=True)
    with open(kit.queue_file, "a", encoding="utf-8") as fh:
        fh.write('{"not": "a job"}\nnot json at all\n')
    q = host.command("/hindsight:queue")
    assert q.level == "warning" and "malformed: 2" in q.text
    f = host.command("/hindsight:flush")
    assert f.level == "warning" and f.data is not None and f.data["quarantined"] == 2
    assert "quarantined 2" in f.text
    quarantine = Path(str(kit.queue_file) + ".malformed.jsonl")
    assert "not json at all" in quarantine.read_text(encoding="utf-8")  # kept, never deleted
    assert host.command("/hindsight:queue").level == "info"


def test_flush_while_the_server_is_down_keeps_the_job(hs_kit: Kit) -> None:
    host, failing = outage(hs_kit)
    with failing:
        r = host.call_tool("hindsight_retain", {"items": [{"content": "Waits for the server."}]})
        assert r.details["pending"] is True
        f = host.command("/hindsight:flush")
    assert f.level == "warning" and f.data is not None
    assert f.data["remaining"] == 1 and f.data["sent"] == 0
    assert f"{hs_kit.project_bank}: " in f.text and hs_kit.project_bank in f.data["errors"]
    assert len(hs_kit.jobs()) == 1


# -- last-recall ----------------------------------------------------------------------------------------


def _recall_turn(host: Host) -> None:
    host.context([user_message("When does Kestrel deploy?")])
    host.agent_end([user_message("When does Kestrel deploy?"), assistant_message("Fridays.")])


def test_last_recall_snapshot(kit: Kit) -> None:
    host = kit.host()
    missing = host.command("/hindsight:last-recall")
    assert (missing.level, missing.text) == ("info", "no snapshot; enable `recall.store_last_recall`")
    recall = {"store_last_recall": True, "types": ["world"], "project_query_preamble": "", "user_query_preamble": ""}
    kit.configure(sections={"recall": recall})
    host = kit.host("snap")
    stored = host.call_tool("hindsight_retain", {"items": [{"content": "Kestrel deploys on Fridays."}], "async": False})
    assert not stored.is_error
    _recall_turn(host)
    path = kit.state / "last-recall.json"
    r = host.command("/hindsight:last-recall")
    assert r.level == "info", r
    lines = r.text.splitlines()
    assert lines[0].startswith("created_at: 20") and lines[1] == "memories: 1"
    assert lines[2] == f"banks: {kit.project_bank}:1,{kit.user_bank}:0"
    assert lines[3] == "failed: 0"
    assert lines[4].startswith("query: ") and "Kestrel" in lines[4] and len(lines[4]) <= len("query: ") + 180
    assert lines[5:] == [f"path: {path}", "visibility only, not a provider cache"]
    j = host.command("/hindsight:last-recall --json")
    assert j.text == path.read_text(encoding="utf-8") and j.data == json.loads(j.text)
    u = host.command("/hindsight:last-recall --full")
    assert (u.level, u.text) == ("warning", "usage: /hindsight:last-recall [--json]")
    path.write_text("[1, 2", encoding="utf-8")
    bad = host.command("/hindsight:last-recall")
    assert bad.level == "warning" and bad.text.startswith(f"snapshot {path} is unreadable")


# -- recall-cleanup -------------------------------------------------------------------------------------

BLOCK = "<hindsight-memory>\n1. recalled fact\n</hindsight-memory>"
SESSION_LINES = [
    {"type": "session", "id": "s1", "cwd": "/x"},
    {"type": "message", "id": "a", "parentId": None, "message": {"role": "user", "content": "hello"}},
    {"type": "message", "id": "b", "parentId": "a", "message": {"role": "user", "content": BLOCK}},
    {
        "type": "message",
        "id": "c",
        "parentId": "b",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
    },
    {"type": "message", "id": "d", "parentId": "c", "message": {"role": "user", "content": f"I pasted {BLOCK}"}},
    {
        "type": "message",
        "id": "e",
        "parentId": "d",
        "message": {"role": "user", "customType": "hindsight-recall", "content": "x"},
    },
    {"type": "message", "id": "f", "parentId": "e", "message": {"role": "user", "content": "bye"}},
]


def write_session(path: Path) -> bytes:
    body = "\n".join(json.dumps(x) for x in SESSION_LINES) + "\n{broken line\n"
    path.write_text(body, encoding="utf-8")
    os.chmod(path, 0o640)
    return body.encode("utf-8")


def test_recall_cleanup_scans_and_prunes_only_an_idle_file(kit: Kit) -> None:
    active = kit.session_file()
    original = write_session(active)
    host = kit.host()
    scan = host.command("/hindsight:recall-cleanup")
    assert scan.level == "warning"
    # "d" quotes the block inside a user message: counted as quoted (ADR-065), cut when pruned.
    assert scan.text == f"{active}: 3 persisted recall block(s) (1 quoted inside other messages); lines: 3, 5, 6"
    assert scan.data == {"path": str(active), "count": 3, "lines": [3, 5, 6], "injected": [3, 6], "quoted": [5]}
    for line in ("/hindsight:recall-cleanup --prune", f"/hindsight:recall-cleanup {active} --prune"):
        refused = host.command(line)
        assert refused.level == "warning" and "refusing to prune the active session file" in refused.text
    assert active.read_bytes() == original

    idle = kit.tmp / "sessions" / "old.jsonl"
    write_session(idle)
    pruned = host.command(f"/hindsight:recall-cleanup {idle} --prune")
    assert pruned.level == "info" and pruned.data is not None and (pruned.data["pruned"], pruned.data["cut"]) == (2, 1)
    backup = Path(pruned.data["backup"])
    assert backup.name.startswith("old.jsonl.hindsight-recall-prune.") and backup.read_bytes() == original
    kept = idle.read_text(encoding="utf-8")
    assert kept.endswith("{broken line\n") and stat.S_IMODE(idle.stat().st_mode) == 0o640
    entries = {e["id"]: e for e in (json.loads(x) for x in kept.splitlines()[:-1])}
    assert set(entries) == {"s1", "a", "c", "d", "f"}
    assert entries["c"]["parentId"] == "a" and entries["f"]["parentId"] == "d"  # re-parented
    assert entries["d"]["message"]["content"] == "I pasted "  # the quoted block is cut, the message stays
    rescan = host.command(f"/hindsight:recall-cleanup {idle}")
    assert (rescan.level, rescan.text) == ("info", f"{idle}: 0 persisted recall block(s); lines: none")
    nothing = host.command(f"/hindsight:recall-cleanup {idle} --prune")
    assert nothing.text == f"{idle}: nothing to prune"


def test_recall_cleanup_arguments_and_missing_files(local_kit: Kit) -> None:
    host = local_kit.host(session=None)
    none = host.command("/hindsight:recall-cleanup")
    assert (none.level, none.text) == ("warning", "no session file available")
    gone = host.command("/hindsight:recall-cleanup nowhere.jsonl")
    assert gone.level == "warning" and gone.text == f"{os.path.realpath(local_kit.root)}/nowhere.jsonl is not a file"
    for bad in ("a.jsonl b.jsonl", "--all"):
        u = host.command(f"/hindsight:recall-cleanup {bad}")
        assert (u.level, u.text) == ("warning", "usage: /hindsight:recall-cleanup [<session.jsonl>] [--prune]")
    rel = local_kit.root / "rel.jsonl"
    write_session(rel)
    assert host.command("/hindsight:recall-cleanup rel.jsonl").data == {
        "path": str(Path(os.path.realpath(rel))),
        "count": 3,
        "lines": [3, 5, 6],
        "injected": [3, 6],
        "quoted": [5],
    }


# -- init -----------------------------------------------------------------------------------------------


def test_init_writes_refuses_and_backs_up(kit: Kit) -> None:
    host = kit.host()
    before = kit.config_path.read_bytes()
    refused = host.command("/hindsight:init")
    assert refused.level == "warning" and "--force" in refused.text
    assert kit.config_path.read_bytes() == before
    usage = host.command("/hindsight:init --yes")
    assert (usage.level, usage.text) == ("warning", "usage: /hindsight:init [--force]")
    forced = host.command("/hindsight:init --force")
    assert forced.level == "info" and forced.data is not None
    backup = Path(forced.data["backup"])
    assert backup.name.startswith("config.toml.bak-") and backup.read_bytes() == before
    written = kit.config_path.read_text(encoding="utf-8")
    assert tomllib.loads(written)["banks"]["project"]["bank_id"] == kit.project_bank
    expected_url = kit.url if kit.backend == "hindsight" else "http://localhost:8888"
    assert f'# base_url = "{expected_url}"' in written
    assert forced.text.startswith(f"wrote {kit.config_path} (project bank {kit.project_bank})")
    kit.config_path.unlink()
    fresh = host.command("/hindsight:init")
    assert fresh.level == "info" and fresh.data is not None and fresh.data["backup"] is None
    assert kit.config_path.exists()


def test_the_init_docs_name_the_backup_as_init_writes_it(local_kit: Kit) -> None:
    """docs/commands.md's /hindsight:init section said ``config.toml.bak-<epoch seconds>``; the
    backup is ``config.toml.bak-<YYYYmmddTHHMMSS>`` (as the page's "Common rules" already said)."""
    import re

    forced = local_kit.host().command("/hindsight:init --force")
    assert forced.data is not None
    assert re.fullmatch(r"config\.toml\.bak-\d{8}T\d{6}", Path(forced.data["backup"]).name)
    page = (Path(__file__).parents[2] / "docs" / "commands.md").read_text(encoding="utf-8")
    init = page.split("## `/hindsight:init`", 1)[1].split("\n## ", 1)[0]
    assert "epoch" not in init and "`config.toml.bak-<YYYYmmddTHHMMSS>`" in init
