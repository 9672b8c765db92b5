"""Diagnostics (docs/queue.md#diagnostics) and requeueing dead letters: counts and ids only, never content."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from hindsight_hooks.queue import QueueFullError, RetainQueue, new_job
from hindsight_hooks.timefmt import iso_ms

from .conftest import FakeBackend, FakeClock, item, job, make_cfg, permanent, read_lines, transient

MakeQueue = Callable[..., RetainQueue]
SECRET_CONTENT = "the user's private transcript text"
SECRET_META = "metadata-value-that-must-not-leak"


def secret_job(bank: str = "bank-a") -> dict[str, object]:
    return new_job(bank, "tool", [item(SECRET_CONTENT, metadata={"zeta": SECRET_META, "alpha": "v"})], True)


def test_report_counts_and_dates(make_queue: MakeQueue, backend: FakeBackend, qpath: Path, clock: FakeClock) -> None:
    q = make_queue()
    q.enqueue(secret_job("bank-a"))
    q.enqueue(secret_job("bank-b"))
    with open(qpath, "ab") as fh:
        fh.write(b"garbage line\n")
    backend.fail_next = [transient("Bearer sk-live-abcdefghijklmnopqrstuv down")]
    q.flush(backend, banks={"bank-a"})
    report = q.report()
    assert report["queue_path"] == str(qpath)
    assert report["dead_letter_path"] == str(qpath) + ".dead.jsonl"
    assert report["malformed_path"] == str(qpath) + ".malformed.jsonl"
    active = report["active"]
    assert (active["valid"], active["malformed"], active["due"], active["waiting"]) == (2, 0, 1, 1)
    assert report["quarantine"] == {"lines": 1, "error": None}
    assert active["oldest_created_at"] is not None and active["next_attempt_at"] > iso_ms(clock())
    assert "abcdefghijklmnopqrstuv" not in active["last_error"]
    assert report["dead_letter"] == {"valid": 0, "malformed": 0, "error": None}
    assert "lock_owner" not in report  # nobody holds the lock now
    text = orjson.dumps(report).decode()
    assert SECRET_CONTENT not in text and SECRET_META not in text


def test_report_survives_broken_files(tmp_path: Path) -> None:
    qpath = tmp_path / "q.jsonl"
    qpath.mkdir()
    Path(str(qpath) + ".dead.jsonl").mkdir()
    report = RetainQueue(qpath, make_cfg(), clock=FakeClock()).report()
    assert report["active"]["error"] and report["dead_letter"]["error"]
    assert RetainQueue(qpath, make_cfg(), clock=FakeClock()).jobs_view() == []


def test_jobs_view_has_sizes_and_keys_but_no_content(
    make_queue: MakeQueue, backend: FakeBackend, clock: FakeClock
) -> None:
    q = make_queue(max_attempts=1)
    q.enqueue(secret_job("bank-a"))
    q.enqueue(secret_job("bank-b"))
    backend.fail_next = [permanent("password=opensesame1234 rejected", 400)]
    q.flush(backend, banks={"bank-a"})
    view = q.jobs_view()
    assert [v["state"] for v in view] == ["active", "dead"]
    dead = view[1]
    assert dead["dead_lettered_at"] and dead["last_error_kind"] == "permanent"
    assert "opensesame1234" not in dead["last_error"]
    it = view[0]["items"][0]
    assert it["metadata_keys"] == ["alpha", "zeta"]
    assert it["content_bytes"] == len(orjson.dumps([SECRET_CONTENT]))
    assert it["context_bytes"] == len("Coding session (test)")
    assert set(view[0]) == {
        "state",
        "id",
        "bank_id",
        "source",
        "created_at",
        "attempts",
        "next_attempt_at",
        "last_error",
        "last_error_kind",
        "dead_lettered_at",
        "items",
    }
    text = orjson.dumps(view).decode()
    assert SECRET_CONTENT not in text and SECRET_META not in text


def test_requeue_dead_resets_and_moves_back(
    make_queue: MakeQueue, backend: FakeBackend, qpath: Path, clock: FakeClock
) -> None:
    q = make_queue(max_attempts=1)
    dead_path = Path(str(qpath) + ".dead.jsonl")
    ids = [q.enqueue(job("bank-a", "1")).job_id, q.enqueue(job("bank-b", "2")).job_id]
    backend.fail_always = permanent()
    assert q.flush(backend).dead_lettered == 2
    with open(dead_path, "ab") as fh:
        fh.write(b"unparsable dead line\n")
    backend.fail_always = None
    assert q.requeue_dead() == 2
    revived = read_lines(qpath)
    assert [x["id"] for x in revived] == ids
    for x in revived:
        assert x["attempts"] == 0
        assert not set(x) & {"last_error", "last_error_kind", "first_failed_at", "next_attempt_at", "dead_lettered_at"}
    assert dead_path.read_bytes() == b"unparsable dead line\n"  # never delete what we cannot parse
    assert q.requeue_dead() == 0
    assert q.flush(backend).sent == 2


def test_requeue_skips_ids_already_active_and_respects_the_cap(
    make_queue: MakeQueue, backend: FakeBackend, qpath: Path
) -> None:
    q = make_queue(max_attempts=1)
    dead_path = Path(str(qpath) + ".dead.jsonl")
    (jid,) = [q.enqueue(job("bank-a", "1")).job_id]
    backend.fail_always = permanent()
    q.flush(backend)
    # Simulate a crash between the active rewrite and the dead rewrite: the job is in both.
    qpath.write_bytes(dead_path.read_bytes())
    assert q.requeue_dead() == 0
    assert [x["id"] for x in read_lines(qpath)] == [jid]
    assert read_lines(dead_path) == []
    # Back-pressure applies to requeueing as well.
    assert q.flush(backend, force=True).dead_lettered == 1
    small = make_queue(max_active_bytes=10)
    with pytest.raises(QueueFullError):
        small.requeue_dead()
    assert len(read_lines(dead_path)) == 1
