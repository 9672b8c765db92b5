"""Browsing a Hindsight server's bank: the ``MemoryBrowser`` over its HTTP API 1.1.0 (ADR 130).

What the API offers, and what we do with it:

- ``GET …/memories/list`` (filters: text, document, tags, time window; paged, newest first) → list;
- ``GET …/memories/{id}`` → show; ``PATCH …/memories/{id}`` with ``text`` → edit (the server
  records ``edited_at`` itself and keeps its own audit trail);
- ``GET …/documents?tags=…`` and ``DELETE …/documents/{id}`` → forget by document, session, tag;
- there is **no endpoint that deletes one memory**: forgetting by id or query sets the memory's
  curation state to ``invalidated`` (recall stops returning it; the server keeps it for audit)
  and the command says so in plain words.
"""

from __future__ import annotations

from typing import Any

from .base import BackendError
from .browse import Dropped, EditEntry, MemoryFilter, MemoryPage, MemoryRecord, Record, all_records
from .hindsight import HindsightBackend
from .hindsight_wire import bank_path, seg

TIMEOUT_S = 30.0
NO_SINGLE_DELETE = (
    "the Hindsight server (API 1.1.0) has no way to delete a single memory: {n} were invalidated instead "
    "(recall no longer returns them; the server keeps them for audit). Forget their document to delete them."
)


