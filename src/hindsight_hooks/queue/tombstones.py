"""Tombstones: what a person forgot stays forgotten (``/hindsight:memories forget``, ADR 132).

Forgetting deletes what the store holds, but the same text can come back: a re-import of the
session, a retain cursor that lost its place and replays from evidence (ADR 066), a queued job
written before the forget. So a forget also writes a tombstone beside the queue
(``tombstones.json``), and every delivery drops the items a tombstone of their bank matches
before the backend sees them. Delivery is the one door all of those pass through, whichever
backend is active.

A tombstone matches an item by session (the ``session:<id>`` tag or ``metadata.session_id``),
by document id, by tag, or by its exact text (the ``same_text_key`` of a forgotten memory). The
file is JSON, written atomically 0600; one we cannot parse is moved aside and reported, never
silently dropped (then nothing is filtered until it is repaired, and ``doctor`` would say so).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..backends.base import same_text_key
from ..fsutil import atomic_write_bytes

FILE_NAME = "tombstones.json"
KINDS = ("session", "document", "tag", "text")
ItemFilter = Callable[[str, list[dict[str, Any]]], list[dict[str, Any]]]


def tombstone_path(queue_path: Path) -> Path:
    return Path(queue_path).parent / FILE_NAME


def text_key(text: str) -> str:
    """A forgotten text as a tombstone keeps it: a hash of the text as recall compares memories
    (``same_text_key``), so the file holds no memory text."""
    return hashlib.sha256(same_text_key(text).encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True)
class Tombstone:
    bank_id: str
    kind: str
    value: str
    created_at: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"bank_id": self.bank_id, "kind": self.kind, "value": self.value, "created_at": self.created_at}


def read_tombstones(path: Path) -> list[Tombstone]:
    """Every tombstone in ``path`` (none when it is missing). Raises ``ValueError`` when unreadable."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    parsed = orjson.loads(data) if data.strip() else {"tombstones": []}
    rows = parsed.get("tombstones") if isinstance(parsed, dict) else None
    if not isinstance(rows, list):
        raise ValueError(f"{path}: not a tombstone file")
    out = []
    for row in rows:
        if (
            isinstance(row, dict)
            and row.get("kind") in KINDS
            and all(isinstance(row.get(k), str) and row.get(k) for k in ("bank_id", "value"))
        ):
            out.append(Tombstone(row["bank_id"], row["kind"], row["value"], str(row.get("created_at") or "")))
    return out


_write_lock = threading.Lock()


def add_tombstones(path: Path, stones: Iterable[Tombstone]) -> int:
    """Add ``stones`` (duplicates skipped); returns how many were new. Callers hold the queue lock,
    so two processes never interleave their read-modify-write."""
    with _write_lock:
        try:
            existing = read_tombstones(path)
        except (ValueError, orjson.JSONDecodeError):
            _quarantine(path)
            existing = []
        seen = {(t.bank_id, t.kind, t.value) for t in existing}
        added: list[Tombstone] = []
        for stone in stones:
            key = (stone.bank_id, stone.kind, stone.value)
            if key not in seen:
                seen.add(key)
                added.append(stone)
        if added:
            body = {"tombstones": [t.as_dict() for t in [*existing, *added]]}
            atomic_write_bytes(path, orjson.dumps(body, option=orjson.OPT_INDENT_2), 0o600)
        return len(added)


def _quarantine(path: Path) -> None:
    """Keep an unreadable file beside, under a new name (never delete what we cannot parse)."""
    import time

    from ..fsutil import move_aside

    move_aside(path, time.strftime("%Y%m%dT%H%M%S"))


class Matcher:
    """The tombstones of one bank, indexed for a per-item check."""

    def __init__(self, stones: list[Tombstone]) -> None:
        self.sessions = {t.value for t in stones if t.kind == "session"}
        self.documents = {t.value for t in stones if t.kind == "document"}
        self.tags = {t.value for t in stones if t.kind == "tag"}
        self.texts = {t.value for t in stones if t.kind == "text"}

    def __bool__(self) -> bool:
        return bool(self.sessions or self.documents or self.tags or self.texts)

    def matches(self, item: dict[str, Any]) -> bool:
        tags = [t for t in item.get("tags") or [] if isinstance(t, str)]
        meta = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
        assert isinstance(meta, dict)
        if item.get("document_id") in self.documents:
            return True
        if self.tags.intersection(tags):
            return True
        if self.sessions and (
            meta.get("session_id") in self.sessions
            or any(t.removeprefix("session:") in self.sessions for t in tags if t.startswith("session:"))
        ):
            return True
        return bool(self.texts) and text_key(str(item.get("content") or "")) in self.texts


def matcher_for(stones: list[Tombstone], bank_id: str) -> Matcher:
    return Matcher([t for t in stones if t.bank_id == bank_id])


def delivery_filter(queue_path: Path) -> ItemFilter | None:
    """The filter a flush applies to each job's items, or ``None`` when nothing is forgotten.

    Costs one ``stat`` when there is no tombstone file (the usual case). An unreadable file
    filters nothing rather than blocking every delivery; ``memories forget`` repairs it."""
    path = tombstone_path(queue_path)
    try:
        stones = read_tombstones(path)
    except (OSError, ValueError):
        return None
    if not stones:
        return None

    def keep(bank_id: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        matcher = matcher_for(stones, bank_id)
        return [i for i in items if not matcher.matches(i)] if matcher else items

    return keep
