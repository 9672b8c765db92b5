"""agent_end cursor cost on a 2,500- vs a 100-message transcript with the same new delta.

docs/design.md target: cost ratio <= 1.5 (cost follows the delta, not the transcript). This times
the retain-side steps of docs/retain.md#order that could scale with the transcript, on a real store file:

- cursor: read the store, filter_new, retained_through_index, advance (locked read-modify-write
  with an fsynced atomic replace) — the ratio this script is about;
- plus drop_injected (step 2, inherently one cheap pass over every message) and the projection
  of the delta, reported separately and in a second ratio.

Both sizes run interleaved in the same process and the ratio is of medians. For scale it also
prints what hashing the whole 2,500-message transcript once would cost (what a literal
implementation of the fast path's chain check pays on every call).

Run: .venv/bin/python bench/cursor_bench.py [--rounds N] [--delta D]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from hindsight_hooks.config_model import RetainConfig
from hindsight_hooks.fsutil import atomic_write_bytes
from hindsight_hooks.retain.cursor import CursorStore, FingerprintMemo, filter_new, fingerprint, retained_through_index
from hindsight_hooks.retain.injected import drop_injected
from hindsight_hooks.retain.projection import project, projection_json

T0 = 1_700_000_000_000
STEPS = ("drop_injected", "read", "filter_new", "project", "through", "advance")
CURSOR_STEPS = ("read", "filter_new", "through", "advance")


def message(i: int) -> dict[str, Any]:
    """A realistic mix: user prompts, assistant text + tool calls, multi-KB tool output."""
    ts, mid = T0 + i * 1000, f"msg-{i:06d}"
    kind = i % 4
    if kind == 0:
        text = f"please look at module {i} and fix the failing test " * 8
        return {"role": "user", "content": text, "timestamp": ts, "id": mid}
    if kind in (1, 3):
        return {
            "role": "assistant",
            "content": [
                {"type": "text", "text": f"Looking at step {i}. " * 40},
                {"type": "toolCall", "id": f"call-{i}", "name": "bash", "arguments": {"command": f"pytest -k t{i}"}},
            ],
            "model": "model-x",
            "stopReason": "toolUse",
            "usage": {"input": 1200, "output": 300},
            "timestamp": ts,
            "id": mid,
        }
    return {
        "role": "toolResult",
        "toolCallId": f"call-{i - 1}",
        "toolName": "bash",
        "content": [{"type": "text", "text": f"line {i}: output of the command\n" * 120}],
        "isError": i % 8 == 2,
        "timestamp": ts,
        "id": mid,
    }


def one_agent_end(store: CursorStore, sid: str, messages: list[dict[str, Any]], cfg: RetainConfig) -> dict[str, float]:
    """docs/retain.md#order steps 2, 4, 5 and 8, timed step by step (ms)."""
    marks = [time.perf_counter()]
    memo = FingerprintMemo()
    msgs = drop_injected(messages)
    marks.append(time.perf_counter())
    state = store.get(sid)
    marks.append(time.perf_counter())
    delta = [msgs[i] for i in filter_new(msgs, state, memo=memo)]
    marks.append(time.perf_counter())
    projection_json(project(delta, cfg, now_ms=T0))
    marks.append(time.perf_counter())
    through = retained_through_index(msgs, delta, memo=memo)
    marks.append(time.perf_counter())
    store.advance(sid, msgs, through if through >= 0 else len(msgs) - 1, memo=memo)
    marks.append(time.perf_counter())
    return {step: (marks[k + 1] - marks[k]) * 1000 for k, step in enumerate(STEPS)}


def prepare(folder: Path, n: int, delta: int) -> tuple[CursorStore, list[dict[str, Any]], bytes]:
    msgs = [message(i) for i in range(n)]
    store = CursorStore(folder / f"cursors-{n}.json")
    store.advance("sid", msgs[: n - delta], n - delta - 1)  # retained up to the new delta
    return store, msgs, store.path.read_bytes()


def main() -> None:
    parser = argparse.ArgumentParser(description="agent_end cursor cost: 2,500 vs 100 messages")
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--delta", type=int, default=4)
    args = parser.parse_args()
    cfg = RetainConfig()
    sizes = (100, 2500)
    with tempfile.TemporaryDirectory() as tmp:
        cases = {n: prepare(Path(tmp), n, args.delta) for n in sizes}
        runs: dict[int, list[dict[str, float]]] = {n: [] for n in sizes}
        for _ in range(args.rounds):
            for n, (store, msgs, before) in cases.items():  # interleaved: both see the same load
                atomic_write_bytes(store.path, before)  # back to "retained up to the delta"
                runs[n].append(one_agent_end(store, "sid", msgs, cfg))
        start = time.perf_counter()
        for msg in cases[2500][1]:
            fingerprint(msg)
        full_hash = (time.perf_counter() - start) * 1000

    def median(n: int, steps: tuple[str, ...]) -> float:
        return statistics.median(sum(run[s] for s in steps) for run in runs[n])

    print(f"delta={args.delta} new messages, rounds={args.rounds}; medians in ms")
    print(f"{'step':<16}" + "".join(f"{n:>10}" for n in sizes))
    for step in STEPS:
        print(f"{step:<16}" + "".join(f"{statistics.median(r[step] for r in runs[n]):>10.3f}" for n in sizes))
    cursor = [median(n, CURSOR_STEPS) for n in sizes]
    everything = [median(n, STEPS) for n in sizes]
    print(f"{'cursor total':<16}" + "".join(f"{v:>10.3f}" for v in cursor))
    print(f"{'all steps':<16}" + "".join(f"{v:>10.3f}" for v in everything))
    print(f"hashing all 2500 messages once: {full_hash:.3f} ms")
    print(f"cursor ratio 2500/100 = {cursor[1] / cursor[0]:.2f}  (target <= 1.5)")
    print(f"all-steps ratio 2500/100 = {everything[1] / everything[0]:.2f}")


if __name__ == "__main__":
    main()
