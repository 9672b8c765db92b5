"""The embedded memory store: one SQLite file with FTS5, no server, no model (docs/backends.md#embedded-store).

``LocalBackend`` implements the ``MemoryBackend`` protocol with the server's semantics where
they matter to callers — banks that never see each other, documents with ``replace``/``append``,
Hindsight ``tag_groups``, effectively-once delivery by ``operation_id`` — and the docs/backends.md#embedded-store
ranking.
It also offers what ``memory_edit`` and ``doctor`` need (get/list/update/forget/invalidate,
``quick_check``).

Design notes (ADR 005):

- one connection per thread (``threading.local``), re-opened after ``fork``; every write is one
  ``BEGIN IMMEDIATE`` transaction, so a batch lands whole or not at all;
- reads run in a deferred transaction (one snapshot) and never write;
- each bank owns a rowid range, so FTS5 itself keeps banks apart;
- recall is abortable: a progress handler stops SQLite at the deadline or when ``signal`` is set.

``LocalBackend`` is put together here from one part per job (ADR 156): connections and
transactions (``local_connections``), vectors and their worker (``local_vector_wiring``), the
write path (``local_retain``), the read path (``local_recall``, rows to hits in ``local_hits``)
and the per-unit edits (``local_edit``). This module keeps construction, ``health``,
``quick_check`` and ``close``.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from .base import BackendError
from .capabilities import LOCAL, Capabilities, StoreCheck
from .local_dense import shared_index
from .local_edit import LocalEdit
from .local_embedding import QUIET_S as VECTOR_QUIET_S
from .local_embedding import STARTUP_S as VECTOR_STARTUP_S
from .local_embedding import VectorWorker
from .local_query import MAX_WINDOWS, RANK_WINDOW, TermCounts
from .local_recall import BUDGET_SCALE, LocalRecall
from .local_retain import OPERATION_RETENTION_S, LocalRetain
from .local_schema import SCHEMA_VERSION, check_fts5, is_read_only, prepare_file
from .semantic import StaticEmbedder

__all__ = ["BUDGET_SCALE", "DEFAULT_RECALL_LIMIT", "OPERATION_RETENTION_S", "LocalBackend"]

DEFAULT_RECALL_LIMIT = 8


class LocalBackend(LocalRetain, LocalEdit, LocalRecall):
    """The embedded SQLite + FTS5 memory store (all banks in one file)."""

    name = "local"
    rank_window = RANK_WINDOW  # FTS matches ranked per query step (ADR 005); tests and bench may lower it
    max_windows = MAX_WINDOWS

    def __init__(
        self,
        path: Path,
        *,
        embedder: object | None = None,
        clock: Callable[[], float] | None = None,
        recall_limit: int = DEFAULT_RECALL_LIMIT,
        semantic: StaticEmbedder | None = None,
        vector_quiet_s: float = VECTOR_QUIET_S,
        vector_startup_s: float = VECTOR_STARTUP_S,
    ) -> None:
        self.path = Path(os.path.expanduser(str(path)))
        self._embedder = embedder
        # The [semantic] extra (ADR 116): vectors written by a background worker, searched in memory.
        self._semantic = semantic if embedder is None else None
        self._term_counts = TermCounts()
        self._worker: VectorWorker | None = None
        self._vector_quiet_s = vector_quiet_s
        self._clock = clock or time.time
        self.recall_limit = max(1, int(recall_limit))
        self._local = threading.local()
        self._lock = threading.Lock()
        # Every open connection: (pid, the thread it belongs to, connection). A thread that ends
        # leaves its connection here; the next thread without one takes it over (``_adopt``).
        self._conns: list[tuple[int, threading.Thread, sqlite3.Connection]] = []
        self._schema_pid: int | None = None
        self.last_search_mode = ""
        check_fts5()
        prepare_file(self.path)
        self._conn()
        self._dense = shared_index(self.path)  # one per store file in this process (a new session starts warm)
        if self._semantic is not None:
            self._worker = self._new_worker()
            # The model loads and old units get vectors in the background, after a short delay: a
            # process that runs one hook and exits never pays for it (ADR 116).
            self._worker.start_after(vector_startup_s)

    @property
    def capabilities(self) -> Capabilities:
        """``LOCAL``; with a foreign embedder, recall no longer bounds itself.

        Every wait of a recall is inside SQLite and bounded: the progress handler stops
        statements, lock waits are sliced (``_until``). An embedder is foreign code with no such
        bound, so with one the caller must keep its own watchdog (plugin recall dispatch, ADR 053).
        """
        return LOCAL if self._embedder is None else replace(LOCAL, bounded_recall=False)

    def health(self, timeout_s: float | None = None) -> dict[str, Any]:
        """Cheap liveness: the file opens, is ours, and FTS5 answers."""
        with self._read("health", timeout_s) as conn:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            banks = int(conn.execute("SELECT count(*) FROM banks").fetchone()[0])
            conn.execute("SELECT rowid FROM units_fts WHERE units_fts MATCH '\"health\"' LIMIT 1").fetchall()
        return {"status": "ok", "backend": "local", "path": str(self.path), "schema_version": version,
                "fts5": True, "banks": banks}  # fmt: skip

    def quick_check(self) -> list[str]:
        """Problems found by ``PRAGMA quick_check`` and the FTS5 index check (empty = healthy)."""
        return self.check_store().problems

    def check_store(self) -> StoreCheck:
        """``quick_check``'s damage, and apart from it whether this process may write the store.

        FTS5's ``'integrity-check'`` is an INSERT: SQLite (3.40 here; ``PRAGMA integrity_check``
        covers FTS5 only from 3.44) runs it only on a writable file, even though it changes
        nothing. On a read-only file it fails with "attempt to write a readonly database", which is
        no damage: it is reported as ``read_only`` so doctor says "make it writable", never
        "restore from a backup".
        """
        problems: list[str] = []
        try:
            with self._read("quick_check") as conn:
                rows = [str(r[0]) for r in conn.execute("PRAGMA quick_check")]
                version = int(conn.execute("PRAGMA user_version").fetchone()[0])
                has_fts = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'units_fts'").fetchone() is not None
        except BackendError as exc:
            return StoreCheck([exc.detail])
        if rows != ["ok"]:
            problems.extend(f"quick_check: {r}" for r in rows[:5])
        if version != SCHEMA_VERSION:
            problems.append(f"schema version {version}, expected {SCHEMA_VERSION}")
        if not has_fts:
            problems.append("the FTS5 index units_fts is missing")
            return StoreCheck(problems)
        index = self.check_index()
        return StoreCheck(problems + index.problems, read_only=index.read_only)

    def check_index(self) -> StoreCheck:
        """FTS5's own check of the search index alone (``check_store`` without ``quick_check``):
        for a caller that has checked the pages already (``hindsight-hooks repair``, ADR 189)."""
        try:
            with self._write("quick_check") as conn:
                conn.execute("INSERT INTO units_fts(units_fts, rank) VALUES ('integrity-check', 1)")
        except BackendError as exc:
            if is_read_only(exc):
                return StoreCheck([], read_only=exc.detail)
            return StoreCheck([f"FTS5 index: {exc.detail}"])
        return StoreCheck([])

    def close(self) -> None:
        """Close this process's connections (a later call simply reopens).

        The vector worker is stopped first: a connection must never be closed under a thread
        that is using it. A later retain or recall starts a new worker.
        """
        if self._worker is not None and self._worker.owner_pid == os.getpid():
            self._worker.stop()
            self._worker = self._new_worker()
        pid = os.getpid()
        with self._lock:
            mine = [c for p, _, c in self._conns if p == pid]
            self._conns = [(p, t, c) for p, t, c in self._conns if p != pid]
        for conn in mine:
            with contextlib.suppress(sqlite3.Error):
                conn.close()
        self._local = threading.local()
