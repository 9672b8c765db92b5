"""Eight processes enqueue at once while another flushes into a file-backed server:
every acknowledged item is delivered exactly once, and nothing else is."""

from __future__ import annotations

import multiprocessing as mp
from collections import Counter
from pathlib import Path

from hindsight_hooks.config_model import QueueConfig
from hindsight_hooks.queue import RetainQueue, read_strict

from .procs import FileLogBackend, acked_markers, delivered_markers, enqueue_worker, flush_worker

FORK = mp.get_context("fork")
CFG = {"lock_timeout_ms": 60000, "lock_retry_ms": 2}


def test_eight_enqueuers_and_a_flusher(tmp_path: Path) -> None:
    qpath = tmp_path / ".hindsight" / "retain-queue.jsonl"
    acks = tmp_path / "acks"
    acks.mkdir()
    log = tmp_path / "delivered.log"
    per_child = 120
    stop = tmp_path / "stop"
    flusher = FORK.Process(target=flush_worker, args=(str(qpath), str(log), 99, CFG, 0.0, 0.0, -1, str(stop)))
    enqueuers = [
        FORK.Process(target=enqueue_worker, args=(str(qpath), str(acks), f"c{i}", per_child, i, CFG)) for i in range(8)
    ]
    flusher.start()
    for p in enqueuers:
        p.start()
    for p in enqueuers:
        p.join(120)
        assert p.exitcode == 0
    stop.touch()
    flusher.join(60)
    assert flusher.exitcode == 0
    queue = RetainQueue(qpath, QueueConfig())
    backend = FileLogBackend(log)
    queue.flush(backend, force=True)
    assert read_strict(qpath) == []
    acked = acked_markers(acks)
    assert len(acked) == 8 * per_child == len(set(acked))
    delivered = Counter(delivered_markers(log))
    assert set(delivered) == set(acked)
    assert all(n == 1 for n in delivered.values())  # without crashes: exactly once
