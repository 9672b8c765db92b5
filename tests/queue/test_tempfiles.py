"""Which leftover temp files may go (ADR 071): real files, real pids of exited processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from hindsight_hooks.config_model import QueueConfig
from hindsight_hooks.queue import RetainQueue
from hindsight_hooks.queue.tempfiles import GRACE_S, MAX_AGE_S, find_temp_files, remove_abandoned


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait(timeout=30)
    return proc.pid


def _temp(folder: Path, base: str, pid: int, age_s: float = 0.0) -> Path:
    path = folder / f"{base}.{pid}.{os.urandom(4).hex()}.tmp"
    path.write_bytes(b"partial rewrite")
    if age_s:
        old = time.time() - age_s
        os.utime(path, (old, old))
    return path


def test_the_rules(tmp_path: Path) -> None:
    dead, me = _dead_pid(), os.getpid()
    own = _temp(tmp_path, "retain-queue.jsonl", me)  # under the queue lock: always abandoned
    dead_young = _temp(tmp_path, "retain-cursors.json", dead)
    dead_old = _temp(tmp_path, "retain-cursors.json", dead, GRACE_S + 30)
    live_young = _temp(tmp_path, "retain-receipts.json", me)
    live_ancient = _temp(tmp_path, "retain-receipts.json", me, MAX_AGE_S + 60)
    not_ours = tmp_path / "notes.txt.tmp"
    not_ours.write_text("someone else's", encoding="utf-8")

    found = {t.path: t for t in find_temp_files(tmp_path, locked_bases={"retain-queue.jsonl"})}
    assert set(found) == {own, dead_young, dead_old, live_young, live_ancient}
    assert {p for p, t in found.items() if t.removable} == {own, dead_old, live_ancient}
    assert not found[dead_young].writer_alive and found[live_young].writer_alive

    removed = {t.path for t in remove_abandoned(tmp_path, locked_bases={"retain-queue.jsonl"})}
    assert removed == {own, dead_old, live_ancient}
    assert dead_young.exists() and live_young.exists() and not_ours.exists()


def test_without_the_lock_a_queue_temp_file_of_a_live_writer_is_kept(tmp_path: Path) -> None:
    live = _temp(tmp_path, "retain-queue.jsonl", os.getpid())
    assert remove_abandoned(tmp_path) == [] and live.exists()


def test_the_first_queue_operation_sweeps_once(tmp_path: Path) -> None:
    queue = RetainQueue(tmp_path / "retain-queue.jsonl", QueueConfig())
    first = _temp(tmp_path, "retain-queue.jsonl.dead.jsonl", _dead_pid())
    assert queue.count_active() == 0
    assert not first.exists(), "swept under the lock on the first hold"
    second = _temp(tmp_path, "retain-queue.jsonl", _dead_pid())
    queue.count_active()
    assert second.exists(), "once per queue object: later holds pay no directory scan"
    assert [t.path for t in queue.remove_temp_files()] == [second]
