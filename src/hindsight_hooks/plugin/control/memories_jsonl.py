"""The memories export format (JSONL) and its reader, importers and Markdown view (ADR 133).

One JSON object a line, each with a ``kind``:

- ``header``: ``format`` (``hindsight-hooks-memories``), ``version`` (1), ``bank_id``, ``backend``,
  ``exported_at``;
- ``document``: ``document_id``, ``text``, ``context``, ``tags``, ``metadata``, ``created_at``,
  ``updated_at``;
- ``memory``: ``id``, ``document_id``, ``seq``, ``text``, ``context``, ``type``, ``source``,
  ``importance``, ``created_at``, ``occurred_at``, ``metadata``, ``tags``, ``valid_until``,
  ``superseded_by``, ``edits`` (``[{edited_at, previous, text}]``).

From the embedded store every field is filled, so export → import is lossless; a server export
fills what the server's API shows. Readers ignore fields they do not know.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from ...backends.browse import MemoryFilter, MemoryRecord, browser_for
from ...timefmt import iso_now

if TYPE_CHECKING:
    from ...backends.local import LocalBackend
    from ...queue.tombstones import Tombstone
    from ..runtime import SessionRuntime

FORMAT = "hindsight-hooks-memories"
VERSION = 1
_TYPES = ("world", "experience")
_SOURCES = ("tool", "transcript", "import")


def _line(obj: dict[str, Any]) -> bytes:
    return orjson.dumps(obj) + b"\n"


def _now() -> str:
    return iso_now()


def count_kinds(lines: list[bytes]) -> dict[str, int]:
    counts = {"documents": 0, "memories": 0}
    for raw in lines:
        kind = orjson.loads(raw).get("kind")
        if kind == "document":
            counts["documents"] += 1
        elif kind == "memory":
            counts["memories"] += 1
    return counts


# -- export ---------------------------------------------------------------------------------------
def export_lines(backend: Any, bank_id: str) -> list[bytes]:
    header = {
        "kind": "header",
        "format": FORMAT,
        "version": VERSION,
        "bank_id": bank_id,
        "backend": getattr(backend, "name", "?"),
        "exported_at": _now(),
    }
    if getattr(backend, "name", "") == "local":
        return [_line(header), *_local_lines(backend, bank_id)]
    return [_line(header), *_server_lines(backend, bank_id)]


def _local_lines(backend: LocalBackend, bank_id: str) -> list[bytes]:
    from ...backends.local_write import document_text

    out: list[bytes] = []
    with backend._read("export") as conn:
        docs = conn.execute(
            "SELECT document_id, context, tags_json, metadata_json, created_at, updated_at FROM documents "
            "WHERE bank_id = ? ORDER BY created_at, document_id",
            (bank_id,),
        ).fetchall()
        for doc, context, tags, meta, created, updated in docs:
            out.append(
                _line(
                    {
                        "kind": "document",
                        "document_id": doc,
                        "text": document_text(conn, bank_id, doc) or "",
                        "context": context,
                        "tags": orjson.loads(tags),
                        "metadata": orjson.loads(meta),
                        "created_at": created,
                        "updated_at": updated,
                    }
                )
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
            out.append(
                _line(
                    {
                        "kind": "memory",
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
            )
    return out


def _server_lines(backend: Any, bank_id: str) -> list[bytes]:
    out: list[bytes] = []
    browser = browser_for(backend)
    docs: set[str] = set()
    records: list[MemoryRecord] = []
    offset: int | None = 0
    while offset is not None:
        page = browser.list_page(bank_id, MemoryFilter(limit=500, offset=offset))
        records.extend(page.records)
        offset = page.next_offset
    for rec in records:
        if rec.document_id and rec.document_id not in docs:
            docs.add(rec.document_id)
            try:
                d = backend.get_document(bank_id, rec.document_id, timeout_s=30)
            except Exception:
                d = {}
            out.append(
                _line(
                    {
                        "kind": "document",
                        "document_id": rec.document_id,
                        "text": str(d.get("original_text") or ""),
                        "context": "",
                        "tags": list(d.get("tags") or []),
                        "metadata": dict(d.get("document_metadata") or {}),
                        "created_at": d.get("created_at"),
                        "updated_at": d.get("updated_at"),
                    }
                )
            )
    for rec in records:
        out.append(
            _line(
                {
                    "kind": "memory",
                    "id": rec.id,
                    "document_id": rec.document_id,
                    "seq": rec.position,
                    "text": rec.text,
                    "context": rec.context,
                    "type": rec.type,
                    "source": rec.source,
                    "importance": rec.importance,
                    "created_at": rec.created_at,
                    "occurred_at": rec.occurred_at,
                    "metadata": rec.metadata,
                    "tags": rec.tags,
                    "valid_until": None if rec.valid else rec.created_at,
                    "superseded_by": None,
                    "edits": [],
                }
            )
        )
    return out


# -- reading ------------------------------------------------------------------------------------
@dataclass
class Parsed:
    documents: list[dict[str, Any]] = field(default_factory=list)
    memories: list[dict[str, Any]] = field(default_factory=list)
    bad_lines: int = 0
    error: str | None = None


def parse_export(raw: bytes) -> Parsed:
    """The documents and memories of an export; a file without our header is refused whole."""
    out = Parsed()
    lines = [ln for ln in raw.splitlines() if ln.strip()]
    try:
        head = orjson.loads(lines[0]) if lines else None
    except orjson.JSONDecodeError:
        head = None
    if not isinstance(head, dict) or head.get("kind") != "header" or head.get("format") != FORMAT:
        out.error = "the first line is not a hindsight-hooks-memories header"
        return out
    if not isinstance(head.get("version"), int) or head["version"] > VERSION:
        out.error = f"format version {head.get('version')!r} is newer than this hindsight-hooks reads ({VERSION})"
        return out
    for ln in lines[1:]:
        try:
            obj = orjson.loads(ln)
        except orjson.JSONDecodeError:
            out.bad_lines += 1
            continue
        if isinstance(obj, dict) and obj.get("kind") == "document" and isinstance(obj.get("document_id"), str):
            out.documents.append(obj)
        elif isinstance(obj, dict) and obj.get("kind") == "memory" and _ok_memory(obj):
            out.memories.append(obj)
        else:
            out.bad_lines += 1
    return out


def _ok_memory(obj: dict[str, Any]) -> bool:
    return all(isinstance(obj.get(k), str) and obj.get(k) for k in ("id", "text", "document_id"))


def _as_item(obj: dict[str, Any]) -> dict[str, Any]:
    """What a tombstone looks at, in the wire item's shape."""
    return {
        "document_id": obj.get("document_id"),
        "tags": obj.get("tags") or [],
        "metadata": obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {},
        "content": obj.get("text") or "",
    }


