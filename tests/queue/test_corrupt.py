"""Corrupt inputs: bad bytes are quarantined (never dropped, never fatal); broken paths give clear errors."""

from __future__ import annotations

import base64
import multiprocessing as mp
import os
import resource
import shutil
import signal
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hindsight_hooks.backends.base import BackendError
from hindsight_hooks.queue import QueueError, RetainQueue
from hindsight_hooks.queue.claims import claimant
from hindsight_hooks.queue.jobs import dumps_line, loads_line

from .conftest import T0, FakeBackend, FakeClock, job, make_cfg, read_lines

FORK = mp.get_context("fork")


def quarantined(qpath: Path) -> list[bytes]:
    out = []
    for rec in read_lines(Path(str(qpath) + ".malformed.jsonl")):
        assert set(rec) <= {"quarantined_at", "source_queue", "line", "line_encoding"}
        assert rec["source_queue"] == str(qpath)
        raw = base64.b64decode(rec["line"]) if rec.get("line_encoding") == "base64" else rec["line"].encode()
        out.append(raw)
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(garbage=st.binary(min_size=1, max_size=400))
def test_random_bytes_are_quarantined_and_jobs_around_them_delivered(
    tmp_path_factory: pytest.TempPathFactory, garbage: bytes
) -> None:
    qpath = tmp_path_factory.mktemp("q") / "retain-queue.jsonl"
    q = RetainQueue(qpath, make_cfg(), clock=FakeClock())
    before = q.enqueue(job("bank-a", "before")).job_id
    with open(qpath, "ab") as fh:
        fh.write(garbage)
    after = q.enqueue(job("bank-a", "after")).job_id
    backend = FakeBackend()
    result = q.flush(backend)
    assert backend.delivered_ids() == [before, after]
    expected_bad = [line for line in garbage.split(b"\n") if line.strip() and loads_line(line) is None]
    assert quarantined(qpath) == expected_bad
    assert result.malformed == len(expected_bad)
    assert qpath.read_bytes() == b""


