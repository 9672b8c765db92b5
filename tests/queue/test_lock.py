"""The queue lock (docs/queue.md#locking): in-process mutex + filelock's OS lock, bounded waits, owner record, soft
fallback."""

from __future__ import annotations

import multiprocessing as mp
import os
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path

import filelock
import orjson
import pytest

from hindsight_hooks.queue.errors import LockTimeoutError, QueueError
from hindsight_hooks.queue.lock import QueueLock, hostname
from hindsight_hooks.timefmt import iso_ms

FORK = mp.get_context("fork")


def _hold_with_queue_lock(queue_path: str, seconds: float, ready: mp.synchronize.Event) -> None:
    lock = QueueLock(Path(queue_path), timeout_ms=5000, retry_ms=5)
    with lock.hold():
        ready.set()
        time.sleep(seconds)


def _hold_with_filelock(lock_path: str, seconds: float, ready: mp.synchronize.Event) -> None:
    with filelock.FileLock(lock_path):
        ready.set()
        time.sleep(seconds)


def _start_holder(target: Callable[..., object], path: str, seconds: float) -> mp.process.BaseProcess:
    ready = FORK.Event()
    proc = FORK.Process(target=target, args=(path, seconds, ready))
    proc.start()
    assert ready.wait(10), "holder did not start"
    return proc


def test_threads_are_mutually_excluded(tmp_path: Path) -> None:
    q = tmp_path / "q.jsonl"
    counter = tmp_path / "counter"
    counter.write_text("0")

    def worker() -> None:
        lock = QueueLock(q, timeout_ms=20000, retry_ms=1)
        for _ in range(50):
            with lock.hold():
                value = int(counter.read_text())
                time.sleep(0)  # invite a race if the lock did not exclude
                counter.write_text(str(value + 1))

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert counter.read_text() == "300"


def test_processes_are_excluded_and_timeout_names_the_holder(tmp_path: Path) -> None:
    q = tmp_path / "q.jsonl"
    proc = _start_holder(_hold_with_queue_lock, str(q), 2.0)
    try:
        lock = QueueLock(q, timeout_ms=150, retry_ms=10)
        start = time.monotonic()
        with pytest.raises(LockTimeoutError) as info, lock.hold():
            pass
        waited = time.monotonic() - start
        message = str(info.value)
        assert message.startswith(f"timed out waiting for retain queue lock {q}.lock")
        assert f"pid {proc.pid}" in message
        assert "held for" in message and " ms" in message
        assert 0.14 <= waited < 1.5
    finally:
        proc.kill()  # kill -9 of the holder releases its OS lock
        proc.join()
    with QueueLock(q, timeout_ms=1000).hold():
        pass


def test_interoperates_with_a_plain_filelock_on_the_same_file(tmp_path: Path) -> None:
    q = tmp_path / "q.jsonl"
    proc = _start_holder(_hold_with_filelock, str(q) + ".lock", 0.6)
    try:
        with pytest.raises(LockTimeoutError), QueueLock(q, timeout_ms=100, retry_ms=10).hold():
            pass
        start = time.monotonic()
        with QueueLock(q, timeout_ms=5000, retry_ms=10).hold():
            assert time.monotonic() - start > 0.1  # it really waited for the other process
    finally:
        proc.join()


