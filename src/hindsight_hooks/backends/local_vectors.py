"""Optional dense vectors for the local store: float32 blobs via ``array``, cosine in pure Python.

Embeddings are never required (docs/backends.md#embedded-store): an embedder is any object with
``embed(texts) -> list[list[float]]``. Vectors are stored unit-normalised, so cosine
similarity is a dot product; no numpy, no SQLite extension.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

NEWEST_FOR_DENSE = 500


@runtime_checkable
class Embedder(Protocol):
    def embed(self, texts: list[str]) -> list[list[float]]: ...


def model_name(embedder: object) -> str:
    """A label stored with each vector, so vectors of another model are never compared."""
    for attr in ("model", "model_name", "name"):
        value = getattr(embedder, attr, None)
        if isinstance(value, str) and value:
            return value[:200]
    return type(embedder).__name__


def normalise(vector: Sequence[float]) -> list[float] | None:
    """Unit length, or None for a zero/empty/non-finite vector (it cannot rank anything)."""
    try:
        values = [float(v) for v in vector]
    except (TypeError, ValueError):
        return None
    norm = math.sqrt(math.fsum(v * v for v in values))
    if not values or not math.isfinite(norm) or norm == 0.0:
        return None
    return [v / norm for v in values]


def to_blob(vector: Sequence[float]) -> bytes:
    return array("f", vector).tobytes()


def from_blob(blob: object) -> list[float]:
    """The stored vector, or [] when the row holds no whole float32 vector (a damaged or foreign
    value): :func:`cosine` of vectors of different lengths is 0, so such a unit is found by its
    words only."""
    if not isinstance(blob, bytes) or len(blob) % 4:
        return []
    out = array("f")
    out.frombytes(blob)
    return out.tolist()


def cosine(unit_a: Sequence[float], unit_b: Sequence[float]) -> float:
    """Dot product of two unit vectors, clamped to [0, 1] (opposite meaning = no similarity)."""
    if len(unit_a) != len(unit_b):
        return 0.0
    dot = math.fsum(a * b for a, b in zip(unit_a, unit_b, strict=True))
    return min(1.0, max(0.0, dot))
