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
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import orjson

from ..errors import HindsightHooksError
from ..timefmt import epoch_from_iso, iso_from_epoch, normalize_timestamp
from .base import (
    BackendError,
    BankSpec,
    MemoryHit,
    RecallRequest,
    RecallResult,
    ReflectRequest,
    ReflectResult,
    RetainOutcome,
)
from .capabilities import LOCAL, Capabilities
from .local_dense import DenseIndex
from .local_embedding import QUIET_S as VECTOR_QUIET_S
from .local_embedding import STARTUP_S as VECTOR_STARTUP_S
from .local_embedding import Backfill, VectorWorker, count_missing
from .local_fusion import fuse_scores
from .local_query import (
    D_CONTENT,
    D_CONTEXT,
    D_DOC,
    D_OCCURRED,
    D_SOURCE,
    D_TAGS,
    D_TYPE,
    K_CREATED,
    K_ID,
    K_IMPORTANCE,
    K_RANK,
    K_ROWID,
    MAX_WINDOWS,
    R_CONTENT,
    R_CONTEXT,
    R_CREATED,
    R_DOC,
    R_ID,
    R_IMPORTANCE,
    R_OCCURRED,
    R_RANK,
    R_ROWID,
    R_SOURCE,
    R_TAGS,
    R_TYPE,
    RANK_COLUMNS,
    RANK_WINDOW,
    UNIT_COLUMNS,
    CandidateSearch,
    Filters,
    SearchResult,
    fetch_details,
    tag_groups_sql,
)
from .local_rank import (
    Candidate,
    covered_in_order,
    cut_to_budget,
    distinct_shown,
    order_candidates,
    score_candidates,
    term_keys,
)
from .local_reflect import reflect_query, sandwich
from .local_schema import (
    BUSY_TIMEOUT_MS,
    MAX_SLOT,
    SCHEMA_VERSION,
    SLOT_BITS,
    check_fts5,
    connect,
    ensure_schema,
    map_error,
    prepare_file,
    slot_range,
    store_error,
)
from .local_script import unit_script_terms
from .local_text import StemFinder, content_words, query_terms
from .local_time import newer_first, time_window
from .local_units import ATTRIBUTES, derive_units, origin_of
from .local_vectors import NEWEST_FOR_DENSE, cosine, from_blob, model_name, normalise, to_blob
from .local_write import PreparedItem, ensure_staging, hash16, store_batch
from .semantic import StaticEmbedder
from .tag_groups import TagGroupError, validate_tag_groups

DEFAULT_RECALL_LIMIT = 8
BUDGET_SCALE = {"low": 0.5, "mid": 1.0, "high": 2.0}
OPERATION_RETENTION_S = 90 * 24 * 3600.0
_PROGRESS_STEPS = 2000
_WAIT_SLICE_S = 0.025  # lock waits of a bounded read re-check the deadline and signal this often
_UPDATE_MODES = ("replace", "append")