def test_torn_last_line_is_quarantined_and_the_next_job_survives(
    make_queue: Any, qpath: Path, backend: FakeBackend
) -> None:
    q = make_queue()
    a = q.enqueue(job("bank-a", "a")).job_id
    b_line = dumps_line(job("bank-a", "b"))
    with open(qpath, "ab") as fh:
        fh.write(b_line[: len(b_line) // 2])  # a crash in the middle of writing (never acknowledged)
    c = q.enqueue(job("bank-a", "c")).job_id
    q.flush(backend)
    assert backend.delivered_ids() == [a, c]
    assert quarantined(qpath) == [b_line[: len(b_line) // 2]]


def test_nul_bytes_and_wrong_shapes(make_queue: Any, qpath: Path, backend: FakeBackend) -> None:
    q = make_queue()
    good = q.enqueue(job("bank-a", "good")).job_id
    nul_line = dumps_line(job("bank-a", "x")).replace(b'"bank-a"', b'"bank\x00-a"')
    bad_lines = [
        b"\x00\x00\x00",
        nul_line,  # NUL inside a JSON string: not valid JSON
        b"[]",
        b'"just a string"',
        b'{"id": "x", "bank_id": "b", "attempts": 0, "items": [{"content": 1}]}',
        b'{"id": "x", "bank_id": "b", "attempts": -3, "items": []}',
        b"null",
    ]
    with open(qpath, "ab") as fh:
        fh.write(b"\n".join(bad_lines) + b"\n")
    q.flush(backend)
    assert backend.delivered_ids() == [good]
    assert quarantined(qpath) == bad_lines


def test_a_10_mb_line_is_quarantined_whole(make_queue: Any, qpath: Path, backend: FakeBackend) -> None:
    q = make_queue()
    huge = b'{"content": "' + b"A" * (10 * 1024 * 1024) + b'"'
    q.enqueue(job("bank-a", "1"))
    with open(qpath, "ab") as fh:
        fh.write(huge + b"\n")
    jid = q.enqueue(job("bank-a", "2")).job_id
    result = q.flush(backend)
    assert result.sent == 2 and backend.delivered_ids()[-1] == jid
    assert quarantined(qpath) == [huge]


def test_unwritable_quarantine_keeps_bad_lines_in_place_and_still_delivers(
    make_queue: Any, qpath: Path, backend: FakeBackend
) -> None:
    q = make_queue()
    q.enqueue(job("bank-a", "1"))
    with open(qpath, "ab") as fh:
        fh.write(b"not json\n")
    Path(str(qpath) + ".malformed.jsonl").mkdir()
    result = q.flush(backend)
    assert result.sent == 1 and result.malformed == 0
    assert result.quarantine_error and "malformed" in result.quarantine_error
    assert qpath.read_bytes() == b"not json\n"  # never drop what could not be copied


def test_queue_path_that_is_a_directory(tmp_path: Path, backend: FakeBackend) -> None:
    qpath = tmp_path / "retain-queue.jsonl"
    qpath.mkdir()
    q = RetainQueue(qpath, make_cfg(), clock=FakeClock())
    with pytest.raises(QueueError, match="retain queue"):
        q.enqueue(job())
    with pytest.raises(QueueError, match="cannot read retain queue"):
        q.flush(backend)
    with pytest.raises(QueueError):
        q.count_active()
    assert "not a regular file" in q.report()["active"]["error"] or "Is a directory" in q.report()["active"]["error"]


def _fill_disk_child(qpath: str, out: Any) -> None:
    """In a child: cap the file size (RLIMIT_FSIZE), ignore SIGXFSZ, and try to enqueue past it."""
    q = RetainQueue(Path(qpath), make_cfg(batch_max_bytes=10**7), clock=FakeClock())
    size = os.path.getsize(qpath)
    small = job("bank-a", "small")
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    limit = size + len(dumps_line(small)) + 64
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    report: list[tuple[str, str]] = []
    for name, payload, coalesce in (
        ("big-append", job("bank-a", "B" * 5000), False),
        ("big-merge", job("bank-a", "M" * 5000), True),
        ("small-append", small, False),
    ):
        try:
            res = q.enqueue(payload, coalesce=coalesce)
            report.append((name, "ok:" + res.job_id))
        except QueueError as exc:
            report.append((name, "error:" + str(exc)))
    out.put(report)


def test_full_disk_is_a_clear_error_and_loses_nothing(make_queue: Any, qpath: Path, backend: FakeBackend) -> None:
    q = make_queue()
    acked = [q.enqueue(job("bank-a", str(i))).job_id for i in range(3)]
    before = qpath.read_bytes()
    out: Any = FORK.Queue()
    child = FORK.Process(target=_fill_disk_child, args=(str(qpath), out))
    child.start()
    report = dict(out.get(timeout=30))
    child.join(30)
    assert child.exitcode == 0
    assert report["big-append"].startswith("error:") and "File too large" in report["big-append"]
    assert "not queued" in report["big-append"]
    assert report["big-merge"].startswith("error:")
    assert "B" * 50 not in report["big-append"] and "M" * 50 not in report["big-merge"]  # no content
    assert report["small-append"].startswith("ok:")
    data = qpath.read_bytes()
    assert data.startswith(before)  # nothing queued before was touched, no half line left
    assert data.endswith(b"\n") and [x["id"] for x in read_lines(qpath)][:3] == acked
    assert not [p for p in qpath.parent.iterdir() if p.name.endswith(".tmp")]
    q.flush(backend)
    assert backend.delivered_ids() == [*acked, report["small-append"][3:]]


# -- an unreadable file (permission denied) -----------------------------------------------------

NOBODY = 65534


def _as_unprivileged_user(qpath: str, out: Any) -> None:
    """In a child: become a user who may not read the queue file, then use the queue."""
    if os.geteuid() == 0:
        os.setgid(NOBODY)
        os.setuid(NOBODY)
    q = RetainQueue(Path(qpath), make_cfg(lock_timeout_ms=2000), clock=FakeClock())
    report: dict[str, str] = {}
    for name, action in (
        ("enqueue", lambda: q.enqueue(job("bank-a", "new")).job_id),
        ("flush", lambda: str(q.flush(FakeBackend()).sent)),
        ("count", lambda: str(q.count_active())),
    ):
        try:
            report[name] = "ok:" + action()
        except QueueError as exc:
            report[name] = "error:" + str(exc)
        except Exception as exc:  # anything but a QueueError is the bug this test looks for
            report[name] = f"crash:{type(exc).__name__}: {exc}"
    summary = q.report()["active"]
    report["report_error"] = str(summary["error"])
    out.put(report)


def test_an_unreadable_queue_file_is_a_clear_error_and_loses_nothing(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Permission denied on the active file: every entry point says so plainly, nothing is touched.

    Root reads any file, so as root the child drops to ``nobody``; the folder is made
    world-writable so that only the queue file itself is out of reach.
    """
    folder = Path(tempfile.mkdtemp(prefix="hh-unreadable-", dir="/tmp"))
    try:
        os.chmod(folder, 0o777)
        qpath = folder / "retain-queue.jsonl"
        q = RetainQueue(qpath, make_cfg(), clock=FakeClock())
        acked = [q.enqueue(job("bank-a", str(i))).job_id for i in range(2)]
        for extra in (Path(str(qpath) + ".lock"), Path(str(qpath) + ".lock.owner.json")):
            if extra.exists():
                os.chmod(extra, 0o666)  # the lock itself stays usable: only the data is unreadable
        os.chmod(qpath, 0o000)
        before = qpath.read_bytes()
        out: Any = FORK.Queue()
        child = FORK.Process(target=_as_unprivileged_user, args=(str(qpath), out))
        child.start()
        report = out.get(timeout=60)
        child.join(30)
        assert child.exitcode == 0
        for name in ("enqueue", "flush", "count"):
            assert report[name].startswith("error:"), report
            assert str(qpath) in report[name] and "Permission denied" in report[name], report[name]
        assert "enqueue" in report and "new" not in report["enqueue"]
        assert "Permission denied" in report["report_error"]
        os.chmod(qpath, 0o600)
        assert qpath.read_bytes() == before
        backend = FakeBackend()
        q.flush(backend)
        assert backend.delivered_ids() == acked
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# -- a full disk while flushing ----------------------------------------------------------------


def _flush_with_capped_file_size(qpath: str, limit: int, fail: bool, out: Any) -> None:
    """In a child: cap file sizes at ``limit`` bytes (RLIMIT_FSIZE), then flush once."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    backend = FakeBackend()
    if fail:
        backend.fail_always = BackendError("retain", "transient", "connection refused")
    q = RetainQueue(Path(qpath), make_cfg(claim_ttl_ms=60_000), clock=FakeClock())
    try:
        result = q.flush(backend)
        out.put(("ok", str(result.sent), backend.delivered_ids(), len(backend.calls)))
    except QueueError as exc:
        out.put(("error", str(exc), backend.delivered_ids(), len(backend.calls)))


@pytest.mark.parametrize("phase", ["claim", "commit"])
def test_full_disk_during_a_flush_loses_nothing(make_queue: Any, qpath: Path, phase: str) -> None:
    """The claim's rewrite, or the commit's rewrite of failed jobs (which grow by their error
    fields), hits the file-size cap: a clear error, the old file stays whole, no temp file
    is left behind, and every job is delivered later."""
    q = make_queue(claim_ttl_ms=60_000)
    # Three banks, so that in the commit case every job is attempted and grows by its error.
    acked = [q.enqueue(job(f"bank-{i}", str(i))).job_id for i in range(3)]
    size = qpath.stat().st_size
    # the claim adds claimed_at + claim_token (~85 bytes) and claimed_by (its key and this process) per job
    claimed_size = size + 3 * (90 + len(',"claimed_by":""') + len(claimant()))
    limit = size + 10 if phase == "claim" else claimed_size + 40
    out: Any = FORK.Queue()
    child = FORK.Process(target=_flush_with_capped_file_size, args=(str(qpath), limit, phase == "commit", out))
    child.start()
    status, text, delivered, calls = out.get(timeout=60)
    child.join(30)
    assert child.exitcode == 0
    assert status == "error" and "cannot rewrite retain queue" in text and "File too large" in text, text
    assert delivered == []
    assert calls == (0 if phase == "claim" else 3)  # a failed claim delivers nothing
    assert not [p for p in qpath.parent.iterdir() if p.name.endswith(".tmp")]
    lines = read_lines(qpath)  # every line still parses
    assert [x["id"] for x in lines] == acked
    if phase == "commit":
        assert all(x.get("claim_token") for x in lines)  # the claim survived; it expires
        assert all(x["attempts"] == 0 for x in lines)  # the failure was never committed
    clock = FakeClock(T0 + 61)
    backend = FakeBackend()
    result = RetainQueue(qpath, make_cfg(claim_ttl_ms=60_000), clock=clock).flush(backend)
    assert result.sent == 3 and sorted(backend.delivered_ids()) == sorted(acked)
    assert read_lines(qpath) == []
