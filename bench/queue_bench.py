"""Queue benchmarks: durable enqueue vs a plain append+fsync loop, and 8-process lock contention.

Targets (docs/design.md): durable enqueue reaches >= 0.5 of the throughput of the plainest durable
append one can write (open once, ``write`` + ``fsync`` per line) on the same disk in the same
run. Both loops write the same lines into the same folder; the runs alternate so disk noise
hits both alike. Printed, never asserted.

Usage: ``python bench/queue_bench.py [--jobs N] [--rounds R] [--procs P] [--dir DIR]``
(``--dir`` defaults to a temporary folder under the current directory, so it measures the disk
the project lives on, not a tmpfs).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from hindsight_hooks.config_model import QueueConfig
from hindsight_hooks.queue import RetainQueue, new_job

ITEM = {
    "content": '[{"role": "user", "content": "refactor the parser", "timestamp": "2024-05-01T12:00:00.000Z"}]',
    "context": 'Coding session (agent) for repo "demo", session s.jsonl',
    "document_id": "hh-session:0123456789abcdef",
    "update_mode": "append",
    "tags": ["repo:demo", "source:agent"],
    "metadata": {"session_id": "0123456789abcdef", "source": "hindsight-hooks"},
}


def make_jobs(n: int) -> list[dict[str, Any]]:
    return [new_job("bench-bank", "auto", [ITEM], True) for _ in range(n)]


def bench_enqueue(root: Path, n: int, rounds: int, block: int = 50) -> None:
    """Alternate blocks of plain appends and durable enqueues, so disk noise hits both alike."""
    import orjson

    plain_t = queue_t = 0.0
    ratios: list[float] = []
    for r in range(rounds):
        folder = root / f"round{r}"
        folder.mkdir()
        jobs = make_jobs(n)
        lines = [orjson.dumps(j) + b"\n" for j in jobs]
        queue = RetainQueue(folder / "retain-queue.jsonl", QueueConfig())
        fd = os.open(folder / "plain.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        rp = rq = 0.0
        try:
            for lo in range(0, n, block):
                t0 = time.perf_counter()
                for line in lines[lo : lo + block]:
                    os.write(fd, line)
                    os.fsync(fd)
                t1 = time.perf_counter()
                for job in jobs[lo : lo + block]:
                    queue.enqueue(job)
                t2 = time.perf_counter()
                rp += t1 - t0
                rq += t2 - t1
        finally:
            os.close(fd)
        plain_t += rp
        queue_t += rq
        ratios.append(rp / rq)
        shutil.rmtree(folder)
    total = n * rounds
    print(f"enqueue: {n} jobs x {rounds} rounds, interleaved in blocks of {block}, in {root.parent}")
    print(f"  plain append+fsync : {total / plain_t:9.0f} lines/s ({plain_t / total * 1e6:.0f} us each)")
    print(f"  durable enqueue    : {total / queue_t:9.0f} jobs/s  ({queue_t / total * 1e6:.0f} us each)")
    print(f"  ratio enqueue/plain: {plain_t / queue_t:.2f} overall; per round {', '.join(f'{x:.2f}' for x in ratios)}")
    print("  target             : >= 0.50")


def _contender(path: str, n: int, start_at: float, plain: bool, out: Any) -> None:
    """One process: ``n`` durable enqueues (or, with ``plain``, ``n`` unlocked append+fsync lines),
    reporting its span and every call's latency (which, for the queue, includes lock waiting)."""
    import orjson

    jobs = make_jobs(n)
    lines = [orjson.dumps(j) + b"\n" for j in jobs]
    queue = RetainQueue(Path(path), QueueConfig(lock_timeout_ms=60000))
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600) if plain else -1
    lat: list[float] = []
    while time.time() < start_at:
        time.sleep(0.001)
    t0 = time.time()
    for job, line in zip(jobs, lines, strict=True):
        c0 = time.perf_counter()
        if plain:
            os.write(fd, line)
            os.fsync(fd)
        else:
            queue.enqueue(job)
        lat.append(time.perf_counter() - c0)
    end = time.time()
    if plain:
        os.close(fd)
    out.put((t0, end, lat))


def _run_procs(path: Path, procs: int, n: int, plain: bool) -> tuple[float, list[float]]:
    """``procs`` processes writing ``n`` lines each into ``path``, all starting at one instant."""
    path.parent.mkdir(parents=True, exist_ok=True)
    ctx = mp.get_context("fork")
    out: Any = ctx.Queue()
    start_at = time.time() + 0.5
    workers = [ctx.Process(target=_contender, args=(str(path), n, start_at, plain, out)) for _ in range(procs)]
    for w in workers:
        w.start()
    spans = [out.get() for _ in workers]
    for w in workers:
        w.join()
    wall = max(end for _, end, _ in spans) - min(begin for begin, _, _ in spans)
    return wall, sorted(x for _, _, lat in spans for x in lat)


def _pct(sorted_values: list[float], q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))] * 1e3


def bench_contention(root: Path, procs: int, n: int) -> None:
    """Lock contention: ``procs`` processes enqueue ``n`` jobs each into one queue at the same instant.

    Same-run baselines: the same number of processes appending + fsyncing the same lines to one
    plain file with no lock at all (what the disk allows), and one process enqueueing alone
    (what the lock costs when nobody waits for it).
    """
    total = procs * n
    plain_wall, _ = _run_procs(root / "plain-multi" / "plain.jsonl", procs, n, plain=True)
    solo_wall, solo_lat = _run_procs(root / "solo" / "retain-queue.jsonl", 1, n, plain=False)
    path = root / "contended" / "retain-queue.jsonl"
    wall, lat = _run_procs(path, procs, n, plain=False)
    count = RetainQueue(path, QueueConfig()).count_active()
    plain_rate, solo_rate, rate = total / plain_wall, n / solo_wall, total / wall
    print(f"contention: {procs} processes x {n} jobs on one queue")
    print(f"  plain append+fsync, all procs, no lock: {plain_rate:9.0f} lines/s")
    print(f"  durable enqueue, 1 process            : {solo_rate:9.0f} jobs/s")
    print(f"  durable enqueue, all procs, one lock  : {rate:9.0f} jobs/s ({wall:.2f} s wall)")
    print(f"  ratio vs plain append+fsync, all procs: {rate / plain_rate:.2f}")
    print(f"  ratio vs 1-process enqueue            : {rate / solo_rate:.2f} (> 1: waiters share fsyncs)")
    print(
        f"  enqueue latency ms, all procs         : p50 {_pct(lat, 0.5):.1f}, p99 {_pct(lat, 0.99):.1f}, "
        f"max {lat[-1] * 1e3:.1f} (1 process: p50 {_pct(solo_lat, 0.5):.1f}, p99 {_pct(solo_lat, 0.99):.1f})"
    )
    print(f"  jobs on disk                          : {count} of {total} ({'ok' if count == total else 'MISMATCH'})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--procs", type=int, default=8)
    parser.add_argument("--contention-jobs", type=int, default=300)
    parser.add_argument("--dir", type=Path, default=Path.cwd())
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix=".queue-bench-", dir=args.dir))
    try:
        bench_enqueue(root, args.jobs, args.rounds)
        bench_contention(root, args.procs, args.contention_jobs)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
