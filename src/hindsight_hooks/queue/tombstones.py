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

A tombstone forgets the past, not the future (ADR 173): it keeps out an item only when the item
was said or queued at or before the tombstone's ``created_at``. What comes back after a forget
is old (a replayed transcript keeps its messages' times, a re-import its records' times, a job
queued before the forget its ``created_at``); what a person says or retains after it is new
and is kept, even in the same session or with the same text. Times are compared as instants
(parsed, to the millisecond), never as strings; an item or tombstone without a readable time
is kept out, as before (the safe side).
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import orjson

from ..backends.base import same_text_key
from ..fsutil import atomic_write_bytes
from ..timefmt import instant_ms

FILE_NAME = "tombstones.json"
KINDS = ("session", "document", "tag", "text")
ALWAYS = math.inf
"""The cutoff of a tombstone without a readable ``created_at``: it keeps out items of any time
(what every tombstone did before ADR 173, and what a hand-written one without a time still does)."""


@dataclass(frozen=True)
class Sieved:
    """One job's items after the tombstones: what goes on, and how many were kept out and by a
    forget of when (so the retain that asked for them can say so instead of "stored")."""

    kept: list[dict[str, Any]]
    forgotten: int = 0
    forgotten_at: str = ""
    """The newest ``created_at`` among the tombstones that kept an item out ("" when undated)."""


ItemFilter = Callable[[str, list[dict[str, Any]], object], Sieved]
"""``(bank_id, items, the job's created_at)`` → the items a delivery may send."""


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
    """Add ``stones``; returns how many were new. Callers hold the queue lock, so two processes
    never interleave their read-modify-write.

    A stone already there (same bank, kind and value) takes the newer ``created_at``: a second
    forget of the same session must also keep out what was retained between the two forgets."""
    with _write_lock:
        try:
            existing = read_tombstones(path)
        except (ValueError, orjson.JSONDecodeError):
            _quarantine(path)
            existing = []
        index = {(t.bank_id, t.kind, t.value): n for n, t in enumerate(existing)}
        added = 0
        changed = False
        for stone in stones:
            key = (stone.bank_id, stone.kind, stone.value)
            at = index.get(key)
            if at is None:
                index[key] = len(existing)
                existing.append(stone)
                added += 1
                changed = True
            elif _later(stone.created_at, existing[at].created_at):
                existing[at] = replace(existing[at], created_at=stone.created_at)
                changed = True
        if changed:
            body = {"tombstones": [t.as_dict() for t in existing]}
            atomic_write_bytes(path, orjson.dumps(body, option=orjson.OPT_INDENT_2), 0o600)
        return added


def _later(new: str, old: str) -> bool:
    """Whether ``new`` moves a stone's cutoff on. An undated stone keeps out everything already,
    so it stays undated."""
    return cutoff_ms(old) != ALWAYS and cutoff_ms(new) > cutoff_ms(old)


def _quarantine(path: Path) -> None:
    """Keep an unreadable file beside, under a new name (never delete what we cannot parse)."""
    import time

    from ..fsutil import move_aside

    move_aside(path, time.strftime("%Y%m%dT%H%M%S"))


def cutoff_ms(created_at: str) -> float:
    """A tombstone's time as epoch milliseconds; ``ALWAYS`` when it has none we can read."""
    ms = instant_ms(created_at)
    return ALWAYS if ms is None else float(ms)


def said_at_ms(item: dict[str, Any], queued_at: object = None) -> float | None:
    """The earliest time an item can be shown to have been said, in epoch milliseconds.

    The earliest of: the item's ``timestamp`` (a message's time for imports, the record's for a
    re-import, the retain's own for the tools), the times of the transcript messages inside an
    automatic retain's content (its ``timestamp`` is when the run was retained, so a transcript
    replayed after a forget would otherwise look new), and ``queued_at``, the job's
    ``created_at`` (a job queued before a forget is old, whatever its items say). Earliest,
    because one old part is enough to make an item something the forget already covered.
    ``None`` when there is no readable time at all. Floored to the millisecond, as tombstone
    times are, so the same millisecond counts as "at or before" (kept out: the safe side)."""
    times = [instant_ms(item.get("timestamp")), instant_ms(queued_at), *_message_times(item.get("content"))]
    known = [t for t in times if t is not None]
    return float(min(known)) if known else None