class LocalBackend:
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
        self._dense = DenseIndex()
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
        if self._semantic is not None:
            self._worker = self._new_worker()
            # The model loads and old units get vectors in the background, after a short delay: a
            # process that runs one hook and exits never pays for it (ADR 116).
            self._worker.start_after(vector_startup_s)

    def _new_worker(self) -> VectorWorker:
        assert self._semantic is not None
        return VectorWorker(
            self._semantic,
            lambda: self._read("embed"),
            lambda: self._write("embed"),
            self._vectors_written,
            self._close_thread_connection,
            self._vector_quiet_s,
        )

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

    # -- connections and transactions ------------------------------------------------------------

    @property
    def capabilities(self) -> Capabilities:
        """``LOCAL``; with a foreign embedder, recall no longer bounds itself.

        Every wait of a recall is inside SQLite and bounded: the progress handler stops
        statements, lock waits are sliced (``_until``). An embedder is foreign code with no such
        bound, so with one the caller must keep its own watchdog (plugin recall dispatch, ADR 053).
        """
        return LOCAL if self._embedder is None else replace(LOCAL, bounded_recall=False)

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

    # -- protocol ----------------------------------------------------------------------------------

    def health(self, timeout_s: float | None = None) -> dict[str, Any]:
        """Cheap liveness: the file opens, is ours, and FTS5 answers."""
        with self._read("health", timeout_s) as conn:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            banks = int(conn.execute("SELECT count(*) FROM banks").fetchone()[0])
            conn.execute("SELECT rowid FROM units_fts WHERE units_fts MATCH '\"health\"' LIMIT 1").fetchall()
        return {"status": "ok", "backend": "local", "path": str(self.path), "schema_version": version,
                "fts5": True, "banks": banks}  # fmt: skip

    def ensure_bank(self, bank_id: str, spec: BankSpec, timeout_s: float | None = None) -> bool:
        """Insert the bank row with the configured missions; True when it was created now."""
        _check_bank_id("ensure_bank", bank_id)
        with self._write("ensure_bank", timeout_s) as conn:
            return self._insert_bank(conn, bank_id, spec)[1]

    def bank_exists(self, bank_id: str, timeout_s: float | None = None) -> bool:
        with self._read("bank_exists", timeout_s) as conn:
            return self._slot(conn, bank_id) is not None

    def retain_batch(
        self,
        bank_id: str,
        items: list[dict[str, Any]],
        *,
        operation_id: str,
        async_: bool = True,
        timeout_s: float | None = None,
    ) -> RetainOutcome:
        """Store a whole batch in one transaction; a repeated ``operation_id`` is a no-op.

        Re-delivery after a crash (same job id) returns the first delivery's outcome without
        writing again, which makes the queue's at-least-once delivery effectively once.
        """
        _check_bank_id("retain", bank_id)
        if not isinstance(operation_id, str) or not operation_id:
            raise BackendError("retain", "permanent", "operation_id must be a non-empty string")
        if not isinstance(items, list) or not items:
            raise BackendError("retain", "permanent", "a retain batch needs at least one item")
        now = self._now()
        prepared = [_prepare_item(i, item, now) for i, item in enumerate(items)]
        done = self._applied(bank_id, operation_id, timeout_s)
        if done is not None:
            return done
        self._embed_items(prepared)
        with self._write("retain", timeout_s) as conn:
            row = conn.execute(
                "SELECT items_count, unit_ids_json FROM operations WHERE bank_id = ? AND operation_id = ?",
                (bank_id, operation_id),
            ).fetchone()
            if row is not None:
                return RetainOutcome(items_count=int(row[0]), unit_ids=list(orjson.loads(row[1])))
            slot, _ = self._insert_bank(conn, bank_id, None)
            now_iso = iso_from_epoch(now)
            model = model_name(self._embedder) if self._embedder is not None else ""
            try:
                unit_ids = store_batch(conn, bank_id, slot_range(slot), prepared, now_iso, model, to_blob)
            except OverflowError:
                raise store_error("retain", self.path, f"bank {bank_id!r} has no free unit ids left") from None
            conn.execute(
                "INSERT INTO operations(bank_id, operation_id, applied_at, items_count, unit_ids_json) "
                "VALUES (?, ?, ?, ?, ?)",
                (bank_id, operation_id, now_iso, len(items), orjson.dumps(unit_ids).decode("utf-8")),
            )
            conn.execute("DELETE FROM operations WHERE applied_at < ?", (iso_from_epoch(now - OPERATION_RETENTION_S),))
        if self._worker is not None:
            self._worker.notify(unit_ids)  # vectors after the durable write, off the caller's path
        return RetainOutcome(items_count=len(items), unit_ids=unit_ids)

    @property
    def semantic(self) -> StaticEmbedder | None:
        return self._semantic

    def wait_for_vectors(self, timeout: float | None = None) -> bool:
        """Wait until the model is loaded and every unit retained so far has its vector.

        Hooks never call this; the backfill command, the benches and the tests do.
        """
        if self._semantic is None or self._worker is None:
            return True
        end = None if timeout is None else time.monotonic() + timeout
        if not self._semantic.wait_ready(timeout):
            return False
        self._worker.hurry()
        return self._worker.wait_idle(None if end is None else max(0.0, end - time.monotonic()))

    def backfill(self, stop: threading.Event | None = None) -> Iterator[tuple[int, int]]:
        """Embed every unit without a vector; yields (done so far, missing at start) per batch."""
        if self._semantic is None:
            return
        if self._worker is not None:
            self._worker.leave_catch_up()  # the same units, embedded once: here
        with self._read("embed") as conn:
            missing, _ = count_missing(conn, self._semantic.model)
        done = 0
        yield done, missing
        for written in Backfill(self._semantic, lambda: self._read("embed"), lambda: self._write("embed")).batches(
            stop
        ):
            done += written
            yield done, missing

    def vector_counts(self) -> tuple[int, int]:
        """(units without a vector of the semantic model, all units); (0, n) without the extra."""
        with self._read("embed") as conn:
            if self._semantic is None:
                return 0, int(conn.execute("SELECT count(*) FROM units").fetchone()[0])
            return count_missing(conn, self._semantic.model)

    def _applied(self, bank_id: str, operation_id: str, timeout_s: float | None) -> RetainOutcome | None:
        with self._read("retain", timeout_s) as conn:
            row = conn.execute(
                "SELECT items_count, unit_ids_json FROM operations WHERE bank_id = ? AND operation_id = ?",
                (bank_id, operation_id),
            ).fetchone()
        if row is None:
            return None
        return RetainOutcome(items_count=int(row[0]), unit_ids=list(orjson.loads(row[1])))

    def _embed_items(self, prepared: list[PreparedItem]) -> None:
        """Vectors for every new unit, computed before the write lock; failures leave them out."""
        if self._embedder is None:
            return
        texts = [t for item in prepared for t in item.unit_texts]
        vectors = self._embed(texts) if texts else []
        it = iter(vectors)
        for item in prepared:
            item.vectors = [next(it, None) for _ in item.unit_texts]

    def _embed(self, texts: list[str]) -> list[list[float] | None]:
        """Normalised vectors, or ``None`` per text when the embedder fails (it is optional)."""
        try:
            raw = self._embedder.embed(texts)  # type: ignore[union-attr]
        except Exception:
            return [None for _ in texts]
        if not isinstance(raw, list) or len(raw) != len(texts):
            return [None for _ in texts]
        return [normalise(v) if isinstance(v, list | tuple) else None for v in raw]

    def recall(
        self,
        bank_id: str,
        request: RecallRequest,
        timeout_s: float | None = None,
        signal: threading.Event | None = None,
    ) -> RecallResult:
        """docs/backends.md#embedded-store ranking over one bank: FTS candidates that pass the filters, scored, cut to
        budget.

        An unknown bank is ``not_found`` (as the server's 404), so callers re-ensure it instead
        of reading "no memories". A query without terms finds nothing.
        """
        try:
            groups = validate_tag_groups(request.tag_groups)
        except TagGroupError as exc:
            raise BackendError("recall", "permanent", str(exc)) from None
        reference = self._now()
        if request.query_timestamp:
            parsed = epoch_from_iso(request.query_timestamp)
            if parsed is None:
                raise BackendError("recall", "permanent", "query_timestamp is not an ISO 8601 timestamp")
            reference = parsed
        terms = query_terms(request.query)
        limit = request.limit or self.recall_limit
        types = None if not request.types or "observation" in request.types else list(request.types)
        tag_sql, tag_params = tag_groups_sql(groups)
        qvec = self._embed([request.query])[0] if terms and self._embedder is not None else None
        svec = None
        if self._semantic is not None and not self._semantic.ready:
            self._semantic.start_loading_if_settled()  # lexical meanwhile: a hook process never waits
        elif self._semantic is not None:  # the query's content words only once the model can embed them
            svec = self._semantic.query_vector(content_words(request.query))
        with self._read("recall", timeout_s, signal) as conn:
            slot = self._slot(conn, bank_id)
            if slot is None:
                raise BackendError("recall", "not_found", "memory bank does not exist in the local store")
            if not terms and svec is None:
                return RecallResult(hits=[])
            lo, hi = slot_range(slot)
            filters = Filters(bank_id, iso_from_epoch(self._now()), types, tag_sql, tag_params)
            # Hindsight's budget is search depth; here it scales how many matches get ranked.
            window = max(1, int(self.rank_window * BUDGET_SCALE.get(request.budget, 1.0)))
            search = CandidateSearch(conn, lo, hi, filters, window=window, max_windows=self.max_windows)
            need = max(limit * 3, 50)
            result = search.run(terms, need, limit) if terms else SearchResult([], "empty")
            self.last_search_mode = result.mode
            candidates = [_ranked_candidate(row) for row in result.rows]
            dense_mode = qvec is not None and self._add_dense(conn, qvec, candidates, lo, hi, filters, limit)
            hybrid = svec is not None and self._add_semantic(conn, svec, candidates, lo, hi, filters, need)
            if hybrid:
                self.last_search_mode += "+dense"
            period = time_window(request.query, reference)
            said_then = self._add_window(conn, candidates, filters, period, need) if period else set()
            if said_then:
                self.last_search_mode += "+time"
            keys = term_keys(terms)
            finder = StemFinder(frozenset(stem for key in keys for stem in key))
            if hybrid or said_then:  # a question about a time: what was said then is one more order (ADR 118)
                floor = self._semantic.floor if hybrid and self._semantic is not None else 0.0
                fuse_scores(candidates, reference, floor, frozenset(said_then))
            else:
                score_candidates(candidates, reference, dense_mode=dense_mode)
            ordered = order_candidates(candidates)
            chosen = cut_to_budget(
                distinct_shown(covered_in_order(_detailed(conn, ordered, max(2 * limit, 10)), keys, finder.found)),
                limit,
                request.max_tokens,
            )
        # When a decision changed, the statement that holds now comes first; both stay (ADR 118).
        chosen = newer_first(chosen, text=lambda c: c.content, epoch=_said_epoch)
        return RecallResult(hits=[_hit(c) for c in chosen])

    def _add_window(
        self,
        conn: sqlite3.Connection,
        candidates: list[Candidate],
        filters: Filters,
        window: tuple[float, float],
        need: int,
    ) -> set[int]:
        """The units said in ``window`` (newest ``need``), added as candidates; returns all of theirs.

        Units found by their words or vector keep their scores; units found only by their time
        come with no rank (like vector-only hits, they are exempt from the coverage rule).
        """
        where, params = filters.where()
        rows = conn.execute(
            f"SELECT {RANK_COLUMNS}, NULL FROM units AS u WHERE u.created_at >= ? AND u.created_at < ?{where} "
            "ORDER BY u.created_at DESC LIMIT ?",
            [iso_from_epoch(window[0]), iso_from_epoch(window[1]), *params, need],
        ).fetchall()
        have = {c.rowid: c for c in candidates}
        inside: set[int] = set()
        for row in rows:
            rowid = int(row[K_ROWID])
            inside.add(rowid)
            if rowid not in have:
                cand = _ranked_candidate((*row[:K_RANK], 0.0))
                cand.rank = None
                candidates.append(cand)
        inside.update(c.rowid for c in candidates if window[0] <= c.created_epoch < window[1])
        return inside

    def _add_semantic(
        self,
        conn: sqlite3.Connection,
        svec: Any,
        candidates: list[Candidate],
        lo: int,
        hi: int,
        filters: Filters,
        need: int,
    ) -> bool:
        """Cosine of every candidate plus the bank's ``need`` nearest units that pass the filters.

        False (the recall stays lexical) while the bank's matrix is not in memory yet: loading
        100k vectors would cost the hook ~0.3 s, so the worker loads it and the next turn has it.
        """
        assert self._semantic is not None and self._worker is not None
        model = self._semantic.model
        if not self._dense.is_warm(lo, model):
            self._worker.submit(partial(self._warm, lo, hi, model))
            return False
        bank = self._dense.refresh(conn, lo, hi, model, self._semantic.dim)
        # Deleted or filtered units may take places among the nearest: ask for more than needed.
        nearest = self._dense.top(bank, svec, need + 20)
        sims = dict(nearest)
        sims.update(self._dense.similarity(bank, svec, [c.rowid for c in candidates if c.rowid not in sims]))
        for cand in candidates:
            cand.dense = sims.get(cand.rowid, 0.0)
        have = {c.rowid for c in candidates}
        extra = [rowid for rowid, sim in nearest if rowid not in have and sim >= self._semantic.floor]
        if extra:
            where, params = filters.where()
            # The listed rowids drive the loop (CROSS JOIN): with ``u.bank_id = ?`` in the filters
            # SQLite would otherwise walk the bank's index (100k rows) to find ~70 units.
            rows = conn.execute(
                f"SELECT {RANK_COLUMNS}, NULL FROM json_each(?) AS j CROSS JOIN units AS u ON u.rowid = j.value "
                f"WHERE 1{where}",
                [orjson.dumps(extra).decode("ascii"), *params],
            ).fetchall()
            by_rowid = {int(r[K_ROWID]): r for r in rows}
            for rowid in extra:
                row = by_rowid.get(rowid)
                if row is None or sims[rowid] < self._semantic.floor:
                    continue
                cand = _ranked_candidate((*row[:K_RANK], 0.0))
                cand.rank = None
                cand.dense = sims[rowid]
                candidates.append(cand)
                if len(candidates) >= len(have) + need:
                    break
        return True

    def _vectors_written(self, rowids: list[int]) -> None:
        """On the worker thread: bring the matrices of the banks that got vectors up to date, so
        the next recall there has them (a process that retains into a bank recalls it too)."""
        assert self._semantic is not None
        for slot in sorted({rowid >> SLOT_BITS for rowid in rowids}):
            lo, hi = slot_range(slot)
            self._warm(lo, hi, self._semantic.model)

    def _warm(self, lo: int, hi: int, model: str) -> None:
        assert self._semantic is not None
        with self._read("embed") as conn:
            self._dense.refresh(conn, lo, hi, model, self._semantic.dim)

    def _add_dense(
        self,
        conn: sqlite3.Connection,
        qvec: list[float],
        candidates: list[Candidate],
        lo: int,
        hi: int,
        filters: Filters,
        limit: int,
    ) -> bool:
        """Cosine scores for the FTS candidates plus the best of the newest units (dense mode on)."""
        model = model_name(self._embedder)
        by_id = {c.id: c for c in candidates}
        if by_id:
            marks = ", ".join("?" for _ in by_id)
            for unit_id, blob in conn.execute(
                f"SELECT unit_id, vector FROM unit_vectors WHERE model = ? AND unit_id IN ({marks})", [model, *by_id]
            ):
                by_id[unit_id].dense = cosine(qvec, from_blob(blob))
        where, params = filters.where()
        newest = conn.execute(
            f"SELECT {UNIT_COLUMNS}, NULL, v.vector FROM units AS u "
            "JOIN unit_vectors AS v ON v.unit_id = u.id "
            "JOIN documents AS d ON d.bank_id = u.bank_id AND d.document_id = u.document_id "
            f"WHERE u.rowid BETWEEN ? AND ? AND v.model = ?{where} ORDER BY u.rowid DESC LIMIT ?",
            [lo, hi, model, *params, NEWEST_FOR_DENSE],
        ).fetchall()
        scored = []
        for row in newest:
            if row[R_ID] in by_id:
                continue
            sim = cosine(qvec, from_blob(row[-1]))
            if sim > 0.0:
                scored.append((sim, row))
        scored.sort(key=lambda pair: -pair[0])
        for sim, row in scored[:limit]:
            cand = _candidate((*row[:R_RANK], None))
            cand.rank = None
            cand.dense = sim
            candidates.append(cand)
        return True

    def reflect(
        self,
        bank_id: str,
        request: ReflectRequest,
        timeout_s: float | None = None,
        signal: threading.Event | None = None,
    ) -> ReflectResult:
        """docs/tools.md#hindsight_reflect on the local backend: recall, then the Top/Supporting/Recent sandwich. No
        LLM."""
        recalled = self.recall(
            bank_id,
            RecallRequest(
                query=reflect_query(request.query, request.context),
                budget=request.budget,
                max_tokens=request.max_tokens if request.max_tokens is not None else 4096,
                tag_groups=request.tag_groups,
                limit=self.recall_limit,
            ),
            timeout_s=timeout_s,
            signal=signal,
        )
        return ReflectResult(text=sandwich(recalled.hits))

    # -- memory_edit and listing --------------------------------------------------------------------

    def get_unit(self, bank_id: str, unit_id: str) -> MemoryHit | None:
        """One unit of this bank by id (invalidated ones included), without a score."""
        with self._read("get_unit") as conn:
            row = conn.execute(
                f"SELECT {UNIT_COLUMNS} FROM units AS u JOIN documents AS d "
                "ON d.bank_id = u.bank_id AND d.document_id = u.document_id WHERE u.bank_id = ? AND u.id = ?",
                (bank_id, unit_id),
            ).fetchone()
        return None if row is None else _hit(_candidate((*row, None)), scored=False)

    def list_units(
        self,
        bank_id: str,
        limit: int,
        offset: int,
        tag_groups: list[dict[str, Any]] | None = None,
        *,
        include_invalid: bool = False,
    ) -> list[MemoryHit]:
        """Units newest first (then by id), optionally filtered by ``tag_groups``."""
        try:
            groups = validate_tag_groups(tag_groups)
        except TagGroupError as exc:
            raise BackendError("list", "permanent", str(exc)) from None
        tag_sql, tag_params = tag_groups_sql(groups)
        validity = ""
        if not include_invalid:
            validity = " AND u.superseded_by IS NULL AND (u.valid_until IS NULL OR u.valid_until > ?)"
        params: list[Any] = [bank_id]
        if not include_invalid:
            params.append(iso_from_epoch(self._now()))
        with self._read("list") as conn:
            rows = conn.execute(
                f"SELECT {UNIT_COLUMNS} FROM units AS u JOIN documents AS d "
                "ON d.bank_id = u.bank_id AND d.document_id = u.document_id "
                f"WHERE u.bank_id = ?{validity} AND {tag_sql} ORDER BY u.created_at DESC, u.id LIMIT ? OFFSET ?",
                [*params, *tag_params, max(0, int(limit)), max(0, int(offset))],
            ).fetchall()
        return [_hit(_candidate((*r, None)), scored=False) for r in rows]

    def update_unit(
        self,
        bank_id: str,
        unit_id: str,
        content: str | None = None,
        importance: float | None = None,
        *,
        before: Callable[[sqlite3.Connection], None] | None = None,
    ) -> bool:
        """Replace content and/or importance (re-indexed by trigger); False when the unit is absent.

        ``before`` runs first inside the same transaction (the memories command records the
        old text there, so an edit and its history land together or not at all)."""
        if content is None and importance is None:
            raise BackendError("update", "permanent", "update requires content or importance")
        if content is not None and not content.strip():
            raise BackendError("update", "permanent", "content must not be empty")
        vector = self._embed([content])[0] if content is not None and self._embedder is not None else None
        with self._write("update") as conn:
            if before is not None:
                before(conn)
            sets: list[str] = []
            params: list[Any] = []
            if content is not None:
                row = conn.execute(
                    "SELECT context FROM units WHERE bank_id = ? AND id = ?", (bank_id, unit_id)
                ).fetchone()
                sets.append("content = ?, script_terms = ?")
                params.extend([content, unit_script_terms(content, str(row[0]) if row else "")])
            if importance is not None:
                sets.append("importance = ?")
                params.append(min(1.0, max(0.0, float(importance))))
            cur = conn.execute(f"UPDATE units SET {', '.join(sets)} WHERE bank_id = ? AND id = ?",
                               [*params, bank_id, unit_id])  # fmt: skip
            if cur.rowcount == 0:
                return False
            if content is not None:
                conn.execute("DELETE FROM unit_vectors WHERE unit_id = ?", (unit_id,))
                if vector is not None:
                    conn.execute("INSERT INTO unit_vectors(unit_id, model, vector) VALUES (?, ?, ?)",
                                 (unit_id, model_name(self._embedder), to_blob(vector)))  # fmt: skip
        if content is not None and self._worker is not None:
            self._worker.notify([unit_id])  # a new vector row replaces the old one in memory too
        return True

    def forget_unit(self, bank_id: str, unit_id: str) -> bool:
        """Hard delete (tags, vector and index entry go with it)."""
        with self._write("forget") as conn:
            return conn.execute("DELETE FROM units WHERE bank_id = ? AND id = ?", (bank_id, unit_id)).rowcount > 0

    def invalidate_unit(self, bank_id: str, unit_id: str, replacement_id: str | None = None) -> bool:
        """``valid_until = now`` and ``superseded_by = replacement_id``: recall stops returning it."""
        with self._write("invalidate") as conn:
            cur = conn.execute(
                "UPDATE units SET valid_until = ?, superseded_by = ? WHERE bank_id = ? AND id = ?",
                (iso_from_epoch(self._now()), replacement_id, bank_id, unit_id),
            )
            return cur.rowcount > 0

    def document_text(self, bank_id: str, document_id: str, timeout_s: float | None = None) -> str | None:
        """A document's whole text (its parts in order), or None when it does not exist.

        Read by the retain-cursor recovery (ADR-066): the live document of a session holds the
        projection of every turn delivered for it.
        """
        from .local_write import document_text

        with self._read("document_text", timeout_s) as conn:
            return document_text(conn, bank_id, document_id)

    def delete_document(self, bank_id: str, document_id: str) -> int:
        """Remove a document and all its units; returns how many units were deleted."""
        with self._write("delete_document") as conn:
            n = conn.execute("DELETE FROM units WHERE bank_id = ? AND document_id = ?", (bank_id, document_id)).rowcount
            conn.execute("DELETE FROM documents WHERE bank_id = ? AND document_id = ?", (bank_id, document_id))
            return int(n)

    # -- maintenance --------------------------------------------------------------------------------

    def quick_check(self) -> list[str]:
        """Problems found by ``PRAGMA quick_check`` and the FTS5 index check (empty = healthy)."""
        problems: list[str] = []
        try:
            with self._read("quick_check") as conn:
                rows = [str(r[0]) for r in conn.execute("PRAGMA quick_check")]
                version = int(conn.execute("PRAGMA user_version").fetchone()[0])
                has_fts = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'units_fts'").fetchone() is not None
        except BackendError as exc:
            return [exc.detail]
        if rows != ["ok"]:
            problems.extend(f"quick_check: {r}" for r in rows[:5])
        if version != SCHEMA_VERSION:
            problems.append(f"schema version {version}, expected {SCHEMA_VERSION}")
        if not has_fts:
            problems.append("the FTS5 index units_fts is missing")
            return problems
        try:
            with self._write("quick_check") as conn:
                conn.execute("INSERT INTO units_fts(units_fts, rank) VALUES ('integrity-check', 1)")
        except BackendError as exc:
            problems.append(f"FTS5 index: {exc.detail}")
        return problems

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


