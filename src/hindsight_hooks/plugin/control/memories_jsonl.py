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

from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from ...backends.browse import MemoryRecord, all_records, browser_for
from ...timefmt import iso_now

if TYPE_CHECKING:
    from ..runtime import SessionRuntime

FORMAT = "hindsight-hooks-memories"
VERSION = 1
_TYPES = ("world", "experience")
_SOURCES = ("tool", "transcript", "import")


def _line(obj: dict[str, Any]) -> bytes:
    return orjson.dumps(obj) + b"\n"


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
    browser = browser_for(backend)
    header = {
        "kind": "header",
        "format": FORMAT,
        "version": VERSION,
        "bank_id": bank_id,
        "backend": browser.kind,
        "exported_at": iso_now(),
    }
    documents, memories = browser.export_records(bank_id)
    return [
        _line(header),
        *(_line({"kind": "document", **doc}) for doc in documents),
        *(_line({"kind": "memory", **mem}) for mem in memories),
    ]


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
    """What a tombstone looks at, in the wire item's shape; the record's ``created_at`` is its
    time, so an export made before a forget stays out and one made after keeps what is newer
    (ADR 173)."""
    return {
        "document_id": obj.get("document_id"),
        "tags": obj.get("tags") or [],
        "metadata": obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {},
        "content": obj.get("text") or "",
        "timestamp": obj.get("created_at"),
    }


# -- import ------------------------------------------------------------------------------------------
def import_parsed(rt: SessionRuntime, backend: Any, bank_id: str, parsed: Parsed) -> dict[str, Any]:
    """Into a store that takes records as exported (same ids and times), else through the queue."""
    from ...queue.tombstones import matcher_for, read_tombstones, tombstone_path

    matcher = matcher_for(read_tombstones(tombstone_path(rt.resolve_path(rt.cfg.retain.queue_path))), bank_id)

    def dropped(record: dict[str, Any]) -> bool:
        return bool(matcher) and matcher.keeps_out(_as_item(record)) is not None

    report = browser_for(backend).import_records(bank_id, parsed.documents, parsed.memories, dropped)
    return report if report is not None else import_by_queue(rt, bank_id, parsed)


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
    records = all_records(browser_for(backend), bank_id)
    by_doc: dict[str, list[MemoryRecord]] = defaultdict(list)
    for rec in records:  # newest first already: documents appear in order of their newest memory
        by_doc[rec.document_id or "(no document)"].append(rec)
    out = [
        f"# Memories of bank `{bank_id}`",
        "",
        f"_{len(records)} memories, generated {iso_now()}; "
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