# -- import: embedded store ------------------------------------------------------------------------
def import_local(backend: LocalBackend, bank_id: str, parsed: Parsed, stones: list[Tombstone]) -> dict[str, Any]:
    """Insert what the store does not hold yet, ids and times as exported (one transaction)."""
    from ...backends.local_browse import EDITS_SQL
    from ...backends.local_schema import slot_range
    from ...backends.local_script import unit_script_terms
    from ...queue.tombstones import matcher_for

    matcher = matcher_for(stones, bank_id)
    report = {"memories_added": 0, "documents_added": 0, "skipped": 0, "forgotten": 0}
    now = _now()
    forgotten_docs: set[str] = set()
    added: list[str] = []
    with backend._write("import") as conn:
        slot, _ = backend._insert_bank(conn, bank_id, None)
        lo, hi = slot_range(slot)
        top = conn.execute("SELECT max(rowid) FROM units WHERE rowid BETWEEN ? AND ?", (lo, hi)).fetchone()[0]
        next_rowid = lo if top is None else int(top) + 1
        for doc in parsed.documents:
            if matcher and matcher.matches(_as_item(doc)):
                forgotten_docs.add(doc["document_id"])
                report["forgotten"] += 1
                continue
            if _insert_document(conn, bank_id, doc, now):
                report["documents_added"] += 1
        for mem in parsed.memories:
            if mem["document_id"] in forgotten_docs or (matcher and matcher.matches(_as_item(mem))):
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
            _insert_memory(conn, bank_id, next_rowid, mem, now, unit_script_terms)
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
    worker = getattr(backend, "_worker", None)
    if added and worker is not None:
        worker.notify(added)  # vectors for the imported memories, in the background
    return report


def _insert_document(conn: sqlite3.Connection, bank_id: str, doc: dict[str, Any], now: str) -> bool:
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


def _insert_memory(
    conn: sqlite3.Connection, bank_id: str, rowid: int, mem: dict[str, Any], now: str, script_terms: Any
) -> None:
    text, context = str(mem["text"]), str(mem.get("context") or "")
    kind = mem.get("type") if mem.get("type") in _TYPES else "world"
    source = mem.get("source") if mem.get("source") in _SOURCES else "import"
    importance = mem.get("importance")
    importance = min(1.0, max(0.0, float(importance))) if isinstance(importance, int | float) else 0.5
    seq = mem.get("seq") if isinstance(mem.get("seq"), int) else 0
    conn.execute(
        "INSERT INTO units(rowid, id, bank_id, document_id, seq, content, context, type, source, importance, "
        "created_at, occurred_at, metadata_json, valid_until, superseded_by, script_terms) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
            str(mem.get("created_at") or now),
            mem.get("occurred_at"),
            orjson.dumps(dict(mem.get("metadata") or {})).decode(),
            mem.get("valid_until"),
            mem.get("superseded_by"),
            script_terms(text, context),
        ),
    )
    conn.executemany(
        "INSERT OR IGNORE INTO unit_tags(unit_id, bank_id, tag) VALUES (?, ?, ?)",
        [(mem["id"], bank_id, str(t)) for t in dict.fromkeys(mem.get("tags") or [])],
    )


