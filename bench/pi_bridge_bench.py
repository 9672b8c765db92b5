"""What the Pi bridge costs a turn: ``context`` through ``serve --stdio`` vs the same recall in-process.

Target (issue 11, printed, never asserted): the round trip of ``context`` through the bridge on
the embedded store with 10,000 memories, p50 ≤ 8 ms and p99 ≤ 25 ms.

- **Bridge**: a real ``python -m hindsight_hooks.hosts.serve_stdio --stdio`` child on pipes,
  spoken to the way the Pi extension speaks to it (one JSON line out, one JSON line back). Each
  call is timed from writing the request to reading its answer: encoding, the pipe, the
  server's parse, ``Host.context`` (the plugin's real recall), the answer's encoding (the
  ``inserts`` edit) and its parse here.
- **In-process**: the same message lists through a ``Host`` in this process (the plugin loaded
  from its entry point), which is what a Python host pays; the difference is the bridge's own
  cost.

The two are interleaved call by call, on the same 20-message transcripts with a new reply and
prompt each call (so every call is a real recall, not the recall cache), against one store of
10,000 memories bulk-loaded into the plugin's project bank (the corpus and loader of
``bench/hooks_bench.py``). The client here is Python; the extension's own JSON work in Node is
not included (it is a ``JSON.stringify`` of the same list and a parse of one small answer).

With the [semantic] extra installed, every memory gets its vector before the run (as
``hindsight-hooks embed`` does), so the timed recalls are hybrid and no process is still catching
up on 10,000 vectors while it is timed; the warm-up lasts ``WARMUP_S`` so each process's one-time
model load is over too.

Everything lives under a fresh temporary folder with HOME/XDG isolated there.

Usage: ``.venv/bin/python bench/pi_bridge_bench.py [--memories 10000] [--calls 200] [--keep]``
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import hooks_bench as hb  # the corpus, the project and the bulk loader are shared

TARGET = (8.0, 25.0)  # p50, p99 ms
WARMUP = 10
WARMUP_S = 5.0
"""Warm-up also lasts this long: with the [semantic] extra each process loads its model in the
background 2 s after its store opens (ADR 116), and that one-time load is not a turn's cost."""


class Bridge:
    """A minimal client of ``serve --stdio``: one request at a time, answers read in order."""

    def __init__(self, root: Path) -> None:
        command = [sys.executable, "-m", "hindsight_hooks.hosts.serve_stdio", "--stdio", "--cwd", str(root)]
        self.proc = subprocess.Popen(
            command, cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self.next_id = 0

    def call(self, method: str, params: dict[str, Any]) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.next_id += 1
        request = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.proc.stdin.write(json.dumps(request, separators=(",", ":")).encode() + b"\n")
        self.proc.stdin.flush()
        while True:
            answer = json.loads(self.proc.stdout.readline())
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer["result"]

    def close(self) -> None:
        try:
            self.call("shutdown", {})
        finally:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait(60)


def row(name: str, values: list[float], target: tuple[float, float] | None) -> str:
    p50, p99 = hb.pct(values, 0.5), hb.pct(values, 0.99)
    line = f"{name:<34} p50 {p50:7.2f} ms   p99 {p99:7.2f} ms"
    if target is not None:
        ok = p50 <= target[0] and p99 <= target[1]
        line += f"   target p50 <= {target[0]:.0f} ms, p99 <= {target[1]:.0f} ms: {'met' if ok else 'MISSED'}"
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()

    base = Path(tempfile.mkdtemp(prefix="pi-bridge-bench-"))
    try:
        hb.isolate(base)
        root, db = hb.make_project(base)
        who = hb.identity_for(root)
        text = hb.Text(hb.token_stream(), seed=11)
        units, load_s = hb.bulk_load(db, who, text, args.memories)
        print(f"store: {units} memories in {db} (loaded in {load_s:.1f} s)")
        hybrid = hb.semantic_ready(db)  # every unit has its vector first, as `hindsight-hooks embed` gives
        print(f"recall: {'hybrid (lexical + vectors, [semantic] extra)' if hybrid else 'lexical'}")

        history = hb.conversation(text, hb.CONVERSATION - 1, "")[:-1]
        transcripts = [hb.new_turn(history, text) for _ in range(args.calls + WARMUP)]
        session = root / ".hindsight" / "sessions" / "bench.jsonl"

        bridge = Bridge(root)
        bridge.call("start", {"protocolVersion": 1, "cwd": str(root), "sessionFile": str(session)})
        host = hb.plugin_host(root, session)
        host.start()
        via_bridge: list[float] = []
        in_process: list[float] = []
        injected = 0
        try:
            warm_until = time.monotonic() + WARMUP_S
            warm = 0
            while warm < WARMUP or time.monotonic() < warm_until:
                messages = transcripts[warm % WARMUP]
                bridge.call("context", {"messages": messages})
                host.context(messages)
                warm += 1
            for i, messages in enumerate(transcripts):
                started = time.perf_counter()
                answer = bridge.call("context", {"messages": messages})
                bridge_ms = (time.perf_counter() - started) * 1000
                started = time.perf_counter()
                host.context(messages)
                local_ms = (time.perf_counter() - started) * 1000
                if i < WARMUP:
                    continue
                via_bridge.append(bridge_ms)
                in_process.append(local_ms)
                injected += 1 if answer.get("inserts") else 0
        finally:
            host.shutdown()
            bridge.close()

        size = len(json.dumps(transcripts[-1]))
        count = len(history) + 2
        print(f"calls: {len(via_bridge)} (after {WARMUP} warm-up); transcript {count} messages, ~{size} bytes")
        print(f"recalls that injected a block through the bridge: {injected}/{len(via_bridge)}")
        print(row("context through the bridge", via_bridge, TARGET))
        print(row("the same context in-process (Host)", in_process, None))
        overhead = [b - p for b, p in zip(via_bridge, in_process, strict=True)]
        print(row("bridge's own share (per call)", overhead, None))
    finally:
        if args.keep:
            print(f"kept {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
        os.environ.pop("XDG_DATA_HOME", None)


if __name__ == "__main__":
    main()
