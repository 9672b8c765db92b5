"""``hindsight-hooks repair`` on a store damaged for real (ADR 189): checked, salvaged, the damaged
file kept, and what was queued meanwhile delivered by the next flush."""

from __future__ import annotations

import hashlib
import sqlite3
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
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM units_fts_data WHERE id > 10")  # the index's term pages, gone
    assert "drains at night" not in cli("recall", "billing queue").stdout

    check = cli("repair", "--check")
    assert check.returncode == 1 and "FTS5 index" in check.stdout, check.stdout + check.stderr
    assert cli("repair", "--yes").returncode == 0

    assert "drains at night" in cli("recall", "billing queue").stdout
