"""What importing a past session costs, against the cheapest possible reading of the same file.

A synthetic Pi v3 session (``--turns`` turns: a user message, an assistant tool call, a tool
result, an answer; a few fat tool outputs) is written to a temp folder. Each case is timed
``--rounds`` times in this process; the baseline is ``orjson.loads`` (the importer's parser)
of every line of the same file, which any importer pays. Printed: median seconds, and the ratio to that baseline.

The end-to-end case runs ``/hindsight:import-file --yes`` through a real ``Host`` on the
embedded store (parse, project, chunk, redact, queue, flush to SQLite), in a fresh project
each round, so every round writes all documents.

Usage: ``python bench/session_import_bench.py [--turns 600] [--rounds 5]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson

from hindsight_hooks.hooks import Host, NullUI
from hindsight_hooks.importer.documents import ImportScope, ImportSettings, build_session_documents
from hindsight_hooks.importer.pi_session import parse_session

SCOPE = ImportScope(host="bench", repo_key="bench-0123456789ab", cwd="/bench")


def write_session(path: Path, cwd: Path, turns: int) -> None:
    rows: list[dict[str, object]] = [{"type": "session", "version": 3, "id": "bench", "cwd": str(cwd)}]
    parent: str | None = None

    def add(message: dict[str, object]) -> None:
        nonlocal parent
        entry_id = f"e{len(rows):06d}"
        rows.append({"type": "message", "id": entry_id, "parentId": parent, "message": message})
        parent = entry_id

    for i in range(turns):
        add({"role": "user", "content": f"Turn {i}: should the exporter retry job {i} on a 503 from the warehouse?"})
        call = {"type": "toolCall", "id": f"c{i}", "name": "bash", "arguments": {"command": f"grep -n retry job{i}.py"}}
        add({"role": "assistant", "content": [call]})
        output = ("line of build output\n" * (200 if i % 10 == 0 else 3)).strip()
        add({"role": "toolResult", "toolCallId": f"c{i}", "toolName": "bash", "content": output, "isError": i % 7 == 0})
        add(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": f"Decision {i}: retry 3 times, then dead-letter."}],
            }
        )
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")


def median_time(work: Callable[[], object], rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        work()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--turns", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="hh-import-bench-") as tmp:
        root = Path(tmp)
        os.environ["XDG_CONFIG_HOME"] = str(root / "xdg-config")  # never the real user config
        os.environ["XDG_DATA_HOME"] = str(root / "xdg-data")
        source = root / "session.jsonl"
        write_session(source, root, args.turns)
        size = source.stat().st_size

        def baseline() -> object:
            with source.open("rb") as f:
                return [orjson.loads(line) for line in f if line.strip()]

        def documents(mode: str) -> Callable[[], object]:
            return lambda: build_session_documents(parse_session(source), ImportSettings(mode=mode), SCOPE)

        counter = iter(range(10**6))

        def end_to_end() -> object:
            project = root / f"proj-{next(counter)}"
            (project / ".hindsight").mkdir(parents=True)
            (project / ".hindsight" / "config.toml").write_text(
                'backend = "local"\n[local]\npath = ".hindsight/memory.db"\n[notifications]\nstartup = false\n',
                encoding="utf-8",
            )
            session = project / "session.jsonl"
            write_session(session, project, args.turns)
            with Host(project, session_file=None, host_name="bench", ui=NullUI()) as host:
                result = host.command(f"/hindsight:import-file {session} --yes")
            assert result.level == "info", result.text
            return result

        built = documents("curated")()
        print(f"session: {args.turns} turns, {size / 1024:.0f} KiB; curated documents: {len(built.documents)}")  # type: ignore[attr-defined]
        base = median_time(baseline, args.rounds)
        print(f"{'case':<44} {'median s':>10} {'x baseline':>11}")
        print(f"{'baseline: orjson.loads every line':<44} {base:>10.4f} {1.0:>11.1f}")
        for name, work, rounds in (
            ("parse_session (tree, current branch)", lambda: parse_session(source), args.rounds),
            ("parse + curated documents", documents("curated"), args.rounds),
            ("parse + raw document", documents("raw"), args.rounds),
            ("import-file --yes into SQLite (end to end)", end_to_end, max(1, args.rounds // 2)),
        ):
            t = median_time(work, rounds)
            print(f"{name:<44} {t:>10.4f} {t / base:>11.1f}")


if __name__ == "__main__":
    main()