# -- helpers -----------------------------------------------------------------------------------------


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


def _check_bank_id(operation: str, bank_id: object) -> None:
    if not isinstance(bank_id, str) or not bank_id:
        raise BackendError(operation, "permanent", "bank_id must be a non-empty string")


def _prepare_item(index: int, item: object, now: float) -> PreparedItem:
    """Validate one wire item and derive its units; errors name the item, never its content."""

    def bad(problem: str) -> BackendError:
        return BackendError("retain", "permanent", f"item {index}: {problem}")

    if not isinstance(item, Mapping):
        raise bad("must be an object")
    content = item.get("content")
    if not isinstance(content, str):
        raise bad("content must be a string")
    if not content.strip():
        raise bad("content must not be empty")
    context = item.get("context") or ""
    if not isinstance(context, str):
        raise bad("context must be a string")
    document_id = item.get("document_id")
    if document_id is None:
        document_id = "hh-unit:" + hash16(content)
    if not isinstance(document_id, str) or not document_id:
        raise bad("document_id must be a non-empty string")
    mode = item.get("update_mode") or "replace"
    if mode not in _UPDATE_MODES:
        raise bad("update_mode must be 'replace' or 'append'")
    tags = item.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise bad("tags must be a list of strings")
    metadata = item.get("metadata") or {}
    if not isinstance(metadata, Mapping):
        raise bad("metadata must be an object")
    occurred = normalize_timestamp(item.get("timestamp"))
    created_at = occurred or iso_from_epoch(now)
    units, shape = derive_units(content)
    attrs = ATTRIBUTES[origin_of(metadata, shape)]
    return PreparedItem(
        document_id=document_id,
        update_mode=mode,
        content=content,
        context=context,
        tags=list(dict.fromkeys(tags)),
        metadata=dict(metadata),
        created_at=created_at,
        occurred_at=occurred,
        unit_texts=[u.content for u in units],
        unit_times=[u.occurred_at for u in units],
        type=attrs.type,
        source=attrs.source,
        importance=attrs.importance,
    )


