"""A real second process holding a SQLite lock on the embedded store, for contention tests."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_HOLDER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
if sys.argv[2] == "readers":
    conn.execute("PRAGMA locking_mode = EXCLUSIVE")
conn.execute("BEGIN EXCLUSIVE")
if sys.argv[2] == "readers":
    conn.execute("UPDATE banks SET created_at = created_at")
print("locked", flush=True)
sys.stdin.read()
"""


@contextmanager
def lock_held(db: Path, *, readers_too: bool = False) -> Iterator[None]:
    """Another process holds ``db``'s write lock until the block ends, so every write is busy.

    With ``readers_too`` it takes the file exclusively (``locking_mode=EXCLUSIVE`` plus a write),
    which in WAL mode shuts readers out as well: the case a recall's lock wait must survive.
    """
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(db), "readers" if readers_too else "writers"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
        yield
    finally:
        proc.kill()
        proc.wait(timeout=10)
