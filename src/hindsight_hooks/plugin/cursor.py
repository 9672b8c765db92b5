"""Retain cursor, version 3 (docs/retain.md#cursor): which messages of a session are already retained.

Hosts hand ``agent_end`` overlapping transcripts — the whole session, a suffix, or only the
last run — and sessions get edited and branched. The cursor remembers, per session, how far
the transcript was retained (``index``), a hash chain over everything up to there, and the
ids and fingerprints of the last 200 retained messages (the *tail*). ``filter_new`` uses it to
pick the messages not retained yet; ``advance`` moves it after the jobs are durable.

The agent_end flow (docs/retain.md#order steps 4–8) with one :class:`FingerprintMemo` per call, so that no
message is fingerprinted twice::

    memo = FingerprintMemo()
    idx = filter_new(msgs, store.get(sid), memo=memo)      # indexes into msgs
    delta = [msgs[i] for i in idx]
    ...enqueue the projection of delta...
    through = retained_through_index(msgs, delta, memo=memo)
    store.advance(sid, msgs, through if through >= 0 else len(msgs) - 1, memo=memo)

Cost follows the delta, not the transcript (ADR-011): the verdict of the spec's fast path only
depends on the tail, so ``filter_new`` compares the ≤200 tail messages instead of hashing the
whole prefix, and ``advance`` extends the stored chain instead of recomputing it. The full
O(n) walk remains only for edits, branches and foreign windows.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path
from typing import Any, TypeGuard

import filelock
import orjson

from ..errors import HindsightHooksError
from ..fsutil import atomic_write_bytes, ensure_private_dir, move_aside
from ..hooks.messages import Message
from ..timefmt import iso_from_ms
from ..timing import now_ms

STORE_VERSION = 3
TAIL_WINDOW = 200
"""Messages kept per session in ``message_ids`` / ``fingerprints``."""
MAX_SESSIONS = 500
"""Sessions kept per store; the oldest ``updated_at`` goes first."""
LOCK_SUFFIX = ".lock"

_FINGERPRINT_KEYS = ("id", "role", "timestamp", "content", "toolName", "isError", "model", "stopReason")
_EMPTY_HASH = ""
_dumps = orjson.dumps
_sha256 = hashlib.sha256


# --------------------------------------------------------------------------- errors


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


class CursorLockTimeout(CursorError):
    """The store's lock was not acquired within ``lock_timeout_ms``."""


# --------------------------------------------------------------------------- hashing


def _opaque(value: Any) -> Any:
    """Stand-in for values that are not JSON (a host broke the contract): stable, content-free."""
    if isinstance(value, bytes | bytearray | memoryview):
        return f"<bytes:{hashlib.sha256(bytes(value)).hexdigest()}>"
    if isinstance(value, set | frozenset):
        return sorted(canonical_json(v).decode("utf-8", "surrogatepass") for v in value)
    return f"<{type(value).__qualname__}>"


def canonical_json(value: Any) -> bytes:
    """Compact UTF-8 JSON, keys in insertion order (ADR-011).

    orjson is ~4x faster than ``json.dumps`` and byte-identical to
    ``json.dumps(value, separators=(",", ":"), ensure_ascii=False)`` for strings, integers,
    booleans, null, lists and str-keyed dicts; it differs only in the spelling of tiny floats
    (``0.00001`` vs ``1e-05``) and non-finite floats (``null``). Values orjson refuses (ints
    beyond 64 bits, non-string keys, lone surrogates) fall back to ``json.dumps``; either way the
    bytes are a pure function of the value, which is all a fingerprint needs.
    """
    try:
        return _dumps(value, default=_opaque)
    except TypeError:
        return _json_fallback(value)


def _json_fallback(value: Any) -> bytes:
    # Nesting beyond ``MAX_DEPTH`` is cut first (json.dumps recurses, and whether it overflows
    # would depend on the caller's stack): still a pure function of the value, which is all a
    # fingerprint needs. Surrogates are kept (``surrogatepass``) so earlier fingerprints hold.
    from ..sanitize import sanitize

    shallow = sanitize(value, scrub=False)
    text = json.dumps(shallow, separators=(",", ":"), ensure_ascii=False, default=_opaque, skipkeys=True)
    return text.encode("utf-8", "surrogatepass")