class HindsightBrowser:
    """Memories of a Hindsight bank, as the memories commands see them."""

    kind = "hindsight"

    def __init__(self, backend: HindsightBackend) -> None:
        self.backend = backend

    def _get(self, op: str, path: str, params: dict[str, Any] | None = None) -> Any:
        return self.backend._call(op, "GET", path, params=params, timeout_s=TIMEOUT_S, retry=True)

    def _patch_memory(self, op: str, bank_id: str, memory_id: str, body: dict[str, Any]) -> bool:
        """PATCH one memory; ``False`` when the server has no such memory (404)."""
        try:
            self.backend._call(op, "PATCH", bank_path(bank_id, "memories", seg(memory_id)), body=body,
                               timeout_s=TIMEOUT_S)  # fmt: skip
        except BackendError as exc:
            if exc.kind == "not_found":
                return False
            raise
        return True

    def list_page(self, bank_id: str, flt: MemoryFilter) -> MemoryPage:
        flt = flt.bounded()
        tags = list(flt.tags) + ([f"session:{flt.session_id}"] if flt.session_id else [])
        params: dict[str, Any] = {
            "q": flt.text,
            "document_id": flt.document_id,
            "tags": tags or None,
            "tags_match": "all" if tags else None,
            "time_field": "created_at" if (flt.since or flt.until) else None,
            "start_date": flt.since,
            "end_date": flt.until,
            "limit": flt.limit,
            "offset": flt.offset,
        }
        try:
            data = self._get("Hindsight list memories", bank_path(bank_id, "memories", "list"), params)
        except BackendError as exc:
            if exc.kind == "not_found":  # a bank nothing was retained into yet
                return MemoryPage([], 0, flt.limit, flt.offset)
            raise
        items = data.get("items") if isinstance(data, dict) else None
        total = data.get("total") if isinstance(data, dict) else None
        records = [_record(bank_id, i) for i in items or [] if isinstance(i, dict)]
        return MemoryPage(records, total if isinstance(total, int) else None, flt.limit, flt.offset)

    def get(self, bank_id: str, memory_id: str) -> MemoryRecord | None:
        try:
            data = self._get("Hindsight get memory", bank_path(bank_id, "memories", seg(memory_id)))
        except BackendError as exc:
            if exc.kind == "not_found" or exc.status in (400, 422):
                return None
            raise
        return _record(bank_id, data) if isinstance(data, dict) and data.get("id") else None

    def history(self, bank_id: str, memory_id: str) -> list[EditEntry]:
        """The server keeps an edit's trail itself and shows only ``edited_at`` for a fact."""
        return []

    def edit(self, bank_id: str, memory_id: str, text: str) -> bool:
        body = {"text": text, "reason": "edited with hindsight-hooks"}
        try:
            return self._patch_memory("Hindsight edit memory", bank_id, memory_id, body)
        except BackendError as exc:
            if exc.status in (400, 422):
                return False
            raise

    def documents_with(self, bank_id: str, *, session_id: str | None = None, tag: str | None = None) -> list[str]:
        wanted = f"session:{session_id}" if session_id is not None else str(tag)
        found: list[str] = []
        offset = 0
        while True:
            params = {"tags": [wanted], "tags_match": "all", "limit": 100, "offset": offset}
            try:
                data = self._get("Hindsight list documents", bank_path(bank_id, "documents"), params)
            except BackendError as exc:
                if exc.kind == "not_found":
                    return found
                raise
            items = [i for i in (data.get("items") or []) if isinstance(i, dict)] if isinstance(data, dict) else []
            found.extend(str(i["id"]) for i in items if i.get("id"))
            if len(items) < 100:
                return found
            offset += 100

    def delete_documents(self, bank_id: str, document_ids: list[str]) -> int:
        n = 0
        for doc in document_ids:
            try:
                out = self.backend.delete_document(bank_id, doc, timeout_s=TIMEOUT_S)
            except BackendError as exc:
                if exc.kind == "not_found":
                    continue
                raise
            deleted = out.get("memory_units_deleted")
            n += deleted if isinstance(deleted, int) else 0
        return n

    def delete_memories(self, bank_id: str, memory_ids: list[str]) -> tuple[int, str | None]:
        body = {"state": "invalidated", "reason": "forgotten with hindsight-hooks"}
        n = sum(self._patch_memory("Hindsight invalidate memory", bank_id, memory_id, body) for memory_id in memory_ids)
        return n, (NO_SINGLE_DELETE.format(n=n) if memory_ids else None)

    def export_records(self, bank_id: str) -> tuple[list[Record], list[Record]]:
        """What the server's API shows: its memories, and each one's document once."""
        records = all_records(self, bank_id)
        documents: list[Record] = []
        seen: set[str] = set()
        for rec in records:
            if rec.document_id and rec.document_id not in seen:
                seen.add(rec.document_id)
                try:
                    d = self.backend.get_document(bank_id, rec.document_id, timeout_s=TIMEOUT_S)
                except BackendError:
                    d = {}
                documents.append(
                    {
                        "document_id": rec.document_id,
                        "text": str(d.get("original_text") or ""),
                        "context": "",
                        "tags": list(d.get("tags") or []),
                        "metadata": dict(d.get("document_metadata") or {}),
                        "created_at": d.get("created_at"),
                        "updated_at": d.get("updated_at"),
                    }
                )
        memories = [
            {
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
            for rec in records
        ]
        return documents, memories

    def import_records(
        self, bank_id: str, documents: list[Record], memories: list[Record], dropped: Dropped
    ) -> dict[str, Any] | None:
        """The server extracts its own memories from retained text: no record goes in as it is."""
        return None


def _record(bank_id: str, item: dict[str, Any]) -> MemoryRecord:
    meta = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    tags = [t for t in item.get("tags") or [] if isinstance(t, str)]
    session = meta.get("session_id") or next((t[8:] for t in tags if t.startswith("session:")), None)
    state = item.get("state")
    return MemoryRecord(
        id=str(item.get("id")),
        bank_id=bank_id,
        text=str(item.get("text") or ""),
        context=str(item.get("context") or ""),
        type=_s(item.get("fact_type") or item.get("type")),
        source=None,
        tags=tags,
        document_id=_s(item.get("document_id")),
        session_id=_s(session),
        session_file=_s(meta.get("session_file")),
        created_at=_s(item.get("created_at") or item.get("updated_at")),
        occurred_at=_s(item.get("mentioned_at") or item.get("date") or item.get("occurred_start")),
        importance=None,
        position=None,
        valid=state in (None, "", "valid"),
        edited_at=_s(item.get("edited_at")),
        metadata={str(k): v for k, v in meta.items()},
    )


def _s(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