def _message_times(content: object) -> list[int | None]:
    """The ``timestamp`` of every message of a projected transcript (``projection_json``: a JSON
    array of message objects); nothing for any other content. Only read for an item a tombstone
    already matches by key, so an ordinary delivery never parses its content."""
    if not isinstance(content, str) or not content.lstrip().startswith("["):
        return []
    try:
        parsed = orjson.loads(content)
    except orjson.JSONDecodeError:
        return []
    if not isinstance(parsed, list):
        return []
    return [instant_ms(m.get("timestamp")) for m in parsed if isinstance(m, dict)]


@dataclass
class Matcher:
    """The tombstones of one bank, indexed for a per-item check: each key to its newest cutoff
    (epoch ms) and the ``created_at`` it came from."""

    sessions: dict[str, tuple[float, str]] = field(default_factory=dict)
    documents: dict[str, tuple[float, str]] = field(default_factory=dict)
    tags: dict[str, tuple[float, str]] = field(default_factory=dict)
    texts: dict[str, tuple[float, str]] = field(default_factory=dict)

    @classmethod
    def of(cls, stones: list[Tombstone]) -> Matcher:
        out = cls()
        by_kind = {"session": out.sessions, "document": out.documents, "tag": out.tags, "text": out.texts}
        for stone in stones:
            table = by_kind[stone.kind]
            cut = (cutoff_ms(stone.created_at), stone.created_at)
            if stone.value not in table or cut[0] > table[stone.value][0]:
                table[stone.value] = cut
        return out

    def __bool__(self) -> bool:
        return bool(self.sessions or self.documents or self.tags or self.texts)

    def _newest(self, item: dict[str, Any]) -> tuple[float, str] | None:
        """The newest cutoff among the tombstones whose key the item has, whatever its time."""
        tags = [t for t in item.get("tags") or [] if isinstance(t, str)]
        meta = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
        assert isinstance(meta, dict)
        document_id, session_id = item.get("document_id"), meta.get("session_id")
        hits: list[tuple[float, str] | None] = [self.tags.get(t) for t in tags]
        if isinstance(document_id, str):
            hits.append(self.documents.get(document_id))
        if self.sessions:
            if isinstance(session_id, str):
                hits.append(self.sessions.get(session_id))
            hits += [self.sessions.get(t.removeprefix("session:")) for t in tags if t.startswith("session:")]
        if self.texts:
            hits.append(self.texts.get(text_key(str(item.get("content") or ""))))
        found = [h for h in hits if h is not None]
        return max(found, key=lambda h: h[0]) if found else None

    def matches(self, item: dict[str, Any]) -> bool:
        """Whether a tombstone's key covers the item, whatever its time: what a forget removes
        from the queue at the moment it is written (everything queued then predates it)."""
        return self._newest(item) is not None

    def keeps_out(self, item: dict[str, Any], queued_at: object = None) -> str | None:
        """The ``created_at`` of the forget that keeps ``item`` out ("" when undated), or
        ``None`` when it may pass: no key matches, or it was said after every matching forget."""
        newest = self._newest(item)
        if newest is None:
            return None
        cutoff, created_at = newest
        said = said_at_ms(item, queued_at)
        return created_at if said is None or said <= cutoff else None


def matcher_for(stones: list[Tombstone], bank_id: str) -> Matcher:
    return Matcher.of([t for t in stones if t.bank_id == bank_id])


def sieve(matcher: Matcher, items: list[dict[str, Any]], queued_at: object = None) -> Sieved:
    """``items`` without those a forget keeps out, with how many and by the newest such forget."""
    if not matcher:
        return Sieved(items)
    kept: list[dict[str, Any]] = []
    dates: list[str] = []
    for item in items:
        when = matcher.keeps_out(item, queued_at)
        if when is None:
            kept.append(item)
        else:
            dates.append(when)
    return Sieved(kept, len(dates), max(dates, key=cutoff_ms_or_zero, default=""))


def cutoff_ms_or_zero(created_at: str) -> float:
    """For picking the newest date to name: an undated stone names no date."""
    value = cutoff_ms(created_at)
    return 0.0 if value == ALWAYS else value


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

    def keep(bank_id: str, items: list[dict[str, Any]], queued_at: object = None) -> Sieved:
        return sieve(matcher_for(stones, bank_id), items, queued_at)

    return keep
