"""Where a session's retained part ends: the cursor state and the decisions made with it (docs/retain.md#cursor).

``filter_new`` picks the messages not retained yet, ``retained_through_index`` finds how far a
delivered batch reached, ``advance`` / ``build_cursor`` make the next cursor. Why a module of
its own: this is the logic the property tests pin (edits, branches, windows, a duplicate beats
a loss), kept free of files and locks so it can be read and tested as plain functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any

from ..hooks.messages import Message
from .cursor_fingerprint import FingerprintMemo, chain, chain_extend, message_id

TAIL_WINDOW = 200
"""Messages kept per session in ``message_ids`` / ``fingerprints``."""


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
