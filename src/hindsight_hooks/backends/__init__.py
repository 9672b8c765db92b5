"""Memory backends: the protocol, the Hindsight HTTP client and the embedded SQLite store.

Implementations are imported lazily by callers (``backends.hindsight``, ``backends.local``).
"""

from .base import (
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

__all__ = [
    "BackendError",
    "BankSpec",
    "MemoryBackend",
    "MemoryHit",
    "RecallRequest",
    "RecallResult",
    "ReflectRequest",
    "ReflectResult",
    "RetainOutcome",
]
