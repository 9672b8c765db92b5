"""Child-process workers for the concurrency and kill -9 tests.

Children are forked (fast to start) and write what they did to side files with fsync, so a
parent can audit the outcome even after killing them with SIGKILL at a random moment:

* an *ack file* gets an enqueued item's marker only **after** ``enqueue`` returned (so every line
  in it is an acknowledged item);
* the *delivered log* is the server: ``FileLogBackend`` appends the markers of every request it
  accepts before answering (one ``write``; the page cache survives a SIGKILL of the writer, and
  only processes are killed here, so it needs no fsync).
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path
from typing import Any

import orjson

from hindsight_hooks.backends.base import BackendError, RetainOutcome
from hindsight_hooks.config_model import QueueConfig
from hindsight_hooks.queue import QueueError, RetainQueue, read_tolerant

from .conftest import FakeBackend, job, markers_of_items


def append_fsync(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def append_line(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def read_complete_lines(path: Path) -> list[bytes]:
    """Lines that were completely written (a line torn by a kill is ignored)."""
    if not path.exists():
        return []
    data = path.read_bytes()
    return [line for line in data[: data.rfind(b"\n") + 1].split(b"\n") if line.strip()]


class FileLogBackend(FakeBackend):
    """A 'server' whose memory is an append-only, fsynced log shared by every process."""

    def __init__(self, log: Path, *, fail_rate: float = 0.0, max_delay_s: float = 0.0, seed: int | None = None) -> None:
        super().__init__()
        self.log = log
        self.fail_rate = fail_rate
        self.max_delay_s = max_delay_s
        self.rng = random.Random(seed)

    def retain_batch(
        self,
        bank_id: str,
        items: list[dict[str, Any]],
        *,
        operation_id: str,
        async_: bool = True,
        timeout_s: float | None = None,
    ) -> RetainOutcome:
        if self.max_delay_s:
            time.sleep(self.rng.random() * self.max_delay_s)
        if self.rng.random() < self.fail_rate:
            raise BackendError("retain", "transient", "simulated outage", 503)
        record = {"op": operation_id, "bank": bank_id, "markers": markers_of_items(items)}
        append_line(self.log, orjson.dumps(record) + b"\n")
        if self.max_delay_s:
            time.sleep(self.rng.random() * self.max_delay_s)  # a window between delivery and commit
        return RetainOutcome(items_count=len(items), operation_ids=[operation_id])


def delivered_markers(log: Path) -> list[str]:
    out: list[str] = []
    for line in read_complete_lines(log):
        try:
            out.extend(orjson.loads(line)["markers"])
        except (orjson.JSONDecodeError, KeyError, TypeError):
            continue
    return out


def acked_markers(ack_dir: Path) -> list[str]:
    return [line.decode() for p in sorted(ack_dir.glob("ack-*")) for line in read_complete_lines(p)]


def queued_markers(qpath: Path) -> list[str]:
    out: list[str] = []
    for path in (qpath, Path(str(qpath) + ".dead.jsonl")):
        for queued in read_tolerant(path).jobs:
            out.extend(markers_of_items(queued["items"]))
    return out


def enqueue_worker(
    qpath: str, ack_dir: str, name: str, count: int, seed: int, cfg: dict[str, Any], coalesce_rate: float = 0.3
) -> None:
    """Enqueue ``count`` items (forever if negative), recording each marker after it is acknowledged."""
    rng = random.Random(seed)
    queue = RetainQueue(Path(qpath), QueueConfig(**cfg))
    ack = Path(ack_dir) / f"ack-{name}"
    n = 0
    while count < 0 or n < count:
        marker = f"{name}-{n}"
        bank = rng.choice(["bank-a", "bank-b", "bank-c"])
        try:
            queue.enqueue(
                job(bank, marker, doc=f"doc-{rng.randint(1, 3)}", now=time.time()),
                coalesce=rng.random() < coalesce_rate,
            )
        except QueueError:
            n += 1  # not acknowledged (e.g. a lock timeout under heavy contention): not recorded
            continue
        append_fsync(ack, marker.encode() + b"\n")
        n += 1


def flush_worker(
    qpath: str,
    log: str,
    seed: int,
    cfg: dict[str, Any],
    fail_rate: float,
    max_delay_s: float,
    rounds: int,
    stop_file: str | None = None,
) -> None:
    """Flush repeatedly into the file-backed server (forever if ``rounds`` is negative, or until
    ``stop_file`` exists)."""
    rng = random.Random(seed)
    queue = RetainQueue(Path(qpath), QueueConfig(**cfg))
    backend = FileLogBackend(Path(log), fail_rate=fail_rate, max_delay_s=max_delay_s, seed=seed)
    done = 0
    while (rounds < 0 or done < rounds) and not (stop_file and os.path.exists(stop_file)):
        try:
            queue.flush(backend, force=True, max_jobs=rng.choice([None, 1, 5, 20]))
        except QueueError:
            pass
        done += 1
        time.sleep(rng.uniform(0.002, 0.02))  # a flusher that spins would hold the lock half the time
