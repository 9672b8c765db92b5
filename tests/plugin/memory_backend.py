"""A small in-memory ``MemoryBackend`` that lives only in the test suite (ADR 140).

It exists to show that the plugin works on a backend it has never heard of: the plugin reads
this backend's ``Capabilities`` and never its name. Its capabilities are chosen to differ from
the embedded store's (no word query, no ranked hits, no self-check), so a leftover
``if backend is local`` branch in the plugin would take the wrong path and the tests fail.

Memory is a dict shared by every session that uses the same ``MemoryData`` (like a file).
Recall matches by shared words; the tag filter is the package's own ``match_tag_groups``.
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hindsight_hooks.backends.base import (
    BackendError,
    BankSpec,
    MemoryBackend,
    MemoryHit,
    RecallRequest,
    RecallResult,
    ReflectRequest,
    ReflectResult,
    RetainOutcome,
)
from hindsight_hooks.backends.capabilities import Capabilities
from hindsight_hooks.backends.factory import BackendEntry
from hindsight_hooks.backends.tag_groups import match_tag_groups
from hindsight_hooks.config_model import Config

MEMORY_CAPS = Capabilities(label="memory", bounded_recall=True, append=True, edit=True, documents=True)


@dataclass
class Unit:
    id: str
    text: str
    tags: list[str]
    document_id: str | None
    importance: float = 0.5
    valid: bool = True


@dataclass
class MemoryData:
    """Everything the backend holds, plus a log of the calls it answered (for assertions)."""

    banks: dict[str, list[Unit]] = field(default_factory=dict)
    documents: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def texts(self, bank_id: str) -> list[str]:
        return [u.text for u in self.banks.get(bank_id, []) if u.valid]


def _words(text: str) -> set[str]:
    return {w for w in "".join(c.lower() if c.isalnum() else " " for c in text).split() if len(w) > 2}


class InMemoryBackend:
    name = "memory"

    def __init__(self, data: MemoryData, capabilities: Capabilities = MEMORY_CAPS) -> None:
        self.data = data
        self.capabilities = capabilities
        self.closed = False

    def _bank(self, operation: str, bank_id: str) -> list[Unit]:
        self.data.calls.append(operation)
        if self.closed:
            raise BackendError(operation, "permanent", "backend is closed")
        return self.data.banks.setdefault(bank_id, [])

    def health(self, timeout_s: float | None = None) -> dict[str, Any]:
        self.data.calls.append("health")
        return {"status": "healthy"}

    def ensure_bank(self, bank_id: str, spec: BankSpec, timeout_s: float | None = None) -> bool:
        with self.data.lock:
            created = bank_id not in self.data.banks
            self._bank("ensure_bank", bank_id)
            return created

    def retain_batch(
        self,
        bank_id: str,
        items: list[dict[str, Any]],
        *,
        operation_id: str,
        async_: bool = True,
        timeout_s: float | None = None,
    ) -> RetainOutcome:
        ids: list[str] = []
        with self.data.lock:
            units = self._bank("retain", bank_id)
            for item in items:
                text = str(item.get("content", ""))
                doc = item.get("document_id")
                unit = Unit(uuid.uuid4().hex[:16], text, list(item.get("tags") or []), doc)
                units.append(unit)
                ids.append(unit.id)
                if isinstance(doc, str):
                    parts = self.data.documents.setdefault((bank_id, doc), [])
                    if item.get("update_mode") != "append":
                        parts.clear()
                    parts.append(text)
        return RetainOutcome(items_count=len(items), unit_ids=ids)

    def recall(
        self,
        bank_id: str,
        request: RecallRequest,
        timeout_s: float | None = None,
        signal: threading.Event | None = None,
    ) -> RecallResult:
        wanted = _words(request.query)
        with self.data.lock:
            units = list(self._bank("recall", bank_id))
        hits = [
            MemoryHit(text=u.text, id=u.id, tags=list(u.tags), document_id=u.document_id, importance=u.importance)
            for u in units
            if u.valid and wanted & _words(u.text) and match_tag_groups(u.tags, request.tag_groups)
        ]
        return RecallResult(hits=hits[: request.limit or None])

    def reflect(
        self,
        bank_id: str,
        request: ReflectRequest,
        timeout_s: float | None = None,
        signal: threading.Event | None = None,
    ) -> ReflectResult:
        found = self.recall(bank_id, RecallRequest(query=request.query, tag_groups=request.tag_groups))
        return ReflectResult(text="; ".join(h.text for h in found.hits))

    # -- the UnitEditor view ------------------------------------------------------------------
    def _find(self, operation: str, bank_id: str, unit_id: str) -> Unit | None:
        return next((u for u in self._bank(operation, bank_id) if u.id == unit_id), None)

    def get_unit(self, bank_id: str, unit_id: str) -> MemoryHit | None:
        with self.data.lock:
            u = self._find("get_unit", bank_id, unit_id)
        return None if u is None else MemoryHit(text=u.text, id=u.id, tags=list(u.tags), document_id=u.document_id)

    def list_units(
        self,
        bank_id: str,
        limit: int,
        offset: int,
        tag_groups: list[dict[str, Any]] | None = None,
        *,
        include_invalid: bool = False,
    ) -> list[MemoryHit]:
        with self.data.lock:
            units = [
                u
                for u in reversed(self._bank("list_units", bank_id))
                if (include_invalid or u.valid) and match_tag_groups(u.tags, tag_groups)
            ]
        return [MemoryHit(text=u.text, id=u.id, tags=list(u.tags), document_id=u.document_id) for u in units][
            offset : offset + limit
        ]

    def update_unit(
        self, bank_id: str, unit_id: str, content: str | None = None, importance: float | None = None
    ) -> bool:
        with self.data.lock:
            u = self._find("update_unit", bank_id, unit_id)
            if u is None:
                return False
            if content is not None:
                u.text = content
            if importance is not None:
                u.importance = importance
            return True

    def forget_unit(self, bank_id: str, unit_id: str) -> bool:
        with self.data.lock:
            units = self._bank("forget_unit", bank_id)
            before = len(units)
            units[:] = [u for u in units if u.id != unit_id]
            return len(units) < before

    def invalidate_unit(self, bank_id: str, unit_id: str, replacement_id: str | None = None) -> bool:
        with self.data.lock:
            u = self._find("invalidate_unit", bank_id, unit_id)
            if u is None:
                return False
            u.valid = False
            return True

    # -- the DocumentReader view --------------------------------------------------------------
    def document_text(self, bank_id: str, document_id: str, timeout_s: float | None = None) -> str | None:
        with self.data.lock:
            self.data.calls.append("document_text")
            parts = self.data.documents.get((bank_id, document_id))
        return None if parts is None else "\n\n".join(parts)

    def close(self) -> None:
        self.closed = True


def memory_entry(data: MemoryData, capabilities: Capabilities = MEMORY_CAPS) -> BackendEntry:
    """The factory entry that builds an ``InMemoryBackend`` over ``data``."""

    def build(cfg: Config, api_key: str, local_path: Path) -> MemoryBackend:
        return InMemoryBackend(data, capabilities)

    return BackendEntry(
        capabilities=capabilities,
        title="In-memory test backend",
        summary="in-memory, test suite only",
        location_key="local.path",
        location=lambda _cfg, _path: "in-memory",
        build=build,
    )
