"""Embedded recall quality on a held-out long conversation: evidence recall@10 vs plain FTS5 bm25.

docs/design.md#targets: embedded recall quality on a held-out long-conversation benchmark
(evidence recall@10) ≥ plain FTS5 bm25 over turns + 10 points. Printed, never asserted.

Why synthetic: public long-conversation sets (LoCoMo, LongMemEval) cannot be downloaded here,
so this script *generates* one, deterministically (``--seed``, default 20261124), shaped like
them and like a coding agent's life: one user and one assistant over ``--sessions`` sessions
(default 45) spread over ~3 months, ~24 messages each (~1,100 turns). Sessions are mostly
filler — routine coding talk that reuses the same domain words ("port", "timeout", "owner",
"version", service names) in unrelated ways, and turns that mention a service without stating
anything durable about it — with facts planted among them. Each question names the turns that
hold its evidence (like LoCoMo's ``evidence`` field):

- ``single`` (45 %): a fact stated once, asked in other words (other inflections, other verbs);
- ``reply`` (20 %): the user asks, the assistant answers in the next turn without repeating the
  question's words; both turns are evidence;
- ``multi`` (20 %): two facts about one service stated in different sessions, asked together;
- ``update`` (15 %): a fact stated early and changed later; the evidence is the latest statement.

Held out: the generator, the category mix and the question wording were written before this
script was first run, from the shape of those public sets, and were not changed after seeing a
result; the store's ranking constants come from docs/backends.md#embedded-store and were never tuned on this
set (nothing in ``hindsight_hooks`` reads it). ``--seed`` gives fresh draws of the same shape.

Measured (evidence recall@10 = share of a question's evidence turns among the top 10, averaged):

- ``embedded store``: the real ``LocalBackend`` — sessions retained as the plugin does (auto-retain
  append deltas of 4 messages, each with its messages' timestamps), recall with the question
  as query, ``limit=10``, a budget that never cuts, ``query_timestamp`` = the day after the last
  session;
- ``plain FTS5 bm25 over turns`` (the target's baseline): one FTS5 row per turn with FTS5's default
  tokenizer, the question's words (lower-case ``\\w+``, ≥2 chars) quoted and OR-ed,
  ``ORDER BY bm25 LIMIT 10``;
- ``bm25, same index and terms`` (diagnostic): porter tokenizer and the docs/backends.md#embedded-store query terms,
bm25
  only — the difference to the store is what docs/backends.md#embedded-store's scoring (coverage, recency, importance)
  adds.

Usage: ``python bench/recall_quality_bench.py [--seed N] [--sessions N] [--json]``
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hindsight_hooks.backends.base import RecallRequest
from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.backends.local_text import content_words, match_expression, query_terms

BANK = "hh-project-quality-0123456789ab"
TOP_K = 10
TARGET_POINTS = 10.0
EMBED_DIM = 0  # 0: the extra's default; --dim tries another truncation
HYBRID_TARGET_POINTS = 12.0  # issue 13: hybrid ≥ plain bm25 + 12 and ≥ vector-only + 12
DAY = 86_400
START_EPOCH = 1_735_689_600  # 2025-01-01T00:00:00Z
MIX = (("single", 0.45), ("reply", 0.20), ("multi", 0.20), ("update", 0.15))

SERVICES = [
    "billing service", "auth gateway", "search indexer", "notification worker", "staging database",
    "metrics exporter", "image resizer", "payment webhook", "report generator", "session store",
    "feature flag service", "audit logger", "email sender", "rate limiter", "upload proxy",
    "geo lookup", "invoice renderer", "cache warmer", "export scheduler", "sync daemon",
    "admin dashboard", "pricing engine", "webhook relay", "thumbnail cache", "ledger api",
    "inventory tracker", "chat bridge", "backup agent", "license checker", "event bus",
]  # fmt: skip
PEOPLE = ["Priya", "Marcus", "Ines", "Tomasz", "Yuki", "Dara", "Olu", "Beatriz", "Kofi", "Lena", "Ravi", "Sofia"]
LIBS = ["tenacity", "structlog", "pydantic", "orjson", "httpx", "sqlalchemy", "celery", "apscheduler", "pillow",
        "jinja2", "boto3", "redis-py", "click", "attrs", "msgspec", "arrow"]  # fmt: skip
CAUSES = [
    "a race between the cache refresh and the shutdown hook", "an unclosed file handle in the retry loop",
    "a timezone mismatch in the cron parser", "integer overflow when the counter wrapped",
    "a stale connection pool after failover", "a missing await in the flush coroutine",
    "double decoding of the UTF-8 payload", "a lock taken in the wrong order", "an off-by-one in pagination",
    "a default argument shared between calls", "an expired TLS certificate in the fixture",
    "a regex that backtracked on long lines",
]  # fmt: skip
PATHS = ["deploy/values.yaml", "config/app.toml", "ops/settings.ini", "etc/service.json", "infra/env/prod.env",
         "conf/local.yaml", "charts/main/values.yaml", "settings/base.py"]  # fmt: skip
SCHEDULES = ["15 minutes", "hour", "6 hours", "night at 2am", "Monday morning", "30 minutes", "day at noon"]

# kind → (statement templates, reply-style answer templates, question templates, value pool key)
KINDS: dict[str, tuple[list[str], list[str], list[str], str]] = {
    "port": (
        ["I moved the {e} to listen on port {v} so it stops clashing with the proxy.",
         "Heads up: the {e} now binds port {v}, I changed the compose file."],
        ["Use {v}, the lower ones are taken by the proxy and the debugger."],
        ["Which port is the {e} listening on?", "What port did we bind for the {e}?"],
        "port",
    ),
    "owner": (
        ["{v} owns the {e} from now on, so ping them before touching it.",
         "Ownership of the {e} moved to {v} after the reorg."],
        ["That's {v}; they took it over after the reorg."],
        ["Who is responsible for the {e}?", "Who owns the {e}?"],
        "person",
    ),
    "library": (
        ["For the {e} we decided to use {v} instead of writing our own.",
         "Decision: the {e} goes with {v}, the hand-rolled version was too fragile."],
        ["Go with {v}; it is maintained and we already depend on it elsewhere."],
        ["Which library did we choose for the {e}?", "What did we decide to use in the {e}?"],
        "lib",
    ),
    "timeout": (
        ["Bumped the {e} timeout to {v} seconds after the flaky runs.",
         "The {e} now gives up after {v} seconds; the old limit was too tight."],
        ["{v} seconds. Anything shorter flaked on the slow runners."],
        ["How long is the {e} timeout?", "After how many seconds does the {e} time out?"],
        "seconds",
    ),
    "cause": (
        ["Found it: the {e} crash was caused by {v}.",
         "Root cause for the {e} failures: {v}."],
        ["It was {v}. The fix is in the last commit."],
        ["What caused the {e} to crash?", "Why did the {e} keep failing?"],
        "cause",
    ),
    "path": (
        ["The config for the {e} lives in {v}, not in the old settings module.",
         "I moved the {e} settings into {v}."],
        ["In {v}; the old settings module is gone."],
        ["Where is the {e} configured?", "Which file holds the {e} configuration?"],
        "path",
    ),
    "version": (
        ["We pinned the {e} client to version {v} because newer releases broke the build.",
         "Pinning the {e} dependency at {v} until upstream fixes the regression."],
        ["Stay on {v}; the newer releases break the build."],
        ["Which version is the {e} pinned to?", "What version of the {e} dependency do we pin?"],
        "version",
    ),
    "schedule": (
        ["The {e} job runs every {v} now.",
         "Changed the {e} cron so it fires every {v}."],
        ["Every {v}; more often overloaded the database."],
        ["How often does the {e} job run?", "On what schedule does the {e} run?"],
        "schedule",
    ),
}  # fmt: skip
ASK = {
    "port": "What port should the {e} use?",
    "owner": "Who should I ask before changing the {e}?",
    "library": "Should the {e} use a library or our own code?",
    "timeout": "What timeout should the {e} have?",
    "cause": "Any idea why the {e} crashed last night?",
    "path": "Where do the {e} settings go now?",
    "version": "Which release of the {e} dependency is safe?",
    "schedule": "How often should the {e} job fire?",
}
UPDATE = "Change of plan for the {e}: {s}"
MULTI_Q = "For the {e}, {q1} And {q2}"

FILLER_USER = [
    "Can you run the test suite again? I think the last failure was a fluke.",
    "Let's clean up the imports in this module before we commit.",
    "The CI runner timed out again on the integration job, can you look?",
    "Please rename the helper to something clearer, the current name is confusing.",
    "I'm getting a port conflict on my laptop when I start everything at once.",
    "Can you check why the linter is complaining about line length?",
    "Let's write a short changelog entry for this release.",
    "Who reviewed the last pull request? The owner field in the template is empty.",
    "Bump the version in the package metadata, we are cutting a release today.",
    "The docs build is slow, maybe we can cache the dependencies.",
    "Can you add type hints to the new functions?",
    "I want to split this file, it is getting too long.",
    "Please double check the error message wording.",
    "Let's schedule a cleanup of the old feature branches.",
    "Can you make the retry logic configurable?",
]  # fmt: skip
FILLER_ASSISTANT = [
    "Done. All tests pass locally; the earlier failure does not reproduce.",
    "I removed the unused imports and sorted the rest.",
    "The job hit the runner's time limit while downloading dependencies; a retry passed.",
    "Renamed it and updated the three call sites.",
    "Something else already uses that port; stopping the old container fixed it.",
    "The linter limit is 120 characters; I wrapped the two long lines.",
    "Added a changelog entry under Unreleased.",
    "I filled in the owner field in the template with the team alias.",
    "Bumped the version and regenerated the lock file.",
    "Caching the dependency folder cuts the docs build roughly in half.",
    "Added type hints; mypy is clean.",
    "Split it into two modules and kept the public names re-exported.",
    "Reworded the message so it says what to do next.",
    "Listed the stale branches; none of them has open work.",
    "The retry count and delay now come from the config with the old values as defaults.",
]  # fmt: skip
MENTION_USER = [
    "The {e} logs look noisy today, anything worrying?",
    "Can you add a unit test for the {e} error path?",
    "I refactored the {e} module a bit, mostly renames.",
    "Deploying the {e} to staging now.",
    "Let's look at the {e} dashboard after lunch.",
    "Does the {e} still need that feature flag?",
]  # fmt: skip
MENTION_ASSISTANT = [
    "Nothing alarming in the {e} logs, just retries that succeeded.",
    "Added a test for the {e} error path; it covers the empty response too.",
    "The {e} changes look fine, the diff is mostly mechanical.",
    "The {e} deploy finished and the health check is green.",
    "The {e} dashboard shows normal traffic.",
    "The {e} flag is still read in one place; I can remove it after the release.",
]  # fmt: skip


@dataclass
class Turn:
    tid: int
    session: int
    role: str
    text: str
    epoch: float


@dataclass
class Question:
    category: str
    text: str
    evidence: list[int]


@dataclass
class Dataset:
    sessions: list[list[Turn]]
    questions: list[Question]
    query_epoch: float
    turns: dict[int, Turn] = field(default_factory=dict)


def value(rnd: random.Random, pool: str, used: set[str], reply_used: set[str] | None = None) -> str:
    """A value for ``pool``; numbers never repeat, nor does any value among the replies
    (``reply_used``), so an evidence turn is identifiable by its text even when it does not
    name the service."""
    for _ in range(1000):
        if pool == "port":
            v = str(rnd.randint(2000, 9999))
        elif pool == "person":
            v = rnd.choice(PEOPLE)
        elif pool == "lib":
            v = rnd.choice(LIBS)
        elif pool == "seconds":
            v = str(rnd.choice(range(5, 300, 5)))
        elif pool == "cause":
            v = rnd.choice(CAUSES)
        elif pool == "path":
            v = rnd.choice(PATHS)
        elif pool == "version":
            v = f"{rnd.randint(1, 9)}.{rnd.randint(0, 30)}.{rnd.randint(0, 12)}"
        else:
            v = rnd.choice(SCHEDULES)
        if reply_used is not None and v in reply_used:
            continue
        if v not in used or pool in ("person", "lib", "cause", "path", "schedule"):
            used.add(v)
            if reply_used is not None:
                reply_used.add(v)
            return v
    raise RuntimeError("value pool exhausted")


FINITE_POOLS = {"person": PEOPLE, "lib": LIBS, "cause": CAUSES, "path": PATHS, "schedule": SCHEDULES}


def reply_value_left(pool: str, reply_used: set[str]) -> bool:
    return pool not in FINITE_POOLS or any(v not in reply_used for v in FINITE_POOLS[pool])


def generate(seed: int, n_sessions: int, n_questions: int) -> Dataset:
    """The conversation and its questions; everything derives from ``seed``."""
    rnd = random.Random(seed)
    used: set[str] = set()
    reply_used: set[str] = set()
    pairs = [(e, k) for e in SERVICES for k in KINDS]
    rnd.shuffle(pairs)
    cats = [c for c, share in MIX for _ in range(round(share * n_questions))]
    rnd.shuffle(cats)
    planted: dict[int, list[tuple[str, Any]]] = {s: [] for s in range(n_sessions)}
    q_slots: list[tuple[str, str, list[tuple[int, int]]]] = []  # (category, question, [(session, idx)])
    for cat in cats:
        if cat == "multi":
            e, k1 = next(p for p in reversed(pairs) if sum(1 for q in pairs if q[0] == p[0]) >= 2)
            k2 = next(k for (e2, k) in reversed(pairs) if e2 == e and k != k1)
            pairs.remove((e, k1))
            pairs.remove((e, k2))
            s1, s2 = sorted(rnd.sample(range(n_sessions), 2))
            ids = []
            for s, k in ((s1, k1), (s2, k2)):
                stmt = rnd.choice(KINDS[k][0]).format(e=e, v=value(rnd, KINDS[k][3], used))
                planted[s].append(("fact", stmt))
                ids.append((s, len(planted[s]) - 1))
            q1 = rnd.choice(KINDS[k1][2]).format(e=e).replace(f"the {e}", "it").replace(f"The {e}", "It")
            q2 = rnd.choice(KINDS[k2][2]).format(e=e).replace(f"the {e}", "it").replace(f"The {e}", "It")
            q_slots.append((cat, MULTI_Q.format(e=e, q1=q1[0].lower() + q1[1:], q2=q2[0].lower() + q2[1:]), ids))
            continue
        if cat == "reply":  # a reply's value must be new among replies: skip kinds whose pool ran dry
            e, k = next(p for p in reversed(pairs) if reply_value_left(KINDS[p[1]][3], reply_used))
            pairs.remove((e, k))
        else:
            e, k = pairs.pop()
        stmts, replies, asks, pool = KINDS[k]
        question = rnd.choice(asks).format(e=e)
        if cat == "single":
            s = rnd.randrange(n_sessions)
            planted[s].append(("fact", rnd.choice(stmts).format(e=e, v=value(rnd, pool, used))))
            q_slots.append((cat, question, [(s, len(planted[s]) - 1)]))
        elif cat == "reply":
            s = rnd.randrange(n_sessions)
            planted[s].append(
                ("reply", (ASK[k].format(e=e), rnd.choice(replies).format(v=value(rnd, pool, used, reply_used))))
            )
            q_slots.append((cat, question, [(s, len(planted[s]) - 1)]))
        else:  # update
            s1 = rnd.randrange(0, n_sessions // 2)
            s2 = rnd.randrange(s1 + 1, n_sessions)
            old = rnd.choice(stmts).format(e=e, v=value(rnd, pool, used))
            new = rnd.choice(stmts).format(e=e, v=value(rnd, pool, used))
            planted[s1].append(("fact", old))
            planted[s2].append(("fact", UPDATE.format(e=e, s=new[0].lower() + new[1:])))
            q_slots.append((cat, question.rstrip("?") + " now?", [(s2, len(planted[s2]) - 1)]))
    # Sessions: filler and mentions around the planted facts; every planted fact is a user turn
    # (or a user ask + assistant reply), so roles alternate.
    sessions: list[list[Turn]] = []
    where: dict[tuple[int, int], list[int]] = {}
    tid = 0
    epoch = float(START_EPOCH)
    for s in range(n_sessions):
        epoch += rnd.choice((1, 1, 2, 2, 3)) * DAY
        t = epoch + rnd.randint(8, 18) * 3600
        slots: list[tuple[str, Any]] = [("filler", None)] * rnd.randint(8, 12) + [("mention", None)] * 3
        slots += [(kind, (i, payload)) for i, (kind, payload) in enumerate(planted[s])]
        rnd.shuffle(slots)
        turns: list[Turn] = []
        for kind, payload in slots:
            if kind == "filler":
                j = rnd.randrange(len(FILLER_USER))
                pair = [FILLER_USER[j], FILLER_ASSISTANT[j]]
            elif kind == "mention":
                e = rnd.choice(SERVICES)
                j = rnd.randrange(len(MENTION_USER))
                pair = [MENTION_USER[j].format(e=e), MENTION_ASSISTANT[j].format(e=e)]
            elif kind == "fact":
                pair = [payload[1], rnd.choice(("Noted.", "Got it, thanks.", "Okay, I'll keep that in mind."))]
            else:
                pair = [payload[1][0], payload[1][1]]
            for role, text in zip(("user", "assistant"), pair, strict=True):
                t += rnd.randint(20, 240)
                turns.append(Turn(tid, s, role, text, t))
                tid += 1
            if kind == "fact":
                where[(s, payload[0])] = [turns[-2].tid]
            elif kind == "reply":
                where[(s, payload[0])] = [turns[-2].tid, turns[-1].tid]
        sessions.append(turns)
        epoch = t
    questions = [Question(cat, q, [tid for slot in ids for tid in where[slot]]) for cat, q, ids in q_slots]
    ds = Dataset(sessions, questions, epoch + DAY)
    ds.turns = {t.tid: t for turns in sessions for t in turns}
    texts = [t.text for t in ds.turns.values()]
    for q in questions:  # evidence turns must be identifiable by their text
        for ev in q.evidence:
            if texts.count(ds.turns[ev].text) != 1:
                raise RuntimeError(f"evidence turn {ev} is not unique: {ds.turns[ev].text!r}")
    return ds


def iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(epoch))


def build_store(path: Path, ds: Dataset, semantic: Any = None) -> LocalBackend:
    """Retain every session as the plugin's auto-retain does: append deltas of 4 messages."""
    backend = LocalBackend(path, semantic=semantic)
    op = 0
    for s, turns in enumerate(ds.sessions):
        sid = f"{s:016x}"
        for lo in range(0, len(turns), 4):
            delta = turns[lo : lo + 4]
            msgs = [{"role": t.role, "content": t.text, "timestamp": int(t.epoch * 1000)} for t in delta]
            item = {
                "content": json.dumps(msgs),
                "context": f'Coding session (agent) for repo "quality", session {sid}.jsonl',
                "timestamp": iso(delta[-1].epoch),
                "document_id": f"hh-session:{sid}",
                "update_mode": "append",
                "tags": ["source:agent", "repo:quality", f"session:{sid}"],
                "metadata": {"retain_source": "auto", "session_id": sid},
            }
            backend.retain_batch(BANK, [item], operation_id=f"q-{op}")
            op += 1
    if semantic is not None:
        backend.wait_for_vectors(600)
    return backend


