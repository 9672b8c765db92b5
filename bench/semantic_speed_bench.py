"""What the ``[semantic]`` extra costs the embedded store at 10k and 100k units (ADR 116, 117).

Printed, never asserted. For each size, one bank is filled through ``LocalBackend.retain_batch``
(5-message transcript items of real words: identifier and English tokens of the standard
library's sources, as ``hooks_bench.py`` does), its vectors are computed by the store's own
worker, and then, interleaved on the same queries (a few words of another source line each):

- **hybrid recall**: ``LocalBackend.recall`` with the extra (query vector included; each query is
  new, so the per-turn cache never answers);
- **lexical recall** (baseline): the same file opened without the extra — the store as before;
- **vector-only search** (baseline): the in-memory search alone (sign-bit prefilter + exact
  rescoring), and the same search done exactly over a float32 copy of the matrix;
- **plain FTS5 bm25** (baseline): ``ORDER BY bm25 LIMIT 50`` over the bank, unbounded.

Also: query embedding time, the bank matrix's resident bytes (and the process's RSS growth while
it loads), the first-use costs (model load, matrix load — both on a background thread, never on
the hook's path), and how many of the exact top 10 the prefilter keeps.

Targets (issue 13): context overhead with semantic on, 10k memories, query embedding included
p50 ≤ 8 ms, p99 ≤ 25 ms (the plugin adds ~2–3 ms to the store's recall, ADR 053); recall at 100k
p50 ≤ 50 ms with sublinear growth from 10k; 100k vectors ≤ 64 MB resident; first use off the
hook's path or ≤ 300 ms.

Usage: ``.venv/bin/python bench/semantic_speed_bench.py [--sizes 10000,100000] [--queries 200]``
"""

from __future__ import annotations

import argparse
import gc
import random
import re
import resource
import sqlite3
import statistics
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

from hindsight_hooks.backends.base import RecallRequest
from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.backends.local_dense import DenseIndex
from hindsight_hooks.backends.local_schema import slot_range
from hindsight_hooks.backends.local_text import content_words, match_expression, query_terms
from hindsight_hooks.backends.semantic import StaticEmbedder

BANK = "bench"
_WORD = re.compile(r"[A-Za-z][A-Za-z_]{2,}")


