"""Backend benchmarks: the embedded store's recall latency and growth, and retain throughput.

Targets (docs/design.md#targets): embedded recall at 100k units p50 ≤ 50 ms, growth from 10k to
100k sublinear (p50 ratio < 10). Printed, never asserted. The recall *quality* target (evidence
recall@10 vs plain FTS5 bm25 over turns) is measured by ``bench/recall_quality_bench.py``.

Same-run baselines:
- recall: plain FTS5 bm25 over the same index and bank with no bounding (``ORDER BY rank LIMIT
  50`` over every match), i.e. what the docs/backends.md#embedded-store candidate step costs when every match is ranked;
- retain: a bare executemany of the same unit texts into an FTS5 table, no tags/documents.

Corpus: paragraphs of the Python standard library's docstrings (real English and code words),
packed into transcript-like messages; queries are the first ~25 words of other paragraphs,
shaped like an auto-recall body. The bank is grown in place (1k → 10k → 100k units) through
the real ``retain_batch`` API in large batches, one transaction each.

Usage: ``python bench/backend_bench.py [--sizes 1000,10000,100000] [--queries 200] [--dir DIR] [--json]``

The real Hindsight server (``HINDSIGHT_TEST_URL``, else ``scripts/hindsight-test-server start``) is
measured in the same run unless ``--no-server``: recall p50/p99 over the items of the 1k-unit local
corpus with the same queries and scope, auto-retain jobs, and the DESIGN target "flush to a real
Hindsight server, batched vs one request per job ≥ 5× jobs/s" through a real ``RetainQueue``
(``--server-items``, ``--server-jobs``, ``--server-rounds``). Printed side by side with ratios.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from hindsight_hooks.backends.base import BankSpec, RecallRequest
from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.backends.local_schema import slot_range
from hindsight_hooks.backends.local_text import match_expression, query_terms

BANK = "hh-project-bench-0123456789ab"
REPO_TAG = "repo:bench-0123456789ab"
SCOPE = [{"tags": [REPO_TAG], "match": "any_strict"}]
MESSAGES_PER_ITEM = 5
ITEMS_PER_BATCH = 400


def corpus() -> list[str]:
    """Docstring paragraphs (≥60 chars, whitespace-collapsed) from the standard library."""
    root = Path(sys.base_prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    paras: list[str] = []
    for path in sorted(root.rglob("*.py")):
        if "test" in path.parts or "site-packages" in path.parts or "idlelib" in path.parts:
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, OSError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                doc = ast.get_docstring(node)
                for para in re.split(r"\n\s*\n", doc or ""):
                    flat = " ".join(para.split())
                    if len(flat) >= 60:
                        paras.append(flat)
    return paras


class Workload:
    def __init__(self, paras: list[str], seed: int = 1) -> None:
        self.paras = paras
        self.rnd = random.Random(seed)
        self.session = 0

    def message(self) -> str:
        return " ".join(self.rnd.choice(self.paras) for _ in range(self.rnd.choice((1, 1, 2, 3))))

    def transcript_item(self, n_messages: int = MESSAGES_PER_ITEM) -> dict[str, Any]:
        self.session += 1
        sid = f"{self.session:016x}"
        msgs = [
            {"role": "user" if k % 2 == 0 else "assistant", "content": self.message(), "timestamp": 1_700_000_000_000}
            for k in range(n_messages)
        ]
        return {
            "content": json.dumps(msgs, indent=2),
            "context": f'Coding session (agent) for repo "bench", session {sid}.jsonl',
            "document_id": f"hh-session:{sid}",
            "update_mode": "append",
            "tags": ["source:agent", "harness:agent", REPO_TAG, f"session:{sid}"],
            "metadata": {"retain_source": "auto", "session_id": sid, "source": "hindsight-hooks"},
        }

    def query(self) -> str:
        words = self.rnd.choice(self.paras).split()
        return "user: " + " ".join(words[:25])


def grow(backend: LocalBackend, work: Workload, target_units: int, have: int) -> tuple[int, float]:
    """Retain batches until the bank holds ``target_units``; returns (units now, seconds in retain_batch)."""
    spent = 0.0
    op = have
    while have < target_units:
        n_items = min(ITEMS_PER_BATCH, max(1, (target_units - have) // MESSAGES_PER_ITEM))
        batch = [work.transcript_item() for _ in range(n_items)]
        started = time.perf_counter()
        out = backend.retain_batch(BANK, batch, operation_id=f"grow-{op}")
        spent += time.perf_counter() - started
        have += len(out.unit_ids)
        op += 1
    return have, spent


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure_recall(backend: LocalBackend, queries: list[str]) -> dict[str, Any]:
    for q in queries[:10]:  # warm the page cache and the statement cache
        backend.recall(BANK, RecallRequest(query=q, tag_groups=SCOPE, max_tokens=1024))
    times: list[float] = []
    modes: dict[str, int] = {}
    for q in queries:
        t0 = time.perf_counter()
        backend.recall(BANK, RecallRequest(query=q, tag_groups=SCOPE, max_tokens=1024))
        times.append((time.perf_counter() - t0) * 1000)
        modes[backend.last_search_mode] = modes.get(backend.last_search_mode, 0) + 1
    return {"p50_ms": statistics.median(times), "p99_ms": pct(times, 0.99), "modes": modes}


def measure_baseline(path: Path, queries: list[str]) -> dict[str, Any]:
    """Unbounded plain bm25 over every match in the bank (the cost the bounded search avoids)."""
    conn = sqlite3.connect(str(path))
    slot = conn.execute("SELECT slot FROM banks WHERE bank_id = ?", (BANK,)).fetchone()[0]
    lo, hi = slot_range(slot)
    sql = "SELECT rowid FROM units_fts WHERE units_fts MATCH ? AND rowid BETWEEN ? AND ? ORDER BY rank LIMIT 50"
    times: list[float] = []
    for q in queries:
        terms = query_terms(q)
        if not terms:
            continue
        t0 = time.perf_counter()
        conn.execute(sql, (match_expression(terms), lo, hi)).fetchall()
        times.append((time.perf_counter() - t0) * 1000)
    conn.close()
    return {"p50_ms": statistics.median(times), "p99_ms": pct(times, 0.99)}


def measure_retain_jobs(backend: LocalBackend, work: Workload, jobs: int) -> dict[str, Any]:
    """Typical auto-retain deliveries: one item, a 4-message delta appended to a live session."""
    session = work.transcript_item(4)
    times: list[float] = []
    for i in range(jobs):
        delta = work.transcript_item(4)
        for key in ("document_id", "tags", "metadata", "context"):
            delta[key] = session[key]
        t0 = time.perf_counter()
        backend.retain_batch(BANK, [delta], operation_id=f"job-{i}")
        times.append((time.perf_counter() - t0) * 1000)
    return {"p50_ms": statistics.median(times), "p99_ms": pct(times, 0.99), "jobs_per_s": 1000 / statistics.mean(times)}


def measure_raw_insert(tmp: Path, work: Workload, units: int) -> float:
    """Units/s of a bare FTS5 insert of comparable texts (baseline for the bulk retain rate)."""
    conn = sqlite3.connect(str(tmp / "raw.db"))
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(content, context, tokenize='porter unicode61')")
    rows = [(work.message(), "Coding session (agent)") for _ in range(units)]
    t0 = time.perf_counter()
    with conn:
        conn.executemany("INSERT INTO t(content, context) VALUES (?, ?)", rows)
    elapsed = time.perf_counter() - t0
    conn.close()
    return units / elapsed


# -- the real Hindsight server (docs/design.md "flush to a real Hindsight server, batched vs one request
# per job ≥ 5× jobs/s"), measured beside the embedded store in the same run ------------------------

SERVER_SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "hindsight-test-server"
SERVER_START_TIMEOUT_S = 900.0
SERVER_REQUEST_TIMEOUT_S = 120.0
SERVER_DRAIN_TIMEOUT_S = 600.0
SERVER_FILL_BATCH = 16
FLUSH_TARGET_RATIO = 5.0


def hindsight_test_url() -> str:
    """``HINDSIGHT_TEST_URL``, else the URL printed by ``scripts/hindsight-test-server start``
    (idempotent: reuses a running server; the first start on a fresh machine installs it)."""
    url = os.environ.get("HINDSIGHT_TEST_URL", "").strip()
    if url:
        return url.rstrip("/")
    if os.access(SERVER_SCRIPT, os.X_OK):
        cmd = [str(SERVER_SCRIPT), "start"]
    else:
        cmd = [shutil.which("python3") or sys.executable, str(SERVER_SCRIPT), "start"]
    print("starting the Hindsight test server (scripts/hindsight-test-server start) ...", file=sys.stderr, flush=True)
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=SERVER_START_TIMEOUT_S, cwd=SERVER_SCRIPT.parent.parent
        )
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"hindsight-test-server start timed out after {SERVER_START_TIMEOUT_S:.0f}s") from None
    lines = [ln.strip() for ln in proc.stdout.splitlines() if ln.strip()]
    if proc.returncode != 0 or not lines or not lines[-1].startswith("http"):
        tail = " | ".join(proc.stderr.strip().splitlines()[-5:])
        raise RuntimeError(f"hindsight-test-server start failed (exit {proc.returncode}): {tail}")
    return lines[-1].rstrip("/")


class ServerBench:
    """One ``HindsightBackend`` plus the banks it created (all deleted by ``close``)."""

    def __init__(self, url: str) -> None:
        from hindsight_hooks.backends.hindsight import HindsightBackend  # httpx only when measuring a server

        self.url = url
        self.backend = HindsightBackend(url, timeout_ms=int(SERVER_REQUEST_TIMEOUT_S * 1000))
        # verbatim + no observations: the test server's mock LLM would otherwise store prompt
        # boilerplate and invent observations, i.e. measure work no real deployment does (ADR 010).
        self.spec = BankSpec(retain_extraction_mode="verbatim", enable_observations=False)
        self.banks: list[str] = []

    def new_bank(self, label: str) -> str:
        bank = f"hh-bench-{label}-{uuid.uuid4().hex[:10]}"
        self.backend.ensure_bank(bank, self.spec, timeout_s=SERVER_REQUEST_TIMEOUT_S)
        self.banks.append(bank)
        return bank

    def ensure(self, bank: str) -> None:
        """The queue's ``ensure_bank`` hook (runs once per bank per queue, as in the plugin)."""
        self.backend.ensure_bank(bank, self.spec, timeout_s=SERVER_REQUEST_TIMEOUT_S)

    def drain(self, bank: str, operation_ids: list[str]) -> float:
        """Seconds until every async operation left pending/processing (bounded)."""
        started = time.perf_counter()
        end = time.monotonic() + SERVER_DRAIN_TIMEOUT_S
        pending = list(dict.fromkeys(operation_ids))
        while pending:
            if time.monotonic() >= end:
                raise RuntimeError(f"{len(pending)} async operations still pending after {SERVER_DRAIN_TIMEOUT_S:.0f}s")
            status = self.backend.get_operation(bank, pending[0], timeout_s=SERVER_REQUEST_TIMEOUT_S)
            state = status.get("status")
            if state == "failed":
                raise RuntimeError(f"async operation failed on the server: {status.get('error_message')}")
            if state in ("pending", "processing"):
                time.sleep(0.05)
            else:
                pending.pop(0)
        return time.perf_counter() - started

    def close(self) -> list[str]:
        """Delete every bank this run created (two tries each); returns the ones left behind."""
        left: list[str] = []
        for bank in self.banks:
            for attempt in range(2):
                try:
                    self.backend.delete_bank(bank, timeout_s=SERVER_REQUEST_TIMEOUT_S)
                    break
                except Exception:
                    if attempt == 1:
                        left.append(bank)
                    else:
                        time.sleep(1.0)
        self.backend.close()
        return left


