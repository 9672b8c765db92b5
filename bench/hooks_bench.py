"""What the plugin's hooks cost a host, measured through the ``Host`` harness on the embedded store.

DESIGN.md targets (printed, never asserted):

1. ``context`` hook overhead, embedded store, 10k memories: p50 ≤ 5 ms, p99 ≤ 20 ms. Two hosts on
   the same project run interleaved on the same transcripts: one loads the plugin from its
   ``agent_hooks`` entry point, the baseline loads a plugin whose hooks do nothing (so it pays the
   host's pluggy dispatch and per-plugin deep copy of the messages, which are not ours).
   Overhead = plugin time − baseline time, per call. Every call carries a new
   user prompt, so each one is a real recall (the cache of §5.2 would otherwise answer); the cache
   hit is timed separately by repeating the same prompt. The store's own recall for the same query
   is timed too, so the plugin's share is visible. And the store's recall once more with a long
   session in view (``LONG_SESSION`` messages passed as ``in_context``, ADR 183), beside the same
   recall without them: the difference is what leaving out what the model reads costs a long session.
2. ``agent_end`` on a 2,500- vs a 100-message transcript with the same new delta: cost ratio ≤ 1.5.
   Each session is first primed with a real retained run (the whole transcript but the delta), then
   grows by ``--delta`` messages per step; every step is one timed ``agent_end`` (cursor, projection,
   durable enqueue, immediate delivery into SQLite, receipts). A no-plugin host's ``agent_end`` on the
   same transcripts is the baseline (the host's deep copy, which does follow the transcript); the
   target ratio is taken on the plugin's share (host+plugin − baseline).
3. The store's part of 2: ``LocalBackend.retain_batch`` appending the same 4-message delta to a
   100- and to a 2,500-message session document (ADR-050: an append must not rewrite the
   document), interleaved, with the ratio of medians.

The 10k memories are bulk-loaded straight through ``LocalBackend.retain_batch`` into the bank the
plugin derives for the project, tagged the way auto-retain tags them, as 5-message transcript items
(one unit per message). The text is real words: consecutive identifier/English tokens of standard
library sources, so term frequencies are natural (common words match thousands of rows).

Everything lives in a fresh folder under ``.tmpbench/`` (removed at the end unless ``--keep``) with
HOME/XDG isolated there, so no real config or store is read or touched.

Usage: ``.venv/bin/python bench/hooks_bench.py [--memories 10000] [--calls 200] [--sessions 4]
[--steps 6] [--delta 4] [--appends 40] [--skip-context] [--profile] [--keep]``
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from hindsight_hooks.backends.base import InContext, RecallRequest
from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.config import load_config, resolve_local_path
from hindsight_hooks.governance import identity as ident
from hindsight_hooks.hooks import Host, HostContext, Message, RecordingUI, hookimpl
from hindsight_hooks.plugin.recall.recall_query import compose_query, local_search_text

T0 = 1_700_000_000_000
MESSAGES_PER_ITEM = 5
ITEMS_PER_BATCH = 500
CONVERSATION = 20  # messages already in the session when a new prompt arrives
LONG_SESSION = 400  # messages in view for the in-context row (ADR 183's read bound)
TARGET_CONTEXT = (5.0, 20.0)  # p50, p99 ms
TARGET_CONTEXT_SEMANTIC = (8.0, 25.0)  # issue 13: semantic on, query embedding included
TARGET_AGENT_END_RATIO = 1.5
WORD = re.compile(r"[A-Za-z][a-z]{2,15}")
ROOT = Path(__file__).resolve().parent.parent


# -- text ---------------------------------------------------------------------------------------------


def token_stream(limit: int = 400_000) -> list[str]:
    """Lower-case words of standard-library sources, in reading order (fast: regex, no parsing)."""
    lib = Path(sys.base_prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    words: list[str] = []
    for path in sorted(lib.glob("*.py")):
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        words.extend(w.lower() for w in WORD.findall(text))
        if len(words) >= limit:
            break
    if len(words) < 10_000:
        raise SystemExit(f"only {len(words)} words found under {lib}; cannot build a corpus")
    return words


class Text:
    """Deterministic snippets of natural text: windows of the token stream."""

    def __init__(self, words: list[str], seed: int) -> None:
        self.words = words
        self.rnd = random.Random(seed)

    def snippet(self, lo: int, hi: int) -> str:
        n = self.rnd.randint(lo, hi)
        start = self.rnd.randrange(0, len(self.words) - n)
        return " ".join(self.words[start : start + n])


# -- the project ------------------------------------------------------------------------------------------


def isolate(base: Path) -> None:
    """HOME and XDG inside ``base``; no Hindsight settings of the caller leak in."""
    for key in list(os.environ):
        if key.startswith("HINDSIGHT"):
            del os.environ[key]
    home = base / "home"
    home.mkdir()
    os.environ["HOME"] = str(home)
    os.environ["XDG_CONFIG_HOME"] = str(home / ".config")
    os.environ["XDG_DATA_HOME"] = str(home / ".local" / "share")


def make_project(base: Path, budget: str | None = None, *, semantic: bool = True) -> tuple[Path, Path]:
    """A git repo whose project config selects the embedded store inside its state folder.

    The store path is resolved by the config loader itself, so the bulk load goes exactly where
    the plugin reads (a project file may only name a path inside the project).
    """
    root = base / "repo"
    (root / ".hindsight").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    off = "" if semantic else 'semantic = "off"\n'
    config = f'backend = "local"\n\n[local]\npath = ".hindsight/memory.db"\n{off}\n[notifications]\nstartup = false\n'
    if budget is not None:
        config += f'\n[recall]\nbudget = "{budget}"\n'
    (root / ".hindsight" / "config.toml").write_text(config, encoding="utf-8")
    loaded = load_config(root)
    if loaded.error or loaded.warnings:
        raise SystemExit(f"bench config rejected: {loaded.error or loaded.warnings}")
    return root, resolve_local_path(loaded.config, os.environ, cwd=root)


def plugin_host(root: Path, session_file: Path) -> Host:
    """A host that loads the plugin from its entry point, as a real agent does."""
    return Host(root, session_file=session_file, ui=RecordingUI())


class NullPlugin:
    """Implements every hook and does nothing: the baseline pays what the host pays per plugin
    (pluggy dispatch and the deep copy of the messages it hands each plugin), not our work."""

    @hookimpl
    def session_start(self, ctx: HostContext) -> None:
        return None

    @hookimpl
    def context(self, messages: list[Message], ctx: HostContext) -> list[Message] | None:
        return None

    @hookimpl
    def agent_end(self, messages: list[Message], ctx: HostContext) -> None:
        return None

    @hookimpl
    def shutdown(self, ctx: HostContext) -> None:
        return None


def bare_host(root: Path, session_file: Path) -> Host:
    return Host(root, session_file=session_file, ui=RecordingUI(), plugins=[NullPlugin()])


def complaints(host: Host) -> list[str]:
    """Warnings and errors the plugin told the user (a healthy run has none)."""
    ui = host.ctx.ui
    assert isinstance(ui, RecordingUI)
    return [f"{level}: {text}" for level, text in ui.notices if level != "info"]


def identity_for(root: Path) -> ident.Identity:
    cfg = load_config(root).config
    return ident.resolve_identity(HostContext(cwd=root, session_file=None, host_name="agent"), cfg)


def bulk_load(db: Path, who: ident.Identity, text: Text, memories: int) -> tuple[int, float]:
    """``memories`` units in the plugin's project bank, as auto-retained transcript items."""
    assert who.project_bank_id is not None
    backend = LocalBackend(db)
    started = time.perf_counter()
    units, batch_no, session = 0, 0, 0
    try:
        while units < memories:
            batch = []
            for _ in range(min(ITEMS_PER_BATCH, -(-(memories - units) // MESSAGES_PER_ITEM))):
                session += 1
                sid = f"bench{session // 40:011x}"
                msgs = [
                    {"role": "user" if k % 2 == 0 else "assistant", "content": text.snippet(12, 60),
                     "timestamp": T0 + session * 10_000 + k}
                    for k in range(MESSAGES_PER_ITEM)
                ]  # fmt: skip
                batch.append({
                    "content": json.dumps(msgs, indent=2),
                    "context": f'Coding session (agent) for repo "repo", session {sid}.jsonl',
                    "document_id": f"hh-session:{sid}",
                    "update_mode": "append",
                    "tags": [*who.base_tags()[:3], f"session:{sid}"],
                    "metadata": {"retain_source": "auto", "session_id": sid, "source": "hindsight-hooks"},
                })  # fmt: skip
            out = backend.retain_batch(who.project_bank_id, batch, operation_id=f"bulk-{batch_no}")
            units += len(out.unit_ids)
            batch_no += 1
    finally:
        backend.close()
    return units, time.perf_counter() - started


# -- statistics -----------------------------------------------------------------------------------------------


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def timed(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


# -- 1. context ---------------------------------------------------------------------------------------------


def conversation(text: Text, n: int, new_prompt: str) -> list[Message]:
    msgs: list[Message] = []
    for i in range(n):
        if i % 2 == 0:
            msgs.append({"role": "user", "content": text.snippet(10, 30), "timestamp": T0 + i * 1000, "id": f"u{i}"})
        else:
            msgs.append({
                "role": "assistant", "content": [{"type": "text", "text": text.snippet(20, 80)}],
                "model": "echo", "stopReason": "stop", "timestamp": T0 + i * 1000, "id": f"a{i}",
            })  # fmt: skip
    msgs.append({"role": "user", "content": new_prompt, "timestamp": T0 + n * 1000, "id": f"u{n}"})
    return msgs


def new_turn(history: list[Message], text: Text) -> list[Message]:
    """The history, a new assistant reply and a new prompt: what ``context`` sees each turn.

    Both last messages are new: the query body is the last ``context_turns`` (2) messages. The
    embedded store searches the prompt's words first (ADR 187); its prompts of 8 to 30 words have
    enough of them, so the reply is the server's part of the query and a varied one keeps it so.
    """
    n = len(history)
    reply: Message = {"role": "assistant", "content": [{"type": "text", "text": text.snippet(20, 80)}],
                      "model": "echo", "stopReason": "stop", "timestamp": T0 + n * 1000, "id": f"a{n}"}  # fmt: skip
    prompt: Message = {"role": "user", "content": text.snippet(8, 30), "timestamp": T0 + n * 1000 + 500, "id": f"u{n}"}
    return [*history, reply, prompt]


def semantic_ready(db: Path) -> bool:
    """With the [semantic] extra installed (the plugin then uses it by default, ADR 116): give every
    bulk-loaded unit its vector first, as ``hindsight-hooks embed`` would, so the timed recalls are
    hybrid (the plugin's own worker would otherwise still be catching up during the run)."""
    from hindsight_hooks.backends.factory import shared_semantic

    semantic = shared_semantic()  # the one the timed store below uses: the model loads once
    if semantic is None:
        return False
    backend = LocalBackend(db, semantic=semantic)
    for _ in backend.backfill():
        pass
    backend.close()
    return True


def bench_context(root: Path, db: Path, who: ident.Identity, text: Text, calls: int, profile: bool) -> dict[str, Any]:
    session = root / "sessions" / "context.jsonl"
    history = conversation(text, CONVERSATION - 1, "")[:-1]
    transcripts = [new_turn(history, text) for _ in range(calls + 20)]
    cfg = load_config(root).config
    assert who.project_bank_id is not None
    groups = ident.project_scope_groups(who.repo_key)
    semantic = cfg.local.semantic == "auto" and semantic_ready(db)
    if semantic:
        from hindsight_hooks.backends.factory import shared_semantic

        store = LocalBackend(db, semantic=shared_semantic())
        store.recall(who.project_bank_id, RecallRequest(query="warm up"))  # hands the matrix load to its worker
        store.wait_for_vectors(600)
    else:
        store = LocalBackend(db)

    long_view = conversation(text, LONG_SESSION, "")[:-1]

    def store_recall(msgs: list[Message], in_view: list[Message] | None = None) -> None:
        # the query the plugin gives the store: the prompt's words first, no labels (ADR 187)
        body = local_search_text(compose_query(msgs, "project", cfg.recall, repo_key=who.repo_key, cwd=root).body)
        seen = InContext(ident.live_document_id("bench"), [*in_view, *msgs]) if in_view else None
        request = RecallRequest(query=body, budget=cfg.recall.budget, max_tokens=cfg.recall.max_tokens,
                                types=None, tag_groups=groups, limit=cfg.recall.top_k, in_context=seen)  # fmt: skip
        store.recall(who.project_bank_id or "", request)

    with plugin_host(root, session) as plugged, bare_host(root, session) as bare:
        injected = 0
        for msgs in transcripts[:20]:  # warm-up: connections, page cache, statement cache
            bare.context(msgs)
            injected += len(plugged.context(msgs)) - len(msgs)
            store_recall(msgs)
        base_ms, plug_ms, hit_ms, store_ms, over_ms, long_ms = [], [], [], [], [], []
        for msgs in transcripts[20:]:  # interleaved, so machine noise hits each case alike
            b = timed(partial(bare.context, msgs))
            p = timed(partial(plugged.context, msgs))
            h = timed(partial(plugged.context, msgs))  # same prompt again: the §5.2 cache answers
            s = timed(partial(store_recall, msgs))
            long_ms.append(timed(partial(store_recall, msgs, long_view)))
            base_ms.append(b)
            plug_ms.append(p)
            hit_ms.append(h)
            store_ms.append(s)
            over_ms.append(p - b)
        found = sum(1 for msgs in transcripts[20:40] if len(plugged.context(msgs)) > len(msgs))
        trouble = complaints(plugged)
        prof_text = ""
        if profile:
            prof = cProfile.Profile()
            fresh = [new_turn(history, text) for _ in range(100)]
            prof.enable()
            for msgs in fresh:
                plugged.context(msgs)
            prof.disable()
            prof_text = profile_text(prof)
    store.close()
    return {
        "baseline": base_ms, "plugin": plug_ms, "cache_hit": hit_ms, "store_recall": store_ms,
        "store_recall_long_view": long_ms,
        "overhead": over_ms, "injected_in_warmup": injected, "with_block_of_20": found, "profile": prof_text,
        "complaints": trouble, "semantic": semantic, "store_mode": store.last_search_mode,
    }  # fmt: skip


# -- 2. agent_end ----------------------------------------------------------------------------------------------


def work_message(text: Text, i: int) -> Message:
    """A realistic mix: prompts, assistant text + tool calls, long tool output (1 in 8 fails)."""
    ts, mid = T0 + i * 1000, f"m{i:06d}"
    kind = i % 4
    if kind == 0:
        return {"role": "user", "content": text.snippet(10, 40), "timestamp": ts, "id": mid}
    if kind in (1, 3):
        return {
            "role": "assistant",
            "content": [
                {"type": "text", "text": text.snippet(30, 120)},
                {"type": "toolCall", "id": f"c{i}", "name": "bash", "arguments": {"command": f"pytest -k t{i}"}},
            ],
            "model": "model-x", "stopReason": "toolUse", "usage": {"input": 1200, "output": 300},
            "timestamp": ts, "id": mid,
        }  # fmt: skip
    return {
        "role": "toolResult", "toolCallId": f"c{i - 1}", "toolName": "bash",
        "content": [{"type": "text", "text": "\n".join(text.snippet(6, 14) for _ in range(60))}],
        "isError": i % 8 == 2, "timestamp": ts, "id": mid,
    }  # fmt: skip


def bench_agent_end(
    root: Path, text: Text, sizes: tuple[int, ...], sessions: int, steps: int, delta: int, profile: bool
) -> tuple[dict[int, dict[str, list[float]]], list[str], str]:
    longest = max(sizes) + steps * delta
    pool = [work_message(text, i) for i in range(longest)]
    out: dict[int, dict[str, list[float]]] = {n: {"plugin": [], "baseline": [], "prime": []} for n in sizes}
    trouble: list[str] = []
    prof = cProfile.Profile() if profile else None
    for s in range(sessions):
        hosts: dict[int, tuple[Host, Host]] = {}
        for n in sizes:
            session = root / "sessions" / f"end-{n}-{s}.jsonl"
            hosts[n] = (plugin_host(root, session), bare_host(root, session))
            for h in hosts[n]:
                h.start()
            prefix = pool[: n - delta]
            out[n]["prime"].append(timed(partial(hosts[n][0].agent_end, prefix)))  # a real retained run
        for k in range(steps):
            for n in sizes:  # interleaved sizes: each sees the same machine load
                msgs = pool[: n + k * delta]  # exactly ``delta`` new messages since the last run
                plugged, bare = hosts[n]
                out[n]["baseline"].append(timed(partial(bare.agent_end, msgs)))
                out[n]["plugin"].append(timed(partial(plugged.agent_end, msgs)))
        if prof is not None:  # one more, untimed run of the longest transcript, under the profiler
            prof.enable()
            hosts[max(sizes)][0].agent_end(pool[: max(sizes) + steps * delta])
            prof.disable()
        for pair in hosts.values():
            for h in pair:
                h.shutdown()
            trouble.extend(complaints(pair[0]))
    return out, trouble, profile_text(prof)


def bench_store_append(db: Path, text: Text, sizes: tuple[int, ...], delta: int, rounds: int) -> dict[int, list[float]]:
    """ms per ``retain_batch`` of ``delta`` new messages into a session document of each size."""
    pool = [work_message(text, i) for i in range(max(sizes) + rounds * delta)]
    backend = LocalBackend(db)
    out: dict[int, list[float]] = {n: [] for n in sizes}

    def item(msgs: list[Message], n: int) -> dict[str, Any]:
        return {"content": json.dumps(msgs), "context": "Coding session (agent)", "document_id": f"hh-session:store{n}",
                "update_mode": "append", "tags": ["repo:bench", f"session:store{n}"],
                "metadata": {"retain_source": "auto", "session_id": f"store{n}"}}  # fmt: skip

    try:
        for n in sizes:
            backend.retain_batch("bench-store", [item(pool[:n], n)], operation_id=f"store-prime-{n}")
        for k in range(rounds):
            for n in sizes:  # interleaved sizes
                msgs = pool[n + k * delta : n + (k + 1) * delta]
                batch = [item(msgs, n)]
                started = time.perf_counter()
                backend.retain_batch("bench-store", batch, operation_id=f"store-{n}-{k}")
                out[n].append((time.perf_counter() - started) * 1000)
    finally:
        backend.close()
    return out


def profile_text(prof: cProfile.Profile | None, top: int = 25) -> str:
    if prof is None:
        return ""
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats(os.environ.get("HH_PROFILE_SORT", "cumulative")).print_stats(top)
    return out.getvalue()


def check_retained(root: Path, db: Path, bank: str, expected_docs: int) -> str:
    """Sanity: the timed runs really delivered (one live document per session, nothing left queued)."""
    import sqlite3

    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        docs = conn.execute(
            "SELECT count(*) FROM documents WHERE bank_id = ? AND document_id LIKE 'hh-session:%' "
            "AND document_id NOT LIKE 'hh-session:bench%'",
            (bank,),
        ).fetchone()[0]
    finally:
        conn.close()
    queue = root / ".hindsight" / "retain-queue.jsonl"
    left = sum(1 for ln in queue.read_text(encoding="utf-8").splitlines() if ln.strip()) if queue.exists() else 0
    ok = docs == expected_docs and left == 0
    return f"{docs}/{expected_docs} session documents delivered, {left} jobs left queued -> {'ok' if ok else 'PROBLEM'}"


# -- main ----------------------------------------------------------------------------------------------------------


def line(name: str, values: list[float]) -> str:
    return f"  {name:<34} p50 {statistics.median(values):8.2f} ms   p99 {pct(values, 0.99):8.2f} ms"


def report_context(ctx: dict[str, Any], units: int, args: argparse.Namespace) -> None:
    p50 = statistics.median(ctx["plugin"])
    b50 = statistics.median(ctx["baseline"])
    o50, o99 = statistics.median(ctx["overhead"]), pct(ctx["overhead"], 0.99)
    print(f"\n1. context hook, {units} memories, {args.calls} calls, each a new prompt "
          f"({ctx['with_block_of_20']}/20 got a block injected); semantic "
          f"{'on (hybrid, last store search: ' + ctx['store_mode'] + ')' if ctx['semantic'] else 'off'}")  # fmt: skip
    print(line("baseline host (no-op plugin)", ctx["baseline"]))
    print(line("host + plugin (real recall)", ctx["plugin"]))
    print(line("plugin overhead (difference)", ctx["overhead"]))
    print(line("host + plugin, cache hit", ctx["cache_hit"]))
    print(line("LocalBackend.recall alone", ctx["store_recall"]))
    print(line(f"  same, {LONG_SESSION} messages in view", ctx["store_recall_long_view"]))
    target = TARGET_CONTEXT_SEMANTIC if ctx["semantic"] else TARGET_CONTEXT
    print(f"  ratio plugin/baseline p50 = {p50 / b50:.1f}x;  overhead p50 {o50:.2f} ms (target ≤ "
          f"{target[0]:.0f}), p99 {o99:.2f} ms (target ≤ {target[1]:.0f})"
          f"  -> {'met' if o50 <= target[0] and o99 <= target[1] else 'NOT met'}")  # fmt: skip
    print(f"  store share of the overhead p50: {statistics.median(ctx['store_recall']) / max(o50, 1e-9):.0%}")
    extra = statistics.median(ctx["store_recall_long_view"]) - statistics.median(ctx["store_recall"])
    print(f"  a long session in view (ADR 183) adds p50 {extra:.2f} ms to the recall (baseline: the same recall "
          f"without it, above)")  # fmt: skip
    if args.profile:
        print("\n  cProfile, 100 context calls (cumulative):\n" + ctx["profile"])
    if ctx["complaints"]:
        print("  plugin complained: " + " | ".join(ctx["complaints"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000, help="units bulk-loaded into the project bank")
    parser.add_argument("--calls", type=int, default=200, help="timed context calls (each a new prompt)")
    parser.add_argument("--sessions", type=int, default=4, help="agent_end sessions per transcript size")
    parser.add_argument("--steps", type=int, default=6, help="timed agent_end runs per session")
    parser.add_argument("--delta", type=int, default=4, help="new messages per agent_end run")
    parser.add_argument("--appends", type=int, default=40, help="timed store appends per document size (part 3)")
    parser.add_argument("--skip-context", action="store_true", help="run parts 2 and 3 only")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--budget", choices=["low", "mid", "high"], help="recall.budget in the project config")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="cProfile 100 context calls and the long agent_end runs (HH_PROFILE_SORT=tottime: by own time)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the tmp folder")
    parser.add_argument("--no-semantic", action="store_true", help="[local] semantic = off (lexical, as before)")
    args = parser.parse_args()
    sizes = (100, 2500)

    (ROOT / ".tmpbench").mkdir(exist_ok=True)
    base = Path(tempfile.mkdtemp(prefix="hooks-bench-", dir=ROOT / ".tmpbench"))
    wall = time.perf_counter()
    try:
        isolate(base)
        root, db = make_project(base, args.budget, semantic=not args.no_semantic)
        who = identity_for(root)
        text = Text(token_stream(), args.seed)
        units, load_s = bulk_load(db, who, text, args.memories)
        budget = load_config(root).config.recall.budget
        print(f"store {db} — bank {who.project_bank_id}: {units} units bulk-loaded in {load_s:.1f} s; "
              f"recall.budget={budget}")  # fmt: skip

        if not args.skip_context:
            report_context(bench_context(root, db, who, text, args.calls, args.profile), units, args)
        ends, trouble, end_prof = bench_agent_end(
            root, text, sizes, args.sessions, args.steps, args.delta, args.profile
        )
        runs = args.sessions * args.steps
        print(f"\n2. agent_end, delta {args.delta} new messages after a retained run, "
              f"{runs} runs per size ({args.sessions} sessions x {args.steps} steps)")  # fmt: skip
        for n in sizes:
            print(f"  transcript {n} (up to {n + (args.steps - 1) * args.delta}) messages:")
            print(line("  baseline host (no-op plugin)", ends[n]["baseline"]))
            print(line("  host + plugin", ends[n]["plugin"]))
            plug_net = [p - b for p, b in zip(ends[n]["plugin"], ends[n]["baseline"], strict=True)]
            print(line("  plugin share (difference)", plug_net))
            prime = statistics.median(ends[n]["prime"])
            print(f"    priming run (whole transcript but the delta retained once): median {prime:.1f} ms")
        small, large = (statistics.median(ends[n]["plugin"]) for n in sizes)
        net = [statistics.median([p - b for p, b in zip(ends[n]["plugin"], ends[n]["baseline"], strict=True)])
               for n in sizes]  # fmt: skip
        ratio_net = net[1] / net[0] if net[0] > 0 else float("inf")
        print(f"  ratio {sizes[1]}/{sizes[0]}: host+plugin {large / small:.2f}, plugin share {ratio_net:.2f}"
              f"  (target ≤ {TARGET_AGENT_END_RATIO})"
              f"  -> {'met' if ratio_net <= TARGET_AGENT_END_RATIO else 'NOT met'}")  # fmt: skip
        if trouble:
            print("  plugin complained: " + " | ".join(trouble))
        if args.profile:
            print(f"\n  cProfile, the {sizes[-1]}-message agent_end runs (cumulative):\n" + end_prof)
        print(f"  check: {check_retained(root, db, who.project_bank_id or '', len(sizes) * args.sessions)}")

        appends = bench_store_append(db, text, sizes, args.delta, args.appends)
        print(f"\n3. LocalBackend.retain_batch alone: append {args.delta} new messages to a session document, "
              f"{args.appends} appends per size")  # fmt: skip
        for n in sizes:
            print(line(f"  document of {n}+ messages", appends[n]))
        store_ratio = statistics.median(appends[sizes[1]]) / statistics.median(appends[sizes[0]])
        print(f"  ratio {sizes[1]}/{sizes[0]}: {store_ratio:.2f}  (ADR-050: an append costs its delta)")
        print(f"\ntotal wall time {time.perf_counter() - wall:.1f} s")
    finally:
        if args.keep:
            print(f"kept {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