# -- import: Hindsight server -----------------------------------------------------------------------
def import_by_queue(rt: SessionRuntime, bank_id: str, parsed: Parsed) -> dict[str, Any]:
    """Each document retained again (``replace``, same id: a second import replaces, adds nothing),
    through the queue so tombstones and redaction apply; memories without document text go as
    their own items."""
    from ...retain.delivery import flush_now
    from ...retain.jobs import new_job

    items: list[dict[str, Any]] = []
    with_text = {d["document_id"] for d in parsed.documents if str(d.get("text") or "").strip()}
    for doc in parsed.documents:
        if doc["document_id"] in with_text:
            items.append(_item(rt, bank_id, doc["document_id"], str(doc["text"]), doc))
    for mem in parsed.memories:
        if mem["document_id"] not in with_text:
            items.append(_item(rt, bank_id, f"{mem['document_id']}:{mem['id']}", str(mem["text"]), mem))
    if items:
        rt.queue().enqueue(new_job(bank_id, "import", items, False))
        flush_now(rt, budget_ms=120_000)
    note = "the Hindsight server extracts its memories from the imported documents again (ids are its own)"
    return {"memories_added": 0, "documents_added": len(items), "skipped": 0, "forgotten": 0, "note": note}


def _item(rt: SessionRuntime, bank_id: str, document_id: str, text: str, src: dict[str, Any]) -> dict[str, Any]:
    from ...retain.jobs import build_item

    meta = src.get("metadata") if isinstance(src.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    return build_item(
        rt,
        bank_id=bank_id,
        content=text,
        context=str(src.get("context") or ""),
        document_id=document_id,
        update_mode="replace",
        tags=[str(t) for t in src.get("tags") or []],
        metadata={str(k): str(v) for k, v in meta.items()},
        timestamp=src.get("created_at") if isinstance(src.get("created_at"), str) else None,
    )


# -- Markdown ------------------------------------------------------------------------------------------
def markdown_view(backend: Any, bank_id: str) -> tuple[str, int]:
    """The bank for reading: one section per document (newest first), memories by day inside."""
    browser = browser_for(backend)
    records: list[MemoryRecord] = []
    offset: int | None = 0
    while offset is not None:
        page = browser.list_page(bank_id, MemoryFilter(limit=500, offset=offset))
        records.extend(page.records)
        offset = page.next_offset
    by_doc: dict[str, list[MemoryRecord]] = defaultdict(list)
    for rec in records:  # newest first already: documents appear in order of their newest memory
        by_doc[rec.document_id or "(no document)"].append(rec)
    out = [
        f"# Memories of bank `{bank_id}`",
        "",
        f"_{len(records)} memories, generated {_now()}; "
        "regenerate with `/hindsight:memories markdown` (edits to this file are not read back)._",
        "",
    ]
    for doc, recs in by_doc.items():
        first = recs[-1]
        out.append(f"## {_md(doc)}")
        facts = [f"session `{first.session_id}`" if first.session_id else "", f"{len(recs)} memories"]
        tags = [t for t in first.tags if not t.startswith(("source:", "harness:"))]
        if tags:
            facts.append("tags: " + ", ".join(f"`{t}`" for t in tags))
        out += ["", "; ".join(f for f in facts if f), ""]
        days: dict[str, list[MemoryRecord]] = defaultdict(list)
        for rec in sorted(recs, key=lambda r: (r.occurred_at or r.created_at or "", r.position or 0)):
            days[(rec.occurred_at or rec.created_at or "undated")[:10]].append(rec)
        for day, items in days.items():
            out += [f"### {day}", ""]
            for rec in items:
                when = (rec.occurred_at or rec.created_at or "")[11:16]
                mark = "" if rec.valid else " _(invalidated)_"
                out.append(f"- {_md(' '.join(rec.text.split()))}{mark} <sub>{when} `{rec.id}`</sub>")
            out.append("")
    return "\n".join(out).rstrip("\n") + "\n", len(records)


def _md(text: str) -> str:
    """Text that cannot open a heading, a tag or a code span in the view."""
    return text.replace("<", "&lt;").replace("`", "'")
