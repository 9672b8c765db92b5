"""The per-process recall cache (docs/recall.md#cache).

``context`` fires before *every* model call, and hosts retry turns (auto-continue, provider
errors). Re-recalling would cost a round trip and, worse, produce a block that differs by a
byte or a timestamp, defeating the provider's prompt cache. So a hit reuses the render, the
blocks, the failures and the timestamp the block was first injected with.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...hooks.messages import Message
from ...retain.injected import is_injected
from .render import BankBlock

DEFAULT_MAX_ENTRIES = 32
DEFAULT_TTL_MS = 60_000


def _monotonic_ms() -> float:
    return time.monotonic() * 1000.0


def _drop_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_drop_none(v) for v in value]
    return value


def canonical_json(value: Any) -> str:
    """Compact JSON with ``None`` fields omitted and keys sorted: one spelling per value."""
    return json.dumps(_drop_none(value), ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=str)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def last_user_content(messages: list[Message]) -> Any:
    """The content of the last real (non-injected) user message, or ``None`` when there is none."""
    for msg in reversed(messages):
        if isinstance(msg, dict) and msg.get("role") == "user" and not is_injected(msg):
            return msg.get("content")
    return None


@dataclass(frozen=True)
class CacheEntry:
    """What a hit reuses. Treat as read-only: the same objects are handed to every hit."""

    render: str
    blocks: list[BankBlock]
    failures: list[dict[str, Any]]
    timestamp_ms: int
    """The first-seen injection timestamp: reusing it keeps the injected message byte-identical."""
    stored_at_ms: float
    count: int = 0
    """How many items the render shows (the ``recalled:<n>`` status of a hit)."""


class RecallCache:
    """A small thread-safe LRU with a TTL; ``clock`` returns milliseconds (monotonic by default)."""

    def __init__(
        self,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        ttl_ms: float = DEFAULT_TTL_MS,
        clock: Callable[[], float] = _monotonic_ms,
    ) -> None:
        self.max_entries = max(1, max_entries)
        self.ttl_ms = ttl_ms
        self._clock = clock
        self._entries: OrderedDict[str, CacheEntry] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(banks_and_filters: Any, last_user_content: Any) -> str:
        """Cache key: the scopes (banks + tag filters) plus a hash of the last user message's content.

        The content is hashed first so the key never embeds transcript text.
        """
        content_hash = _sha256(canonical_json(last_user_content))
        return _sha256(canonical_json([banks_and_filters, content_hash]))

    def get(self, key: str) -> CacheEntry | None:
        """The live entry for ``key`` (refreshing its LRU position), or ``None``; expired entries are dropped."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            if self._clock() - entry.stored_at_ms >= self.ttl_ms:
                del self._entries[key]
                return None
            self._entries.move_to_end(key)
            return entry

    def put(
        self,
        key: str,
        *,
        render: str,
        blocks: list[BankBlock],
        failures: list[dict[str, Any]],
        timestamp_ms: int,
        count: int = 0,
    ) -> CacheEntry | None:
        """Store a recall; returns the entry, or ``None`` when it is not cacheable.

        A recall where every bank failed (no block, ≥1 failure) is never cached: the next turn
        must try the server again rather than replay an outage.
        """
        if failures and not blocks:
            return None
        with self._lock:
            entry = CacheEntry(
                render=render,
                blocks=list(blocks),
                failures=list(failures),
                timestamp_ms=timestamp_ms,
                stored_at_ms=self._clock(),
                count=count,
            )
            self._entries[key] = entry
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
            return entry

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._entries