def corpus_lines(limit: int) -> list[str]:
    """Lines of real words from the standard library's sources (deterministic order)."""
    root = Path(sysconfig.get_paths()["stdlib"])
    out: list[str] = []
    for path in sorted(root.glob("*.py")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            words = _WORD.findall(line)
            if len(words) >= 4:
                out.append(" ".join(words[:24]))
                if len(out) >= limit:
                    return out
    return out


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def rss_mb() -> float:
    """The process's current resident set (not the peak), from /proc."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return pages * resource.getpagesize() / 1e6


def fill(path: Path, lines: list[str], units: int) -> None:
    backend = LocalBackend(path)
    rnd = random.Random(units)
    for start in range(0, units, 5000):
        items = []
        for d in range(start, min(units, start + 5000), 5):
            msgs = [{"role": "user" if k % 2 == 0 else "assistant", "content": rnd.choice(lines)} for k in range(5)]
            items.append({"content": __import__("json").dumps(msgs), "document_id": f"s{d}",
                          "metadata": {"retain_source": "auto"}})  # fmt: skip
        backend.retain_batch(BANK, items, operation_id=f"fill-{start}")
    backend.close()


def measure(units: int, lines: list[str], queries: list[str], embedder: StaticEmbedder) -> dict[str, Any]:
    import numpy as np

    with tempfile.TemporaryDirectory(prefix="semantic-bench-") as tmp:
        path = Path(tmp) / "memory.db"
        t0 = time.perf_counter()
        fill(path, lines, units)
        fill_s = time.perf_counter() - t0
        lexical = LocalBackend(path)
        hybrid = LocalBackend(path, semantic=embedder)
        t0 = time.perf_counter()
        hybrid.wait_for_vectors(1800)  # the worker's catch-up embeds every unit
        embed_s = time.perf_counter() - t0
        hybrid.recall(BANK, RecallRequest(query="warm the matrix"))  # cold: hands the load to the worker
        hybrid.wait_for_vectors(600)
        # Memory and first load, measured on an index of its own: what a new process pays. (Every
        # backend of this process on the file shares one index, ADR 175: a second backend is warm.)
        assert hybrid._semantic is not None
        lo, hi = slot_range(1)
        conn = sqlite3.connect(str(path))
        gc.collect()
        before = rss_mb()
        t0 = time.perf_counter()
        cold = DenseIndex().refresh(conn, lo, hi, hybrid._semantic.model, hybrid._semantic.dim)
        warm_s = time.perf_counter() - t0
        gc.collect()
        rss_growth = rss_mb() - before
        del cold
        bank = hybrid._dense.refresh(conn, lo, hi, hybrid._semantic.model, hybrid._semantic.dim)
        matrix32 = bank.dequantized()
        times: dict[str, list[float]] = {"hybrid": [], "lexical": [], "vector": [], "exact": [], "bm25": [], "q": []}
        agree: list[float] = []
        for i, query in enumerate(queries):
            req = RecallRequest(query=query, limit=8, budget="mid")
            order = [("hybrid", hybrid), ("lexical", lexical)]
            if i % 2:
                order.reverse()
            for name, backend in order:
                t0 = time.perf_counter()
                backend.recall(BANK, req)
                times[name].append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            qvec = embedder.embed_array([content_words(query)])[0]
            times["q"].append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            got = hybrid._dense.top(bank, qvec, 50)
            times["vector"].append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            sims = matrix32 @ qvec
            exact = np.argsort(-sims)[:10]
            times["exact"].append((time.perf_counter() - t0) * 1000)
            truth = {int(bank.rowids[j]) for j in exact}
            agree.append(len(truth & {r for r, _ in got[:10]}) / 10)
            terms = query_terms(query)
            if terms:
                t0 = time.perf_counter()
                conn.execute(
                    "SELECT rowid FROM units_fts WHERE units_fts MATCH ? AND rowid BETWEEN ? AND ? "
                    "ORDER BY bm25(units_fts) LIMIT 50",
                    (match_expression(terms), lo, hi),
                ).fetchall()
                times["bm25"].append((time.perf_counter() - t0) * 1000)
        out: dict[str, Any] = {"units": units, "fill_s": fill_s, "embed_s": embed_s, "warm_s": warm_s,
                               "matrix_mb": bank.nbytes() / 1e6, "rss_growth_mb": rss_growth,
                               "prefilter_top10_agreement": 100 * statistics.mean(agree)}  # fmt: skip
        for name, vals in times.items():
            out[f"{name}_p50"] = statistics.median(vals)
            out[f"{name}_p99"] = pct(vals, 0.99)
        lexical.close()
        hybrid.close()
        conn.close()
        return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    lines = corpus_lines(60_000)
    rnd = random.Random(116)
    picked = rnd.sample(lines, args.queries)
    queries = [" ".join(rnd.sample(line.split(), min(4, len(line.split())))) for line in picked]
    embedder = StaticEmbedder()
    t0 = time.perf_counter()
    embedder.load()
    load_s = time.perf_counter() - t0
    print(f"model load (background thread, never on a hook): {load_s:.2f} s (target: off the hook's path)")
    results = [measure(n, lines, queries, embedder) for n in sizes]
    for r in results:
        print(f"{r['units']} units (filled in {r['fill_s']:.1f} s; vectors by the worker in {r['embed_s']:.1f} s; "
              f"a new process reads the bank matrix in {r['warm_s']:.2f} s, on its worker)")  # fmt: skip
        print(f"  hybrid recall     p50 {r['hybrid_p50']:6.2f} ms  p99 {r['hybrid_p99']:6.2f} ms   "
              "(target at 10k: + plugin ≤ 8 / 25 ms; at 100k p50 ≤ 50 ms)")  # fmt: skip
        print(f"  lexical recall    p50 {r['lexical_p50']:6.2f} ms  p99 {r['lexical_p99']:6.2f} ms   "
              "(baseline: the store before)")  # fmt: skip
        print(f"  plain FTS5 bm25   p50 {r['bm25_p50']:6.2f} ms  p99 {r['bm25_p99']:6.2f} ms   (baseline, unbounded)")
        print(f"  vector search     p50 {r['vector_p50']:6.2f} ms  p99 {r['vector_p99']:6.2f} ms   "
              f"(exact float32 matvec: p50 {r['exact_p50']:.2f} ms; prefilter keeps "
              f"{r['prefilter_top10_agreement']:.1f} % of the exact top 10)")  # fmt: skip
        print(f"  query embedding   p50 {r['q_p50']:6.3f} ms  p99 {r['q_p99']:6.3f} ms")
        print(f"  bank matrix       {r['matrix_mb']:.1f} MB allocated; a new process's RSS grew "
              f"{r['rss_growth_mb']:.1f} MB loading it (target ≤ 64 MB per 100k vectors)")  # fmt: skip
    if len(results) >= 2:
        a, b = results[0], results[-1]
        print(f"growth {a['units']} → {b['units']}: hybrid p50 ×{b['hybrid_p50'] / a['hybrid_p50']:.2f}, "
              f"lexical ×{b['lexical_p50'] / a['lexical_p50']:.2f}, plain bm25 ×{b['bm25_p50'] / a['bm25_p50']:.2f} "
              f"(target: sublinear, < ×{b['units'] / a['units']:.0f})")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
