"""``hindsight-hooks embed``: give every unit of the embedded store its vector (ADR 116).

New units get vectors in the background as they are retained; a store written before the
``[semantic]`` extra was installed (or by processes that ended before their worker finished) is
backfilled here, and a stored vector that is damaged (wrong size, NaN or inf: recall leaves it
out) is computed again. Each batch of 256 units commits on its own and only units *without* a
vector are ever read, so Ctrl-C (or a crash) loses at most the batch in hand: running the command
again continues where it stopped. Progress goes to stderr (a bar on a terminal, a line per 10 %
otherwise); ``--json`` prints the counts at the end.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading

from .cli import cwd_of, register
from .cli_progress import Progress

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def _add_embed(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--check", action="store_true", help="only count the units without a vector")


def _run_embed(ns: argparse.Namespace) -> int:
    """Open the store and embed (or count); a store that cannot be opened or written is one line.

    Every other command reports a damaged, foreign, too new or read-only store as a one-line
    error; ``embed`` must too: a traceback hides the one sentence that says what to do, and
    makes the user wonder whether the command broke the file (it never writes to one it cannot open).
    """
    from .backends.base import BackendError

    try:
        return _embed(ns)
    except BackendError as exc:
        print(f"hindsight-hooks: embed: {exc.detail}", file=sys.stderr)
        return EXIT_FAILED


def _embed(ns: argparse.Namespace) -> int:
    from .backends.base import BackendError
    from .backends.local import LocalBackend
    from .backends.semantic import StaticEmbedder, available
    from .config import load_config, resolve_local_path

    loaded = load_config(cwd_of(ns))
    if loaded.error:
        print(f"hindsight-hooks: config error: {loaded.error}", file=sys.stderr)
        return EXIT_FAILED
    if not available():
        print(
            "hindsight-hooks: the [semantic] extra is not installed: pip install 'hindsight-hooks[semantic]'",
            file=sys.stderr,
        )
        return EXIT_FAILED
    path = resolve_local_path(loaded.config, cwd=cwd_of(ns))
    if not path.exists():
        print(f"hindsight-hooks: no embedded store at {path} (nothing to embed)", file=sys.stderr)
        return EXIT_FAILED
    backend = LocalBackend(path, semantic=StaticEmbedder())
    stop = threading.Event()
    done, missing = 0, 0
    try:
        if ns.check:
            report = backend.meaning_report()
            missing, total, damaged = report.without_vector, report.units, report.damaged
            if ns.json:
                print(json.dumps({"path": str(path), "units": total, "without_vector": missing, "damaged": damaged}))
            else:
                print(f"{missing} of {total} units have no vector yet")
                if damaged:
                    print(f"{damaged} stored vectors are damaged (wrong size, NaN or inf): those units are found by "
                          "their words only until `hindsight-hooks embed` computes them again")  # fmt: skip
            return EXIT_OK
        progress: Progress | None = None
        with_vector = -1  # units with a vector once the backfill has started: the true count's base
        try:
            for done, missing in backend.backfill(stop):
                if with_vector < 0:
                    left, total = backend.vector_counts()
                    with_vector = total - left
                    if missing == 0:  # "embedding: 0/1 (0 %)" read as a stuck or broken run
                        print("embedding: nothing to embed, every unit has its vector", file=sys.stderr)
                        continue
                if progress is None:
                    progress = Progress("embedding", missing)
                progress.show(done)  # memories retained meanwhile are embedded too: the total grows
        except BackendError:
            if progress is not None:
                progress.end()  # the error goes on a line of its own, not after the bar
            raise
        except KeyboardInterrupt:
            stop.set()
            if progress is not None:
                progress.end()
            if with_vector >= 0:
                # Ctrl-C lands between a batch's commit and its report: count what is stored.
                left, total = backend.vector_counts()
                done = max(done, total - left - with_vector)
            print(
                f"hindsight-hooks: interrupted after {done} of {max(missing, done)} vectors; "
                "run `hindsight-hooks embed` again to continue",
                file=sys.stderr,
            )
            return EXIT_FAILED
        if progress is not None:
            progress.end()
        left, total = backend.vector_counts()
        if ns.json:
            print(json.dumps({"path": str(path), "written": done, "units": total, "without_vector": left}))
        return EXIT_OK
    finally:
        backend.close()


register("embed", "give every unit of the embedded store its vector (the [semantic] extra)", _add_embed, _run_embed)