def vector_top(embedder: Any, ds: Dataset) -> Any:
    """The vector-only baseline: every turn's text embedded with the same model; cosine top 10."""
    import numpy as np

    ids = list(ds.turns)
    matrix = embedder.embed_array([content_words(ds.turns[i].text) for i in ids])

    def top(question: str) -> list[int]:
        sims = matrix @ embedder.embed_array([content_words(question)])[0]
        return [ids[i] for i in np.argsort(-sims, kind="stable")[:TOP_K]]

    return top


def plain_words(question: str) -> list[str]:
    return list(dict.fromkeys(w for w in re.findall(r"\w+", question.lower()) if len(w) >= 2))


def build_turn_index(ds: Dataset, tokenizer: str | None) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    opt = f", tokenize='{tokenizer}'" if tokenizer else ""
    conn.execute(f"CREATE VIRTUAL TABLE turns USING fts5(content{opt})")
    conn.executemany(
        "INSERT INTO turns(rowid, content) VALUES (?, ?)", [(t.tid, f"{t.role}: {t.text}") for t in ds.turns.values()]
    )
    return conn


def bm25_top(conn: sqlite3.Connection, terms: list[str]) -> list[int]:
    if not terms:
        return []
    sql = "SELECT rowid FROM turns WHERE turns MATCH ? ORDER BY bm25(turns) LIMIT ?"
    return [r[0] for r in conn.execute(sql, (match_expression(terms), TOP_K))]