def server_fill(sb: ServerBench, bank: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    """Bulk retain of the recall corpus: async batches, timed until the server processed them."""
    started = time.perf_counter()
    ops: list[str] = []
    for lo in range(0, len(items), SERVER_FILL_BATCH):
        out = sb.backend.retain_batch(
            bank, items[lo : lo + SERVER_FILL_BATCH], operation_id=str(uuid.uuid4()), timeout_s=SERVER_REQUEST_TIMEOUT_S
        )
        ops.extend(out.operation_ids)
    sb.drain(bank, ops)
    seconds = time.perf_counter() - started
    return {"items": len(items), "seconds": seconds, "items_per_s": len(items) / seconds}


def server_recall(sb: ServerBench, bank: str, queries: list[str]) -> dict[str, Any]:
    """The local ``measure_recall`` loop, same queries, scope and max_tokens, over HTTP."""
    for q in queries[:10]:  # warm the connection lanes and the server's caches
        sb.backend.recall(bank, RecallRequest(query=q, tag_groups=SCOPE, max_tokens=1024), timeout_s=30)
    times: list[float] = []
    hits = 0
    for q in queries:
        t0 = time.perf_counter()
        res = sb.backend.recall(bank, RecallRequest(query=q, tag_groups=SCOPE, max_tokens=1024), timeout_s=30)
        times.append((time.perf_counter() - t0) * 1000)
        hits += len(res.hits)
    return {"p50_ms": statistics.median(times), "p99_ms": pct(times, 0.99), "mean_hits": hits / max(1, len(queries))}


def server_retain_jobs(sb: ServerBench, bank: str, work: Workload, jobs: int) -> dict[str, Any]:
    """The local ``measure_retain_jobs`` shape (one 4-message append to a live session per job),
    delivered like the plugin's default (async): acknowledgement time, then processing."""
    session = work.transcript_item(4)
    times: list[float] = []
    ops: list[str] = []
    for _ in range(jobs):
        delta = work.transcript_item(4)
        delta["document_id"], delta["tags"] = session["document_id"], session["tags"]
        t0 = time.perf_counter()
        out = sb.backend.retain_batch(
            bank, [delta], operation_id=str(uuid.uuid4()), async_=True, timeout_s=SERVER_REQUEST_TIMEOUT_S
        )
        times.append((time.perf_counter() - t0) * 1000)
        ops.extend(out.operation_ids)
    drain_s = sb.drain(bank, ops)
    return {
        "p50_ms": statistics.median(times),
        "p99_ms": pct(times, 0.99),
        "jobs_per_s": 1000 / statistics.mean(times),
        "processed_jobs_per_s": jobs / (sum(times) / 1000 + drain_s),
    }


def server_flush(
    sb: ServerBench, work: Workload, root: Path, jobs: int, *, batched: bool, async_: bool
) -> dict[str, Any]:
    """``jobs`` auto-retain jobs (distinct sessions, one item each) enqueued in a real
    ``RetainQueue``, then flushed to a fresh bank. ``batched``: enqueued with coalescing, so the
    queue merges them into ``ceil(jobs / batch_max_items)`` requests; else one request per job.

    ``flush`` times ``RetainQueue.flush`` (the queue drains when the server acknowledges);
    ``end_to_end`` adds the wait until the server processed every async operation.
    """
    from hindsight_hooks.config_model import QueueConfig
    from hindsight_hooks.queue import RetainQueue, new_job

    bank = sb.new_bank("flush")
    folder = root / f"queue-{uuid.uuid4().hex[:8]}"
    queue = RetainQueue(folder / "retain-queue.jsonl", QueueConfig())
    for _ in range(jobs):
        queue.enqueue(new_job(bank, "auto", [work.transcript_item(4)], async_), coalesce=batched)
    queued = queue.count_active()
    started = time.perf_counter()
    requests = 0
    ops: list[str] = []
    for _ in range(queued + 1):  # one flush delivers everything due; the bound only guards a stuck queue
        res = queue.flush(
            sb.backend, ensure_bank=sb.ensure, force=True, request_timeout_ms=int(SERVER_REQUEST_TIMEOUT_S * 1000)
        )
        if res.failed or res.dead_lettered:
            raise RuntimeError(f"flush failed: {res.errors}")
        requests += res.sent
        ops.extend(res.operation_ids)
        if res.remaining == 0:
            break
    else:
        raise RuntimeError("the retain queue did not drain")
    flush_s = time.perf_counter() - started
    drain_s = sb.drain(bank, ops) if async_ else 0.0
    shutil.rmtree(folder, ignore_errors=True)
    return {
        "jobs": jobs,
        "requests": requests,
        "flush_s": flush_s,
        "flush_jobs_per_s": jobs / flush_s,
        "end_to_end_jobs_per_s": jobs / (flush_s + drain_s),
    }


def server_flush_pair(
    sb: ServerBench, work: Workload, root: Path, jobs: int, rounds: int, async_: bool
) -> dict[str, Any]:
    """Single vs batched, alternating which goes first each round; times are summed."""
    runs: dict[str, list[dict[str, Any]]] = {"single": [], "batched": []}
    for r in range(rounds):
        order = (False, True) if r % 2 == 0 else (True, False)
        for batched in order:
            runs["batched" if batched else "single"].append(
                server_flush(sb, work, root, jobs, batched=batched, async_=async_)
            )
    out: dict[str, Any] = {}
    for name, rows in runs.items():
        total_jobs = sum(r["jobs"] for r in rows)
        flush_s = sum(r["flush_s"] for r in rows)
        e2e_s = sum(r["jobs"] / r["end_to_end_jobs_per_s"] for r in rows)
        out[name] = {
            "jobs": total_jobs,
            "requests": sum(r["requests"] for r in rows),
            "flush_jobs_per_s": total_jobs / flush_s,
            "end_to_end_jobs_per_s": total_jobs / e2e_s,
        }
    out["flush_ratio"] = out["batched"]["flush_jobs_per_s"] / out["single"]["flush_jobs_per_s"]
    out["end_to_end_ratio"] = out["batched"]["end_to_end_jobs_per_s"] / out["single"]["end_to_end_jobs_per_s"]
    return out


def bench_hindsight_server(args: argparse.Namespace, paras: list[str], queries: list[str]) -> dict[str, Any]:
    """Real-server numbers: recall p50/p99 over the local 1k corpus's items, auto-retain jobs, and
    the queue flush, batched vs one request per job (async = the default delivery, and sync).
    Never raises: a failure comes back as ``{"error": ...}`` so the local numbers still print."""
    try:
        url = hindsight_test_url()
    except RuntimeError as exc:
        return {"error": str(exc)}
    sb = ServerBench(url)
    report: dict[str, Any] = {"url": url, "flush_target_ratio": FLUSH_TARGET_RATIO}
    try:
        version = sb.backend.version(timeout_s=30)
        report["api_version"] = version.get("api_version")
        corpus_work = Workload(paras)  # seed 1: the same items the local store's first 1k units came from
        bank = sb.new_bank("recall")
        report["fill"] = server_fill(sb, bank, [corpus_work.transcript_item() for _ in range(args.server_items)])
        report["recall"] = server_recall(sb, bank, queries)
        report["retain_job"] = server_retain_jobs(sb, sb.new_bank("jobs"), Workload(paras, seed=7), args.server_jobs)
        work = Workload(paras, seed=11)
        with tempfile.TemporaryDirectory(prefix="backend-bench-queue-") as tmp:
            report["flush"] = {
                "async": server_flush_pair(sb, work, Path(tmp), args.server_jobs, args.server_rounds, True),
                "sync": server_flush_pair(sb, work, Path(tmp), args.server_jobs, args.server_rounds, False),
            }
    except Exception as exc:  # a bench reports what broke instead of losing the local numbers
        report["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        left = sb.close()
        if left:
            report["banks_left"] = left
    return report


def compare_with_local(report: dict[str, Any]) -> None:
    """Add ``vs_local`` (server/local ratios) to the server report, against the smallest size."""
    server = report.get("hindsight_server")
    if not server or "recall" not in server or not report["sizes"]:
        return
    smallest = min(report["sizes"], key=int)
    local = report["sizes"][smallest]
    vs: dict[str, Any] = {"local_size": int(smallest), "local_units": local["units"]}
    vs["recall_p50_ratio"] = server["recall"]["p50_ms"] / local["p50_ms"]
    vs["recall_p99_ratio"] = server["recall"]["p99_ms"] / local["p99_ms"]
    if "retain_job" in server and "retain_job" in report:
        vs["retain_job_p50_ratio"] = server["retain_job"]["p50_ms"] / report["retain_job"]["p50_ms"]
        vs["retain_jobs_per_s_ratio"] = server["retain_job"]["jobs_per_s"] / report["retain_job"]["jobs_per_s"]
    server["vs_local"] = vs


def print_server_report(report: dict[str, Any]) -> None:
    server = report.get("hindsight_server")
    if server is None:
        print("hindsight server: not measured (--no-server)")
        return
    if "url" not in server:
        print(f"hindsight server: FAILED to start: {server['error']}")
        return
    api = server.get("api_version") or "unreachable"
    print(
        f"\nhindsight server {server['url']} (API {api}; mock LLM, fake embeddings, verbatim banks, observations off)"
    )
    if "fill" in server:
        fill = server["fill"]
        print(f"  corpus: {fill['items']} transcript items retained and processed at {fill['items_per_s']:.1f} items/s")
    vs = server.get("vs_local")
    if vs:
        rec, loc = server["recall"], report["sizes"][str(vs["local_size"])]
        job, ljob = server["retain_job"], report["retain_job"]
        print(f"  {'':38}{'embedded store':>18}{'hindsight server':>20}{'server/local':>14}")
        rows = [
            (f"recall p50 ({vs['local_units']} units / same items)", loc["p50_ms"], rec["p50_ms"], "ms"),
            ("recall p99", loc["p99_ms"], rec["p99_ms"], "ms"),
            ("retain job p50 (write | async ack)", ljob["p50_ms"], job["p50_ms"], "ms"),
            ("retain job p99 (write | async ack)", ljob["p99_ms"], job["p99_ms"], "ms"),
            ("retain jobs/s (write | ack)", ljob["jobs_per_s"], job["jobs_per_s"], "/s"),
        ]
        for label, lv, sv, unit in rows:
            print(f"  {label:38}{lv:>15.2f} {unit:2}{sv:>17.2f} {unit:2}{sv / lv:>13.2f}×")
        print(f"  retain jobs processed by the server: {job['processed_jobs_per_s']:.1f} jobs/s "
              "(ack + the worker's processing; the embedded store's write is already final)")  # fmt: skip
    for mode, pair in server.get("flush", {}).items():
        single, batched = pair["single"], pair["batched"]
        print(f"  flush via RetainQueue, {mode} delivery, {single['jobs']} jobs: one request per job "
              f"({single['requests']} requests) vs batched ({batched['requests']} requests)")  # fmt: skip
        target = (
            f"target ≥ {server['flush_target_ratio']:.0f}×, default delivery"
            if mode == "async"
            else "retain.async=false: every request waits for processing"
        )
        print(f"    flush jobs/s       {single['flush_jobs_per_s']:9.1f} vs {batched['flush_jobs_per_s']:9.1f}"
              f"   ratio {pair['flush_ratio']:6.2f}×   ({target})")  # fmt: skip
        if mode == "async":
            print(f"    end-to-end jobs/s  {single['end_to_end_jobs_per_s']:9.1f} vs "
                  f"{batched['end_to_end_jobs_per_s']:9.1f}   ratio {pair['end_to_end_ratio']:6.2f}×   "
                  "(until the server processed every operation)")  # fmt: skip
    if server.get("banks_left"):
        print(f"  could not delete the bench banks {server['banks_left']} (uniquely named; harmless)")
    if "error" in server:
        print(f"  hindsight server bench FAILED: {server['error']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--dir", default=None, help="folder for the bench database (default: temp under cwd)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--no-server", action="store_true", help="skip the real Hindsight server part")
    parser.add_argument("--server-items", type=int, default=200, help="recall corpus items on the server")
    parser.add_argument("--server-jobs", type=int, default=48, help="jobs per flush variant and retain-job run")
    parser.add_argument("--server-rounds", type=int, default=1, help="flush rounds (alternating order)")
    args = parser.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(","))
    base = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="backend-bench-", dir=Path.cwd()))
    base.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {"sizes": {}, "recall_target_ms": 50}
    try:
        paras = corpus()
        work = Workload(paras)
        queries = [Workload(paras, seed=99 + i).query() for i in range(args.queries)]
        backend = LocalBackend(base / "memory.db")
        have = 0
        grow_seconds = 0.0
        for size in sizes:
            have, spent = grow(backend, work, size, have)
            grow_seconds += spent
            row = measure_recall(backend, queries)
            row["baseline"] = measure_baseline(base / "memory.db", queries)
            row["units"] = have
            report["sizes"][str(size)] = row
            if not args.json:
                print(
                    f"{have:>7} units  recall p50 {row['p50_ms']:6.2f} ms  p99 {row['p99_ms']:6.2f} ms   "
                    f"plain-bm25 p50 {row['baseline']['p50_ms']:7.2f} ms  p99 {row['baseline']['p99_ms']:7.2f} ms  "
                    f"modes {row['modes']}",
                    flush=True,
                )
        report["bulk_retain_units_per_s"] = have / grow_seconds
        report["raw_fts_insert_units_per_s"] = measure_raw_insert(base, work, min(20000, have))
        report["retain_job"] = measure_retain_jobs(backend, work, args.jobs)
        if len(sizes) >= 2:
            small, large = str(sizes[-2]), str(sizes[-1])
            report["growth_ratio_p50"] = report["sizes"][large]["p50_ms"] / report["sizes"][small]["p50_ms"]
            report["growth_ratio_units"] = sizes[-1] / sizes[-2]
            report["baseline_growth_ratio_p50"] = (
                report["sizes"][large]["baseline"]["p50_ms"] / report["sizes"][small]["baseline"]["p50_ms"]
            )
        report["hindsight_server"] = None if args.no_server else bench_hindsight_server(args, paras, queries)
        compare_with_local(report)
        backend.close()
    finally:
        if not args.dir:
            shutil.rmtree(base, ignore_errors=True)
    server_failed = bool(report["hindsight_server"] and "error" in report["hindsight_server"])
    if args.json:
        print(json.dumps(report, indent=2))
        return 1 if server_failed else 0
    job = report["retain_job"]
    print(f"bulk retain: {report['bulk_retain_units_per_s']:,.0f} units/s "
          f"(bare FTS5 insert {report['raw_fts_insert_units_per_s']:,.0f} units/s, "
          f"ratio {report['bulk_retain_units_per_s'] / report['raw_fts_insert_units_per_s']:.2f})")  # fmt: skip
    print(f"auto-retain job (4 messages, append): p50 {job['p50_ms']:.2f} ms, p99 {job['p99_ms']:.2f} ms, "
          f"{job['jobs_per_s']:,.0f} jobs/s")  # fmt: skip
    if "growth_ratio_p50" in report:
        print(f"growth {sizes[-2]}→{sizes[-1]} units (×{report['growth_ratio_units']:.0f}): recall p50 ×"
              f"{report['growth_ratio_p50']:.2f} (plain bm25 ×{report['baseline_growth_ratio_p50']:.2f}); "
              f"target: p50 ≤ 50 ms at 100k and growth < ×{report['growth_ratio_units']:.0f}")  # fmt: skip
    print_server_report(report)
    return 1 if server_failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
