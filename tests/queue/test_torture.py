"""kill -9 torture: enqueuers and flushers are SIGKILLed at random moments, many rounds.

Afterwards every acknowledged item is delivered (once drained) or still queued, every file
parses or has had its bad lines quarantined, and no job id is ever twice in the active file.

Scale: the default run is the docs/design.md target, >= 200 kills and >= 10,000 acknowledged items
(~15-40 s here, depending on how busy the shared disk's fsync is). ``HH_TORTURE_SCALE``
multiplies the item target and, above 1, the kill target too (``0.2`` for a quick run, ``5`` for
a long one).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import random
import signal
import time
from pathlib import Path

import orjson
import pytest

from hindsight_hooks.config_model import QueueConfig
from hindsight_hooks.queue import RetainQueue, read_strict, read_tolerant

from .procs import FileLogBackend, acked_markers, delivered_markers, enqueue_worker, flush_worker, queued_markers

FORK = mp.get_context("fork")
SCALE = float(os.environ.get("HH_TORTURE_SCALE", "1"))
TARGET_KILLS = max(200, int(200 * SCALE))
TARGET_ACKS = max(100, int(10_000 * SCALE))
# Short claims so that work abandoned by a killed flusher is picked up again within the run.
CFG = {
    "lock_timeout_ms": 30000,
    "lock_retry_ms": 2,
    "claim_ttl_ms": 300,
    "retry_base_ms": 50,
    "retry_max_ms": 200,
    "dead_letter_after_ms": 10**12,
}


def _no_duplicate_ids(qpath: Path) -> None:
    ids = [j["id"] for j in read_tolerant(qpath).jobs]
    assert len(ids) == len(set(ids)), "a job id appears twice in the active file"


@pytest.mark.slow
def test_kill_minus_nine_anywhere_loses_nothing(tmp_path: Path) -> None:
    qpath = tmp_path / ".hindsight" / "retain-queue.jsonl"
    acks = tmp_path / "acks"
    acks.mkdir()
    log = tmp_path / "delivered.log"
    rng = random.Random(20240501)
    kills = rounds = 0
    started = time.monotonic()
    while (kills < TARGET_KILLS or len(acked_markers(acks)) < TARGET_ACKS) and rounds < 2000:
        procs = [
            FORK.Process(
                target=enqueue_worker, args=(str(qpath), str(acks), f"r{rounds}e{i}", -1, rng.random(), CFG, 0.02)
            )
            for i in range(3)
        ]
        procs.append(
            FORK.Process(
                target=flush_worker, args=(str(qpath), str(log), rounds, CFG, 0.1, 0.001, -1)
            )  # 10 % transient failures, and a delay around each delivery to widen the kill window
        )
        for p in procs:
            p.start()
        deadline = time.monotonic() + rng.uniform(0.15, 0.5)
        order = list(procs)
        rng.shuffle(order)
        for p in order:  # staggered kills: each process dies at its own random moment
            time.sleep(max(0.0, min(rng.uniform(0.0, 0.1), deadline - time.monotonic())))
            assert p.pid is not None
            os.kill(p.pid, signal.SIGKILL)
        for p in procs:
            p.join()
            assert p.exitcode == -signal.SIGKILL
            kills += 1
        rounds += 1
        _no_duplicate_ids(qpath)
        if rounds % 4 == 0:
            acked_now = set(acked_markers(acks))
            missing_now = acked_now - set(delivered_markers(log)) - set(queued_markers(qpath))
            assert not missing_now, f"lost after round {rounds}: {sorted(missing_now)[:5]}"
            # Every few rounds a survivor drains the queue (all writers are dead, so any claim is
            # abandoned): the backlog stays small, as it would with a server that keeps up.
            drain = RetainQueue(qpath, QueueConfig(claim_ttl_ms=0, lock_timeout_ms=30000))
            drain.flush(FileLogBackend(log), force=True)

    acked = acked_markers(acks)
    # Before the final drain: everything acknowledged is already delivered or still on disk.
    missing_now = set(acked) - set(delivered_markers(log)) - set(queued_markers(qpath))
    assert not missing_now, f"lost before drain: {sorted(missing_now)[:5]}"

    queue = RetainQueue(qpath, QueueConfig(claim_ttl_ms=0, lock_timeout_ms=30000))
    backend = FileLogBackend(log)
    for _ in range(10):
        queue.flush(backend, force=True)
        if not read_tolerant(qpath).jobs:
            break
    assert read_strict(qpath) == []  # every malformed line was quarantined
    quarantine = Path(str(qpath) + ".malformed.jsonl")
    quarantined = quarantine.read_bytes().splitlines() if quarantine.exists() else []
    for line in quarantined:
        assert {"quarantined_at", "source_queue", "line"} <= set(orjson.loads(line))
    dead = Path(str(qpath) + ".dead.jsonl")
    assert not dead.exists() or read_strict(dead) == []
    missing = set(acked) - set(delivered_markers(log))
    assert not missing, f"lost: {sorted(missing)[:5]}"
    elapsed = time.monotonic() - started
    resent = len(delivered_markers(log)) - len(set(delivered_markers(log)))
    print(
        f"\ntorture: {rounds} rounds, {kills} kills, {len(acked)} acknowledged items, "
        f"{len(quarantined)} torn/garbage lines quarantined, {resent} items redelivered, {elapsed:.1f}s"
    )
    assert kills >= TARGET_KILLS and len(acked) >= TARGET_ACKS