def _candidate(row: tuple[Any, ...]) -> Candidate:
    """A fully read candidate from a ``UNIT_COLUMNS`` row plus its rank."""
    created = str(row[R_CREATED])
    return Candidate(
        rowid=int(row[R_ROWID]),
        id=str(row[R_ID]),
        importance=float(row[R_IMPORTANCE]),
        created_at=created,
        created_epoch=epoch_from_iso(created) or 0.0,
        rank=None if row[R_RANK] is None else float(row[R_RANK]),
        content=str(row[R_CONTENT]),
        context=str(row[R_CONTEXT] or ""),
        type=str(row[R_TYPE]),
        source=str(row[R_SOURCE]),
        document_id=str(row[R_DOC]),
        tags=list(orjson.loads(row[R_TAGS])),
        occurred_at=str(row[R_OCCURRED] or ""),
        detailed=True,
    )


def _ranked_candidate(row: tuple[Any, ...]) -> Candidate:
    """A candidate from a ranked search row: what scoring reads, details later."""
    created = str(row[K_CREATED])
    return Candidate(
        rowid=int(row[K_ROWID]),
        id=str(row[K_ID]),
        importance=float(row[K_IMPORTANCE]),
        created_at=created,
        created_epoch=epoch_from_iso(created) or 0.0,
        rank=float(row[K_RANK]),
    )