def evidence_recall(found: list[int], evidence: list[int]) -> float:
    return len(set(found[:TOP_K]) & set(evidence)) / len(evidence)


def run(seed: int, n_sessions: int, n_questions: int, semantic: bool = False) -> dict[str, Any]:
    ds = generate(seed, n_sessions, n_questions)
    by_text = {f"{t.role}: {t.text}": t.tid for t in ds.turns.values()}
    systems: dict[str, dict[str, list[float]]] = {"store": {}, "plain_bm25": {}, "bm25_same_terms": {}}
    if semantic:
        systems.update({"hybrid": {}, "vector_only": {}})
    plain = build_turn_index(ds, None)
    porter = build_turn_index(ds, "porter unicode61")
    with tempfile.TemporaryDirectory(prefix="quality-bench-") as tmp:
        backend = build_store(Path(tmp) / "memory.db", ds)
        hybrid = vectors = None
        if semantic:
            from hindsight_hooks.backends.semantic import StaticEmbedder

            embedder = StaticEmbedder(*([EMBED_DIM] if EMBED_DIM else []))
            hybrid = build_store(Path(tmp) / "semantic.db", ds, embedder)
            vectors = vector_top(embedder, ds)
        try:
            for q in ds.questions:
                req = RecallRequest(
                    query=q.text, limit=TOP_K, max_tokens=1_000_000, query_timestamp=iso(ds.query_epoch)
                )
                hits = backend.recall(BANK, req).hits
                found = {
                    "store": [by_text.get(h.text, -1) for h in hits],
                    "plain_bm25": bm25_top(plain, plain_words(q.text)),
                    "bm25_same_terms": bm25_top(porter, query_terms(q.text)),
                }
                if hybrid is not None and vectors is not None:
                    found["hybrid"] = [by_text.get(h.text, -1) for h in hybrid.recall(BANK, req).hits]
                    found["vector_only"] = vectors(q.text)
                for name, ids in found.items():
                    systems[name].setdefault(q.category, []).append(evidence_recall(ids, q.evidence))
        finally:
            backend.close()
            if hybrid is not None:
                hybrid.close()
    report: dict[str, Any] = {
        "seed": seed,
        "sessions": n_sessions,
        "turns": len(ds.turns),
        "questions": len(ds.questions),
        "target_points": TARGET_POINTS,
    }
    for name, per_cat in systems.items():
        every = [v for vals in per_cat.values() for v in vals]
        report[name] = {
            "recall_at_10": 100 * statistics.mean(every),
            "by_category": {c: 100 * statistics.mean(v) for c, v in sorted(per_cat.items())},
        }
    if semantic:
        add_hybrid_points(report)
    report["margin_points"] = report["store"]["recall_at_10"] - report["plain_bm25"]["recall_at_10"]
    report["margin_vs_same_terms_points"] = report["store"]["recall_at_10"] - report["bm25_same_terms"]["recall_at_10"]
    return report


