"""Schema 1 → 2 of the embedded store (ADR-050) on real files written with the version-1 schema.

The version-1 file is built from ``MIGRATIONS[0]`` (pinned below: it is what every version-1
file in the wild was created by) and filled the way the version-1 writer filled it: a session
document whose ``original_text`` holds every appended item, units indexed by the FTS triggers,
tags per unit. Opening it with today's code must migrate it in place, once, losing nothing.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from hindsight_hooks.backends.base import RecallRequest
from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.backends.local_schema import MIGRATIONS, SCHEMA_VERSION, _statements, slot_range
from hindsight_hooks.backends.local_write import document_text, hash16
from tests.backends.test_local_support import (
    T0_ISO,
    assert_refused_untouched,
    first_writes_at_once,
    messages_json,
    raw,
    refused_open,
)

ROOT = Path(__file__).resolve().parents[2]
V1_SHA256 = "1de270e997dbfdee1eb9094ff960541b36fb340e335ea06d5cf0e4ad0d556176"
SESSION = "hh-session:s1"
TURNS = [
    messages_json(("user", "question 0 about kestrels"), ("assistant", "answer 0 about ospreys")),
    messages_json(("user", "question 1 about herons"), ("assistant", "answer 1 about egrets")),
]
V1_TEXT = TURNS[0] + "\n\n" + TURNS[1]
V1_TAGS = ["repo:x", "session:s1"]


def build_v1(path: Path) -> list[str]:
    """A version-1 store holding one appended session (2 turns, 4 units) and one explicit note."""
    conn = sqlite3.connect(str(path), isolation_level=None)
    for statement in _statements(MIGRATIONS[0]):
        conn.execute(statement)
    conn.execute("PRAGMA user_version = 1")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("INSERT INTO banks(bank_id, slot, created_at) VALUES ('b', 1, ?)", (T0_ISO,))
    meta = json.dumps({"retain_source": "auto"}, separators=(",", ":"))
    docs = [
        (SESSION, V1_TEXT, json.dumps(V1_TAGS, separators=(",", ":")), meta),
        ("note", "the deploy script lives in ops", "[]", '{"retain_source":"tool"}'),
    ]
    for doc, text, tags, doc_meta in docs:
        conn.execute(
            "INSERT INTO documents(bank_id, document_id, original_text, tags_json, metadata_json, created_at, "
            "updated_at) VALUES ('b', ?, ?, ?, ?, ?, ?)",
            (doc, text, tags, doc_meta, T0_ISO, T0_ISO),
        )
    contents = ["user: question 0 about kestrels", "assistant: answer 0 about ospreys",
                "user: question 1 about herons", "assistant: answer 1 about egrets"]  # fmt: skip
    rowid = slot_range(1)[0]
    ids = []
    for seq, content in enumerate(contents):
        uid = hash16("b" + SESSION + content + T0_ISO + str(seq))
        conn.execute(
            "INSERT INTO units(rowid, id, bank_id, document_id, seq, content, context, type, source, importance, "
            "created_at, metadata_json) VALUES (?, ?, 'b', ?, ?, ?, 'c', 'experience', 'transcript', 0.65, ?, ?)",
            (rowid + seq, uid, SESSION, seq, content, T0_ISO, meta),
        )
        conn.executemany("INSERT INTO unit_tags(unit_id, bank_id, tag) VALUES (?, 'b', ?)", [(uid, t) for t in V1_TAGS])
        ids.append(uid)
    note_id = hash16("b" + "note" + "the deploy script lives in ops" + T0_ISO + "0")
    conn.execute(
        "INSERT INTO units(rowid, id, bank_id, document_id, seq, content, type, source, importance, created_at, "
        "metadata_json) VALUES (?, ?, 'b', 'note', 0, 'the deploy script lives in ops', 'world', 'tool', 0.75, ?, "
        '\'{"retain_source":"tool"}\')',
        (rowid + 4, note_id, T0_ISO),
    )
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return [*ids, note_id]


def test_the_version_1_schema_script_is_frozen() -> None:
    """Files in the wild were built by it: a change belongs in a new migration and a version bump."""
    assert SCHEMA_VERSION == len(MIGRATIONS) == 8
    first = MIGRATIONS[0]
    assert isinstance(first, str) and hashlib.sha256(first.encode("utf-8")).hexdigest() == V1_SHA256


def test_a_version_1_file_is_migrated_in_place_and_keeps_everything(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    ids = build_v1(path)
    backend = LocalBackend(path)
    conn = raw(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("SELECT document_id, seq, text FROM document_parts ORDER BY document_id").fetchall() == [
        (SESSION, 0, V1_TEXT),
        ("note", 0, "the deploy script lives in ops"),
    ]
    assert {r[0] for r in conn.execute("SELECT original_text FROM documents")} == {""}
    assert document_text(conn, "b", SESSION) == V1_TEXT
    assert backend.quick_check() == []
    assert sorted(h.id or "" for h in backend.list_units("b", 10, 0)) == sorted(ids)
    hits = backend.recall(
        "b", RecallRequest(query="kestrels", tag_groups=[{"tags": ["repo:x"], "match": "any_strict"}])
    )
    assert [h.text for h in hits.hits] == ["user: question 0 about kestrels"]

    # Appending after the migration: the text grows by a part, seq goes on, and a tag change
    # reaches the units written by the version-1 code too.
    turn = messages_json(("user", "question 2 about kestrels again"))
    backend.retain_batch(
        "b",
        [{"content": turn, "context": "c", "document_id": SESSION, "update_mode": "append", "tags": ["repo:y"],
          "metadata": {"retain_source": "auto"}}],
        operation_id="after-migration",
    )  # fmt: skip
    assert document_text(conn, "b", SESSION) == V1_TEXT + "\n\n" + turn
    assert [r[0] for r in conn.execute("SELECT seq FROM units WHERE document_id = ? ORDER BY seq", (SESSION,))] == [
        0, 1, 2, 3, 4
    ]  # fmt: skip
    tags = conn.execute(
        "SELECT DISTINCT t.tag FROM unit_tags t JOIN units u ON u.id = t.unit_id WHERE u.document_id = ?", (SESSION,)
    ).fetchall()
    assert tags == [("repo:y",)]
    assert backend.recall("b", RecallRequest(query="kestrels", tag_groups=[{"tags": ["repo:x"]}])).hits == []
    backend.retain_batch(
        "b", [{"content": "the deploy script moved to tools", "document_id": "note", "update_mode": "replace"}],
        operation_id="replace-note",
    )  # fmt: skip
    assert document_text(conn, "b", "note") == "the deploy script moved to tools"
    assert backend.quick_check() == []
    backend.close()
    reopened = LocalBackend(path)  # already current: opening again changes nothing
    assert document_text(conn, "b", SESSION) == V1_TEXT + "\n\n" + turn
    assert conn.execute("SELECT count(*) FROM document_parts").fetchone()[0] == 3
    reopened.close()


def test_processes_opening_a_version_1_file_at_once_migrate_it_once(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    build_v1(path)
    names = [f"P{n}" for n in range(4)]
    first_writes_at_once(
        tmp_path,
        path,
        names,
        "b",
        {
            "content": "{name} was here",
            "context": "c",
            "document_id": "hh-session:s1",
            "update_mode": "append",
            "tags": ["repo:x", "session:s1"],
            "metadata": {"retain_source": "auto"},
        },
    )
    conn = raw(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    parts = conn.execute("SELECT seq, text FROM document_parts WHERE document_id = ? ORDER BY seq", (SESSION,))
    rows = parts.fetchall()
    assert [seq for seq, _ in rows] == [0, 1, 2, 3, 4]
    assert rows[0][1] == V1_TEXT  # moved once, not once per process
    assert sorted(text for _, text in rows[1:]) == sorted(f"{n} was here" for n in names)
    backend = LocalBackend(path)
    assert backend.quick_check() == []
    assert len(backend.list_units("b", 100, 0)) == 5 + len(names)
    backend.close()


def test_a_failed_migration_leaves_the_version_1_file_as_it_was(tmp_path: Path) -> None:
    """A file someone added a ``document_parts`` table to: the migration fails as a whole."""
    path = tmp_path / "memory.db"
    build_v1(path)
    conn = raw(path)
    conn.execute("CREATE TABLE document_parts(note TEXT)")
    refused_open(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    assert conn.execute("SELECT original_text FROM documents WHERE document_id = ?", (SESSION,)).fetchone()[0] == (
        V1_TEXT
    )
    assert conn.execute("SELECT count(*) FROM document_parts").fetchone()[0] == 0


@pytest.mark.parametrize("migrated", [False, True], ids=["version-1 content", "version-2 content"])
def test_a_file_newer_than_this_code_is_refused_untouched(tmp_path: Path, migrated: bool) -> None:
    path = tmp_path / "memory.db"
    build_v1(path)
    if migrated:
        LocalBackend(path).close()
    conn = raw(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    assert_refused_untouched(path, "newer")
    check = raw(path)
    assert check.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 1
    text = check.execute("SELECT original_text FROM documents WHERE document_id = ?", (SESSION,)).fetchone()[0]
    assert text == ("" if migrated else V1_TEXT)
