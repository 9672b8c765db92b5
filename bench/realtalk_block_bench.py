"""Evidence in the block: what the ``context`` hook injects on real conversations (issue 13).

``realtalk_recall_bench.py`` measures the store's ``recall`` (top 10). A user sees something
else: the ``<hindsight-memory>`` block the plugin puts before a turn, built from the project and
user banks with the default settings (``recall.top_k`` 8, ``recall.max_tokens`` 800, the query
composed from the last turns). Issue 13 states its bar on a held-out benchmark in those terms:
evidence in the block with the default block size. This bench measures the same on REALTALK.

Each chat (``Chat_*.json`` of a REALTALK clone; never ``data/locomo``, which the issue holds out)
gets a fresh project whose config selects the embedded store; its sessions are retained into the
plugin's project bank as auto-retain does (deltas of 4 messages, tagged and dated), vectors are
given as ``hindsight-hooks embed`` would, and then a ``Host`` that loads the plugin from its entry
point is asked each question as a new user prompt. The block is parsed back into its items; a
question's score is the share of its evidence messages that appear as an item.

Rows (per question, in points):

- ``in block (hybrid)``: the plugin with the ``[semantic]`` extra, as installed by default;
- ``in block (lexical)``: the same with ``[local] semantic = "off"``;
- ``plain bm25, top 8``: one FTS5 row per message, default tokenizer, the question's words OR-ed,
  as many messages as the block's default ``top_k`` — the baseline measured in the same run.

Also: questions with *all* their evidence in the block, with *none*, and the mean number of items.

``--after-reply``: each question is asked as the second prompt of a turn, as in a real session:
after the previous question and a reply to it (that question's evidence messages, as an agent
would sum up what it found). The default query is those last two messages (ADR 187).
Target (issue 13, stated for the held-out benchmark): ≥ 80 points in the block.

Usage: ``.venv/bin/python bench/realtalk_block_bench.py --data PATH/TO/REALTALK/data [--chats 1,2] [--json]``
"""

from __future__ import annotations

import json
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import hooks_bench as hb
import realtalk_recall_bench as rt
import recall_quality_bench as rq

from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.governance import identity as ident
from hindsight_hooks.hooks import Message
from hindsight_hooks.retain.injected import is_injected
from hindsight_hooks.timefmt import SAID_PATTERN

TARGET_POINTS = 80.0
ROOT = Path(__file__).resolve().parent.parent
ITEM = re.compile(r"^\d+\. ((?:user|assistant): .*)$")
DATE = re.compile(rf" \({SAID_PATTERN}\)$")  # the day an item was said, with its time on a shared day
WARM_UP_S = 3.0  # the plugin's store loads the bank's vectors on its worker after its first recall


def retain_chat(db: Path, who: ident.Identity, sessions: list[list[rt.Message]]) -> None:
    """Every session as the plugin's auto-retain stores it, in the plugin's project bank with its tags."""
    assert who.project_bank_id is not None
    backend = LocalBackend(db)
    try:
        items = rt.retain_items(sessions, 'Chat session (agent) for repo "repo"', tuple(who.base_tags()[:3]))
        for op, item in enumerate(items):
            backend.retain_batch(who.project_bank_id, [item], operation_id=f"rt-{op}")
    finally:
        backend.close()


def block_items(messages: list[Message], asked: int) -> list[str]:
    """The items of the injected block, each as ``role: text`` (continuation lines joined back)."""
    items: list[str] = []
    for msg in messages[:-asked] if asked else messages:
        content = msg.get("content")
        if not is_injected(msg) or not isinstance(content, str):
            continue
        for line in content.splitlines():
            head = ITEM.match(line)
            if head:
                items.append(head.group(1))
            elif line.startswith("   ") and items:
                items[-1] += "\n" + line[3:]
    return [DATE.sub("", item) for item in items]


def squash(text: str) -> str:
    return " ".join(text.split())


def reply_to(evidence: set[int], texts: dict[int, str]) -> str:
    """What an agent might answer a question with: its evidence messages, without their labels."""
    return " ".join(texts[e].split(": ", 1)[1] for e in sorted(evidence))


def ask_all(
    root: Path, qa: list[tuple[str, set[int]]], texts: dict[int, str], *, after_reply: bool = False
) -> tuple[list[float], list[int]]:
    """Each question as a new prompt in one session (``after_reply``: after the previous question
    and a reply to it); the share of its evidence among the block's items."""
    scores: list[float] = []
    sizes: list[int] = []
    with hb.plugin_host(root, root / "sessions" / "bench.jsonl") as host:
        host.context([{"role": "user", "content": "warm up", "timestamp": 1, "id": "w0"}])
        time.sleep(WARM_UP_S)
        host.context([{"role": "user", "content": "warm up again", "timestamp": 2, "id": "w1"}])
        for n, (question, evidence) in enumerate(qa):
            prompt: Message = {"role": "user", "content": question, "timestamp": 10_000 + n, "id": f"q{n}"}
            turn: list[Message] = [prompt]
            if after_reply and n > 0:
                before, seen = qa[n - 1]
                turn = [{"role": "user", "content": before, "timestamp": 9_000 + n, "id": f"p{n}"},
                        {"role": "assistant", "content": reply_to(seen, texts), "timestamp": 9_500 + n,
                         "id": f"r{n}"}, prompt]  # fmt: skip
            items = {squash(i) for i in block_items(host.context(turn), 1)}
            sizes.append(len(items))
            scores.append(sum(1 for e in evidence if squash(texts[e]) in items) / len(evidence))
        trouble = hb.complaints(host)
    if trouble:
        print("  plugin complained: " + " | ".join(trouble), file=sys.stderr)
    return scores, sizes