def add_hybrid_points(report: dict[str, Any]) -> None:
    """The hybrid row's margins over plain bm25 and vector-only (this bench and the REALTALK one)."""
    report["hybrid_vs_bm25_points"] = report["hybrid"]["recall_at_10"] - report["plain_bm25"]["recall_at_10"]
    report["hybrid_vs_vector_points"] = report["hybrid"]["recall_at_10"] - report["vector_only"]["recall_at_10"]


def print_rows(report: dict[str, Any], rows: tuple[tuple[str, str], ...], cats: list[str]) -> None:
    """One line per row of ``report`` that is there: recall@10 overall, then per category."""
    for name, label in rows:
        if name not in report:
            continue
        row = report[name]
        print(f"  {label:30}{row['recall_at_10']:8.1f}" + "".join(f"{row['by_category'][c]:9.1f}" for c in cats))


def print_hybrid_verdicts(report: dict[str, Any], target: float) -> None:
    for key, label in (("hybrid_vs_bm25_points", "plain bm25"), ("hybrid_vs_vector_points", "vector-only")):
        verdict = "met" if report[key] >= target else "NOT met"
        print(f"  hybrid vs {label}: {report[key]:+.1f} points (target ≥ +{target:.0f}: {verdict})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=20261124)
    parser.add_argument("--sessions", type=int, default=45)
    parser.add_argument("--questions", type=int, default=160)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--no-semantic", action="store_true", help="skip the hybrid and vector-only rows")
    args = parser.parse_args(argv)
    from hindsight_hooks.backends.semantic import available

    semantic = available() and not args.no_semantic
    report = run(args.seed, args.sessions, args.questions, semantic)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"long conversation (seed {report['seed']}): {report['sessions']} sessions, {report['turns']} turns, "
          f"{report['questions']} questions; evidence recall@{TOP_K} in points")  # fmt: skip
    cats = list(report["store"]["by_category"])
    print(f"  {'':30}{'all':>8}" + "".join(f"{c:>9}" for c in cats))
    rows = (
        ("store", "embedded store (lexical)"),
        ("hybrid", "store + [semantic] (hybrid)"),
        ("plain_bm25", "plain FTS5 bm25 over turns"),
        ("bm25_same_terms", "bm25, same index and terms"),
        ("vector_only", "vector-only, same model"),
    )
    print_rows(report, rows, cats)
    verdict = "met" if report["margin_points"] >= TARGET_POINTS else "NOT met"
    print(f"  margin vs plain bm25: {report['margin_points']:+.1f} points (target ≥ +{TARGET_POINTS:.0f}: {verdict}); "
          f"vs bm25 on the same index and terms: {report['margin_vs_same_terms_points']:+.1f}")  # fmt: skip
    if semantic:
        print_hybrid_verdicts(report, HYBRID_TARGET_POINTS)
    else:
        print("  (hybrid and vector-only rows need the [semantic] extra)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