def fingerprint(msg: Message) -> str:
    """sha256 of the canonical JSON of ``id, role, timestamp, content, toolName, isError, model,
    stopReason`` in that order; absent and ``None`` keys are omitted."""
    # Hot path (runs for every tail message on every agent_end): canonical_json inlined.
    if isinstance(msg, dict):
        get = msg.get
        fields = {key: value for key in _FINGERPRINT_KEYS if (value := get(key)) is not None}
    else:
        fields = {"content": msg}
    try:
        data = _dumps(fields, default=_opaque)
    except TypeError:
        data = _json_fallback(fields)
    return _sha256(data).hexdigest()


def message_id(msg: Message) -> str:
    """The id if it is a string; ``str(id)`` for an int (not a bool); otherwise ``""``."""
    value = msg.get("id") if isinstance(msg, dict) else None
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return ""


def _step(h: str, value: str) -> str:
    return hashlib.sha256((h + value).encode("utf-8", "surrogatepass")).hexdigest()


def chain(values: Sequence[str], through: int) -> str:
    """``h=""``; for each ``i`` in ``0..through``: ``h=sha256(h+values[i])`` (stops at the end)."""
    h = _EMPTY_HASH
    for value in values[: max(0, through + 1)]:
        h = _step(h, value)
    return h


def chain_extend(h: str, values: Sequence[str]) -> str:
    """Continue a chain: ``chain(a+b, len(a+b)-1) == chain_extend(chain(a, len(a)-1), b)``."""
    for value in values:
        h = _step(h, value)
    return h


class FingerprintMemo:
    """Fingerprints by object identity, for the duration of ONE agent_end call.

    Filtering, ``retained_through_index`` and ``advance`` look at the same message objects;
    sharing a memo means each message is serialised and hashed at most once per call, and a
    tail that ``filter_new`` found intact is not compared again by ``advance``. The memo holds a
    reference to every object it keys by ``id()``, so an id cannot be reused while it lives.
    Do not keep one across calls: a host may edit a message object in place between turns.
    """

    __slots__ = ("_fps", "_intact")

    def __init__(self) -> None:
        self._fps: dict[int, tuple[Message, str]] = {}
        self._intact: dict[tuple[int, int, int, str, str], Sequence[Message]] = {}

    def fp(self, msg: Message) -> str:
        key = id(msg)
        hit = self._fps.get(key)
        if hit is not None and hit[0] is msg:
            return hit[1]
        value = fingerprint(msg)
        self._fps[key] = (msg, value)
        return value

    @staticmethod
    def _tail_key(msgs: Sequence[Message], cursor: CursorState) -> tuple[int, int, int, str, str]:
        last = cursor.fingerprints[-1] if cursor.fingerprints else ""
        return (id(msgs), cursor.index, cursor.tail_start, cursor.chain_hash, last)

    def mark_intact(self, msgs: Sequence[Message], cursor: CursorState) -> None:
        """Record that ``msgs`` carries ``cursor``'s whole tail at its positions."""
        self._intact[self._tail_key(msgs, cursor)] = msgs

    def is_intact(self, msgs: Sequence[Message], cursor: CursorState) -> bool:
        return self._intact.get(self._tail_key(msgs, cursor)) is msgs

    def __len__(self) -> int:
        return len(self._fps)


# --------------------------------------------------------------------------- state


@dataclass(frozen=True, slots=True)
class CursorState:
    """One session's v3 cursor; the tail arrays cover ``msgs[tail_start..index]``."""

    index: int
    chain_hash: str
    id_chain_hash: str
    tail_start: int
    message_ids: tuple[str, ...]
    fingerprints: tuple[str, ...]
    updated_at: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The stored form, keys in the spec's order, ``None`` omitted."""
        out: dict[str, Any] = {
            "index": self.index,
            "chain_hash": self.chain_hash,
            "id_chain_hash": self.id_chain_hash,
            "tail_start": self.tail_start,
            "message_ids": list(self.message_ids),
            "fingerprints": list(self.fingerprints),
        }
        if self.updated_at is not None:
            out["updated_at"] = self.updated_at
        return out


