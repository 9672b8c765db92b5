"""Writing one retain batch into the local store (inside the caller's transaction).

Document semantics follow the server (BEHAVIOUR.md §15 step 4): ``replace`` deletes the
document's units before the new ones go in; ``append`` adds units, extends ``original_text``
and makes the latest tags and metadata apply to *every* unit of the document. Items of one
batch that share a document all stay: the first ``replace`` clears what was stored before the
batch, later items add to it (a tool call with one ``document_id`` keeps all its items).

Speed: FTS5 flushes its pending index data at every statement savepoint, and a row insert
that fires a trigger opens one. Inserting units row by row through the sync trigger therefore
costs ~4x more than necessary, so new units are staged in TEMP tables (memory only) and moved
into ``units``/``unit_tags`` with one ``INSERT … SELECT`` each: the triggers still keep the
index in sync, inside a single statement.
"""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass, field
from typing import Any

import orjson

from .local_windows import link_turns

STAGING_SQL = (
    "CREATE TEMP TABLE IF NOT EXISTS stage_units("
    "rowid INTEGER PRIMARY KEY, id TEXT, bank_id TEXT, document_id TEXT, seq INTEGER, content TEXT, context TEXT, "
    "type TEXT, source TEXT, importance REAL, created_at TEXT, occurred_at TEXT, metadata_json TEXT)",
    "CREATE TEMP TABLE IF NOT EXISTS stage_tags(unit_id TEXT, bank_id TEXT, tag TEXT)",
)
_UNIT_COLS = (
    "rowid, id, bank_id, document_id, seq, content, context, type, source, importance, created_at, occurred_at, "
    "metadata_json"
)


