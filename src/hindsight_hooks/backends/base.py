"""The ``MemoryBackend`` protocol both backends implement, and the types they exchange.

One protocol, two implementations with the same semantics (the Hindsight HTTP server and
the embedded SQLite store), so the queue, hooks, commands and tools never care which one
is active. Items travel in the Hindsight wire shape (docs/backends.md#hindsight-server): plain dicts with
``content``, ``context``, ``document_id``, ``update_mode``, ``tags``, ``metadata``, ...
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from ..errors import HindsightHooksError
from .capabilities import Capabilities

ErrorKind = Literal["transient", "auth", "permanent", "not_found", "timeout", "aborted"]
Budget = Literal["low", "mid", "high"]


class BackendError(HindsightHooksError):
    """Every backend failure, classified so the queue knows whether to retry.

    ``detail`` is already redacted and at most 500 characters; it never carries transcript text.
    """

    def __init__(self, operation: str, kind: ErrorKind, detail: str, status: int | None = None) -> None:
        self.operation = operation
        self.kind: ErrorKind = kind
        self.detail = detail
        self.status = status
        super().__init__(self.message)

    @property
    def message(self) -> str:
        return f"{self.operation} failed: {self.detail}"

    def __str__(self) -> str:
        return self.message


def server_unreachable(exc: BaseException) -> bool:
    """The backend gave no answer at all: a timeout, or a transport failure without a response
    (refused, reset, hung up). Only this cools a bank down; a server that answered — even with a
    5xx — is tried again on the next turn (ADR 069)."""
    if not isinstance(exc, BackendError):
        return False
    return exc.kind == "timeout" or (exc.kind == "transient" and exc.status is None)


@dataclass
class BankSpec:
    """What a bank is created with (used only at creation; existing banks are never modified)."""

    retain_mission: str = ""
    reflect_mission: str = ""
    observations_mission: str = ""
    retain_extraction_mode: str = "concise"
    enable_observations: bool = True
    retain_structured_chunk_size: int | None = None


MEMORY_ITEM_FIELDS: tuple[str, ...] = (
    "content",
    "context",
    "timestamp",
    "document_id",
    "update_mode",
    "tags",
    "metadata",
    "observation_scopes",
    "entities",
    "strategy",
)
"""The fields of one retain item, in their canonical order (Hindsight's ``MemoryItem``,
docs/backends.md#hindsight-server).
The queue writes items in this order and a backend forwards only these, so queue bookkeeping
or a future job field never reaches a server by accident."""


@dataclass
class RetainOutcome:
    """Aggregates of one delivered batch (never content)."""

    items_count: int | None = None
    operation_ids: list[str] = field(default_factory=list)
    tokens: int | None = None
    unit_ids: list[str] = field(default_factory=list)

    def as_outcome(self) -> dict[str, Any]:
        """The receipt/flush outcome shape: ``{items_count?, operations?, tokens?}``."""
        out: dict[str, Any] = {}
        if self.items_count is not None:
            out["items_count"] = self.items_count
        if self.operation_ids:
            out["operations"] = list(self.operation_ids)
        if self.tokens is not None:
            out["tokens"] = self.tokens
        return out


@dataclass(frozen=True)
class InContext:
    """What the model reads this turn besides the block: the session's live document and the
    messages the host passed (ADR 183).

    A memory whose words are one of these messages tells the model nothing it does not already
    read, so a store that can tell (the embedded one, whose units are the messages themselves)
    leaves it out of the block and shows the next memory instead. The Hindsight server's facts are
    rewritten by its model and never match a message, so that backend ignores this.
    """

    document_id: str
    messages: Sequence[Mapping[str, Any]]


@dataclass
class RecallRequest:
    """A recall against one bank. ``tag_groups`` is the full scope+caller filter list (AND-ed);
    ``in_context``, when given, is what the model already reads (:class:`InContext`)."""

    query: str
    budget: Budget = "mid"
    max_tokens: int = 800
    types: list[str] | None = None
    tag_groups: list[dict[str, Any]] | None = None
    query_timestamp: str | None = None
    include_source_facts: bool = False
    max_source_facts_tokens: int = 4096
    limit: int | None = None
    in_context: InContext | None = None


def same_text_key(text: str) -> str:
    """When two memories read as the same to whoever is shown them: lower-cased text with its
    whitespace collapsed (docs/recall.md#quality-filter's duplicate rule). The plugin's quality filter, the
    recall tool's merge and the embedded store's ranking (ADR 055) must agree on it."""
    return " ".join(text.lower().split())


@dataclass
class MemoryHit:
    """One recalled memory. Hindsight fills ``mentioned_at``/``evidence``; local fills ``score``..."""

    text: str
    id: str | None = None
    type: str | None = None
    tags: list[str] = field(default_factory=list)
    mentioned_at: str | None = None
    document_id: str | None = None
    evidence: list[str] = field(default_factory=list)
    score: float | None = None
    source: str | None = None
    created_at: str | None = None
    importance: float | None = None

    @property
    def said_at(self) -> str | None:
        """When the memory was said: ``mentioned_at``, else when it was stored (ADR 174)."""
        return self.mentioned_at or self.created_at


@dataclass
class RecallResult:
    hits: list[MemoryHit] = field(default_factory=list)


@dataclass
class ReflectRequest:
    query: str
    budget: Budget = "mid"
    context: str | None = None
    max_tokens: int | None = None
    response_schema: dict[str, Any] | None = None
    include_facts: bool = False
    tag_groups: list[dict[str, Any]] | None = None


@dataclass
class ReflectResult:
    text: str
    structured_output: Any = None


@runtime_checkable
class MemoryBackend(Protocol):
    """What the queue, hooks, commands and tools need from a memory store.

    ``timeout_s`` is the caller's remaining budget (``None`` = the backend's own default);
    ``signal`` set means abort. Every failure raises ``BackendError``. ``capabilities`` says
    what else it can do; callers ask it, never ``name`` (ADR 140).
    """

    name: str  # "hindsight" | "local"

    @property
    def capabilities(self) -> Capabilities: ...

    def health(self, timeout_s: float | None = None) -> dict[str, Any]: ...

    def ensure_bank(self, bank_id: str, spec: BankSpec, timeout_s: float | None = None) -> bool:
        """Create the bank if missing; returns True when it was created now."""
        ...

    def retain_batch(
        self,
        bank_id: str,
        items: list[dict[str, Any]],
        *,
        operation_id: str,
        async_: bool = True,
        timeout_s: float | None = None,
    ) -> RetainOutcome: ...

    def recall(
        self,
        bank_id: str,
        request: RecallRequest,
        timeout_s: float | None = None,
        signal: threading.Event | None = None,
    ) -> RecallResult: ...

    def reflect(
        self,
        bank_id: str,
        request: ReflectRequest,
        timeout_s: float | None = None,
        signal: threading.Event | None = None,
    ) -> ReflectResult: ...

    def close(self) -> None: ...