@dataclass(frozen=True, slots=True)
class LegacyCursor:
    """A session migrated from a v1 store: only a set of retained fingerprints is known."""

    legacy_fingerprints: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"legacy_fingerprints": list(self.legacy_fingerprints)}


CursorEntry = CursorState | LegacyCursor


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


# --------------------------------------------------------------------------- filter_new


def _tail_range(cursor: CursorState, n: int) -> tuple[int, int]:
    return cursor.tail_start, min(cursor.index, n - 1)


def _tail_matches(msgs: Sequence[Message], cursor: CursorState, lo: int, hi: int, memo: FingerprintMemo) -> bool:
    """Do ``msgs[lo..hi]`` carry exactly the fingerprints the tail recorded there?

    Fingerprints cover the id, so equal fingerprints imply equal ids. Walks from the end: a
    branch, an edit or a foreign window usually shows at the newest position, so a mismatch is
    found after one hash.
    """
    fps, start = cursor.fingerprints, cursor.tail_start
    if hi - start >= len(fps):
        return False
    fp = memo.fp
    return all(fp(msgs[i]) == fps[i - start] for i in range(hi, lo - 1, -1))


def _tail_intact(msgs: Sequence[Message], cursor: CursorState, memo: FingerprintMemo) -> bool:
    """The whole tail (through ``index``) is present, unchanged, at its own positions."""
    if memo.is_intact(msgs, cursor):
        return True
    if cursor.index >= len(msgs) or not _tail_matches(msgs, cursor, cursor.tail_start, cursor.index, memo):
        return False
    memo.mark_intact(msgs, cursor)
    return True


def _choose_shift(msgs: Sequence[Message], cursor: CursorState, memo: FingerprintMemo) -> int | None:
    """Where ``msgs`` sits relative to the transcript the cursor was built from.

    ``msgs[j]`` is taken to be the old position ``j + shift``. Every exact (id, fingerprint)
    match between a message and a tail entry votes for one shift; the shift with most votes
    wins (ties: ``0``, the spec's assumption, then the smallest ``|shift|``). Without any exact match, a
    shared non-empty id at shift 0 still means "same transcript, edited" (the spec's case);
    with neither there is no evidence of overlap and ``None`` is returned.
    """
    tail_ids = set(cursor.message_ids)
    where: dict[tuple[str, str], list[int]] = {}
    for k, (mid, fp) in enumerate(zip(cursor.message_ids, cursor.fingerprints, strict=True)):
        where.setdefault((mid, fp), []).append(k)
    votes: dict[int, int] = {}
    for j, msg in enumerate(msgs):
        mid = message_id(msg)
        if mid not in tail_ids:
            continue
        for k in where.get((mid, memo.fp(msg)), ()):
            shift = cursor.tail_start + k - j
            votes[shift] = votes.get(shift, 0) + 1
    if votes:
        return max(votes.items(), key=lambda kv: (kv[1], kv[0] == 0, -abs(kv[0]), -kv[0]))[0]
    lo, hi = _tail_range(cursor, len(msgs))
    for i in range(lo, hi + 1):
        k = i - cursor.tail_start
        mid = message_id(msgs[i])
        if mid and k < len(cursor.message_ids) and mid == cursor.message_ids[k]:
            return 0
    return None


def _walk(msgs: Sequence[Message], cursor: CursorState, shift: int, memo: FingerprintMemo) -> list[int]:
    """The spec's slow path, with ``msgs[j]`` at old position ``j + shift``.

    At shift 0 this is docs/retain.md#cursor verbatim. At another shift (a window of the transcript) an id
    mismatch before the first exact match is a message the window adds in front (e.g. a
    compaction summary): it is included on its own instead of declaring a branch that would
    re-send every following message.
    """
    out: list[int] = []
    ids, fps = cursor.message_ids, cursor.fingerprints
    branched = False
    armed = shift == 0
    for j, msg in enumerate(msgs):
        pos = j + shift
        if pos > cursor.index:
            out.append(j)
            continue
        if pos < cursor.tail_start:
            if branched:
                out.append(j)
            continue
        if branched:
            out.append(j)
            continue
        k = pos - cursor.tail_start
        if k >= len(ids) or message_id(msg) != ids[k]:
            branched = armed
            out.append(j)
        elif memo.fp(msg) != fps[k]:
            out.append(j)  # an edit: only this message
        else:
            armed = True
    return out


