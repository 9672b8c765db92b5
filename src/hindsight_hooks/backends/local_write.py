"""Writing one retain batch into the local store (inside the caller's transaction).

Document semantics follow the server (docs/backends.md#embedded-store step 4): ``replace`` deletes the
document's units before the new ones go in; ``append`` adds units, extends the document's text
and makes the latest tags and metadata apply to *every* unit of the document. Items of one
batch that share a document all stay: the first ``replace`` clears what was stored before the
batch, later items add to it (a tool call with one ``document_id`` keeps all its items).

Cost follows the delta, not the document (ADR-050): a live session is one ``append`` document
that grows every turn, so nothing on the append path reads or rewrites what is already stored.

- The text lives in ``document_parts``, one row per item, joined by a blank line in ``seq``
  order (:func:`document_text`); ``documents.original_text`` stays empty. Rewriting one
  ever-growing text per turn cost ~28 ms at 2,500 messages against ~7 ms at 100, and even a
  large text that is not rewritten costs O(text) whenever its row is updated (SQLite rebuilds
  the whole record), so the text must not sit in the ``documents`` row either.
- Re-tagging every unit of the document happens only when the tag list or the metadata differs
  from the document row's (``tags_json``/``metadata_json``): the units already carry exactly
  that set, so the usual turn (same session tags) touches only the new units.
- The next unit ``seq``, the next part ``seq`` and the bank's next rowid come from index seeks.

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

from .local_indexed import indexed_columns
from .local_windows import link_turns

STAGING_SQL = (
    "CREATE TEMP TABLE IF NOT EXISTS stage_units("
    "rowid INTEGER PRIMARY KEY, id TEXT, bank_id TEXT, document_id TEXT, seq INTEGER, content TEXT, context TEXT, "
    "type TEXT, source TEXT, importance REAL, created_at TEXT, occurred_at TEXT, metadata_json TEXT, "
    "script_terms TEXT, search_text TEXT)",
    "CREATE TEMP TABLE IF NOT EXISTS stage_tags(unit_id TEXT, bank_id TEXT, tag TEXT)",
)
_UNIT_COLS = (
    "rowid, id, bank_id, document_id, seq, content, context, type, source, importance, created_at, occurred_at, "
    "metadata_json, script_terms, search_text"
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
    """What the batch does to one document: ``parts`` are the texts it adds, in order (after the
    stored ones, or alone when the document is created or replaced)."""

    existed: bool
    stored_tags: str
    stored_meta: str
    replace: bool
    parts: list[str] = field(default_factory=list)
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
            state.parts.append(item.content)
        state.context, state.tags, state.meta_json = item.context, item.tags, _dumps(item.metadata)
        for k, text in enumerate(item.unit_texts):
            if next_rowid > hi:
                raise OverflowError("the bank has no free unit rowids left")
            unit_id = hash16(bank_id + item.document_id + text + item.created_at + str(state.next_seq))
            said = item.unit_times[k] or item.occurred_at
            # A unit's created_at is when it was said, so the time window, browsing and recency all
            # see the message's own time (schema 5); the item's time stands in when it has none.
            state.pending.append(
                [next_rowid, unit_id, bank_id, item.document_id, state.next_seq, text, item.context, item.type,
                 item.source, item.importance, said or item.created_at, said]
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
            # ADR 179: the index takes the message's words without its provenance (no role label,
            # tool call keys or item context); ADR 115: bigrams of space-less scripts and emoji
            # tokens from that text and the turn terms.
            search, script_terms = indexed_columns(str(row[5]), str(row[8]), str(row[6]))
            unit_rows.append([*row, state.meta_json, script_terms, search])
            tag_rows.extend((row[1], bank_id, tag) for tag in state.tags)
    if unit_rows:
        conn.executemany(f"INSERT INTO temp.stage_units({_UNIT_COLS}) VALUES ({', '.join('?' * 15)})", unit_rows)
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
    """The document as the batch first meets it: stored tags/metadata and whether it gets replaced.

    Never reads the stored text: appending must not cost what the document already holds.
    """
    row = conn.execute(
        "SELECT tags_json, metadata_json FROM documents WHERE bank_id = ? AND document_id = ?",
        (bank_id, item.document_id),
    ).fetchone()
    replace = item.update_mode == "replace"
    if row is None:
        return _DocState(existed=False, stored_tags="", stored_meta="", replace=replace, parts=[item.content])
    if replace:
        return _DocState(existed=True, stored_tags=row[0], stored_meta=row[1], replace=True, parts=[item.content])
    next_seq = int(
        conn.execute(
            "SELECT COALESCE(MAX(seq), -1) + 1 FROM units WHERE bank_id = ? AND document_id = ?",
            (bank_id, item.document_id),
        ).fetchone()[0]
    )
    return _DocState(
        existed=True,
        stored_tags=row[0],
        stored_meta=row[1],
        replace=False,
        parts=[item.content],
        next_seq=next_seq,
    )


def _settle_document(conn: sqlite3.Connection, bank_id: str, document_id: str, state: _DocState, now_iso: str) -> None:
    """Delete replaced units or re-tag kept ones (only when the set changed), then write the
    document row and the batch's parts of its text."""
    key = (bank_id, document_id)
    tags_json = _dumps(state.tags)
    if state.existed and state.replace:
        conn.execute("DELETE FROM units WHERE bank_id = ? AND document_id = ?", key)
    elif state.existed and (state.stored_tags, state.stored_meta) != (tags_json, state.meta_json):
        # The units carry the stored set (every earlier write left them so): only a different
        # set needs the O(units of the document) rewrite.
        conn.execute(
            "UPDATE units SET metadata_json = ? WHERE bank_id = ? AND document_id = ?", (state.meta_json, *key)
        )
        conn.execute(
            "DELETE FROM unit_tags WHERE unit_id IN (SELECT id FROM units WHERE bank_id = ? AND document_id = ?)", key
        )
        conn.execute(
            "INSERT INTO unit_tags(unit_id, bank_id, tag) SELECT u.id, u.bank_id, j.value "
            "FROM units AS u, json_each(?) AS j WHERE u.bank_id = ? AND u.document_id = ?",
            (tags_json, *key),
        )
    first_part = 0
    if not state.existed:
        # Orphan parts of a row deleted without the cascade must not come back.
        conn.execute("DELETE FROM document_parts WHERE bank_id = ? AND document_id = ?", key)
        conn.execute(
            "INSERT INTO documents(bank_id, document_id, original_text, context, tags_json, metadata_json, "
            "created_at, updated_at) VALUES (?, ?, '', ?, ?, ?, ?, ?)",
            (*key, state.context, tags_json, state.meta_json, now_iso, now_iso),
        )
    elif state.replace:
        conn.execute("DELETE FROM document_parts WHERE bank_id = ? AND document_id = ?", key)
        conn.execute(
            "UPDATE documents SET original_text = '', context = ?, tags_json = ?, metadata_json = ?, updated_at = ? "
            "WHERE bank_id = ? AND document_id = ?",
            (state.context, tags_json, state.meta_json, now_iso, *key),
        )
    else:
        conn.execute(
            "UPDATE documents SET context = ?, tags_json = ?, metadata_json = ?, updated_at = ? "
            "WHERE bank_id = ? AND document_id = ?",
            (state.context, tags_json, state.meta_json, now_iso, *key),
        )
        first_part = int(
            conn.execute(
                "SELECT COALESCE(MAX(seq), -1) + 1 FROM document_parts WHERE bank_id = ? AND document_id = ?", key
            ).fetchone()[0]
        )
    conn.executemany(
        "INSERT INTO document_parts(bank_id, document_id, seq, text) VALUES (?, ?, ?, ?)",
        [(*key, first_part + k, text) for k, text in enumerate(state.parts)],
    )


def document_text(conn: sqlite3.Connection, bank_id: str, document_id: str) -> str | None:
    """The whole text of a document, or None when it does not exist: its parts in order,
    blank-line separated, after ``original_text`` should a row still hold one (nothing we write
    does since schema 2). Reading is O(document) by nature; writing is not."""
    row = conn.execute(
        "SELECT original_text FROM documents WHERE bank_id = ? AND document_id = ?", (bank_id, document_id)
    ).fetchone()
    if row is None:
        return None
    pieces = [str(row[0])] if row[0] else []
    pieces.extend(
        str(part)
        for (part,) in conn.execute(
            "SELECT text FROM document_parts WHERE bank_id = ? AND document_id = ? ORDER BY seq",
            (bank_id, document_id),
        )
        if part
    )
    return "\n\n".join(pieces)