def run(data: Path, chats: set[int] | None, *, after_reply: bool = False) -> dict[str, Any]:
    from hindsight_hooks.backends.semantic import available

    semantic = available()
    rows: dict[str, list[float]] = {"hybrid": [], "lexical": [], "plain_bm25": []}
    items: dict[str, list[int]] = {"hybrid": [], "lexical": []}
    (ROOT / ".tmpbench").mkdir(exist_ok=True)
    questions = 0
    for path in rt.chat_files(data):
        number = int(path.name.split("_")[1])
        if chats and number not in chats:
            continue
        sessions, raw_qa = rt.load_chat(path)
        turns = [t for s in sessions for t in s]
        by_dia = {t.dia_id: t.tid for t in turns}
        texts = {t.tid: f"{t.role}: {t.text}" for t in turns}
        qa = [(str(q["question"]), ev) for q in raw_qa
              if (ev := {by_dia[e] for e in q.get("evidence", []) if e in by_dia})]  # fmt: skip
        questions += len(qa)
        ds = rq.Dataset(sessions=[], questions=[], query_epoch=0.0)
        ds.turns = {t.tid: rq.Turn(t.tid, t.session, t.role, t.text, t.epoch) for t in turns}
        plain = rq.build_turn_index(ds, None)
        for q, ev in qa:
            top = rq.bm25_top(plain, rq.plain_words(q))[:8]
            rows["plain_bm25"].append(len(ev & set(top)) / len(ev))
        for mode in ("hybrid", "lexical") if semantic else ("lexical",):
            base = Path(tempfile.mkdtemp(prefix="realtalk-block-", dir=ROOT / ".tmpbench"))
            try:
                hb.isolate(base)
                root, db = hb.make_project(base, semantic=mode == "hybrid")
                retain_chat(db, hb.identity_for(root), sessions)
                if mode == "hybrid" and not hb.semantic_ready(db):
                    raise SystemExit("the [semantic] extra is installed but its model did not load")
                scores, sizes = ask_all(root, qa, texts, after_reply=after_reply)
                rows[mode] += scores
                items[mode] += sizes
            finally:
                shutil.rmtree(base, ignore_errors=True)
        print(f"  chat {number}: {len(qa)} questions done", file=sys.stderr)
    report: dict[str, Any] = {"questions": questions, "target_points": TARGET_POINTS}
    for name, vals in rows.items():
        if vals:
            report[name] = {
                "in_block": 100 * statistics.mean(vals),
                "all": 100 * sum(v == 1.0 for v in vals) / len(vals),
                "none": 100 * sum(v == 0.0 for v in vals) / len(vals),
                "items": statistics.mean(items[name]) if items.get(name) else 8.0,
            }
    return report


def main(argv: list[str] | None = None) -> int:
    parser = rt.realtalk_parser(__doc__)
    parser.add_argument("--chats", help="comma-separated chat numbers (default: all)")
    parser.add_argument("--after-reply", action="store_true", help="ask each question after the previous one's reply")
    args = parser.parse_args(argv)
    chats = {int(c) for c in args.chats.split(",")} if args.chats else None
    report = run(args.data, chats, after_reply=args.after_reply)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"REALTALK through the context hook: {report['questions']} questions, default block "
          f"(top_k 8, 800 tokens){', each asked after a reply' if args.after_reply else ''}; "
          "share of each question's evidence messages shown, in points")  # fmt: skip
    print(f"  {'':34}{'in block':>9}{'all':>7}{'none':>7}{'items':>7}")
    labels = (("hybrid", "in block (hybrid, [semantic])"), ("lexical", "in block (lexical)"),
              ("plain_bm25", "plain bm25, top 8 messages"))  # fmt: skip
    for key, label in labels:
        if key in report:
            r = report[key]
            print(f"  {label:34}{r['in_block']:9.1f}{r['all']:7.1f}{r['none']:7.1f}{r['items']:7.1f}")
    best = max(report[k]["in_block"] for k in ("hybrid", "lexical") if k in report)
    verdict = "met" if best >= TARGET_POINTS else "NOT met"
    print(f"  target (issue 13's bar for its held-out benchmark): ≥ {TARGET_POINTS:.0f} in block -> {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
