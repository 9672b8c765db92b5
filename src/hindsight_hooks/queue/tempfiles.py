"""Temp files left behind by killed writers, and the rule for removing them (ADR 071).

Every atomic rewrite of a state file (``fsutil.atomic_write_bytes``) writes
``<name>.<pid>.<8 hex>.tmp`` next to it and renames it over ``<name>``. A writer killed between
the two leaves the temp file behind for good: it is never read (the rename did not happen, so
nothing acknowledged lives only there) and nothing else would ever remove it. A queue rewrite
holds up to ``max_active_bytes``, so a few kills leave megabytes.

When one may go:

- a temp file of one of the queue's own files (active, dead-letter, quarantine) is written and
  renamed only under the queue lock, so a caller holding that lock knows its writer is gone;
- any other (cursors, receipts, snapshots) is written under another lock or none, so it goes
  only when its writer's pid is not alive on this host and it is at least ``GRACE_S`` old (a
  writer in another pid namespace with the same number is not cut short mid-write), or when it
  is older than ``MAX_AGE_S`` whatever its pid says (the pid was reused).
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from .lock import pid_alive

TEMP_NAME = re.compile(r"^(?P<base>.+)\.(?P<pid>\d{1,10})\.(?P<token>[0-9a-f]{8})\.tmp$")
GRACE_S = 5.0
MAX_AGE_S = 15 * 60.0


@dataclass(frozen=True)
class TempFile:
    """One leftover temp file: where, whose, how big, how old, and whether it may go now."""

    path: Path
    base: str
    pid: int
    size: int
    age_s: float
    writer_alive: bool
    removable: bool


def find_temp_files(folder: Path, *, locked_bases: Collection[str] = (), now: float | None = None) -> list[TempFile]:
    """Every ``<name>.<pid>.<hex>.tmp`` regular file directly in ``folder`` (never raises).

    ``locked_bases`` are the names whose writers hold the lock the caller holds now: their
    temp files are removable whatever their pid or age.
    """
    now = time.time() if now is None else now
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    found: list[TempFile] = []
    for name in sorted(names):
        match = TEMP_NAME.match(name)
        if match is None:
            continue
        path = Path(folder) / name
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode):
            continue
        pid = int(match["pid"])
        alive = pid == os.getpid() or pid_alive(pid)
        age = max(0.0, now - st.st_mtime)
        base = match["base"]
        removable = base in locked_bases or (not alive and age >= GRACE_S) or age >= MAX_AGE_S
        found.append(TempFile(path, base, pid, st.st_size, age, alive, removable))
    return found


def remove_abandoned(folder: Path, *, locked_bases: Collection[str] = ()) -> list[TempFile]:
    """Remove the removable temp files of ``folder``; returns those removed (never raises)."""
    removed: list[TempFile] = []
    for temp in find_temp_files(folder, locked_bases=locked_bases):
        if not temp.removable:
            continue
        try:
            os.unlink(temp.path)
        except OSError:
            continue  # gone already (another cleaner), or not ours to remove: leave it
        removed.append(temp)
    return removed
