"""agent_end cursor cost on a 2,500- vs a 100-message transcript with the same new delta.

DESIGN.md target: cost ratio <= 1.5 (cost follows the delta, not the transcript). Times the
retain-side steps of §6.1 that scale with the transcript — drop injected, read the cursor,
filter_new, project the delta, retained_through_index, advance (locked read-modify-write with
an fsynced atomic replace) — on a real store file, and prints the ratio of medians measured in
the same run. Also prints what hashing the whole transcript once would cost, for scale.

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
from hindsight_hooks.plugin.cursor import CursorStore, FingerprintMemo, filter_new, fingerprint, retained_through_index
from hindsight_hooks.plugin.injected import drop_injected
from hindsight_hooks.plugin.projection import project, projection_json

T0 = 1_700_000_000_000


def message(i: int) -> dict[str, Any]:
    """A realistic mix: user prompts, assistant text + tool calls, multi-KB tool output."""
    ts, mid = T0 + i * 1000, f"msg-{i:06d}"
    kind = i % 4
    if kind == 0:
        return {"role": "user", "content": f"please look at module {i} and fix the failing test " * 8, "timestamp": ts,
                "id": mid}
    if kind in (1, 3):
        return {
            "role": "assistant",
            "content": [
                {"type": "text", "text": f"Looking at step {i}. " * 40},
                {"type": "toolCall", "id": f"call-{i}", "name": "bash", "arguments": {"command": f"pytest -k t{i} -x"}},
            ],
            "model": "model-x", "stopReason": "toolUse", "usage": {"input": 1200, "output": 300}, "timestamp": ts,
            "id": mid,
        }
    return {"role": "toolResult", "toolCallId": f"call-{i - 1}", "toolName": "bash",
            "content": [{"type": "text", "text": f"line {i}: output of the command\n" * 120}],
            "isError": i % 8 == 2, "timestamp": ts, "id": mid}


def one_agent_end(store: CursorStore, sid: str, messages: list[dict[str, Any]], cfg: RetainConfig) -> int:
    memo = FingerprintMemo()
    msgs = drop_injected(messages)
    state = store.get(sid)
    idx = filter_new(msgs, state, memo=memo)
    delta = [msgs[i] for i in idx]
    content = projection_json(project(delta, cfg, now_ms=T0))
    through = retained_through_index(msgs, delta, memo=memo)
    store.advance(sid, msgs, through if through >= 0 else len(msgs) - 1, memo=memo)
    return len(content)


def prepare(folder: Path, name: str, n: int, delta: int) -> tuple[CursorStore, list[dict[str, Any]], bytes]:
    msgs = [message(i) for i in range(n)]
    store = CursorStore(folder / f"{name}.json")
    store.advance("sid", msgs[: n - delta], n - delta - 1)  # retained up to the new delta
    return store, msgs, store.path.read_bytes()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--delta", type=int, default=4)
    args = parser.parse_args()
    cfg = RetainConfig()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cases = {n: prepare(folder, f"c{n}", n, args.delta) for n in (100, 2500)}
        timings: dict[int, list[float]] = {n: [] for n in cases}
        for _ in range(args.rounds):
            for n, (store, msgs, before) in cases.items():  # interleaved: both see the same machine load
                store.path.write_bytes(before)
                start = time.perf_counter()
                one_agent_end(store, "sid", msgs, cfg)
                timings[n].append(time.perf_counter() - start)
        small, big = (statistics.median(timings[n]) * 1000 for n in (100, 2500))
        full = cases[2500][1]
        start = time.perf_counter()
        for msg in full:
            fingerprint(msg)
        full_hash = (time.perf_counter() - start) * 1000
    print(f"delta={args.delta} messages, rounds={args.rounds}")
    print(f"  100 messages:  {small:7.2f} ms (median)")
    print(f"  2500 messages: {big:7.2f} ms (median)")
    print(f"  hashing all 2500 messages once would cost {full_hash:.2f} ms")
    print(f"ratio 2500/100 = {big / small:.2f}  (target <= 1.5)")


if __name__ == "__main__":
    main()