def filter_new(msgs: Sequence[Message], state: CursorEntry | None, *, memo: FingerprintMemo | None = None) -> list[int]:
    """Indexes (ascending) of the messages of ``msgs`` that are not retained yet (docs/retain.md#cursor).

    Returns indexes rather than messages so the caller can both build the delta
    (``[msgs[i] for i in idx]``) and reason about positions. ``msgs`` must already be free of
    injected messages (docs/retain.md#order step 2).

    - no state → everything;
    - legacy → what follows the last message whose fingerprint is known; none known → everything;
    - the tail matches ``msgs`` at its own positions → ``index+1..`` (the spec's fast path:
      ADR-011 shows its verdict never depends on the prefix before the tail);
    - otherwise the slow path, aligned by :func:`_choose_shift` so that windows and per-run
      transcripts dedupe too; with no overlap at all, everything is new (a duplicate beats a loss).
    """
    n = len(msgs)
    if state is None or n == 0:
        return list(range(n))
    memo = memo if memo is not None else FingerprintMemo()
    if isinstance(state, LegacyCursor):
        known = set(state.legacy_fingerprints)
        for i in range(n - 1, -1, -1):
            if memo.fp(msgs[i]) in known:
                return list(range(i + 1, n))
        return list(range(n))
    if _tail_intact(msgs, state, memo):
        return list(range(state.index + 1, n))  # the fast path
    lo, hi = _tail_range(state, n)
    if lo <= hi and hi < state.index and _tail_matches(msgs, state, lo, hi, memo):
        return []  # a shorter transcript whose messages all match: nothing new
    shift = _choose_shift(msgs, state, memo)
    if shift is None:
        return list(range(n))
    return _walk(msgs, state, shift, memo)


# --------------------------------------------------------------------------- through / advance


def filter_new_messages(
    msgs: Sequence[Message], state: CursorEntry | None, *, memo: FingerprintMemo | None = None
) -> list[Message]:
    """:func:`filter_new` as the delta itself: ``[msgs[i] for i in filter_new(...)]``."""
    return [msgs[i] for i in filter_new(msgs, state, memo=memo)]


def _prefilter_key(last: Message) -> tuple[str, Any] | None:
    """A raw field of ``last`` whose ``==`` is implied by equal fingerprints.

    For None, str and int (not bool) values, equal canonical JSON implies ``==``, so comparing
    the raw ``id`` (or, for messages without one, the raw ``timestamp``) can only skip messages
    that cannot match. Floats (NaN) and containers are left to the fingerprint.
    """
    if not isinstance(last, dict):
        return None
    for key in ("id", "timestamp"):
        value = last.get(key)
        usable = value is None or isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))
        if usable and (key == "timestamp" or value is not None):
            return key, value
    return None


def retained_through_index(
    msgs: Sequence[Message], batch: Sequence[Message], *, memo: FingerprintMemo | None = None
) -> int:
    """Searching forward, the first index whose id AND fingerprint equal those of the batch's
    last message; −1 if none (or the batch is empty).

    Identical content under different ids resolves to the right message. Candidates are found
    by comparing one raw field (see :func:`_prefilter_key`) in a C-level ``list.index`` scan,
    so only messages that may match are ever hashed.
    """
    if not batch:
        return -1
    memo = memo if memo is not None else FingerprintMemo()
    last = batch[-1]
    target_id, target_fp = message_id(last), memo.fp(last)

    def matches(msg: Message) -> bool:
        return message_id(msg) == target_id and memo.fp(msg) == target_fp

    prefilter = _prefilter_key(last)
    if prefilter is not None:
        key, value = prefilter
        try:
            column = list(map(dict.get, msgs, repeat(key)))
        except TypeError:  # a non-dict message: take the plain loop below
            pass
        else:
            start = 0
            while True:
                try:
                    i = column.index(value, start)
                except ValueError:
                    return -1
                if matches(msgs[i]):
                    return i
                start = i + 1
    for i, msg in enumerate(msgs):
        if matches(msg):
            return i
    return -1


