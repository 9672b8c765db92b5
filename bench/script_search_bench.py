"""What searching text without spaces and emoji costs the embedded store (ADR 115), against version 2.

Printed, never asserted. One run builds a store of ``--units`` units (auto-retain append jobs of 4
messages) where ``--cjk`` of the messages are Japanese or Chinese sentences, some with emoji, the
rest English, through the real ``LocalBackend``; then copies the same units into a file with the
version-2 layout (two indexed columns, the same triggers) built from the pinned migrations, and
compares:

- **index size**: the FTS5 index's pages (``dbstat``) and the whole file, version 3 vs version 2;
- **append**: ``retain_batch`` per 4-message job (p50/p99), and the part of it that computes the
  script terms (``unit_script_terms`` over the job's units, timed alone on the same texts);
- **recall**: p50/p99 of ``LocalBackend.recall`` for a script word and for an English word;
- **found**: share of script-word queries whose unit is in the top 10 — version 3 through the
  store, version 2 through a plain bm25 search of the same words (the store's own query terms
  before this change: the word as one quoted token).

Usage: ``.venv/bin/python bench/script_search_bench.py [--units 10000] [--cjk 0.3] [--queries 200]``
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

from hindsight_hooks.backends.base import RecallRequest
from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.backends.local_schema import MIGRATIONS, _statements
from hindsight_hooks.backends.local_script import unit_script_terms

BANK = "bench"
JA_WORDS = ["東京", "大阪", "サーバー", "データベース", "再起動", "設定", "ログ", "認証", "キャッシュ", "ポート",
            "会議", "予定", "顧客", "請求書", "バックアップ", "監視", "障害", "本番", "検証", "リリース"]  # fmt: skip
ZH_WORDS = ["数据库", "服务器", "部署", "缓存", "配置", "日志", "用户", "测试", "版本", "接口", "性能", "监控"]
JA_GLUE = ["の", "を", "が", "は", "に", "で", "と"]
EN_WORDS = [
    "deploy",
    "service",
    "port",
    "cache",
    "timeout",
    "owner",
    "version",
    "config",
    "billing",
    "search",
    "index",
    "worker",
    "release",
    "database",
    "backup",
    "monitor",
    "schedule",
    "invoice",
    "customer",
    "meeting",
    "test",
    "build",
    "lint",
    "review",
    "merge",
]
EMOJI = ["🚀", "🔥", "✅", "❌", "🎉", "🐛", "⚠️", "👍"]


def ja_sentence(rnd: random.Random) -> str:
    words = rnd.sample(JA_WORDS, 3)
    return "".join(w + rnd.choice(JA_GLUE) for w in words) + "確認しました。"


def zh_sentence(rnd: random.Random) -> str:
    return "我们" + "".join(rnd.sample(ZH_WORDS, 3)) + "已经完成了。"


def en_sentence(rnd: random.Random) -> str:
    return " ".join(rnd.choices(EN_WORDS, k=12)) + "."


def message(rnd: random.Random, cjk: float) -> str:
    if rnd.random() < cjk:
        text = ja_sentence(rnd) if rnd.random() < 0.6 else zh_sentence(rnd)
    else:
        text = en_sentence(rnd)
    if rnd.random() < 0.1:
        text += " " + rnd.choice(EMOJI)
    return text


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def v2_copy(src: Path, dst: Path) -> None:
    """The same units in a version-2 layout file (pinned scripts), indexed by its own triggers."""
    conn = sqlite3.connect(str(dst), isolation_level=None)
    for script in MIGRATIONS[:2]:
        assert isinstance(script, str)
        for statement in _statements(script):
            conn.execute(statement)
    conn.execute("ATTACH DATABASE ? AS src", (str(src),))
    conn.execute("BEGIN")
    conn.execute("INSERT INTO banks SELECT * FROM src.banks")
    conn.execute("INSERT INTO documents SELECT * FROM src.documents")
    conn.execute("INSERT INTO document_parts SELECT * FROM src.document_parts")
    cols = ("rowid, id, bank_id, document_id, seq, content, context, type, source, importance, created_at, "
            "occurred_at, metadata_json, valid_until, superseded_by")  # fmt: skip
    conn.execute(f"INSERT INTO units({cols}) SELECT {cols} FROM src.units ORDER BY rowid")
    conn.execute("COMMIT")
    conn.execute("DETACH DATABASE src")
    conn.execute("VACUUM")
    conn.close()


def fts_bytes(path: Path) -> int:
    conn = sqlite3.connect(str(path))
    try:
        row = conn.execute("SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'units_fts%'").fetchone()
        return int(row[0] or 0)
    finally:
        conn.close()


def run(n_units: int, cjk: float, n_queries: int, seed: int) -> dict[str, float]:
    rnd = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="script-bench-") as tmp:
        path = Path(tmp) / "v3.db"
        backend = LocalBackend(path)
        append_ms: list[float] = []
        terms_ms: list[float] = []
        for job in range(n_units // 4):
            msgs = [{"role": "user" if k % 2 == 0 else "assistant", "content": message(rnd, cjk)} for k in range(4)]
            item = {"content": json.dumps(msgs, ensure_ascii=False), "document_id": f"s{job // 50}",
                    "update_mode": "append", "metadata": {"retain_source": "auto"}}  # fmt: skip
            t0 = time.perf_counter()
            backend.retain_batch(BANK, [item], operation_id=f"op{job}")
            append_ms.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            for m in msgs:
                unit_script_terms(f"{m['role']}: {m['content']}", "")
            terms_ms.append((time.perf_counter() - t0) * 1000)
        words = [(w, "script") for w in rnd.choices(JA_WORDS + ZH_WORDS, k=n_queries)]
        words += [(w, "english") for w in rnd.choices(EN_WORDS, k=n_queries)]
        recall_ms: dict[str, list[float]] = {"script": [], "english": []}
        found3 = 0
        for word, kind in words:
            t0 = time.perf_counter()
            hits = backend.recall(BANK, RecallRequest(query=word, limit=10)).hits
            recall_ms[kind].append((time.perf_counter() - t0) * 1000)
            if kind == "script":
                found3 += any(word in h.text for h in hits)
        backend.close()
        sqlite3.connect(str(path)).execute("VACUUM").connection.close()
        old = Path(tmp) / "v2.db"
        v2_copy(path, old)
        conn = sqlite3.connect(str(old))
        found2 = 0
        for word, kind in words:
            if kind != "script":
                continue
            rows = conn.execute(
                "SELECT u.content FROM units_fts f JOIN units u ON u.rowid = f.rowid WHERE units_fts MATCH ? "
                "ORDER BY bm25(units_fts, 1.0, 0.5) LIMIT 10",
                (f'"{word}"',),
            ).fetchall()
            found2 += any(word in r[0] for r in rows)
        conn.close()
        return {
            "units": n_units, "cjk_share": cjk,
            "fts_mb_v3": fts_bytes(path) / 1e6, "fts_mb_v2": fts_bytes(old) / 1e6,
            "file_mb_v3": path.stat().st_size / 1e6, "file_mb_v2": old.stat().st_size / 1e6,
            "append_p50_ms": statistics.median(append_ms), "append_p99_ms": pct(append_ms, 0.99),
            "script_terms_p50_ms": statistics.median(terms_ms),
            "recall_script_p50_ms": statistics.median(recall_ms["script"]),
            "recall_script_p99_ms": pct(recall_ms["script"], 0.99),
            "recall_english_p50_ms": statistics.median(recall_ms["english"]),
            "recall_english_p99_ms": pct(recall_ms["english"], 0.99),
            "found_v3": 100 * found3 / n_queries, "found_v2": 100 * found2 / n_queries,
        }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--units", type=int, default=10_000)
    parser.add_argument("--cjk", type=float, default=0.3)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=115)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    r = run(args.units, args.cjk, args.queries, args.seed)
    if args.json:
        print(json.dumps(r, indent=2))
        return 0
    print(f"{r['units']} units, {100 * r['cjk_share']:.0f} % of messages Japanese/Chinese; version 3 vs version 2")
    print(f"  FTS index        {r['fts_mb_v3']:7.2f} MB vs {r['fts_mb_v2']:.2f} MB "
          f"({100 * (r['fts_mb_v3'] / r['fts_mb_v2'] - 1):+.0f} %); whole file {r['file_mb_v3']:.2f} vs "
          f"{r['file_mb_v2']:.2f} MB")  # fmt: skip
    print(f"  append (4 msgs)  p50 {r['append_p50_ms']:.2f} ms, p99 {r['append_p99_ms']:.2f} ms; "
          f"of which script terms p50 {r['script_terms_p50_ms']:.3f} ms (target: agent_end cost unchanged, "
          "< 5 % of the job)")  # fmt: skip
    print(f"  recall           script word p50 {r['recall_script_p50_ms']:.2f} / "
          f"p99 {r['recall_script_p99_ms']:.2f} ms; English word p50 {r['recall_english_p50_ms']:.2f} / "
          f"p99 {r['recall_english_p99_ms']:.2f} ms (target p50 ≤ 50 ms)")  # fmt: skip
    print(f"  found in top 10  script words: {r['found_v3']:.1f} % (version 3) vs {r['found_v2']:.1f} % "
          "(version 2 bm25, the word as one token)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
