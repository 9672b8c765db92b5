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

This module is the store (the file, its lock, moving a corrupt one aside) and the front door:
the fingerprints and chains are in ``cursor_fingerprint``, the state and the decisions made
with it in ``cursor_position``, the file format in ``cursor_format``, and the recovery of a
lost position in ``cursor_recovery`` (ADR 156). Every name is importable from here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import filelock

from ..fsutil import atomic_write_bytes, ensure_private_dir, move_aside
from ..hooks.messages import Message
from ..timefmt import iso_from_ms
from ..timing import now_ms
from .cursor_fingerprint import FingerprintMemo, canonical_json, chain, chain_extend, fingerprint, message_id
from .cursor_format import (
    MAX_SESSIONS,
    STORE_VERSION,
    CursorCorruptError,
    CursorError,
    CursorStoreSnapshot,
    cap_sessions,
    dump_store,
    parse_entry,
    parse_store,
)
from .cursor_position import (
    TAIL_WINDOW,
    CursorEntry,
    CursorState,
    LegacyCursor,
    advance,
    build_cursor,
    filter_new,
    filter_new_messages,
    retained_through_index,
)

LOCK_SUFFIX = ".lock"


class CursorLockTimeout(CursorError):
    """The store's lock was not acquired within ``lock_timeout_ms``."""


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