def build_cursor(
    msgs: Sequence[Message],
    index: int,
    *,
    base: CursorState | None = None,
    updated_at: str | None = None,
    memo: FingerprintMemo | None = None,
) -> CursorState:
    """The cursor over ``msgs[0..index]``.

    When ``base`` (the previous cursor) still matches ``msgs`` over its whole tail and ends at
    or before ``index``, its chains are extended by the new messages only; otherwise both
    chains are recomputed from message 0 (edits, branches, windows: the rare paths).
    """
    if not 0 <= index < len(msgs):
        raise IndexError(f"cursor index {index} outside a transcript of {len(msgs)} messages")
    memo = memo if memo is not None else FingerprintMemo()
    tail_start = max(0, index - TAIL_WINDOW + 1)
    if base is not None and base.index <= index and _tail_intact(msgs, base, memo):
        # Extend: positions base.tail_start..base.index are verified equal to the stored
        # tail, so its fingerprints are reused and only the new messages are hashed (plus,
        # for a migrated shorter tail, the positions it lacks).
        new = range(base.index + 1, index + 1)
        new_fps = [memo.fp(msgs[i]) for i in new]
        chain_hash = chain_extend(base.chain_hash, new_fps)
        id_chain_hash = chain_extend(base.id_chain_hash, [message_id(msgs[i]) for i in new])
        # Fingerprints of base.tail_start..index, then cut (or, for a migrated short tail,
        # filled) to tail_start..index.
        known = base.fingerprints + tuple(new_fps)
        if tail_start >= base.tail_start:
            fps = known[tail_start - base.tail_start :]
        else:
            fps = tuple(memo.fp(msgs[i]) for i in range(tail_start, base.tail_start)) + known
        ids = tuple(message_id(msgs[i]) for i in range(tail_start, index + 1))
    else:
        all_fps = [memo.fp(msgs[i]) for i in range(index + 1)]
        all_ids = [message_id(msgs[i]) for i in range(index + 1)]
        chain_hash = chain(all_fps, index)
        id_chain_hash = chain(all_ids, index)
        ids = tuple(all_ids[tail_start:])
        fps = tuple(all_fps[tail_start:])
    return CursorState(
        index=index,
        chain_hash=chain_hash,
        id_chain_hash=id_chain_hash,
        tail_start=tail_start,
        message_ids=ids,
        fingerprints=fps,
        updated_at=updated_at,
    )


def advance(
    existing: CursorEntry | None,
    msgs: Sequence[Message],
    through: int,
    *,
    updated_at: str | None = None,
    memo: FingerprintMemo | None = None,
) -> CursorState | None:
    """The session's next cursor, or ``None`` for a no-op (``through`` outside ``msgs``).

    ``effective = min(len(msgs)-1, max(existing index, through))``: an edit never moves the
    cursor back (monotonic), and a shorter branch that replaced a longer one clamps it
    (clamped). The result replaces any legacy entry.
    """
    n = len(msgs)
    if through < 0 or through >= n:
        return None
    base = existing if isinstance(existing, CursorState) else None
    effective = min(n - 1, max(base.index if base is not None else -1, through))
    return build_cursor(msgs, effective, base=base, updated_at=updated_at, memo=memo)


# --------------------------------------------------------------------------- parsing


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


# --------------------------------------------------------------------------- the store


