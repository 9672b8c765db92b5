"""What loading the plugin costs a host: import time of the entry point in a fresh interpreter.

The plugin lives in other people's processes, so its import is paid at their start-up. Each
sample is a fresh ``python -c`` (no warm module cache in the process; the OS file cache is warm
after the first round). The baseline is the same interpreter importing only ``pluggy``, which
every host that loads us already pays; the ratio and the difference are what we add.

Usage: ``python bench/import_bench.py [--rounds 15]``
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

PROBE = (
    "import time, sys\n"
    "t = time.perf_counter()\n"
    "{imports}\n"
    "dt = time.perf_counter() - t\n"
    "heavy = [m for m in ('httpx', 'sqlite3', 'asyncio', 'rich', 'numpy') if m in sys.modules]\n"
    "print(dt, ','.join(heavy))\n"
)

CASES = {
    "baseline: import pluggy": "import pluggy",
    "import hindsight_hooks.hooks": "import pluggy\nimport hindsight_hooks.hooks",
    "entry point: hindsight_hooks.plugin:plugin": "import pluggy\nfrom hindsight_hooks.plugin import plugin",
}


def sample(imports: str) -> tuple[float, str]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(imports=imports)], capture_output=True, text=True, check=True, timeout=60
    ).stdout.split()
    return float(out[0]), (out[1] if len(out) > 1 else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    results: dict[str, list[float]] = {name: [] for name in CASES}
    heavy: dict[str, str] = {}
    for imports in CASES.values():  # one warm-up each, not counted
        sample(imports)
    for _ in range(args.rounds):  # interleaved, so machine noise hits every case alike
        for name, imports in CASES.items():
            dt, loaded = sample(imports)
            results[name].append(dt)
            heavy[name] = loaded
    base = statistics.median(results["baseline: import pluggy"])
    print(f"import cost, median of {args.rounds} fresh interpreters")
    for name, times in results.items():
        p50 = statistics.median(times)
        extra = f" (heavy modules loaded: {heavy[name]})" if heavy[name] else ""
        print(f"  {name:45s} {p50 * 1000:7.1f} ms  ratio {p50 / base:5.1f}x  +{(p50 - base) * 1000:6.1f} ms{extra}")


if __name__ == "__main__":
    main()
