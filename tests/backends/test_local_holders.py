"""Who else has the embedded store open, and whether its file moved (ADR 190): asked of real child
processes holding real SQLite connections."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hindsight_hooks.backends.local_holders import FileState, holder_of

# A child that opens the store as any SQLite program does, reads it once, says so and waits idle.
_HOLD = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
print("open", flush=True)
sys.stdin.read()
"""


def _store(tmp_path: Path) -> Path:
    db = tmp_path / "memory.db"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE units (content TEXT)")
    conn.execute("INSERT INTO units VALUES ('the billing queue drains at night')")
    conn.commit()
    conn.close()
    return db


@contextmanager
def _held(db: Path) -> Iterator[subprocess.Popen[str]]:
    child = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "open"
        yield child
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(timeout=30)


def test_an_idle_connection_of_another_process_is_found_by_its_pid(tmp_path: Path) -> None:
    db = _store(tmp_path)
    assert holder_of(db) is None

    with _held(db) as child:
        holder = holder_of(db)
        assert holder is not None and holder.pid == child.pid
        assert str(child.pid) in str(holder)
        if sys.platform.startswith("linux"):
            assert holder.name is not None and "python" in holder.name

    assert holder_of(db) is None  # closed with its process


def test_this_process_own_connection_is_not_another_holder(tmp_path: Path) -> None:
    db = _store(tmp_path)
    conn = sqlite3.connect(db)
    try:
        conn.execute("SELECT count(*) FROM units").fetchone()
        assert holder_of(db) is None
    finally:
        conn.close()


def test_a_file_that_sqlite_cannot_open_is_still_asked(tmp_path: Path) -> None:
    db = _store(tmp_path)
    with _held(db):
        data = db.read_bytes()
        db.write_bytes(data[: len(data) // 2])  # cut, as a copy that stopped half way leaves it
        assert holder_of(db) is not None


def test_a_write_by_another_process_moves_the_file_state_and_a_read_does_not(tmp_path: Path) -> None:
    db = _store(tmp_path)
    before = FileState.of(db)
    read = "import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute('SELECT * FROM units').fetchall()"
    subprocess.run([sys.executable, "-c", read, str(db)], check=True)
    assert FileState.of(db) == before

    write = (
        "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
        "c.execute(\"INSERT INTO units VALUES ('deploys go out on tuesdays')\"); c.commit()"
    )
    subprocess.run([sys.executable, "-c", write, str(db)], check=True)
    assert FileState.of(db) != before


def test_a_read_only_reader_leaving_an_empty_wal_behind_is_no_change(tmp_path: Path) -> None:
    db = _store(tmp_path)
    before = FileState.of(db)
    conn = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)
    conn.execute("SELECT * FROM units").fetchall()
    conn.close()
    assert (tmp_path / "memory.db-wal").exists()  # a reader that may not write cannot remove it
    assert FileState.of(db) == before
