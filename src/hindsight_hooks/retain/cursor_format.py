"""The cursor store file's format: reading any known version, writing v3, the session cap.

Why apart from the store: reading decides what counts as corrupt (never overwritten, moved
aside, ADR-066) and how v1/v2 entries migrate; the store only adds the lock and the atomic
replace around it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

import orjson

from ..errors import HindsightHooksError
from .cursor_position import TAIL_WINDOW, CursorEntry, CursorState, LegacyCursor

STORE_VERSION = 3
MAX_SESSIONS = 500
"""Sessions kept per store; the oldest ``updated_at`` goes first."""


class CursorError(HindsightHooksError):
    """Base class: the cursor store could not be read or written."""


class CursorCorruptError(CursorError):
    """The store file is not a cursor store: not JSON, not an object with a ``sessions``
    object, or a version we do not know.

    It is never overwritten: ``agent_end`` moves it aside with
    :meth:`CursorStore.recover_from_corrupt` and resumes from what the queue and the memory
    store prove was retained (ADR-066). The message names the file and the position or shape,
    never its content.
    """

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"retain cursor store {path} is corrupt: {reason}")
        self.path = path
        self.reason = reason


@dataclass(frozen=True, slots=True)
class CursorStoreSnapshot:
    """A parsed store: the valid sessions and the warnings for whatever was dropped."""

    sessions: Mapping[str, CursorEntry]
    warnings: tuple[str, ...] = ()
    version: int = STORE_VERSION
    recovered_from: str | None = None
    """Set once an unreadable store was moved aside (the name it was given): a session missing
    from this store may have been in the lost one, so its position is rebuilt from evidence
    (``cursor_recovery``) instead of retaining its whole transcript again (ADR-066)."""


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _str_list(value: Any) -> list[str] | None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None
    return value


def _parse_v3(raw: dict[str, Any]) -> CursorState | str:
    index, tail_start = raw.get("index"), raw.get("tail_start")
    if not _is_int(index) or index < 0:
        return "index is not a non-negative integer"
    if not _is_int(tail_start) or not max(0, index - TAIL_WINDOW + 1) <= tail_start <= index:
        return "tail_start does not fit index"
    chain_hash, id_chain_hash = raw.get("chain_hash"), raw.get("id_chain_hash")
    if not isinstance(chain_hash, str) or not isinstance(id_chain_hash, str):
        return "chain hashes are not strings"
    ids, fps = _str_list(raw.get("message_ids")), _str_list(raw.get("fingerprints"))
    if ids is None or fps is None:
        return "message_ids/fingerprints are not lists of strings"
    if not len(ids) == len(fps) == index - tail_start + 1:
        return "tail arrays do not cover tail_start..index"
    updated_at = raw.get("updated_at")
    if updated_at is not None and not isinstance(updated_at, str):
        return "updated_at is not a string"
    return CursorState(index, chain_hash, id_chain_hash, tail_start, tuple(ids), tuple(fps), updated_at)


def _migrate_v2(raw: dict[str, Any]) -> CursorState | str:
    """A v2 entry (no ``tail_start``): keep the last ``index-tail_start+1`` array elements.

    If the arrays are shorter than the 200-message window, the tail starts later (a shorter
    tail still dedupes; dropping the entry would re-send the whole transcript).
    """
    index = raw.get("index")
    if not _is_int(index) or index < 0:
        return "index is not a non-negative integer"
    chain_hash = raw.get("chain_hash")
    if not isinstance(chain_hash, str):
        return "chain_hash is not a string"
    id_chain_hash = raw.get("id_chain_hash")
    ids, fps = _str_list(raw.get("message_ids")), _str_list(raw.get("fingerprints"))
    if ids is None or fps is None or len(ids) != len(fps) or not ids:
        return "message_ids/fingerprints are not equal, non-empty lists of strings"
    tail_start = max(0, index - TAIL_WINDOW + 1, index - len(ids) + 1)
    keep = index - tail_start + 1
    updated_at = raw.get("updated_at")
    return CursorState(
        index=index,
        chain_hash=chain_hash,
        id_chain_hash=id_chain_hash if isinstance(id_chain_hash, str) else "",
        tail_start=tail_start,
        message_ids=tuple(ids[-keep:]),
        fingerprints=tuple(fps[-keep:]),
        updated_at=updated_at if isinstance(updated_at, str) else None,
    )


def _short(sid: str) -> str:
    return sid if len(sid) <= 64 else sid[:61] + "..."


def parse_entry(sid: str, raw: Any) -> tuple[CursorEntry | None, str | None]:
    """One session entry in any known shape → (entry or None, warning or None).

    - a list of fingerprints (v1 store) or ``{"legacy_fingerprints": [...]}`` → legacy;
    - a dict with ``tail_start`` → v3, validated;
    - a dict with ``index`` but no ``tail_start`` → v2, migrated.
    Anything else is dropped with a warning that names the session, never content.
    """
    legacy: Any = raw
    if isinstance(raw, dict) and "legacy_fingerprints" in raw:
        legacy = raw["legacy_fingerprints"]
    elif isinstance(raw, dict):
        result = _parse_v3(raw) if "tail_start" in raw else _migrate_v2(raw) if "index" in raw else "unknown shape"
        if isinstance(result, str):
            return None, f"dropped invalid retain cursor for session {_short(sid)!r}: {result}"
        return result, None
    if not isinstance(legacy, list):
        return None, f"dropped invalid retain cursor for session {_short(sid)!r}: unknown shape"
    fps = tuple(v for v in legacy if isinstance(v, str))
    # No known fingerprint means nothing was retained: no entry is the same state.
    return (LegacyCursor(fps) if fps else None), None


def _position(data: bytes, offset: int) -> str:
    line = data.count(b"\n", 0, offset) + 1
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return f"line {line}, column {column}"


def _shape(doc: Any) -> str:
    if isinstance(doc, list):
        return "a JSON array"
    if isinstance(doc, str):
        return "a JSON string"
    if doc is None:
        return "JSON null"
    return f"a JSON {type(doc).__name__}"


def parse_store(data: bytes, path: Path) -> CursorStoreSnapshot:
    """Parse the bytes of a store file per the docs/retain.md#cursor reading table.

    Raises :class:`CursorCorruptError` for bytes that are not JSON, for JSON of the wrong shape
    (not an object, or no ``sessions`` object: nothing we write looks like that, so reading it
    as empty would silently re-retain every session, ADR-066) and for a future version.
    """
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        # orjson refuses a few things json accepts (escaped lone surrogates, NaN); only what
        # neither can read is corrupt.
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CursorCorruptError(path, f"not UTF-8 ({_position(data, exc.start)})") from None
        try:
            doc = json.loads(text)
        except ValueError as exc:
            where = f"line {exc.lineno}, column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else "?"
            raise CursorCorruptError(path, f"invalid JSON at {where}") from None
    if not isinstance(doc, dict):
        raise CursorCorruptError(path, f"{_shape(doc)}, not a cursor store object")
    version = doc.get("version")
    if version is not None and (not _is_int(version) or not 1 <= version <= STORE_VERSION):
        raise CursorCorruptError(path, "unsupported version")
    raw_sessions = doc.get("sessions")
    if not isinstance(raw_sessions, dict):
        what = "no sessions object" if raw_sessions is None else f"sessions is {_shape(raw_sessions)}"
        raise CursorCorruptError(path, f"{what}, not a cursor store")
    recovered = doc.get("recovered_from")
    sessions: dict[str, CursorEntry] = {}
    warnings: list[str] = []
    for sid, raw in raw_sessions.items():
        entry, warning = parse_entry(sid, raw)
        if warning is not None:
            warnings.append(warning)
        if entry is not None:
            sessions[sid] = entry
    return CursorStoreSnapshot(
        sessions, tuple(warnings), recovered_from=recovered if isinstance(recovered, str) else None
    )


def dump_store(sessions: Mapping[str, CursorEntry], recovered_from: str | None = None) -> bytes:
    """Canonical JSON of a v3 store (compact, keys in order, ``None`` omitted)."""
    doc: dict[str, Any] = {
        "version": STORE_VERSION,
        "sessions": {sid: entry.to_json() for sid, entry in sessions.items()},
    }
    if recovered_from is not None:
        doc["recovered_from"] = recovered_from
    try:
        return orjson.dumps(doc)
    except TypeError:
        # Lone surrogates in an id: ASCII escapes round-trip through json.loads exactly.
        return json.dumps(doc, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def cap_sessions(sessions: dict[str, CursorEntry], keep: str | None = None, limit: int = MAX_SESSIONS) -> list[str]:
    """Drop the oldest ``updated_at`` (entries without one count as oldest) down to ``limit``,
    never ``keep``; returns the dropped ids."""
    excess = len(sessions) - limit
    if excess <= 0:
        return []

    def age(sid: str) -> str:
        entry = sessions[sid]
        return (entry.updated_at or "") if isinstance(entry, CursorState) else ""

    candidates = sorted((sid for sid in sessions if sid != keep), key=age)  # stable: file order on ties
    dropped = candidates[:excess]
    for sid in dropped:
        del sessions[sid]
    return dropped
