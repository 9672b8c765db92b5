"""``append`` on the embedded store: docs/backends.md#embedded-store semantics, and work that follows the delta
(ADR-050).

A live session is one ``append`` document that grows every turn. These tests pin what every
append must leave behind (all units carry the latest tags and metadata; the document's text is
every item's content in order) and that the common append does not touch what is stored:
audit triggers in the file record every row the backend updates or deletes, and the WAL shows
how many pages one append writes, on a small and on a large document.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from hindsight_hooks.backends.base import RecallRequest
from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.backends.local_write import document_text
from tests.backends.test_local_support import item, make, messages_json, raw

AUDIT = """
CREATE TABLE audit(what TEXT NOT NULL);
CREATE TRIGGER audit_units_update AFTER UPDATE ON units BEGIN INSERT INTO audit VALUES ('units update'); END;
CREATE TRIGGER audit_units_delete AFTER DELETE ON units BEGIN INSERT INTO audit VALUES ('units delete'); END;
CREATE TRIGGER audit_tags_delete AFTER DELETE ON unit_tags BEGIN INSERT INTO audit VALUES ('tags delete'); END;
CREATE TRIGGER audit_parts_update AFTER UPDATE ON document_parts BEGIN INSERT INTO audit VALUES ('parts update'); END;
CREATE TRIGGER audit_parts_delete AFTER DELETE ON document_parts BEGIN INSERT INTO audit VALUES ('parts delete'); END;
"""


def turn(n: int) -> str:
    """One 2-message exchange, as auto-retain sends it."""
    return messages_json(("user", f"question {n} about kestrels"), ("assistant", f"answer {n} about ospreys"))


def session_item(n: int, tags: list[str], **meta: str) -> dict[str, object]:
    return item(turn(n), "hh-session:s1", mode="append", tags=tags, source="auto", metadata=meta or None)


def audit(conn: sqlite3.Connection) -> list[str]:
    rows = [str(r[0]) for r in conn.execute("SELECT what FROM audit")]
    conn.execute("DELETE FROM audit")
    return rows


def unit_sets(conn: sqlite3.Connection, document_id: str) -> list[tuple[list[str], dict[str, str]]]:
    """(sorted tags, metadata) of every unit of the document, in seq order."""
    out = []
    for uid, meta in conn.execute(
        "SELECT id, metadata_json FROM units WHERE document_id = ? ORDER BY seq", (document_id,)
    ).fetchall():
        tags = sorted(str(r[0]) for r in conn.execute("SELECT tag FROM unit_tags WHERE unit_id = ?", (uid,)))
        out.append((tags, json.loads(meta)))
    return out


def test_every_append_leaves_all_units_with_the_latest_tags_and_metadata(tmp_path: Path) -> None:
    backend = make(tmp_path)
    conn = raw(backend.path)
    backend.retain_batch("b", [session_item(0, ["repo:x", "session:s1"])], operation_id="0")
    conn.executescript(AUDIT)
    steps = [
        (["repo:x", "session:s1"], {}),  # the usual turn: same set
        (["repo:x", "session:s1"], {}),
        (["repo:x", "session:s1", "topic:birds"], {}),  # /hindsight:tag added a session tag
        (["repo:x", "session:s1", "topic:birds"], {}),
        (["repo:x", "session:s1", "topic:birds"], {"mode": "read-only"}),  # metadata only
        (["repo:y"], {}),  # tags replaced and metadata back
    ]
    for n, (tags, meta) in enumerate(steps, start=1):
        backend.retain_batch("b", [session_item(n, tags, **meta)], operation_id=str(n))
        expected = (sorted(tags), {"retain_source": "auto", **meta})
        sets = unit_sets(conn, "hh-session:s1")
        assert len(sets) == 2 * (n + 1)
        assert all(s == expected for s in sets), f"after append {n}"
        row = conn.execute("SELECT tags_json, metadata_json FROM documents").fetchone()
        assert (json.loads(row[0]), json.loads(row[1])) == (tags, expected[1])
        changed = n in (3, 5, 6)
        touched = audit(conn)
        if changed:  # the old units were rewritten (2 per earlier turn), nothing was deleted but tags
            assert touched.count("units update") == 2 * n and set(touched) <= {"units update", "tags delete"}
        else:
            assert touched == [], f"append {n} with an unchanged set rewrote stored rows: {touched}"
    assert document_text(conn, "b", "hh-session:s1") == "\n\n".join(turn(n) for n in range(len(steps) + 1))
    scoped = backend.recall(
        "b", RecallRequest(query="question 0 kestrels", tag_groups=[{"tags": ["repo:y"], "match": "any_strict"}])
    )
    assert "user: question 0 about kestrels" in [h.text for h in scoped.hits]
    old = backend.recall("b", RecallRequest(query="kestrels", tag_groups=[{"tags": ["repo:x"], "match": "any_strict"}]))
    assert old.hits == []


def test_tag_change_inside_one_batch_applies_to_all_units(tmp_path: Path) -> None:
    backend = make(tmp_path)
    backend.retain_batch("b", [session_item(0, ["a"])], operation_id="0")
    backend.retain_batch("b", [session_item(1, ["a"]), session_item(2, ["a", "b"])], operation_id="1")
    conn = raw(backend.path)
    assert {tuple(tags) for tags, _ in unit_sets(conn, "hh-session:s1")} == {("a", "b")}
    assert len(unit_sets(conn, "hh-session:s1")) == 6


def test_text_is_every_item_in_order_and_replace_starts_it_again(tmp_path: Path) -> None:
    backend = make(tmp_path)
    conn = raw(backend.path)
    backend.retain_batch("b", [item("first", "d", mode="append"), item("second", "d", mode="append")], operation_id="1")
    backend.retain_batch("b", [item("third", "d", mode="append")], operation_id="2")
    assert document_text(conn, "b", "d") == "first\n\nsecond\n\nthird"
    assert [r[0] for r in conn.execute("SELECT seq FROM document_parts ORDER BY seq")] == [0, 1, 2]
    assert conn.execute("SELECT original_text FROM documents").fetchone()[0] == ""
    backend.retain_batch(
        "b", [item("fourth", "d", mode="replace"), item("fifth", "d", mode="append")], operation_id="3"
    )
    assert document_text(conn, "b", "d") == "fourth\n\nfifth"
    assert sorted(h.text for h in backend.list_units("b", 10, 0)) == ["fifth", "fourth"]
    backend.retain_batch("b", [item("sixth", "d", mode="append")], operation_id="4")
    assert document_text(conn, "b", "d") == "fourth\n\nfifth\n\nsixth"
    assert document_text(conn, "b", "missing") is None
    assert document_text(conn, "other-bank", "d") is None


def test_deleting_a_document_deletes_its_text(tmp_path: Path) -> None:
    backend = make(tmp_path)
    backend.retain_batch("b", [item("kept elsewhere", "d", mode="append")], operation_id="1")
    backend.retain_batch("b", [item("more", "d", mode="append")], operation_id="2")
    backend.retain_batch("b2", [item("other bank", "d", mode="append")], operation_id="3")
    assert backend.delete_document("b", "d") == 2
    conn = raw(backend.path)
    assert conn.execute("SELECT bank_id, text FROM document_parts").fetchall() == [("b2", "other bank")]
    backend.retain_batch("b", [item("a new life", "d", mode="append")], operation_id="4")
    assert document_text(conn, "b", "d") == "a new life"


def _wal_pages(path: Path) -> int:
    wal = path.with_name(path.name + "-wal")
    size = wal.stat().st_size if wal.exists() else 0
    return max(0, size - 32) // (4096 + 24)


def _append_pages(backend: LocalBackend, document_id: str, n: int, op: str) -> int:
    """WAL pages written by appending one 4-message turn to ``document_id``."""
    checkpoint = raw(backend.path)
    checkpoint.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    checkpoint.close()
    assert _wal_pages(backend.path) == 0
    content = messages_json(*[("user" if k % 2 == 0 else "assistant", f"turn {n} step {k} words") for k in range(4)])
    backend.retain_batch("b", [item(content, document_id, mode="append", tags=["s"], source="auto")], operation_id=op)
    return _wal_pages(backend.path)


def test_an_append_writes_as_much_to_a_long_document_as_to_a_short_one(tmp_path: Path) -> None:
    """Pages, not milliseconds: the old code rewrote the whole text (~900 pages at 2,500 messages)."""
    backend = make(tmp_path)
    line = "tool output line with several ordinary words in it " * 30
    for doc, size in (("short", 100), ("long", 2500)):
        msgs = [("user" if i % 2 == 0 else "toolResult", f"{i}: {line}") for i in range(size)]
        backend.retain_batch("b", [item(messages_json(*msgs), doc, mode="append", tags=["s"], source="auto")],
                             operation_id=f"prime-{doc}")  # fmt: skip
    conn = raw(backend.path)
    long_text = conn.execute("SELECT sum(length(text)) FROM document_parts WHERE document_id = 'long'").fetchone()[0]
    assert long_text > 3_000_000 / 1.2
    short = [_append_pages(backend, "short", n, f"s{n}") for n in range(3)]
    long = [_append_pages(backend, "long", n, f"l{n}") for n in range(3)]
    # Measured: ~25 pages either way; the code before ADR-050 wrote ~100 (short) and ~1,950 (long).
    assert max(long) <= 2 * max(short), (short, long)
    assert max(long) < 60, long
    assert len(document_text(conn, "b", "long") or "") > long_text
