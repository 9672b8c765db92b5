"""Browsing the embedded store: the ``MemoryBrowser`` of ``LocalBackend`` (ADR 130, 131).

Reads run in the store's read snapshots and writes in its write transactions (the backend's
own ``_read``/``_write``), so a list never sees half a retain and a forget lands whole.

The first page must answer fast on a large bank (bench/memories_list_bench.py): the list is
ordered by ``units.created_at`` newest first, which the ``units_by_created`` index serves, so
SQLite stops after ``offset + limit`` rows instead of sorting the bank.

Edit history lives in ``unit_edits``, a side table created on the first edit (ADR 131): it is
not part of the versioned schema, so a store that was never edited is byte-for-byte what it
was, and a store that was is still readable by a release that does not know the table.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import orjson

from ..timefmt import iso_from_epoch
from .browse import Dropped, EditEntry, MemoryFilter, MemoryPage, MemoryRecord, Record
from .local import LocalBackend

EDITS_SQL = (
    "CREATE TABLE IF NOT EXISTS unit_edits("
    "seq INTEGER PRIMARY KEY AUTOINCREMENT, "
    "unit_id TEXT NOT NULL REFERENCES units(id) ON DELETE CASCADE, "
    "bank_id TEXT NOT NULL, edited_at TEXT NOT NULL, previous TEXT NOT NULL, content TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS unit_edits_by_unit ON unit_edits(unit_id, seq)",
)

_COLUMNS = (
    "u.id, u.content, u.context, u.type, u.source, u.importance, u.created_at, u.occurred_at, u.document_id, "
    "u.seq, u.metadata_json, d.tags_json, u.valid_until, u.superseded_by"
)
_FROM = "FROM units AS u JOIN documents AS d ON d.bank_id = u.bank_id AND d.document_id = u.document_id"


def like_pattern(text: str) -> str:
    """``text`` as a case-insensitive LIKE substring pattern (``%`` and ``_`` taken literally)."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def filter_sql(bank_id: str, flt: MemoryFilter) -> tuple[str, list[Any]]:
    """The ``WHERE`` of a list (units aliased ``u``) and its parameters."""
    where = ["u.bank_id = ?"]
    params: list[Any] = [bank_id]
    for tag in flt.tags:
        where.append("u.id IN (SELECT unit_id FROM unit_tags WHERE bank_id = ? AND tag = ?)")
        params += [bank_id, tag]
    if flt.document_id:
        where.append("u.document_id = ?")
        params.append(flt.document_id)
    if flt.session_id:
        where.append(
            "(u.id IN (SELECT unit_id FROM unit_tags WHERE bank_id = ? AND tag = ?) "
            "OR json_extract(u.metadata_json, '$.session_id') = ?)"
        )
        params += [bank_id, f"session:{flt.session_id}", flt.session_id]
    if flt.since:
        where.append("u.created_at >= ?")
        params.append(flt.since)
    if flt.until:
        where.append("u.created_at < ?")
        params.append(flt.until)
    if flt.text:
        where.append("u.content LIKE ? ESCAPE '\\'")
        params.append(like_pattern(flt.text))
    return " AND ".join(where), params


