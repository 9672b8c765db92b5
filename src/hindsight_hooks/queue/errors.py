"""The queue's exceptions.

Messages name files and counts, never job content: they end up in notices, status lines and
logs, which must not carry transcript text (docs/design.md#secrets).
"""

from __future__ import annotations

from ..errors import HindsightHooksError


class QueueError(HindsightHooksError):
    """Any failure of the durable retain queue; nothing acknowledged is lost when it is raised."""


class QueueFullError(QueueError):
    """Back-pressure: the active file would grow past ``queue.max_active_bytes``.

    Auto-retain keeps its cursor (so the delta is retried next turn); tools report the error.
    """


class LockTimeoutError(QueueError):
    """The queue lock was not acquired within ``queue.lock_timeout_ms``."""


class QueueClosedError(QueueError):
    """The queue was closed at shutdown; later writes are refused rather than silently lost."""

    def __init__(self, message: str = "Hindsight retain queue is closed.") -> None:
        super().__init__(message)


class MalformedQueueError(QueueError):
    """The strict reader found lines it cannot parse (the tolerant reader quarantines them instead)."""