def hash16(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _dumps(value: object) -> str:
    return orjson.dumps(value).decode("utf-8")


@dataclass
class PreparedItem:
    """One validated wire item and its derived units (built outside the write transaction)."""

    document_id: str
    update_mode: str
    content: str
    context: str
    tags: list[str]
    metadata: dict[str, Any]
    created_at: str
    occurred_at: str | None
    unit_texts: list[str]
    unit_times: list[str | None]
    type: str
    source: str
    importance: float
    vectors: list[list[float] | None] = field(default_factory=list)


@dataclass
class _DocState:
    existed: bool
    stored_tags: str
    stored_meta: str
    replace: bool
    text: str
    context: str = ""
    tags: list[str] = field(default_factory=list)
    meta_json: str = "{}"
    next_seq: int = 0
    pending: list[list[Any]] = field(default_factory=list)


def ensure_staging(conn: sqlite3.Connection) -> None:
    for statement in STAGING_SQL:
        conn.execute(statement)


def store_batch(
    conn: sqlite3.Connection,
    bank_id: str,
    rowid_range: tuple[int, int],
    items: list[PreparedItem],
    now_iso: str,
    model: str,
    vector_blob: Any,
) -> list[str]:
    """Apply ``items`` to the bank; returns the new unit ids in item order.

    Raises ``OverflowError`` when the bank's rowid range is exhausted (practically never).
    """
    lo, hi = rowid_range
    top = conn.execute(
        "SELECT rowid FROM units WHERE rowid BETWEEN ? AND ? ORDER BY rowid DESC LIMIT 1", (lo, hi)
    ).fetchone()
    next_rowid = lo if top is None else int(top[0]) + 1
    docs: dict[str, _DocState] = {}
    unit_ids: list[str] = []
    vectors: list[tuple[str, str, bytes]] = []
    for item in items:
        state = docs.get(item.document_id)
        if state is None:
            state = _open_document(conn, bank_id, item)
            docs[item.document_id] = state
        else:
            state.text = f"{state.text}\n\n{item.content}" if state.text else item.content
        state.context, state.tags, state.meta_json = item.context, item.tags, _dumps(item.metadata)
        for k, text in enumerate(item.unit_texts):
            if next_rowid > hi:
                raise OverflowError("the bank has no free unit rowids left")
            unit_id = hash16(bank_id + item.document_id + text + item.created_at + str(state.next_seq))
            state.pending.append(
                [next_rowid, unit_id, bank_id, item.document_id, state.next_seq, text, item.context, item.type,
                 item.source, item.importance, item.created_at, item.unit_times[k] or item.occurred_at]
            )  # fmt: skip
            vector = item.vectors[k] if k < len(item.vectors) else None
            if vector is not None:
                vectors.append((unit_id, model, vector_blob(vector)))
            unit_ids.append(unit_id)
            state.next_seq += 1
            next_rowid += 1
    link_turns(conn, bank_id, items, docs)  # ADR 052: turn neighbours in each unit's search context
    unit_rows: list[list[Any]] = []
    tag_rows: list[tuple[str, str, str]] = []
    for document_id, state in docs.items():
        _settle_document(conn, bank_id, document_id, state, now_iso)
        for row in state.pending:
            unit_rows.append([*row, state.meta_json])
            tag_rows.extend((row[1], bank_id, tag) for tag in state.tags)
    if unit_rows:
        conn.executemany(f"INSERT INTO temp.stage_units({_UNIT_COLS}) VALUES ({', '.join('?' * 13)})", unit_rows)
        conn.execute(f"INSERT INTO units({_UNIT_COLS}) SELECT {_UNIT_COLS} FROM temp.stage_units ORDER BY rowid")
        conn.execute("DELETE FROM temp.stage_units")
    if tag_rows:
        conn.executemany("INSERT INTO temp.stage_tags(unit_id, bank_id, tag) VALUES (?, ?, ?)", tag_rows)
        conn.execute("INSERT INTO unit_tags(unit_id, bank_id, tag) SELECT unit_id, bank_id, tag FROM temp.stage_tags")
        conn.execute("DELETE FROM temp.stage_tags")
    if vectors:
        conn.executemany("INSERT INTO unit_vectors(unit_id, model, vector) VALUES (?, ?, ?)", vectors)
    return unit_ids


def _open_document(conn: sqlite3.Connection, bank_id: str, item: PreparedItem) -> _DocState:
    """The document as the batch first meets it: stored state, and whether it gets replaced."""
    row = conn.execute(
        "SELECT original_text, tags_json, metadata_json FROM documents WHERE bank_id = ? AND document_id = ?",
        (bank_id, item.document_id),
    ).fetchone()
    replace = item.update_mode == "replace"
    if row is None:
        return _DocState(existed=False, stored_tags="", stored_meta="", replace=replace, text=item.content)
    next_seq = 0
    if not replace:
        next_seq = int(
            conn.execute(
                "SELECT COALESCE(MAX(seq), -1) + 1 FROM units WHERE bank_id = ? AND document_id = ?",
                (bank_id, item.document_id),
            ).fetchone()[0]
        )
    text = item.content if replace or not row[0] else f"{row[0]}\n\n{item.content}"
    return _DocState(
        existed=True, stored_tags=row[1], stored_meta=row[2], replace=replace, text=text, next_seq=next_seq
    )


def _settle_document(conn: sqlite3.Connection, bank_id: str, document_id: str, state: _DocState, now_iso: str) -> None:
    """Delete replaced units or re-tag kept ones, then write the document row."""
    tags_json = _dumps(state.tags)
    if state.existed and state.replace:
        conn.execute("DELETE FROM units WHERE bank_id = ? AND document_id = ?", (bank_id, document_id))
    elif state.existed and (state.stored_tags, state.stored_meta) != (tags_json, state.meta_json):
        conn.execute(
            "UPDATE units SET metadata_json = ? WHERE bank_id = ? AND document_id = ?",
            (state.meta_json, bank_id, document_id),
        )
        conn.execute(
            "DELETE FROM unit_tags WHERE unit_id IN (SELECT id FROM units WHERE bank_id = ? AND document_id = ?)",
            (bank_id, document_id),
        )
        conn.execute(
            "INSERT INTO unit_tags(unit_id, bank_id, tag) SELECT u.id, u.bank_id, j.value "
            "FROM units AS u, json_each(?) AS j WHERE u.bank_id = ? AND u.document_id = ?",
            (tags_json, bank_id, document_id),
        )
    if state.existed:
        conn.execute(
            "UPDATE documents SET original_text = ?, context = ?, tags_json = ?, metadata_json = ?, updated_at = ? "
            "WHERE bank_id = ? AND document_id = ?",
            (state.text, state.context, tags_json, state.meta_json, now_iso, bank_id, document_id),
        )
    else:
        conn.execute(
            "INSERT INTO documents(bank_id, document_id, original_text, context, tags_json, metadata_json, "
            "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (bank_id, document_id, state.text, state.context, tags_json, state.meta_json, now_iso, now_iso),
        )
