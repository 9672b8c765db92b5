"""``hindsight-hooks repair``: put a damaged embedded store back in working order (ADR 189).

When the store file is damaged, SQLite answers "database disk image is malformed", and every
hook and command says the store cannot be opened. This command checks the file with SQLite's own
check. When the check fails, it reads every row that can still be read into a new file
(``backends/local_salvage``), keeps the damaged file beside it as ``memory.db.damaged-<time>``
(never deleted: it is the user's to keep or throw away), and puts the new file in its place.
Memories queued while the store could not be opened are delivered by the next flush. A healthy
store is left as it is.

Exit codes (ADR-072): 0 healthy or repaired, 1 damaged and not repaired (``--check``, no answer,
nothing readable), 2 usage.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from .cli import cwd_of, register

if TYPE_CHECKING:
    from .backends.local_salvage import SalvageReport, TableSalvage

EXIT_OK, EXIT_FAILED = 0, 1
HELPER_STOP_S = 15.0  # the helper's bounded shutdown flush, with room for a loaded machine
TAG = "hindsight-hooks: repair: "


def _add_repair(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--store", type=Path, default=None, help="the embedded store (default: local.path)")
    parser.add_argument("--check", action="store_true", help="only check the store; change nothing")


def _run_repair(ns: argparse.Namespace) -> int:
    from .config import load_config, resolve_local_path

    loaded = load_config(cwd_of(ns))
    if loaded.error and ns.store is None:
        print(f"hindsight-hooks: config error: {loaded.error}", file=sys.stderr)
        return EXIT_FAILED
    path = (ns.store or resolve_local_path(loaded.config, cwd=cwd_of(ns))).expanduser().absolute()
    if not path.is_file():
        print(f"{TAG}no embedded store at {path} (nothing to repair)", file=sys.stderr)
        return EXIT_FAILED
    from .backends.local_salvage import store_problem

    problem = store_problem(path) or _index_problem(path)
    if problem is None:
        _say(ns, {"path": str(path), "healthy": True}, f"the store at {path} is healthy: nothing to repair")
        return EXIT_OK
    if ns.check:
        damaged = {"path": str(path), "healthy": False, "problem": problem}
        _say(ns, damaged, f"the store at {path} is damaged: {problem}")
        return EXIT_FAILED
    if not _agreed(ns, path, problem):
        return EXIT_FAILED
    if (busy := _in_use(path)) is not None:
        print(f"{TAG}{busy}; close it first (an agent session, the MCP server or a framework's process "
              "that uses this store), then run repair again; nothing changed", file=sys.stderr)  # fmt: skip
        return EXIT_FAILED
    return _repair(ns, path)


def _in_use(path: Path) -> str | None:
    """Why the file must not be swapped now: another process has it open (ADR 190).

    A process that keeps the old file open goes on writing to it after the swap, into the kept
    damaged copy. Where this system cannot tell, the repair goes on, and says it could not check.
    """
    from .backends.local_holders import CannotTell, holder_of

    try:
        holder = holder_of(path)
        if holder is not None and _is_our_helper(holder.command) and _stop_helper(path, holder.pid):
            holder = holder_of(path)
    except CannotTell as exc:
        print(f"{TAG}could not check whether another program has the store open: {exc}", file=sys.stderr)
        return None
    return None if holder is None else f"another program has the store open: {holder}"


def _is_our_helper(command: tuple[str, ...]) -> bool:
    from itertools import pairwise

    from .hosts.hookclient import HELPER_MODULE

    return ("-m", HELPER_MODULE) in pairwise(command)


def _stop_helper(path: Path, pid: int) -> bool:
    """Stop the warm hook helper holding the store: it is ours, the next hook starts a new one,
    and on SIGTERM it flushes within its bound and exits (ADR-080). Waits up to ``HELPER_STOP_S``."""
    import signal

    from .backends.local_holders import holder_of

    try:
        os.kill(pid, signal.SIGTERM)
    except OSError:
        return False
    deadline = time.monotonic() + HELPER_STOP_S
    while time.monotonic() < deadline:
        holder = holder_of(path)
        if holder is None or holder.pid != pid:
            print(f"{TAG}stopped the warm hook helper (process {pid}), which had the store open; "
                  "the next hook starts a new one", file=sys.stderr)  # fmt: skip
            return True
        time.sleep(0.05)
    return False


def _index_problem(path: Path) -> str | None:
    """What the search index's own check finds, once SQLite's check found the file sound.

    FTS5 checks its index only on a connection that may write (an index that lost entries
    passes ``quick_check``, and recall then misses memories), so this opens the store as any
    command does, as ``doctor`` does. A store that cannot be written skips the check.
    """
    from .backends.base import BackendError
    from .backends.local import LocalBackend

    try:
        backend = LocalBackend(path)
        try:
            found = backend.check_index()  # the pages were just checked, read-only
        finally:
            backend.close()
    except BackendError as exc:
        return exc.detail
    return "; ".join(found.problems) or None


def _agreed(ns: argparse.Namespace, path: Path, problem: str) -> bool:
    print(f"{TAG}the store at {path} is damaged: {problem}", file=sys.stderr)
    if ns.yes:
        return True
    if not sys.stdin.isatty():
        print(f"{TAG}nothing changed; run it again with --yes to repair (no terminal to ask)", file=sys.stderr)
        return False
    print(
        "Repair reads every memory that can still be read into a new file, keeps the damaged file "
        "beside it, and puts the new file in its place. Close the agents that use this store first.",
        file=sys.stderr,
    )
    answer = input("Repair it now? [y/N] ").strip().lower()
    if answer not in ("y", "yes"):
        print(f"{TAG}nothing changed", file=sys.stderr)
        return False
    return True


def _repair(ns: argparse.Namespace, path: Path) -> int:
    import sqlite3  # here, not at the top: every command builds the parser, and hooks are commands

    from .backends.base import BackendError
    from .backends.local import LocalBackend
    from .backends.local_holders import FileState
    from .backends.local_salvage import SalvageError, rebuild_lost_units, salvage, store_problem

    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    fresh = path.with_name(f"{path.name}.salvage-{stamp}")
    kept = path.with_name(f"{path.name}.damaged-{stamp}")

    def progress(table: TableSalvage) -> None:
        skipped = f", {table.damaged_regions} damaged region(s) skipped" if table.damaged_regions else ""
        print(f"  {table.name}: {table.rows} row(s) read{skipped}", file=sys.stderr)

    before = FileState.of(path)
    try:
        report = salvage(path, fresh, progress)
    except SalvageError as exc:
        print(f"{TAG}nothing could be salvaged: {exc}; the file was left as it was", file=sys.stderr)
        return EXIT_FAILED
    except (sqlite3.Error, OSError) as exc:  # the new file could not be written (a full disk, say)
        print(f"{TAG}the new file could not be written ({exc}); nothing was changed", file=sys.stderr)
        return EXIT_FAILED
    disturbed = _in_use(path) or (None if FileState.of(path) == before else "the store was written while it was read")
    if disturbed is not None:  # what the other program wrote would be left in the kept copy
        fresh.unlink()
        print(f"{TAG}{disturbed}; nothing changed: close the agents that use this store and run repair again",
              file=sys.stderr)  # fmt: skip
        return EXIT_FAILED
    if not _swap(path, fresh, kept):
        return EXIT_FAILED
    try:
        backend = LocalBackend(path)  # migrates a salvaged older version, as any open would
        try:
            report.documents_retained = rebuild_lost_units(backend, stamp)
        finally:
            backend.close()
        without_vector = _without_vector(path)
    except BackendError as exc:
        print(f"{TAG}the new store could not be opened: {exc.detail}", file=sys.stderr)
        return EXIT_FAILED
    still = store_problem(path)
    _say(ns, {**_summary(path, kept, report, still), "without_vector": without_vector},
         _text(path, kept, report, still, without_vector))  # fmt: skip
    return EXIT_OK if still is None else EXIT_FAILED


def _swap(path: Path, fresh: Path, kept: Path) -> bool:
    """Move the damaged file (with its WAL side files, so the kept copy opens as it was) to
    ``kept`` and the new file to ``path``; on a failure, put back what was moved."""
    moved: list[str] = []
    try:
        for suffix in ("", "-wal", "-shm"):
            side = path.with_name(path.name + suffix)
            if side.exists():
                os.replace(side, kept.with_name(kept.name + suffix))
                moved.append(suffix)
        os.replace(fresh, path)
    except OSError as exc:
        for suffix in reversed(moved):
            with contextlib.suppress(OSError):
                os.replace(kept.with_name(kept.name + suffix), path.with_name(path.name + suffix))
        print(
            f"{TAG}the new file could not be put in place ({exc}); the store was left as it was, "
            f"and the salvaged copy is at {fresh}",
            file=sys.stderr,
        )
        return False
    return True


def _summary(path: Path, kept: Path, report: SalvageReport, problem: str | None) -> dict[str, object]:
    return {
        "path": str(path),
        "damaged_file": str(kept),
        "healthy": problem is None,
        "rows": {t.name: t.rows for t in report.tables},
        "damaged_regions": report.damaged_regions,
        "banks_mended": report.banks_mended,
        "documents_mended": report.documents_mended,
        "documents_retained": report.documents_retained,
        "tags_mended": report.tags_mended,
        "units_untagged": report.units_untagged,
        "dangling_dropped": report.dangling_dropped,
    }


def _without_vector(path: Path) -> int:
    """Memories of the new store without a vector, when the [semantic] extra could give them one."""
    from .backends.local import LocalBackend
    from .backends.semantic import StaticEmbedder, available

    if not available():
        return 0
    backend = LocalBackend(path, semantic=StaticEmbedder())  # counting loads no model
    try:
        return backend.vector_counts()[0]
    finally:
        backend.close()


def _text(path: Path, kept: Path, report: SalvageReport, problem: str | None, without_vector: int) -> str:
    lines = [
        f"repaired: {report.rows('units')} memories read in {report.rows('banks') + report.banks_mended} bank(s) "
        f"are in the new store at {path}; {report.damaged_regions} damaged region(s) could not be read",
    ]
    if report.banks_mended or report.documents_mended or report.tags_mended or report.documents_retained:
        lines.append(
            f"mended: {report.banks_mended} bank(s), {report.documents_mended} document(s) rebuilt from their "
            f"memories, {report.documents_retained} document(s) whose memories were lost retained again from "
            f"their text, {report.tags_mended} memories given their document's tags again"
        )
    if report.units_untagged:
        lines.append(
            f"{report.units_untagged} memories lost their tags with their document: project and user recalls "
            "do not find them; `hindsight-hooks memories list` shows them"
        )
    lines.append(f"the damaged file is kept at {kept}; delete it when you no longer need it")
    lines.append(
        "run `hindsight-hooks flush` to deliver memories queued while the store could not be used "
        "(and first `hindsight-hooks queue --requeue-dead`, if `hindsight-hooks queue` shows dead-letter jobs)"
    )
    if without_vector:
        lines.append(f"run `hindsight-hooks embed` to give the {without_vector} memories without a vector theirs")
    if problem is not None:
        lines.append(f"the new store still fails SQLite's check: {problem}")
    return "\n".join(lines)


def _say(ns: argparse.Namespace, data: dict[str, object], text: str) -> None:
    print(json.dumps(data) if ns.json else text)


register("repair", "check the embedded store and salvage a damaged one into a new file", _add_repair, _run_repair)
