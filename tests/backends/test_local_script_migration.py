"""Schema 2 → 3 (ADR 115) on real files written with the version-2 schema.

The version-2 file is built from ``MIGRATIONS[0]`` and ``MIGRATIONS[1]`` (both pinned: files in
the wild were built by them) and filled as the version-2 writer filled it. Opening it with
today's code adds ``script_terms`` to every unit that has such text and rebuilds the index with
the third column, once, losing nothing.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

from hindsight_hooks.backends.base import RecallRequest
from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.backends.local_schema import MIGRATIONS, SCHEMA_VERSION, _statements, slot_range
from hindsight_hooks.backends.local_write import hash16
from tests.backends.test_local_support import T0_ISO, migrated_at_once, raw, refused_open

V2_SHA256 = "e36e26bb45e0a0e92e21525e575ee1677dd3d412d18e86b71d173193cb9905f2"
CONTENTS = ["東京サーバーを再起動した", "deploy finished 🚀 all green", "the plain english note about kestrels"]


def build_v2(path: Path) -> list[str]:
    """A version-2 store with one unit per text of ``CONTENTS``, indexed by the version-2 triggers."""
    conn = sqlite3.connect(str(path), isolation_level=None)
    for script in MIGRATIONS[:2]:
        assert isinstance(script, str)
        for statement in _statements(script):
            conn.execute(statement)
    conn.execute("PRAGMA user_version = 2")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("INSERT INTO banks(bank_id, slot, created_at) VALUES ('b', 1, ?)", (T0_ISO,))
    ids = []
    for seq, content in enumerate(CONTENTS):
        doc = f"d{seq}"
        conn.execute(
            "INSERT INTO documents(bank_id, document_id, original_text, created_at, updated_at) "
            "VALUES ('b', ?, '', ?, ?)",
            (doc, T0_ISO, T0_ISO),
        )
        conn.execute(
            "INSERT INTO document_parts(bank_id, document_id, seq, text) VALUES ('b', ?, 0, ?)", (doc, content)
        )
        uid = hash16("b" + doc + content + T0_ISO + "0")
        conn.execute(
            "INSERT INTO units(rowid, id, bank_id, document_id, seq, content, type, source, importance, created_at) "
            "VALUES (?, ?, 'b', ?, 0, ?, 'world', 'tool', 0.75, ?)",
            (slot_range(1)[0] + seq, uid, doc, content, T0_ISO),
        )
        ids.append(uid)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return ids


def test_the_version_2_migration_script_is_frozen() -> None:
    second = MIGRATIONS[1]
    assert isinstance(second, str) and hashlib.sha256(second.encode("utf-8")).hexdigest() == V2_SHA256


def test_a_version_2_file_gets_script_terms_and_keeps_everything(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    ids = build_v2(path)
    backend = LocalBackend(path)
    conn = raw(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    terms = dict(conn.execute("SELECT content, script_terms FROM units").fetchall())
    assert terms[CONTENTS[0]].startswith("東京 京サ") and terms[CONTENTS[2]] == ""
    assert backend.quick_check() == []
    assert sorted(h.id or "" for h in backend.list_units("b", 10, 0)) == sorted(ids)
    for query, text in (("東京", CONTENTS[0]), ("🚀", CONTENTS[1]), ("kestrels", CONTENTS[2])):
        assert [h.text for h in backend.recall("b", RecallRequest(query=query)).hits] == [text]
    # New writes after the migration go through the new triggers.
    backend.retain_batch("b", [{"content": "大阪のメモ", "document_id": "new"}], operation_id="after")
    assert [h.text for h in backend.recall("b", RecallRequest(query="大阪")).hits] == ["大阪のメモ"]
    assert backend.quick_check() == []
    backend.close()


def test_processes_opening_a_version_2_file_at_once_migrate_it_once(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    build_v2(path)
    backend = migrated_at_once(tmp_path, path, "京都")
    assert [h.text for h in backend.recall("b", RecallRequest(query="東京")).hits] == [CONTENTS[0]]
    backend.close()


def test_a_failed_migration_leaves_the_version_2_file_as_it_was(tmp_path: Path) -> None:
    """A file whose units table already has a ``script_terms`` column: the step fails as a whole."""
    path = tmp_path / "memory.db"
    build_v2(path)
    conn = raw(path)
    conn.execute("ALTER TABLE units ADD COLUMN script_terms TEXT")
    refused_open(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
    assert conn.execute("SELECT count(*) FROM units_fts WHERE units_fts MATCH '\"kestrels\"'").fetchone()[0] == 1
    assert conn.execute("SELECT sql FROM sqlite_master WHERE name = 'units_fts'").fetchone()[0].count(",") == 4


def test_version_4_numbers_vector_rows_and_keeps_the_old_ones(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    ids = build_v2(path)
    conn = raw(path)
    conn.execute("INSERT INTO unit_vectors(unit_id, model, vector) VALUES (?, 'custom-v1', x'0000803f')", (ids[0],))
    LocalBackend(path).close()
    assert conn.execute("SELECT seq, unit_id, model, vector FROM unit_vectors").fetchall() == [
        (1, ids[0], "custom-v1", b"\x00\x00\x80\x3f")
    ]
    conn.execute("DELETE FROM unit_vectors")
    conn.execute("INSERT INTO unit_vectors(unit_id, model, vector) VALUES (?, 'custom-v1', x'00')", (ids[1],))
    assert conn.execute("SELECT seq FROM unit_vectors").fetchall() == [(2,)]  # AUTOINCREMENT: 1 is never reused