class CursorStore:
    """The persistent ``retain-cursors.json``: every write is a locked read-modify-write of the
    whole store followed by an atomic replace (0600), so concurrent processes never lose each
    other's sessions and a crash leaves the old or the new file, never a torn one."""

    def __init__(self, path: Path, lock_timeout_ms: int = 5000, *, clock: Callable[[], int] | None = None) -> None:
        self.path = Path(path)
        self.lock_path = self.path.with_name(self.path.name + LOCK_SUFFIX)
        self.lock_timeout_ms = lock_timeout_ms
        self._clock = clock if clock is not None else now_ms
        self.warnings: list[str] = []
        """Warnings about dropped entries, collected across reads (deduplicated)."""

    # -- reading

    def _load(self) -> CursorStoreSnapshot:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return CursorStoreSnapshot({}, recovered_from=self._moved_aside())
        snapshot = parse_store(data, self.path)
        for warning in snapshot.warnings:
            if warning not in self.warnings:
                self.warnings.append(warning)
        return snapshot

    def _moved_aside(self) -> str | None:
        """The newest ``<store>.corrupt-*`` beside a missing store, if any.

        We never delete the store, so a missing store next to a quarantined one was moved aside
        (by ``/hindsight:doctor --fix``, or by a process that died before writing the fresh
        store): the sessions it held are recovered from evidence, not retained again.
        """
        prefix = self.path.name + ".corrupt-"
        try:
            names = [e.name for e in os.scandir(self.path.parent) if e.name.startswith(prefix)]
        except OSError:
            return None
        return max(names, default=None)

    def read(self) -> CursorStoreSnapshot:
        """The whole store (no lock needed: the file is only ever replaced atomically)."""
        return self._load()

    def get(self, sid: str) -> CursorEntry | None:
        """The session's cursor, its legacy entry, or None. Raises CursorCorruptError."""
        return self._load().sessions.get(sid)

    # -- writing

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the store's file lock (its folder made private first); a busy lock is :class:`CursorLockTimeout`."""
        ensure_private_dir(self.path.parent)
        timeout = max(0.0, self.lock_timeout_ms / 1000.0)
        lock = filelock.FileLock(str(self.lock_path), timeout=timeout, mode=0o600)
        try:
            lock.acquire()
        except filelock.Timeout:
            raise CursorLockTimeout(f"retain cursor lock {self.lock_path} busy for {self.lock_timeout_ms} ms") from None
        try:
            yield
        finally:
            lock.release()

    def advance(self, sid: str, msgs: Sequence[Message], through: int, *, memo: FingerprintMemo | None = None) -> None:
        """Move the session's cursor through ``through`` (docs/retain.md#cursor ``advance``), under the lock.

        A no-op (no lock, no write) when ``through`` is outside ``msgs``. Raises
        :class:`CursorCorruptError` rather than overwrite a file it cannot read,
        :class:`CursorLockTimeout`, or ``OSError`` for disk errors; on any error the file is
        unchanged.
        """
        if through < 0 or through >= len(msgs):
            return
        with self._locked():
            snapshot = self._load()
            sessions = dict(snapshot.sessions)
            updated_at = iso_from_ms(self._clock())
            new = advance(sessions.get(sid), msgs, through, updated_at=updated_at, memo=memo)
            if new is None:
                return
            sessions[sid] = new
            cap_sessions(sessions, keep=sid)
            atomic_write_bytes(self.path, dump_store(sessions, snapshot.recovered_from))

    def recover_from_corrupt(self) -> tuple[Path, str] | None:
        """Move an unreadable store aside and start a fresh one that remembers it (ADR-066).

        Under the lock: if the store still cannot be read, it is renamed to
        ``<store>.corrupt-<ms>`` (never deleted, never overwritten) and an empty store marked
        ``recovered_from`` takes its place, so every session missing from it is rebuilt from
        evidence. Returns the new path and the reason, or ``None`` when the store was readable
        (another process recovered it first).
        """
        with self._locked():
            try:
                self._load()
                return None
            except CursorCorruptError as exc:
                reason = exc.reason
            target = move_aside(self.path, self._clock())
            atomic_write_bytes(self.path, dump_store({}, target.name))
            return target, reason


    def quarantine_corrupt(self) -> Path | None:
        """Move an unreadable store aside (for ``/hindsight:doctor --fix``); None if it was fine.

        The file is renamed, never deleted, so nothing that could still be inspected is lost;
        the next ``agent_end`` starts from an empty store.
        """
        with self._locked():
            try:
                self._load()
                return None
            except CursorCorruptError:
                return move_aside(self.path, self._clock())


__all__ = [
    "MAX_SESSIONS",
    "STORE_VERSION",
    "TAIL_WINDOW",
    "CursorCorruptError",
    "CursorEntry",
    "CursorError",
    "CursorLockTimeout",
    "CursorState",
    "CursorStore",
    "CursorStoreSnapshot",
    "FingerprintMemo",
    "LegacyCursor",
    "advance",
    "build_cursor",
    "canonical_json",
    "cap_sessions",
    "chain",
    "chain_extend",
    "dump_store",
    "filter_new",
    "filter_new_messages",
    "fingerprint",
    "message_id",
    "parse_entry",
    "parse_store",
    "retained_through_index",
]