class LocalBrowser:
    """Memories of the embedded store, as the memories commands see them."""

    kind = "local"

    def __init__(self, backend: LocalBackend) -> None:
        self.backend = backend

    # -- reads --------------------------------------------------------------------------------

    def list_page(self, bank_id: str, flt: MemoryFilter) -> MemoryPage:
        flt = flt.bounded()
        where, params = filter_sql(bank_id, flt)
        with self.backend._read("list") as conn:
            total = int(conn.execute(f"SELECT count(*) FROM units AS u WHERE {where}", params).fetchone()[0])
            rows = conn.execute(
                f"SELECT {_COLUMNS} {_FROM} WHERE {where} ORDER BY u.created_at DESC, u.rowid DESC LIMIT ? OFFSET ?",
                [*params, flt.limit, flt.offset],
            ).fetchall()
            edited = _edit_times(conn, [str(r[0]) for r in rows])
        now = iso_from_epoch(self.backend._now())
        return MemoryPage([_record(bank_id, r, now, edited) for r in rows], total, flt.limit, flt.offset)

    def get(self, bank_id: str, memory_id: str) -> MemoryRecord | None:
        with self.backend._read("get") as conn:
            row = conn.execute(
                f"SELECT {_COLUMNS} {_FROM} WHERE u.bank_id = ? AND u.id = ?", (bank_id, memory_id)
            ).fetchone()
            edited = _edit_times(conn, [memory_id]) if row is not None else {}
        return None if row is None else _record(bank_id, row, iso_from_epoch(self.backend._now()), edited)

    def history(self, bank_id: str, memory_id: str) -> list[EditEntry]:
        with self.backend._read("history") as conn:
            if not _has_edits(conn):
                return []
            rows = conn.execute(
                "SELECT edited_at, previous, content FROM unit_edits WHERE unit_id = ? AND bank_id = ? ORDER BY seq",
                (memory_id, bank_id),
            ).fetchall()
        return [EditEntry(str(a), str(b), str(c)) for a, b, c in rows]

    def documents_with(self, bank_id: str, *, session_id: str | None = None, tag: str | None = None) -> list[str]:
        """Documents whose memories carry the session (its tag or its metadata) or the tag."""
        with self.backend._read("documents") as conn:
            if session_id is not None:
                rows = conn.execute(
                    "SELECT document_id FROM documents WHERE bank_id = ? AND "
                    "(json_extract(metadata_json, '$.session_id') = ? OR EXISTS ("
                    " SELECT 1 FROM json_each(documents.tags_json) WHERE value = ?)) ORDER BY created_at",
                    (bank_id, session_id, f"session:{session_id}"),
                ).fetchall()
            else:
                rows = conn.execute(
                    "SELECT document_id FROM documents WHERE bank_id = ? AND EXISTS ("
                    " SELECT 1 FROM json_each(documents.tags_json) WHERE value = ?) ORDER BY created_at",
                    (bank_id, tag),
                ).fetchall()
        return [str(r[0]) for r in rows]

    # -- writes -------------------------------------------------------------------------------

    def edit(self, bank_id: str, memory_id: str, text: str) -> bool:
        """New text for one memory (re-indexed), its old text kept in ``unit_edits``."""
        now = iso_from_epoch(self.backend._now())

        def remember(conn: sqlite3.Connection) -> None:
            row = conn.execute(
                "SELECT content FROM units WHERE bank_id = ? AND id = ?", (bank_id, memory_id)
            ).fetchone()
            if row is None:
                return
            for statement in EDITS_SQL:
                conn.execute(statement)
            conn.execute(
                "INSERT INTO unit_edits(unit_id, bank_id, edited_at, previous, content) VALUES (?, ?, ?, ?, ?)",
                (memory_id, bank_id, now, str(row[0]), text),
            )

        return self.backend.update_unit(bank_id, memory_id, content=text, before=remember)

    def delete_documents(self, bank_id: str, document_ids: list[str]) -> int:
        """Whole documents go: their memories, tags, vectors, text and the document rows."""
        if not document_ids:
            return 0
        n = 0
        with self.backend._write("forget") as conn:
            for doc in document_ids:
                n += conn.execute("DELETE FROM units WHERE bank_id = ? AND document_id = ?", (bank_id, doc)).rowcount
                conn.execute("DELETE FROM document_parts WHERE bank_id = ? AND document_id = ?", (bank_id, doc))
                conn.execute("DELETE FROM documents WHERE bank_id = ? AND document_id = ?", (bank_id, doc))
        return n

    def delete_memories(self, bank_id: str, memory_ids: list[str]) -> tuple[int, str | None]:
        if not memory_ids:
            return 0, None
        n = 0
        with self.backend._write("forget") as conn:
            for memory_id in memory_ids:
                n += conn.execute("DELETE FROM units WHERE bank_id = ? AND id = ?", (bank_id, memory_id)).rowcount
        return n, None

    def export_records(self, bank_id: str) -> tuple[list[Record], list[Record]]:
        from .local_bank_io import export_records

        return export_records(self.backend, bank_id)

    def import_records(
        self, bank_id: str, documents: list[Record], memories: list[Record], dropped: Dropped
    ) -> dict[str, Any] | None:
        from .local_bank_io import import_records

        return import_records(self.backend, bank_id, documents, memories, dropped)


def _has_edits(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'unit_edits'").fetchone() is not None


def _edit_times(conn: sqlite3.Connection, ids: list[str]) -> dict[str, str]:
    """When each of ``ids`` was last edited (only the edited ones)."""
    if not ids or not _has_edits(conn):
        return {}
    marks = ", ".join("?" for _ in ids)
    rows = conn.execute(
        f"SELECT unit_id, max(edited_at) FROM unit_edits WHERE unit_id IN ({marks}) GROUP BY unit_id", ids
    ).fetchall()
    return {str(a): str(b) for a, b in rows}


def _record(bank_id: str, row: tuple[Any, ...], now: str, edited: dict[str, str]) -> MemoryRecord:
    (
        uid,
        content,
        context,
        type_,
        source,
        importance,
        created,
        occurred,
        doc,
        seq,
        meta_json,
        tags_json,
        valid_until,
        superseded,
    ) = row
    meta = orjson.loads(meta_json or "{}")
    meta = meta if isinstance(meta, dict) else {}
    valid = superseded is None and (valid_until is None or str(valid_until) > now)
    return MemoryRecord(
        id=str(uid),
        bank_id=bank_id,
        text=str(content),
        context=str(context or ""),
        type=str(type_),
        source=str(source),
        tags=list(orjson.loads(tags_json or "[]")),
        document_id=str(doc),
        session_id=_str_or_none(meta.get("session_id")),
        session_file=_str_or_none(meta.get("session_file")),
        created_at=str(created),
        occurred_at=_str_or_none(occurred),
        importance=float(importance),
        position=int(seq),
        valid=valid,
        edited_at=edited.get(str(uid)),
        metadata=meta,
    )


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
