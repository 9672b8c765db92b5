"""Embedded recall on real multi-session conversations: REALTALK, evidence recall@10 (issue 13).

REALTALK (Lee et al., 2025, arXiv 2502.13270) is ten 21-day message exchanges between real people,
~20 sessions and ~500 messages each, with memory-probing questions whose evidence messages are
annotated (``dia_id``). It is public (github.com/danny911kr/REALTALK); it is not in this repository
and nothing here downloads it: clone it yourself and pass its ``data`` folder. The repository also
carries a copy of LoCoMo under ``data/locomo/`` — held out by the issue, so that folder is never
read (only ``data/Chat_*.json``).

Each chat is one bank of a fresh store, fed as the plugin's auto-retain feeds it: each session is
one transcript document, appended in deltas of 4 messages with their timestamps; the first
speaker plays ``user``, the second ``assistant`` (the store needs roles; both are people). Each
question is asked with ``limit=10``, a budget that never cuts, and ``query_timestamp`` the day
after the chat's last message. A hit counts for every message whose ``"<role>: <text>"`` it
equals (short greetings repeat; evidence never is one).

Rows, evidence recall@10 in points (share of a question's evidence messages in the top 10):

- ``store``: the embedded store as before (lexical, docs/backends.md#embedded-store);
- ``hybrid``: the store with the ``[semantic]`` extra (ADR 116, 117);
- ``plain FTS5 bm25``: one FTS5 row per message, default tokenizer, the question's words OR-ed;
- ``vector-only``: cosine over the messages with the extra's model, top 10.

Targets (issue 13): hybrid ≥ plain bm25 + 12 and ≥ vector-only + 12.

Usage: ``.venv/bin/python bench/realtalk_recall_bench.py --data PATH/TO/REALTALK/data [--json]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import recall_quality_bench as rq

from hindsight_hooks.backends.base import RecallRequest
from hindsight_hooks.backends.local import LocalBackend

TOP_K = 10
TARGET_POINTS = 12.0
BANK = "realtalk"


@dataclass
class Message:
    tid: int
    dia_id: str
    session: int
    role: str
    text: str
    epoch: float


def chat_files(data: Path) -> list[Path]:
    """The REALTALK chats: ``Chat_*.json`` directly under ``data`` (never ``data/locomo``)."""
    files = sorted(p for p in data.glob("Chat_*.json") if "locomo" not in p.parts)
    if not files:
        raise SystemExit(f"no Chat_*.json under {data}: pass the data folder of a REALTALK clone")
    return files


def parse_time(text: str) -> float:
    return datetime.strptime(text.strip(), "%d.%m.%Y, %H:%M:%S").replace(tzinfo=UTC).timestamp()


def load_chat(path: Path) -> tuple[list[list[Message]], list[dict[str, Any]]]:
    raw = json.loads(path.read_text(encoding="utf-8"))
    first = raw["name"]["speaker_1"]
    sessions: list[list[Message]] = []
    tid = 0
    n = 1
    while f"session_{n}" in raw:
        turns = []
        for m in raw[f"session_{n}"]:
            text = str(m.get("clean_text") or "").strip()
            if not text:
                continue
            role = "user" if m["speaker"] == first else "assistant"
            turns.append(Message(tid, m["dia_id"], n, role, text, parse_time(m["date_time"])))
            tid += 1
        sessions.append(turns)
        n += 1
    return sessions, list(raw.get("qa", []))


def retain_items(
    sessions: list[list[Message]],
    context: str = 'Chat session for "realtalk"',
    tags: tuple[str, ...] = ("source:chat",),
) -> Iterator[dict[str, Any]]:
    """The items auto-retain would deliver for the chat: per session one document, deltas of 4 messages."""
    for s, turns in enumerate(sessions):
        sid = f"{s:016x}"
        for lo in range(0, len(turns), 4):
            delta = turns[lo : lo + 4]
            msgs = [{"role": t.role, "content": t.text, "timestamp": int(t.epoch * 1000)} for t in delta]
            yield {"content": json.dumps(msgs, ensure_ascii=False), "timestamp": rq.iso(delta[-1].epoch),
                   "context": f"{context}, session {sid}.jsonl",
                   "document_id": f"hh-session:{sid}", "update_mode": "append",
                   "tags": [*tags, f"session:{sid}"],
                   "metadata": {"retain_source": "auto", "session_id": sid}}  # fmt: skip


def build_store(path: Path, sessions: list[list[Message]], semantic: Any = None) -> LocalBackend:
    backend = LocalBackend(path, semantic=semantic)
    for op, item in enumerate(retain_items(sessions)):
        backend.retain_batch(BANK, [item], operation_id=f"rt-{op}")
    if semantic is not None:
        backend.wait_for_vectors(600)
    return backend


def recall_of(found: list[set[int]], evidence: set[int]) -> float:
    hit: set[int] = set()
    for tids in found[:TOP_K]:
        hit |= tids & evidence
    return len(hit) / len(evidence)


def run(data: Path, semantic: bool) -> dict[str, Any]:
    names = ["store", "plain_bm25"] + (["hybrid", "vector_only"] if semantic else [])
    scores: dict[str, dict[str, list[float]]] = {n: {} for n in names}
    embedder = None
    if semantic:
        from hindsight_hooks.backends.semantic import StaticEmbedder

        embedder = StaticEmbedder()
    questions = 0
    messages = 0
    for path in chat_files(data):
        sessions, qa = load_chat(path)
        turns = [t for s in sessions for t in s]
        messages += len(turns)
        by_dia = {t.dia_id: t.tid for t in turns}
        by_text: dict[str, set[int]] = {}
        for t in turns:
            by_text.setdefault(f"{t.role}: {t.text}", set()).add(t.tid)
        ds = rq.Dataset(sessions=[], questions=[], query_epoch=0.0)
        ds.turns = {t.tid: rq.Turn(t.tid, t.session, t.role, t.text, t.epoch) for t in turns}
        plain = rq.build_turn_index(ds, None)
        query_epoch = max(t.epoch for t in turns) + rq.DAY
        with tempfile.TemporaryDirectory(prefix="realtalk-bench-") as tmp:
            store = build_store(Path(tmp) / "lexical.db", sessions)
            hybrid = build_store(Path(tmp) / "semantic.db", sessions, embedder) if embedder else None
            vectors = rq.vector_top(embedder, ds) if embedder else None
            for q in qa:
                evidence = {by_dia[e] for e in q.get("evidence", []) if e in by_dia}
                if not evidence:
                    continue
                questions += 1
                req = RecallRequest(query=q["question"], limit=TOP_K, max_tokens=1_000_000,
                                    query_timestamp=rq.iso(query_epoch))  # fmt: skip
                found = {
                    "store": [by_text.get(h.text, set()) for h in store.recall(BANK, req).hits],
                    "plain_bm25": [{t} for t in rq.bm25_top(plain, rq.plain_words(q["question"]))],
                }
                if hybrid is not None and vectors is not None:
                    found["hybrid"] = [by_text.get(h.text, set()) for h in hybrid.recall(BANK, req).hits]
                    found["vector_only"] = [{t} for t in vectors(q["question"])]
                cat = str(q.get("category", "?"))
                for name, hits in found.items():
                    scores[name].setdefault(cat, []).append(recall_of(hits, evidence))
            store.close()
            if hybrid is not None:
                hybrid.close()
    report: dict[str, Any] = {"chats": len(chat_files(data)), "messages": messages, "questions": questions}
    for name, per_cat in scores.items():
        every = [v for vals in per_cat.values() for v in vals]
        report[name] = {"recall_at_10": 100 * statistics.mean(every),
                        "by_category": {c: 100 * statistics.mean(v) for c, v in sorted(per_cat.items())}}  # fmt: skip
    if semantic:
        rq.add_hybrid_points(report)
    return report


def realtalk_parser(doc: str | None) -> argparse.ArgumentParser:
    """The options every REALTALK bench takes: where the clone's data is, and JSON output."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="the data folder of a REALTALK clone")
    parser.add_argument("--json", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = realtalk_parser(__doc__)
    parser.add_argument("--no-semantic", action="store_true")
    args = parser.parse_args(argv)
    from hindsight_hooks.backends.semantic import available

    semantic = available() and not args.no_semantic
    report = run(args.data, semantic)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"REALTALK: {report['chats']} chats, {report['messages']} messages, {report['questions']} questions; "
          f"evidence recall@{TOP_K} in points")  # fmt: skip
    cats = list(report["store"]["by_category"])
    print(f"  {'':30}{'all':>8}" + "".join(f"{'cat ' + c:>9}" for c in cats))
    rows = (("store", "embedded store (lexical)"), ("hybrid", "store + [semantic] (hybrid)"),
            ("plain_bm25", "plain FTS5 bm25 over messages"), ("vector_only", "vector-only, same model"))  # fmt: skip
    rq.print_rows(report, rows, cats)
    if semantic:
        rq.print_hybrid_verdicts(report, TARGET_POINTS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
