"""What a dead Hindsight server costs a session and the CLI (issue 9 item 11; ADR 069).

The server is a loopback port with nothing listening (every connection is refused at once).
Each figure is printed next to its target and next to a baseline measured in the same run: the
same session and the same commands on the embedded store, which needs no server at all. Printed,
never asserted.

- a session's first hooks (``session_start``, then the first ``context`` + ``agent_end``):
  target <= 1 s each;
- every later hook (``context`` and ``agent_end`` of the following turns): target <= 50 ms;
- a CLI command end to end (``recall``, ``retain``, a fresh process each): target <= 1.5 s.

Sessions run in a fresh child process each (timed inside it, after ``import hindsight_hooks``),
so a first hook pays what it would pay in a real agent: importing httpx, building the client.

Usage: ``python bench/dead_server_bench.py [--rounds R] [--turns T]``
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCRIPT = Path(sys.executable).parent / "hindsight-hooks"

SESSION = r"""
import json, statistics, sys, time
from hindsight_hooks.hooks import Host, RecordingUI, assistant_message, user_message
turns = int(sys.argv[1])
out = {}
t = time.perf_counter()
host = Host(".", session_file="bench.jsonl", host_name="bench", ui=RecordingUI())
host.start()
out["start"] = time.perf_counter() - t
messages = []
later = []
for n in range(turns):
    messages.append(user_message(f"question {n} about the parser and its cache"))
    t = time.perf_counter()
    host.context(messages)
    context_s = time.perf_counter() - t
    messages.append(assistant_message(f"answer {n}: the cache is keyed by the query"))
    t = time.perf_counter()
    host.agent_end(messages)
    end_s = time.perf_counter() - t
    if n == 0:
        out["first_context"], out["first_agent_end"] = context_s, end_s
    else:
        later.extend([context_s, end_s])
t = time.perf_counter()
host.shutdown()
out["shutdown"] = time.perf_counter() - t
out["later_max"] = max(later) if later else 0.0
out["later_median"] = statistics.median(later) if later else 0.0
print(json.dumps(out))
"""

FIGURES: list[tuple[str, str, float]] = [
    ("start", "session_start", 1.0),
    ("first_context", "first context", 1.0),
    ("first_agent_end", "first agent_end", 1.0),
    ("later_max", "later hooks (max)", 0.05),
    ("later_median", "later hooks (median)", 0.05),
    ("shutdown", "shutdown", 1.0),
    ("cli_recall", "CLI recall, end to end", 1.5),
    ("cli_retain", "CLI retain, end to end", 1.5),
]


def refused_url() -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"  # closed again: connections are refused


def make_project(root: Path, config: str) -> Path:
    (root / ".hindsight").mkdir(parents=True)
    (root / ".hindsight" / "config.toml").write_text(config, encoding="utf-8")
    return root


def env_for(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HINDSIGHT")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_DATA_HOME=str(home / ".local/share"))
    return env


def run_session(project: Path, env: dict[str, str], turns: int) -> dict[str, float]:
    proc = subprocess.run(
        [sys.executable, "-c", SESSION, str(turns)],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    values: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return values


def run_cli(project: Path, env: dict[str, str], *args: str) -> float:
    t = time.perf_counter()
    subprocess.run([str(SCRIPT), *args, "--cwd", str(project)], env=env, capture_output=True, timeout=300, check=False)
    return time.perf_counter() - t


def measure_once(kind: str, root: Path, turns: int) -> dict[str, float]:
    """One session and one of each CLI command on a fresh project of ``kind`` (dead or baseline)."""
    common = "[notifications]\nstartup = false\n[mental_models]\nenabled = false\n"
    if kind == "dead":
        config = f'backend = "hindsight"\n[hindsight]\nbase_url = "{refused_url()}"\n' + common
    else:
        config = 'backend = "local"\n[local]\npath = ".hindsight/memory.db"\n' + common
    project = make_project(root / "project", config)
    env = env_for(root / "home")
    out = run_session(project, env, turns)
    out["cli_recall"] = run_cli(project, env, "recall", "the parser cache")
    out["cli_retain"] = run_cli(project, env, "retain", "We key the parser cache by query.")
    return out


def fmt(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="sessions and CLI runs per backend (median shown)")
    parser.add_argument("--turns", type=int, default=6, help="turns per session")
    args = parser.parse_args()
    dead: dict[str, list[float]] = {}
    base: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="dead-server-bench-") as tmp:
        for r in range(args.rounds):  # interleaved, so machine noise hits both alike
            for kind, into in (("dead", dead), ("baseline", base)):
                for key, value in measure_once(kind, Path(tmp) / f"{kind}-{r}", args.turns).items():
                    into.setdefault(key, []).append(value)
    print(f"dead server (refused loopback port) vs embedded store; median of {args.rounds} run(s), {args.turns} turns")
    print(f"{'figure':<26} {'dead server':>12} {'baseline':>12} {'target':>10}  ")
    for key, label, target in FIGURES:
        d = statistics.median(dead[key])
        b = statistics.median(base[key])
        verdict = "ok" if d <= target else "MISSED"
        print(f"{label:<26} {fmt(d):>12} {fmt(b):>12} {'<= ' + fmt(target):>10}  {verdict}")


if __name__ == "__main__":
    main()
