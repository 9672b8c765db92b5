"""The embedded store's connections and transactions (ADR 005).

One connection per thread (``threading.local``), re-opened after ``fork`` and taken over from a
thread that ended; every write is one ``BEGIN IMMEDIATE`` transaction, so a batch lands whole or
not at all; reads run in a deferred transaction (one snapshot) and, when bounded, stop at the
deadline or when ``signal`` is set. Why apart: every other part of ``LocalBackend`` goes through
``_read``/``_write`` and nothing else touches a connection.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..errors import HindsightHooksError
from ..timefmt import iso_from_epoch
from .base import BackendError, BankSpec
from .local_schema import BUSY_TIMEOUT_MS, MAX_SLOT, connect, ensure_schema, map_error, store_error
from .local_write import ensure_staging

# A bounded read's statements check its deadline and abort signal every this many SQLite steps:
# about every 1-1.5 ms of a bm25 search at 10k units. Each check is a Python call that needs the
# GIL, which the other thread of a hybrid recall may hold (ADR 177): 2,000 steps made ten checks
# a search and cost the recall 0.3 ms; the deadlines they keep are tens of milliseconds or more.
_PROGRESS_STEPS = 8000


_WAIT_SLICE_S = 0.025  # lock waits of a bounded read re-check the deadline and signal this often


class LocalConnections:
    """The connection and transaction part of ``LocalBackend`` (its ``__init__`` sets these fields)."""

    path: Path
    _clock: Callable[[], float]
    _local: threading.local
    _lock: threading.Lock
    # Every open connection: (pid, the thread it belongs to, connection).
    _conns: list[tuple[int, threading.Thread, sqlite3.Connection]]
    _schema_pid: int | None

    def _close_thread_connection(self) -> None:
        """Close the calling thread's connection (a thread that ends must not leave one open)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None or getattr(self._local, "pid", None) != os.getpid():
            return
        with self._lock:
            self._conns = [(p, t, c) for p, t, c in self._conns if c is not conn]
        self._local.conn = None
        with contextlib.suppress(sqlite3.Error):
            conn.close()

    def _conn(self, end: float | None = None, signal: threading.Event | None = None) -> sqlite3.Connection:
        """This thread's connection; opening one waits for locks only until ``end``/``signal``."""
        pid = os.getpid()
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None and getattr(self._local, "pid", None) == pid:
            return conn
        conn = self._adopt(pid)
        if conn is None and end is None and signal is None:
            conn = connect(self.path)
            try:
                with self._lock:
                    self._setup(conn, pid)
            except BaseException:
                conn.close()
                raise
        elif conn is None:
            conn = self._open_bounded(pid, end, signal)
        self._local.conn = conn
        self._local.pid = pid
        return conn

    def _adopt(self, pid: int) -> sqlite3.Connection | None:
        """Take over the connection of a thread of this process that has ended, if one is idle.

        A host may run every request or delivery on a new thread (the warm helper does): without
        this each one would open (~0.7 ms) and leave behind a connection with its own page cache
        until ``close``. A connection still inside a transaction is never taken over.
        """
        me = threading.current_thread()
        with self._lock:
            for i, (p, thread, conn) in enumerate(self._conns):
                if p == pid and not thread.is_alive() and not conn.in_transaction:
                    self._conns[i] = (p, me, conn)
                    return conn
        return None

    def _open_bounded(self, pid: int, end: float | None, signal: threading.Event | None) -> sqlite3.Connection:
        """Open this thread's connection with every lock wait bounded by ``end``/``signal``.

        ``connect`` waits up to the 5 s busy timeout when another process holds the file
        exclusively. So a probe connection first waits in bounded slices until the file can be
        read, and stays open while the real connection is set up: in WAL mode an open
        connection keeps exclusive holders out, so ``connect`` then has nothing to wait for.
        """
        probe = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False, timeout=0)
        try:
            self._until(probe, end, signal, lambda: probe.execute("SELECT count(*) FROM sqlite_master").fetchone())
            conn = connect(self.path)
            try:
                self._take_lock(end, signal)
                try:
                    self._until(conn, end, signal, lambda: self._setup(conn, pid))
                finally:
                    self._lock.release()
            except BaseException:
                conn.close()
                raise
            return conn
        finally:
            probe.close()

    def _setup(self, conn: sqlite3.Connection, pid: int) -> None:
        if self._schema_pid != pid:
            ensure_schema(conn, self.path)
            self._schema_pid = pid
        ensure_staging(conn)
        if not any(c is conn for _, _, c in self._conns):
            self._conns.append((pid, threading.current_thread(), conn))

    def _take_lock(self, end: float | None, signal: threading.Event | None) -> None:
        while not self._lock.acquire(timeout=_WAIT_SLICE_S):
            _check_bounds(end, signal, BUSY_TIMEOUT_MS / 1000.0)

    def _until(
        self, conn: sqlite3.Connection, end: float | None, signal: threading.Event | None, step: Callable[[], Any]
    ) -> Any:
        """Run ``step``, retrying while the file is locked, in slices that notice ``end``/``signal``.

        SQLite's busy handler sleeps without calling the progress handler, so a lock held by
        another process (``locking_mode=EXCLUSIVE``, a WAL recovery) would otherwise hold a
        recall for the whole 5 s busy timeout, past ``recall.timeout_ms`` and deaf to an abort.
        Without ``end`` the wait still ends after the usual busy timeout.
        """
        limit = time.monotonic() + BUSY_TIMEOUT_MS / 1000.0
        try:
            while True:
                left = _check_bounds(end, signal, limit - time.monotonic())
                conn.execute(f"PRAGMA busy_timeout = {max(1, min(int(_WAIT_SLICE_S * 1000), int(left * 1000)))}")
                try:
                    return step()
                except (sqlite3.OperationalError, BackendError) as exc:  # ensure_schema maps its own errors
                    text = str(exc).lower()
                    if ("locked" not in text and "busy" not in text) or time.monotonic() >= limit:
                        raise
        finally:
            with contextlib.suppress(sqlite3.Error):
                conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")

    def _now(self) -> float:
        return float(self._clock())

    @contextlib.contextmanager
    def _write(self, operation: str, timeout_s: float | None = None) -> Iterator[sqlite3.Connection]:
        conn = self._conn()
        busy_ms = 5000 if timeout_s is None else max(1, min(5000, int(timeout_s * 1000)))
        try:
            conn.execute(f"PRAGMA busy_timeout = {busy_ms}")
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise map_error(operation, exc, self.path) from None
        try:
            yield conn
            conn.execute("COMMIT")
        except BaseException as exc:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise map_error(operation, exc, self.path) from None
            raise
        finally:
            if busy_ms != 5000:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("PRAGMA busy_timeout = 5000")

    @contextlib.contextmanager
    def _read(
        self, operation: str, timeout_s: float | None = None, signal: threading.Event | None = None
    ) -> Iterator[sqlite3.Connection]:
        end = None if timeout_s is None else time.monotonic() + max(0.0, timeout_s)
        bounded = end is not None or signal is not None
        try:
            if signal is not None and signal.is_set():
                raise _Stop("aborted")
            conn = self._conn(end, signal) if bounded else self._conn()
            if bounded:

                def stop() -> int:
                    return int((signal is not None and signal.is_set()) or (end is not None and time.monotonic() > end))

                conn.set_progress_handler(stop, _PROGRESS_STEPS)
            try:
                conn.execute("BEGIN")
                try:
                    if bounded:  # take the read snapshot now, where a lock wait is still bounded
                        self._until(conn, end, signal, lambda: conn.execute("SELECT 1 FROM banks LIMIT 1").fetchall())
                    yield conn
                finally:
                    with contextlib.suppress(sqlite3.Error):
                        conn.execute("COMMIT")
            finally:
                if bounded:
                    conn.set_progress_handler(None, 0)
        except _Stop as halted:
            if halted.why == "aborted":
                raise BackendError(operation, "aborted", "request aborted") from None
            raise BackendError(operation, "timeout", f"{operation} timed out after {timeout_s}s") from None
        except sqlite3.Error as exc:
            if "interrupted" in str(exc).lower():
                if signal is not None and signal.is_set():
                    raise BackendError(operation, "aborted", "request aborted") from None
                raise BackendError(operation, "timeout", f"{operation} timed out after {timeout_s}s") from None
            raise map_error(operation, exc, self.path) from None

    @staticmethod
    def _slot(conn: sqlite3.Connection, bank_id: str) -> int | None:
        row = conn.execute("SELECT slot FROM banks WHERE bank_id = ?", (bank_id,)).fetchone()
        return None if row is None else int(row[0])

    def _insert_bank(self, conn: sqlite3.Connection, bank_id: str, spec: BankSpec | None) -> tuple[int, bool]:
        slot = self._slot(conn, bank_id)
        if slot is not None:
            return slot, False
        slot = int(conn.execute("SELECT COALESCE(MAX(slot), 0) + 1 FROM banks").fetchone()[0])
        if slot > MAX_SLOT:
            raise store_error("ensure_bank", self.path, f"holds the maximum of {MAX_SLOT} banks")
        spec = spec or BankSpec()
        conn.execute(
            "INSERT INTO banks(bank_id, slot, created_at, retain_mission, reflect_mission, observations_mission) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (bank_id, slot, iso_from_epoch(self._now()), spec.retain_mission, spec.reflect_mission,
             spec.observations_mission),
        )  # fmt: skip
        return slot, True


class _Stop(HindsightHooksError):
    """A bounded read ran out of time or was aborted before SQLite could tell us."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def _check_bounds(end: float | None, signal: threading.Event | None, cap_left: float) -> float:
    """Seconds a lock wait may still take; raises ``_Stop`` once aborted or past ``end``."""
    if signal is not None and signal.is_set():
        raise _Stop("aborted")
    left = cap_left if end is None else min(cap_left, end - time.monotonic())
    if end is not None and end - time.monotonic() <= 0:
        raise _Stop("timeout")
    return max(0.0, left)
