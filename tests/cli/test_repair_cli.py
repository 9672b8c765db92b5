"""``hindsight-hooks repair`` on a store damaged for real (ADR 189): checked, salvaged, the damaged
file kept, and what was queued meanwhile delivered by the next flush."""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import sys
from pathlib import Path

from .conftest import Cli


def _damaged_store(tmp_path: Path, cli: Cli) -> Path:
    """Two memories retained, then the page that roots the ``units`` table overwritten."""
    for said in ("the billing queue drains at night", "deploys go out on tuesdays after the canary"):
        assert cli("retain", said).returncode == 0
    (db,) = [p for p in tmp_path.rglob("memory.db") if p.is_file()]
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'units'").fetchone()
    size = int.from_bytes(db.read_bytes()[16:18], "big")
    data = bytearray(db.read_bytes())
    data[(root - 1) * size : root * size] = b"\xa5" * size
    db.write_bytes(bytes(data))
    return db


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_repair_salvages_a_damaged_store_and_keeps_the_damaged_file(tmp_path: Path, cli: Cli) -> None:
    db = _damaged_store(tmp_path, cli)
    damaged = _digest(db)

    check = cli("repair", "--check")
    assert check.returncode == 1 and "is damaged" in check.stdout, check.stdout + check.stderr
    unasked = cli("repair")  # no terminal to ask and no --yes: nothing changes
    assert unasked.returncode == 1 and "--yes" in unasked.stderr
    assert _digest(db) == damaged
    cli("retain", "the staging database moved to port 5433")  # said while the store is broken: queued

    repaired = cli("repair", "--yes")

    said = repaired.stdout + repaired.stderr
    assert repaired.returncode == 0, said
    assert "repaired:" in repaired.stdout and "retained again from their text" in repaired.stdout
    (kept,) = [p for p in db.parent.iterdir() if p.name.startswith("memory.db.damaged-") and "-wal" not in p.name
               and "-shm" not in p.name]  # fmt: skip
    assert _digest(kept) == damaged  # the damaged file itself, moved aside, never rewritten
    assert oct(db.stat().st_mode & 0o777) == "0o600"
    assert cli("flush").returncode == 0
    for query, expected in (("billing queue", "drains at night"), ("staging database port", "port 5433")):
        found = cli("recall", query)
        assert expected in found.stdout, found.stdout + found.stderr
    again = cli("repair")
    assert again.returncode == 0 and "healthy" in again.stdout


def test_repair_of_a_healthy_store_changes_nothing(tmp_path: Path, cli: Cli) -> None:
    assert cli("retain", "the billing queue drains at night").returncode == 0
    (db,) = [p for p in tmp_path.rglob("memory.db") if p.is_file()]
    before = _digest(db)
    out = cli("repair", "--json")
    assert out.returncode == 0 and '"healthy": true' in out.stdout
    assert _digest(db) == before
    assert not [p for p in db.parent.iterdir() if ".damaged-" in p.name or ".salvage-" in p.name]


def test_repair_without_a_store_says_so(tmp_path: Path, cli: Cli) -> None:
    out = cli("repair")
    assert out.returncode == 1 and "no embedded store" in out.stderr


def test_repair_rebuilds_a_search_index_that_lost_entries(tmp_path: Path, cli: Cli) -> None:
    """An index that lost entries passes SQLite's page check; recall then misses memories. FTS5's
    own check finds it, and the salvaged file's index is built anew from the memories."""
    assert cli("retain", "the billing queue drains at night").returncode == 0
    (db,) = [p for p in tmp_path.rglob("memory.db") if p.is_file()]
    conn = sqlite3.connect(db)  # closed: an open connection is a program repair waits for (ADR 190)
    with conn:
        conn.execute("DELETE FROM units_fts_data WHERE id > 10")  # the index's term pages, gone
    conn.close()
    assert "drains at night" not in cli("recall", "billing queue").stdout

    check = cli("repair", "--check")
    assert check.returncode == 1 and "FTS5 index" in check.stdout, check.stdout + check.stderr
    assert cli("repair", "--yes").returncode == 0

    assert "drains at night" in cli("recall", "billing queue").stdout


def test_repair_waits_for_a_program_that_has_the_store_open(tmp_path: Path, cli: Cli) -> None:
    """A process that keeps the old file open would go on writing into the kept copy after the
    swap (ADR 190): repair names it and changes nothing until it is closed."""
    db = _damaged_store(tmp_path, cli)
    damaged = _digest(db)
    hold = (
        "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
        "c.execute('SELECT count(*) FROM sqlite_master').fetchone(); print('open', flush=True); sys.stdin.read()"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", hold, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "open"
        refused = cli("repair", "--yes")
        assert refused.returncode == 1, refused.stdout + refused.stderr
        assert f"another program has the store open: process {child.pid}" in refused.stderr
        assert "nothing changed" in refused.stderr
        assert _digest(db) == damaged
        assert not [p for p in db.parent.iterdir() if ".damaged-" in p.name or ".salvage-" in p.name]
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(timeout=30)

    repaired = cli("repair", "--yes")
    assert repaired.returncode == 0 and "repaired:" in repaired.stdout, repaired.stdout + repaired.stderr


def test_repair_never_swaps_a_store_another_program_writes_to_meanwhile(tmp_path: Path, cli: Cli) -> None:
    """A program that opens, writes and closes again and again (hook processes do) may hold no
    lock when repair asks, yet its writes would be left in the kept copy: repair sees the file
    move, or the program holding it, and changes nothing (ADR 190)."""
    db = _damaged_store(tmp_path, cli)
    stop = tmp_path / "stop"
    writer = (
        "import os, sqlite3, sys, time\n"
        "deadline = time.monotonic() + 60\n"
        "print('writing', flush=True)\n"
        "while not os.path.exists(sys.argv[2]) and time.monotonic() < deadline:\n"
        "    c = sqlite3.connect(sys.argv[1], timeout=5)\n"
        "    c.execute('CREATE TABLE IF NOT EXISTS scratch (x)')\n"
        "    c.execute('INSERT INTO scratch VALUES (1)')\n"
        "    c.commit()\n"
        "    c.close()\n"
        "    time.sleep(0.002)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", writer, str(db), str(stop)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "writing"
        refused = cli("repair", "--yes")
    finally:
        stop.touch()
        child.wait(timeout=60)
    said = refused.stdout + refused.stderr
    assert refused.returncode == 1, said
    assert "another program has the store open" in said or "the store was written while it was read" in said
    assert not [p for p in db.parent.iterdir() if ".damaged-" in p.name or ".salvage-" in p.name]
    with sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True) as conn:  # still the file the writer wrote to
        assert conn.execute("SELECT count(*) FROM scratch").fetchone()[0] > 0
