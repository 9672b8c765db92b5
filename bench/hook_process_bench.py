"""What a Claude Code hook costs the user: a hook process timed from spawn to exit.

Claude Code runs ``python -m hindsight_hooks.hosts hook claude-code <Event>`` (what
``hindsight-hooks install claude-code`` writes) as a fresh process on every event, so its
start-up is the user's latency on every prompt. Issue 10 targets, printed (never asserted):

- ``UserPromptSubmit``: p50 <= 120 ms, p99 <= 300 ms (a real recall on an embedded store of
  10,000 memories, the transcript's last turns + a new prompt every call);
- ``Stop``: p50 <= 120 ms (the transcript grew by one turn: read it, queue the new part
  durably, start delivery without waiting).

Three ways are timed, interleaved call by call so a busy machine hurts them alike:

- ``helper``: the installed command with the warm helper (ADR-080): a stdlib-only client hands
  the event to a helper process that keeps the plugin loaded. The helper is started (and its
  first call answered in-process) before timing, as it would be after a session's first event.
- ``in-process``: ``HINDSIGHT_HOOK_HELPER=off``: every call imports the plugin and answers by
  itself (the lighter import path; the helper's fallback).
- ``python -c pass``: a bare interpreter, the floor; each figure is printed as a ratio to it.

Everything lives in a fresh folder (HOME, XDG, the helper's sockets) removed at the end unless
``--keep``. Usage: ``.venv/bin/python bench/hook_process_bench.py [--memories 10000] [--calls 60]``
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hooks_bench import Text, bulk_load, identity_for, isolate, make_project, pct, token_stream
from tests.hosts.claude_lines import ClaudeSession

TARGET_PROMPT = (120.0, 300.0)  # p50, p99 ms
TARGET_STOP = 120.0  # p50 ms
HOOK = [sys.executable, "-m", "hindsight_hooks.hosts", "hook", "claude-code"]
BARE = [sys.executable, "-c", "pass"]
HISTORY_TURNS = 30


def spawn_ms(argv: list[str], data: bytes, env: dict[str, str], cwd: Path) -> tuple[float, bytes]:
    started = time.perf_counter()
    proc = subprocess.run(argv, input=data, capture_output=True, env=env, cwd=cwd, check=False)
    elapsed = (time.perf_counter() - started) * 1000
    if proc.returncode != 0:
        raise SystemExit(f"{argv[-1]} exited {proc.returncode}: {proc.stderr[-500:]!r}")
    return elapsed, proc.stdout


def line(name: str, values: list[float], bare: float, target: str) -> str:
    p50, p99 = statistics.median(values), pct(values, 0.99)
    return f"  {name:<28} p50 {p50:7.1f} ms  p99 {p99:7.1f} ms  ({p50 / bare:4.1f}x bare python)  target {target}"


def wait_for_socket(runtime: Path, timeout_s: float = 60.0) -> None:
    import socket

    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        for path in runtime.glob("*.sock"):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(str(path))
                return
            except OSError:
                pass
            finally:
                s.close()
        time.sleep(0.05)
    raise SystemExit("the helper did not start")


def stop_helpers(runtime: Path) -> None:
    for path in runtime.glob("*.sock"):
        path.unlink()  # a helper exits within a second of losing its socket


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()

    base = Path(tempfile.mkdtemp(prefix="hook-bench-", dir=str(Path(__file__).resolve().parent.parent)))
    runtime = Path(tempfile.mkdtemp(prefix="hh-bench-", dir="/tmp"))
    try:
        isolate(base)
        root, db = make_project(base)
        text = Text(token_stream(), args.seed)
        units, load_s = bulk_load(db, identity_for(root), text, args.memories)
        print(f"store: {units} memories in {db} (loaded in {load_s:.1f} s)")

        env = dict(os.environ)
        env["HINDSIGHT_HOOK_RUNTIME_DIR"] = str(runtime)
        helper_env = {**env, "HINDSIGHT_HOOK_HELPER": "on"}
        process_env = {**env, "HINDSIGHT_HOOK_HELPER": "off"}
        home = Path(env["HOME"])
        sessions = {
            mode: ClaudeSession(home / ".claude" / "projects" / "repo" / f"{mode}.jsonl", root, f"bench-{mode}")
            for mode in ("helper", "in-process")
        }
        for session in sessions.values():
            for _ in range(HISTORY_TURNS):
                session.turn(text.snippet(8, 30), text.snippet(20, 80))

        # the session's first event starts the helper (answered in-process); timing starts after
        first = json.dumps(sessions["helper"].event("SessionStart")).encode()
        spawn_ms([*HOOK, "SessionStart"], first, helper_env, root)
        wait_for_socket(runtime)

        timings: dict[str, list[float]] = {k: [] for k in ("bare", "prompt:helper", "prompt:in-process",
                                                           "stop:helper", "stop:in-process")}  # fmt: skip
        blocks = 0
        for i in range(args.calls):
            timings["bare"].append(spawn_ms(BARE, b"", env, root)[0])
            for mode, mode_env in (("helper", helper_env), ("in-process", process_env)):
                session = sessions[mode]
                prompt = text.snippet(8, 30)
                session.user(prompt)
                event = session.event("UserPromptSubmit", prompt=prompt)
                ms, out = spawn_ms([*HOOK, "UserPromptSubmit"], json.dumps(event).encode(), mode_env, root)
                timings[f"prompt:{mode}"].append(ms)
                blocks += "<hindsight-memory>" in out.decode()
                reply = text.snippet(20, 80)
                session.say(reply)
                event = session.event("Stop", last_assistant_message=reply)
                timings[f"stop:{mode}"].append(spawn_ms([*HOOK, "Stop"], json.dumps(event).encode(), mode_env, root)[0])
            if (i + 1) % 10 == 0:
                print(f"  {i + 1}/{args.calls} calls", flush=True)

        bare = statistics.median(timings["bare"])
        print(f"\nhook processes, spawn to exit ({args.calls} calls each, interleaved; {blocks} prompts got a block)")
        print(f"  {'python -c pass':<28} p50 {bare:7.1f} ms  p99 {pct(timings['bare'], 0.99):7.1f} ms")
        prompt_target = f"p50 <= {TARGET_PROMPT[0]:.0f} ms, p99 <= {TARGET_PROMPT[1]:.0f} ms"
        for mode in ("helper", "in-process"):
            print(line(f"UserPromptSubmit ({mode})", timings[f"prompt:{mode}"], bare, prompt_target))
            print(line(f"Stop ({mode})", timings[f"stop:{mode}"], bare, f"p50 <= {TARGET_STOP:.0f} ms"))
        slowest = ", ".join(f"{v:.0f}" for v in sorted(timings["prompt:helper"])[-5:])
        print(f"  slowest UserPromptSubmit (helper) calls: {slowest} ms")
        verdicts: list[str] = []
        p = timings["prompt:helper"]
        s = timings["stop:helper"]
        ok = statistics.median(p) <= TARGET_PROMPT[0] and pct(p, 0.99) <= TARGET_PROMPT[1]
        verdicts.append(f"UserPromptSubmit with the helper: {'meets' if ok else 'MISSES'} the target")
        ok = statistics.median(s) <= TARGET_STOP
        verdicts.append(f"Stop with the helper: {'meets' if ok else 'MISSES'} the target")
        print("\n" + "\n".join(verdicts))
        report: dict[str, Any] = {k: {"p50": statistics.median(v), "p99": pct(v, 0.99)} for k, v in timings.items()}
        print("json: " + json.dumps(report))
    finally:
        stop_helpers(runtime)
        time.sleep(2.0)  # let the helper see its socket gone and delivery threads end
        shutil.rmtree(runtime, ignore_errors=True)
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