def _detailed(conn: sqlite3.Connection, ordered: list[Candidate], chunk: int) -> Iterator[Candidate]:
    """``ordered``, with text, kind, document and tags read a chunk at a time as they are pulled.

    The budget cut stops pulling after ``limit`` hits, so usually one statement reads the
    details of the first ``chunk`` candidates and the rest are never read.
    """
    for start in range(0, len(ordered), chunk):
        part = ordered[start : start + chunk]
        details = fetch_details(conn, [c.rowid for c in part if not c.detailed])
        for cand in part:
            if not cand.detailed:
                row = details.get(cand.rowid)
                if row is None:  # cannot happen inside one snapshot; never show a half-read unit
                    continue
                cand.content, cand.context = str(row[D_CONTENT]), str(row[D_CONTEXT] or "")
                cand.type, cand.source, cand.document_id = str(row[D_TYPE]), str(row[D_SOURCE]), str(row[D_DOC])
                cand.tags = list(orjson.loads(row[D_TAGS]))
                cand.occurred_at = str(row[D_OCCURRED] or "")
                cand.detailed = True
            yield cand


def _said_epoch(cand: Candidate) -> float:
    """When a unit was said: its message's own time, else when it was stored."""
    return (epoch_from_iso(cand.occurred_at) if cand.occurred_at else None) or cand.created_epoch


def _hit(cand: Candidate, scored: bool = True) -> MemoryHit:
    return MemoryHit(
        text=cand.content,
        id=cand.id,
        type=cand.type,
        tags=list(cand.tags),
        document_id=cand.document_id,
        score=cand.score if scored else None,
        source=cand.source,
        created_at=cand.created_at,
        importance=cand.importance,
        mentioned_at=cand.occurred_at or cand.created_at or None,  # when it was said (ADR 118)
    )
