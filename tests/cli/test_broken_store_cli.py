"""A store that cannot be opened is named, once, by every command that needs it."""

from __future__ import annotations

from pathlib import Path

from .conftest import Cli


def _garbage_store(tmp_path: Path, cli: Cli) -> Path:
    assert cli("retain", "the billing queue drains at night").returncode == 0
    (db,) = [p for p in tmp_path.rglob("memory.db") if p.is_file()]
    for side in (db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        side.unlink(missing_ok=True)
    db.write_bytes(b"this is not a database" * 200)
    return db


def test_status_says_the_store_cannot_be_opened(tmp_path: Path, cli: Cli) -> None:
    db = _garbage_store(tmp_path, cli)
    out = cli("status")
    said = out.stdout + out.stderr
    assert out.returncode == 1, said
    assert f"store: Local memory backend could not be opened: local memory store {db}: is not a SQLite database" in said
    assert "queue: active=" in said  # the rest of the report is still there
    assert db.read_bytes() == b"this is not a database" * 200


def test_memories_list_names_the_problem_without_stutter(tmp_path: Path, cli: Cli) -> None:
    db = _garbage_store(tmp_path, cli)
    out = cli("memories", "list")
    assert out.returncode == 1
    said = out.stdout + out.stderr
    assert f"Local memory backend could not be opened: local memory store {db}: is not a SQLite database" in said
    assert "failed: memories failed" not in said and "opened: open failed" not in said