def test_every_waiter_times_out_on_its_own(tmp_path: Path) -> None:
    q = tmp_path / "q.jsonl"
    proc = _start_holder(_hold_with_queue_lock, str(q), 3.0)
    outcomes: list[tuple[str, float]] = []

    def waiter() -> None:
        start = time.monotonic()
        try:
            with QueueLock(q, timeout_ms=300, retry_ms=10).hold():
                outcomes.append(("acquired", 0.0))
        except LockTimeoutError:
            outcomes.append(("timeout", time.monotonic() - start))

    try:
        threads = [threading.Thread(target=waiter) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(5)
        assert not any(t.is_alive() for t in threads)
        assert [o[0] for o in outcomes] == ["timeout"] * 4
        # Waiters queue on the in-process mutex first, but each still gives up within its own budget.
        assert all(o[1] < 1.5 for o in outcomes)
    finally:
        proc.kill()
        proc.join()


def test_non_contention_errors_fail_at_once_and_release_the_mutex(tmp_path: Path) -> None:
    q = tmp_path / "q.jsonl"
    (tmp_path / "q.jsonl.lock").mkdir()  # opening the lock file fails with EISDIR
    lock = QueueLock(q, timeout_ms=3000, retry_ms=10)
    start = time.monotonic()
    with pytest.raises(QueueError, match="lock file") as info, lock.hold():
        pass
    assert not isinstance(info.value, LockTimeoutError)
    assert time.monotonic() - start < 1.0
    (tmp_path / "q.jsonl.lock").rmdir()
    with lock.hold():  # the in-process mutex was released despite the failure
        pass


def test_owner_record_while_held(tmp_path: Path) -> None:
    q = tmp_path / "q.jsonl"
    lock = QueueLock(q)
    assert not lock.held_by_someone()
    with lock.hold():
        owner = lock.owner()
        assert owner is not None
        assert owner["pid"] == os.getpid() and owner["hostname"] == hostname()
        assert 0 <= owner["age_ms"] < 5000
        raw = orjson.loads((tmp_path / "q.jsonl.lock.owner.json").read_bytes())
        assert set(raw) == {"pid", "hostname", "acquired_at", "token"}
        assert QueueLock(q).held_by_someone()  # a second descriptor sees the OS lock taken
    assert stat.S_IMODE(os.stat(tmp_path / "q.jsonl.lock.owner.json").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(tmp_path / "q.jsonl.lock").st_mode) == 0o600
    assert not lock.held_by_someone()


def _dead_pid() -> int:
    proc = FORK.Process(target=lambda: None)
    proc.start()
    proc.join()
    assert proc.pid is not None
    return proc.pid


def _write_owner(path: Path, pid: int, age_s: float) -> None:
    record = {"pid": pid, "hostname": hostname(), "acquired_at": iso_ms(time.time() - age_s), "token": "t"}
    path.write_bytes(orjson.dumps(record))


@pytest.fixture
def soft(tmp_path: Path) -> QueueLock:
    return QueueLock(tmp_path / "q.jsonl", timeout_ms=200, retry_ms=10, stale_ms=1000, force_soft=True)


def test_soft_lock_basic_cycle_removes_its_marker(soft: QueueLock) -> None:
    with soft.hold():
        assert soft.lock_path.exists()
        assert soft.owner() is not None
    assert not soft.lock_path.exists()
    assert soft.owner() is None  # cleared on release because the token was ours


def test_soft_lock_without_owner_and_old_mtime_is_broken(soft: QueueLock) -> None:
    soft.lock_path.parent.mkdir(parents=True, exist_ok=True)
    soft.lock_path.write_bytes(b"")
    old = time.time() - 3600
    os.utime(soft.lock_path, (old, old))
    with soft.hold():
        pass
    assert soft.stale_breaks == 1


def test_fresh_soft_lock_is_never_removed(soft: QueueLock) -> None:
    soft.lock_path.parent.mkdir(parents=True, exist_ok=True)
    soft.lock_path.write_bytes(b"")
    with pytest.raises(LockTimeoutError, match="holder unknown"), soft.hold():
        pass
    assert soft.lock_path.exists() and soft.stale_breaks == 0


def test_soft_lock_with_old_owner_and_dead_pid_is_broken(soft: QueueLock) -> None:
    soft.lock_path.parent.mkdir(parents=True, exist_ok=True)
    soft.lock_path.write_bytes(b"")
    _write_owner(soft.owner_path, _dead_pid(), age_s=3600)
    with soft.hold():
        pass
    assert soft.stale_breaks == 1


def test_soft_lock_with_old_owner_but_live_pid_is_kept(soft: QueueLock) -> None:
    soft.lock_path.parent.mkdir(parents=True, exist_ok=True)
    soft.lock_path.write_bytes(b"")
    _write_owner(soft.owner_path, os.getppid(), age_s=3600)
    with pytest.raises(LockTimeoutError, match=f"pid {os.getppid()}"), soft.hold():
        pass
    assert soft.lock_path.exists() and soft.stale_breaks == 0


def test_stale_cleanup_is_guarded_by_the_stale_claim(soft: QueueLock) -> None:
    soft.lock_path.parent.mkdir(parents=True, exist_ok=True)
    soft.lock_path.write_bytes(b"")
    old = time.time() - 3600
    os.utime(soft.lock_path, (old, old))
    soft.stale_claim_path.write_bytes(b"")  # a cleaner at work right now
    with pytest.raises(LockTimeoutError), soft.hold():
        pass
    assert soft.lock_path.exists()
    os.utime(soft.stale_claim_path, (old, old))  # that cleaner died long ago: its claim is abandoned
    with soft.hold():
        pass
    assert soft.stale_breaks == 1 and not soft.stale_claim_path.exists()


def test_a_removed_state_folder_is_recreated(tmp_path: Path) -> None:
    q = tmp_path / "state" / "q.jsonl"
    lock = QueueLock(q)
    with lock.hold():
        pass
    for p in sorted((tmp_path / "state").iterdir()):
        p.unlink()
    (tmp_path / "state").rmdir()
    with lock.hold():
        assert stat.S_IMODE(os.stat(tmp_path / "state").st_mode) == 0o700


# -- a lock file that cannot be opened (issue 9 item 12; ADR 070) ------------------------------------

_UNOPENABLE_CHILD = """
import json, os, sys, time
from pathlib import Path
from hindsight_hooks.config_model import QueueConfig
from hindsight_hooks.queue import RetainQueue, new_job
lock = Path(sys.argv[1] + ".lock")
try:
    os.close(os.open(lock, os.O_RDWR))
    opened = True
except PermissionError:
    opened = False
queue = RetainQueue(Path(sys.argv[1]), QueueConfig(lock_timeout_ms=5000))
out = {"could_open": opened, "ops": []}
item = {"content": "x", "context": "c", "document_id": "d", "update_mode": "append"}
for name, op in (
    ("enqueue", lambda: queue.enqueue(new_job("bank", "auto", [item], True))),
    ("count", queue.count_active),
):
    start = time.monotonic()
    try:
        op()
        error = None
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
    out["ops"].append({"op": name, "s": time.monotonic() - start, "error": error})
out["report"] = queue.report()
print(json.dumps(out))
"""


def _without_file_permission_override() -> None:
    """In the child: drop CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from the bounding set, so
    that even root is held to a file's mode bits after ``exec`` (a non-root user already is)."""
    if os.geteuid() != 0:
        return
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def test_a_lock_file_with_mode_000_fails_every_operation_at_once_and_names_no_stale_holder(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    q = tmp_path / "q.jsonl"
    holder = QueueLock(q, timeout_ms=1000)
    with holder.hold():  # a real earlier holder leaves its (now stale) owner record behind
        pass
    os.chmod(holder.lock_path, 0o000)
    proc = subprocess.run(
        [sys.executable, "-c", _UNOPENABLE_CHILD, str(q)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        preexec_fn=_without_file_permission_override,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["could_open"] is False, "the child is held to the file's mode bits"
    for op in out["ops"]:
        # before: each one polled EACCES as contention for the whole lock_timeout_ms (5 s)
        assert op["s"] < 2.0, op
        assert op["error"] is not None and "LockTimeoutError" not in op["error"], op
        assert f"cannot open lock file {holder.lock_path}" in op["error"] and "EACCES" in op["error"]
        assert "chmod 600" in op["error"] and "remove it" in op["error"]
    report = out["report"]
    assert "lock_owner" not in report, "nobody can hold a lock file nobody can open"
    assert "cannot open lock file" in report["lock_error"]


def test_a_directory_in_place_of_the_lock_file_is_reported_not_called_free(tmp_path: Path) -> None:
    from hindsight_hooks.config_model import QueueConfig
    from hindsight_hooks.queue import RetainQueue

    q = tmp_path / "q.jsonl"
    queue = RetainQueue(q, QueueConfig())
    queue.count_active()  # an earlier hold: the owner record names this (live) process
    queue.lock.lock_path.unlink()
    queue.lock.lock_path.mkdir()
    held, error = queue.lock.probe()
    assert not held and error is not None and "directory" in error and "remove it" in error
    report = queue.report()
    assert "lock_owner" not in report and report["lock_error"] == error
