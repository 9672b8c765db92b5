"""The embedded store's side of a bank export and import (ADR 133): every stored field out, and
back in under the same ids and times.

The export format itself (its lines, header and reader) is the plugin's
(``plugin/control/memories_jsonl.py``); this module only reads and writes the store's tables, so
nothing outside the backends package touches them.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from typing import TYPE_CHECKING, Any

import orjson

from ..timefmt import iso_now, normalize_timestamp
from .browse import Dropped, Record
from .local_browse import EDITS_SQL
from .local_indexed import indexed_columns
from .local_schema import slot_range
from .local_write import document_text

if TYPE_CHECKING:
    from .local import LocalBackend

_TYPES = ("world", "experience")
_SOURCES = ("tool", "transcript", "import")


def export_records(backend: LocalBackend, bank_id: str) -> tuple[list[Record], list[Record]]:
    """Every document and memory of the bank, every stored field, in one read snapshot."""
    documents: list[Record] = []
    memories: list[Record] = []
    with backend._read("export") as conn:
        docs = conn.execute(
            "SELECT document_id, context, tags_json, metadata_json, created_at, updated_at FROM documents "
            "WHERE bank_id = ? ORDER BY created_at, document_id",
            (bank_id,),
        ).fetchall()
        for doc, context, tags, meta, created, updated in docs:
            documents.append(
                {
                    "document_id": doc,
                    "text": document_text(conn, bank_id, doc) or "",
                    "context": context,
                    "tags": orjson.loads(tags),
                    "metadata": orjson.loads(meta),
                    "created_at": created,
                    "updated_at": updated,
                }
            )
        edits: dict[str, list[dict[str, str]]] = defaultdict(list)
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'unit_edits'").fetchone():
            for unit_id, at, prev, text in conn.execute(
                "SELECT unit_id, edited_at, previous, content FROM unit_edits WHERE bank_id = ? ORDER BY seq",
                (bank_id,),
            ):
                edits[str(unit_id)].append({"edited_at": at, "previous": prev, "text": text})
        tags_of: dict[str, list[str]] = defaultdict(list)
        for unit_id, tag in conn.execute(
            "SELECT unit_id, tag FROM unit_tags WHERE bank_id = ? ORDER BY rowid", (bank_id,)
        ):
            tags_of[str(unit_id)].append(str(tag))
        for row in conn.execute(
            "SELECT id, document_id, seq, content, context, type, source, importance, created_at, occurred_at, "
            "metadata_json, valid_until, superseded_by FROM units WHERE bank_id = ? ORDER BY rowid",
            (bank_id,),
        ):
            uid = str(row[0])
            memories.append(
                {
                    "id": uid,
                    "document_id": row[1],
                    "seq": row[2],
                    "text": row[3],
                    "context": row[4],
                    "type": row[5],
                    "source": row[6],
                    "importance": row[7],
                    "created_at": row[8],
                    "occurred_at": row[9],
                    "metadata": orjson.loads(row[10]),
                    "tags": tags_of.get(uid, []),
                    "valid_until": row[11],
                    "superseded_by": row[12],
                    "edits": edits.get(uid, []),
                }
            )
    return documents, memories


def import_records(
    backend: LocalBackend,
    bank_id: str,
    documents: list[Record],
    memories: list[Record],
    dropped: Dropped,
) -> dict[str, Any]:
    """Insert what the store does not hold yet, ids and times as exported (one transaction);
    ``dropped`` says which records were forgotten (the caller's tombstones) and stay out."""
    report = {"memories_added": 0, "documents_added": 0, "skipped": 0, "forgotten": 0}
    now = iso_now()
    forgotten_docs: set[str] = set()
    added: list[str] = []
    with backend._write("import") as conn:
        slot, _ = backend._insert_bank(conn, bank_id, None)
        lo, hi = slot_range(slot)
        top = conn.execute("SELECT max(rowid) FROM units WHERE rowid BETWEEN ? AND ?", (lo, hi)).fetchone()[0]
        next_rowid = lo if top is None else int(top) + 1
        for doc in documents:
            if dropped(doc):
                forgotten_docs.add(doc["document_id"])
                report["forgotten"] += 1
                continue
            if _insert_document(conn, bank_id, doc, now):
                report["documents_added"] += 1
        for mem in memories:
            if mem["document_id"] in forgotten_docs or dropped(mem):
                report["forgotten"] += 1
                continue
            if conn.execute("SELECT 1 FROM units WHERE id = ?", (mem["id"],)).fetchone():
                report["skipped"] += 1
                continue
            if next_rowid > hi:
                raise OverflowError("the bank has no free unit rowids left")
            stub = {
                "document_id": mem["document_id"],
                "text": "",
                "tags": mem.get("tags") or [],
                "metadata": mem.get("metadata") or {},
                "created_at": mem.get("created_at"),
            }
            if _insert_document(conn, bank_id, stub, now):
                report["documents_added"] += 1
            _insert_memory(conn, bank_id, next_rowid, mem, now)
            next_rowid += 1
            added.append(mem["id"])
            report["memories_added"] += 1
            edits = [e for e in mem.get("edits") or [] if isinstance(e, dict)]
            if edits:
                for statement in EDITS_SQL:
                    conn.execute(statement)
                conn.executemany(
                    "INSERT INTO unit_edits(unit_id, bank_id, edited_at, previous, content) VALUES (?, ?, ?, ?, ?)",
                    [
                        (
                            mem["id"],
                            bank_id,
                            str(e.get("edited_at") or now),
                            str(e.get("previous") or ""),
                            str(e.get("text") or ""),
                        )
                        for e in edits
                    ],
                )
    if added and backend._worker is not None:
        backend._worker.notify(added)  # vectors for the imported memories, in the background
    return report


def _insert_document(conn: sqlite3.Connection, bank_id: str, doc: Record, now: str) -> bool:
    if conn.execute(
        "SELECT 1 FROM documents WHERE bank_id = ? AND document_id = ?", (bank_id, doc["document_id"])
    ).fetchone():
        return False
    created = str(doc.get("created_at") or now)
    conn.execute(
        "INSERT INTO documents(bank_id, document_id, original_text, context, tags_json, metadata_json, created_at, "
        "updated_at) VALUES (?, ?, '', ?, ?, ?, ?, ?)",
        (
            bank_id,
            doc["document_id"],
            str(doc.get("context") or ""),
            orjson.dumps(list(doc.get("tags") or [])).decode(),
            orjson.dumps(dict(doc.get("metadata") or {})).decode(),
            created,
            str(doc.get("updated_at") or created),
        ),
    )
    text = str(doc.get("text") or "")
    if text:
        conn.execute(
            "INSERT INTO document_parts(bank_id, document_id, seq, text) VALUES (?, ?, 0, ?)",
            (bank_id, doc["document_id"], text),
        )
    return True


def _insert_memory(conn: sqlite3.Connection, bank_id: str, rowid: int, mem: Record, now: str) -> None:
    text, context = str(mem["text"]), str(mem.get("context") or "")
    kind = mem.get("type") if mem.get("type") in _TYPES else "world"
    source = mem.get("source") if mem.get("source") in _SOURCES else "import"
    importance = mem.get("importance")
    importance = min(1.0, max(0.0, float(importance))) if isinstance(importance, int | float) else 0.5
    seq = mem.get("seq") if isinstance(mem.get("seq"), int) else 0
    said = normalize_timestamp(mem.get("occurred_at"))  # created_at is when it was said (ADR 174)
    search, script_terms = indexed_columns(text, str(source), context)  # ADR 179, ADR 115
    conn.execute(
        "INSERT INTO units(rowid, id, bank_id, document_id, seq, content, context, type, source, importance, "
        "created_at, occurred_at, metadata_json, valid_until, superseded_by, script_terms, search_text) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            rowid,
            mem["id"],
            bank_id,
            mem["document_id"],
            seq,
            text,
            context,
            kind,
            source,
            importance,
            said or normalize_timestamp(mem.get("created_at")) or now,
            said,
            orjson.dumps(dict(mem.get("metadata") or {})).decode(),
            mem.get("valid_until"),
            mem.get("superseded_by"),
            script_terms,
            search,
        ),
    )
    conn.executemany(
        "INSERT OR IGNORE INTO unit_tags(unit_id, bank_id, tag) VALUES (?, ?, ?)",
        [(mem["id"], bank_id, str(t)) for t in dict.fromkeys(mem.get("tags") or [])],
    )
