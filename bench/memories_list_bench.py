"""``memories list`` on a large embedded bank: the first page's latency (ADR 130).

Target: the first page of ``/hindsight:memories list`` on 100,000 memories answers in ≤ 100 ms.
Printed next to a baseline measured in the same run on the same file: a plain
``SELECT … ORDER BY created_at DESC LIMIT 20`` with no join, no count and no filters, i.e. the
least any list could cost. Never asserted (machines differ); the figure is for people.

Also printed: the first page with a tag filter, with a session filter, with a text filter (a
substring scan: it reads the bank, so it is expected to be slower), and page 50.

Usage: ``python bench/memories_list_bench.py [--units 100000] [--runs 50] [--dir DIR] [--json]``
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hindsight_hooks.backends.browse import MemoryFilter
from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.backends.local_browse import LocalBrowser

BANK = "hh-project-bench-memories"
TARGET_MS = 100.0
WORDS = [
    "deploy",
    "cache",
    "queue",
    "schema",
    "index",
    "release",
    "build",
    "token",
    "cluster",
    "region",
    "window",
    "retry",
    "webhook",
    "invoice",
    "billing",
    "export",
    "import",
    "session",
    "branch",
    "review",
    "merge",
    "config",
    "timeout",
    "backoff",
    "replica",
    "shard",
]


def build(path: Path, units: int, per_batch: int = 2000) -> None:
    """``units`` one-sentence memories in 100 sessions, one document per 50 memories."""
    backend = LocalBackend(path)
    made = 0
    batch = 0
    while made < units:
        items = []
        for k in range(min(per_batch, units - made)):
            n = made + k
            words = " ".join(WORDS[(n * 7 + j) % len(WORDS)] for j in range(8))
            session = f"{n % 100:016x}"
            items.append({
                "content": f"Memory {n}: the {words} note number {n}.",
                "document_id": f"doc-{n // 50}",
                "update_mode": "append",
                "tags": [f"session:{session}", f"topic:{WORDS[n % len(WORDS)]}"],
                "metadata": {"session_id": session},
                "timestamp": f"2026-{1 + (n // 10000) % 12:02d}-{1 + (n // 400) % 28:02d}T{n % 24:02d}:00:00.000Z",
            })  # fmt: skip
        backend.retain_batch(BANK, items, operation_id=f"bench-{batch}")
        made += len(items)
        batch += 1
    backend.close()


def timed(fn: Callable[[], Any], runs: int) -> dict[str, float]:
    fn()  # warm the page cache and the statement cache
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000.0)
    samples.sort()
    return {"p50_ms": round(statistics.median(samples), 2), "p99_ms": round(samples[int(0.99 * (len(samples) - 1))], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--json", action="store_true")
    ns = parser.parse_args()
    folder = ns.dir or Path(tempfile.mkdtemp(prefix="hh-memories-bench-"))
    path = folder / "memory.db"
    try:
        started = time.perf_counter()
        if not path.exists():
            build(path, ns.units)
        built_s = time.perf_counter() - started
        backend = LocalBackend(path)
        browser = LocalBrowser(backend)
        raw = sqlite3.connect(str(path))
        results = {
            "baseline plain SELECT LIMIT 20": timed(
                lambda: raw.execute(
                    "SELECT id, content FROM units WHERE bank_id = ? ORDER BY created_at DESC LIMIT 20", (BANK,)
                ).fetchall(),
                ns.runs,
            ),
            "list first page": timed(lambda: browser.list_page(BANK, MemoryFilter(limit=20)), ns.runs),
            "list page 50": timed(lambda: browser.list_page(BANK, MemoryFilter(limit=20, offset=980)), ns.runs),
            "list tag=topic:deploy": timed(
                lambda: browser.list_page(BANK, MemoryFilter(tags=["topic:deploy"], limit=20)), ns.runs
            ),
            "list session=…07": timed(
                lambda: browser.list_page(BANK, MemoryFilter(session_id=f"{7:016x}", limit=20)), ns.runs
            ),
            "list text=number 4242 (scan)": timed(
                lambda: browser.list_page(BANK, MemoryFilter(text="number 4242.", limit=20)), max(5, ns.runs // 10)
            ),
        }
        units = raw.execute("SELECT count(*) FROM units WHERE bank_id = ?", (BANK,)).fetchone()[0]
        backend.close()
        raw.close()
        report = {"units": units, "build_s": round(built_s, 1), "target_first_page_ms": TARGET_MS, "results": results}
        if ns.json:
            print(json.dumps(report, indent=2))
            return
        print(f"memories list bench: {units} memories in one bank (built in {built_s:.1f} s)")
        for name, r in results.items():
            note = ""
            if name == "list first page":
                verdict = "meets" if r["p50_ms"] <= TARGET_MS else "MISSES"
                note = f"  target ≤ {TARGET_MS:.0f} ms: {verdict}"
            print(f"  {name:32s} p50 {r['p50_ms']:8.2f} ms  p99 {r['p99_ms']:8.2f} ms{note}")
    finally:
        if ns.dir is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
