"""Browsing and owning stored memories (``/hindsight:memories``, docs/commands.md): the shared types.

Recall answers a question; browsing answers "what do you hold about me?". Both backends offer
the same operations through a ``MemoryBrowser`` (``browser_for``): a filtered, paged list
newest first, one memory with its history, an edit, and deletion by memory or by document.
Where the Hindsight server has no endpoint for an operation the browser raises ``Unsupported``
with a sentence saying so, and the command shows that sentence as it is (ADR 130).

This module and the two browsers are imported only by the commands, never on the hook path.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from .base import BackendError

DEFAULT_PAGE = 20
MAX_PAGE = 500


class Unsupported(BackendError):
    """The backend cannot do this at all (not a failure worth retrying)."""

    def __init__(self, operation: str, sentence: str) -> None:
        super().__init__(operation, "permanent", sentence)
        self.sentence = sentence

    @property
    def message(self) -> str:
        return self.detail


@dataclass
class MemoryFilter:
    """What ``list`` selects; every given field must hold (AND). ``since`` is inclusive,
    ``until`` exclusive, both compared with the memory's stored time as ISO text."""

    tags: list[str] = field(default_factory=list)
    document_id: str | None = None
    session_id: str | None = None
    since: str | None = None
    until: str | None = None
    text: str | None = None
    limit: int = DEFAULT_PAGE
    offset: int = 0

    def bounded(self) -> MemoryFilter:
        """The same filter with a page size and offset in range."""
        out = MemoryFilter(**asdict(self))
        out.limit = max(1, min(MAX_PAGE, int(self.limit)))
        out.offset = max(0, int(self.offset))
        return out


@dataclass
class MemoryRecord:
    """One stored memory as a person sees it. ``position`` is the memory's place in its
    document (0 = first): with ``document_id`` and ``session_file`` it points back at the
    transcript it came from."""

    id: str
    bank_id: str
    text: str
    context: str = ""
    type: str | None = None
    source: str | None = None
    tags: list[str] = field(default_factory=list)
    document_id: str | None = None
    session_id: str | None = None
    session_file: str | None = None
    created_at: str | None = None
    occurred_at: str | None = None
    importance: float | None = None
    position: int | None = None
    valid: bool = True
    edited_at: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class MemoryPage:
    records: list[MemoryRecord]
    total: int | None
    limit: int
    offset: int

    @property
    def next_offset(self) -> int | None:
        end = self.offset + len(self.records)
        if self.total is not None:
            return end if end < self.total else None
        return end if len(self.records) >= self.limit else None


@dataclass
class EditEntry:
    """One past edit: what the memory said before, and when it changed."""

    edited_at: str
    previous: str
    text: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


Record = dict[str, Any]
"""A document or memory as the export format carries it (its line without ``kind``, ADR 133)."""
Dropped = Callable[[Record], bool]
"""Which records were forgotten (the caller's tombstones) and must stay out of an import."""


class MemoryBrowser(Protocol):
    """What the memories commands need from a backend."""

    kind: str

    def list_page(self, bank_id: str, flt: MemoryFilter) -> MemoryPage: ...

    def get(self, bank_id: str, memory_id: str) -> MemoryRecord | None: ...

    def history(self, bank_id: str, memory_id: str) -> list[EditEntry]: ...

    def edit(self, bank_id: str, memory_id: str, text: str) -> bool: ...

    def documents_with(self, bank_id: str, *, session_id: str | None = None, tag: str | None = None) -> list[str]:
        """Documents holding a session's (or a tag's) memories: what forgetting it deletes."""
        ...

    def delete_documents(self, bank_id: str, document_ids: list[str]) -> int:
        """Delete whole documents with their memories; returns how many memories went."""
        ...

    def delete_memories(self, bank_id: str, memory_ids: list[str]) -> tuple[int, str | None]:
        """Remove single memories; returns the count and, when the backend can only retire
        them rather than delete them, a sentence saying so."""
        ...

    def export_records(self, bank_id: str) -> tuple[list[Record], list[Record]]:
        """The bank's documents and memories, as the export format carries them (ADR 133)."""
        ...

    def import_records(
        self, bank_id: str, documents: list[Record], memories: list[Record], dropped: Dropped
    ) -> dict[str, Any] | None:
        """Store exported records under their own ids (``dropped``: forgotten, kept out); ``None``
        when this store cannot take them as they are (the server extracts its own memories)."""
        ...


def all_records(browser: MemoryBrowser, bank_id: str) -> list[MemoryRecord]:
    """Every memory of the bank, newest first, page by page."""
    records: list[MemoryRecord] = []
    offset: int | None = 0
    while offset is not None:
        page = browser.list_page(bank_id, MemoryFilter(limit=500, offset=offset))
        records.extend(page.records)
        offset = page.next_offset
    return records


def browser_for(backend: object) -> MemoryBrowser:
    """The browser for a backend object (``Unsupported`` for a backend we do not know)."""
    from .local import LocalBackend

    if isinstance(backend, LocalBackend):
        from .local_browse import LocalBrowser

        return LocalBrowser(backend)
    from .hindsight import HindsightBackend

    if isinstance(backend, HindsightBackend):
        from .hindsight_browse import HindsightBrowser

        return HindsightBrowser(backend)
    raise Unsupported("memories", f"the {getattr(backend, 'name', 'current')} backend cannot list memories")
