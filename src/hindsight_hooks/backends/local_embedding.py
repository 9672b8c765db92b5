"""Computing unit vectors off the hook's path: a background worker, and the backfill it shares (ADR 116).

``retain_batch`` commits the units (the durable write the queue waits for) and then only hands
their ids to :class:`VectorWorker`; the worker loads the model if needed, embeds them in batches
and writes each batch in a short transaction of its own. A process that ends first (a host that
runs every hook in a fresh process) leaves those units without vectors: the next process's worker
catches up once on start, and ``hindsight-hooks embed`` does the whole store with a progress bar.
Both only ever look for units *without* a vector of the model, so any interruption resumes where
it stopped.

What is embedded: the unit's message without its ``role:`` label (every unit has one; it would
pull all vectors the same way) plus its turn terms (ADR 052: a reply carries the words of its
prompt that it lacks), so "Use 4821; the lower ones are taken" sits near "billing service port";
stop words are left out on both sides (``local_text.content_words``).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

from .local_dense import split_usable, to_blob
from .local_text import content_words, without_role_label
from .local_windows import neighbour_of

BATCH = 256
IDLE_S = 30.0  # a worker with nothing to do for this long ends (and closes its connection)
QUIET_S = 0.5  # vectors are written once no retain has arrived for this long
STARTUP_S = 2.0  # a new backend's worker starts (model load, catch-up) no sooner than this


class VectorEmbedder(Protocol):
    model: str

    def load(self) -> None: ...

    def embed_array(self, texts: list[str]) -> Any: ...


def embed_text(content: str, context: str) -> str:
    """The text a unit's vector is computed from (see the module doc)."""
    body = without_role_label(content)
    extra = neighbour_of(context)
    return content_words(f"{body}\n{extra}" if extra else body)


def missing_units(conn: sqlite3.Connection, model: str, after: int, limit: int) -> list[tuple[int, str, str, str]]:
    """Units after rowid ``after`` with no vector of ``model``: (rowid, id, content, context)."""
    return [
        (int(r[0]), str(r[1]), str(r[2]), str(r[3] or ""))
        for r in conn.execute(
            "SELECT u.rowid, u.id, u.content, u.context FROM units AS u WHERE u.rowid > ? AND NOT EXISTS "
            "(SELECT 1 FROM unit_vectors AS v WHERE v.unit_id = u.id AND v.model = ?) ORDER BY u.rowid LIMIT ?",
            (after, model, limit),
        )
    ]


def count_missing(conn: sqlite3.Connection, model: str) -> tuple[int, int]:
    """(units without a vector of ``model``, all units)."""
    total = int(conn.execute("SELECT count(*) FROM units").fetchone()[0])
    have = int(
        conn.execute(
            "SELECT count(*) FROM unit_vectors AS v JOIN units AS u ON u.id = v.unit_id WHERE v.model = ?", (model,)
        ).fetchone()[0]
    )
    return total - have, total


def damaged_vectors(conn: sqlite3.Connection, model: str, dim: int, chunk: int = 4096) -> list[str]:
    """Unit ids whose stored vector of ``model`` recall cannot use (``local_dense.split_usable``),
    for the ``embed`` command to compute again. Read in ``seq`` order, a chunk at a time."""
    damaged: list[str] = []
    after = 0
    while True:
        rows = conn.execute(
            "SELECT seq, unit_id, vector FROM unit_vectors WHERE model = ? AND seq > ? ORDER BY seq LIMIT ?",
            (model, after, chunk),
        ).fetchall()
        damaged += [str(r[1]) for r in split_usable(rows, dim)[2]]
        if len(rows) < chunk:
            return damaged
        after = int(rows[-1][0])


def forget_vectors(conn: sqlite3.Connection, model: str, unit_ids: list[str]) -> None:
    """Drop these units' vectors of ``model`` (inside the caller's write transaction): they become
    "without a vector" and the backfill computes them again from the units, which are untouched."""
    conn.executemany("DELETE FROM unit_vectors WHERE unit_id = ? AND model = ?", [(u, model) for u in unit_ids])


def write_vectors(conn: sqlite3.Connection, model: str, ids: list[str], vectors: Any) -> int:
    """Store one batch (inside the caller's write transaction); units deleted meanwhile are skipped."""
    # A text with no known token gets a zero vector: stored all the same (it never matches), so the
    # unit counts as done and the backfill does not come back to it.
    rows = [(uid, model, to_blob(vec)) for uid, vec in zip(ids, vectors, strict=True)]
    before = conn.total_changes
    conn.executemany(
        "INSERT OR REPLACE INTO unit_vectors(unit_id, model, vector) SELECT ?, ?, ? "
        "WHERE EXISTS (SELECT 1 FROM units WHERE id = ?1)",
        rows,
    )
    return conn.total_changes - before


Reader = Callable[[], AbstractContextManager[sqlite3.Connection]]
Writer = Callable[[], AbstractContextManager[sqlite3.Connection]]


@dataclass
class Backfill:
    """Embed every unit that lacks a vector, batch by batch; each batch commits on its own."""

    embedder: VectorEmbedder
    read: Reader
    write: Writer
    batch: int = BATCH
    written: Callable[[list[int]], None] | None = None  # unit rowids that got a vector
    pause: Callable[[], None] | None = None  # called before each batch (the worker yields to retains)

    def batches(self, stop: threading.Event | None = None) -> Iterator[int]:
        """Yields the number of vectors written per batch until none is missing (or ``stop``)."""
        self.embedder.load()
        after = 0
        while stop is None or not stop.is_set():
            if self.pause is not None:
                self.pause()
            with self.read() as conn:
                todo = missing_units(conn, self.embedder.model, after, self.batch)
            if not todo:
                return
            after = todo[-1][0]
            vectors = self.embedder.embed_array([embed_text(c, x) for _, _, c, x in todo])
            with self.write() as conn:
                written = write_vectors(conn, self.embedder.model, [uid for _, uid, _, _ in todo], vectors)
            if self.written is not None:
                self.written([rowid for rowid, _, _, _ in todo])
            yield written


class VectorWorker:
    """One daemon thread per backend: loads the model, warms bank matrices, embeds new units.

    ``done`` runs on the worker thread as it ends (the backend closes that thread's connection).
    """

    def __init__(
        self,
        embedder: VectorEmbedder,
        read: Reader,
        write: Writer,
        written: Callable[[list[int]], None] | None = None,
        done: Callable[[], None] | None = None,
        quiet_s: float = QUIET_S,
    ) -> None:
        self.embedder = embedder
        self.quiet_s = quiet_s
        self._written = written
        self._read = read
        self._write = write
        self.owner_pid = os.getpid()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._done = done
        self._stopped = False
        self._quiet_at = 0.0
        self._pending: list[str] = []
        self._tasks: list[Callable[[], None]] = []
        self._thread: threading.Thread | None = None
        self._caught_up = False
        self.idle = threading.Event()
        self.idle.set()
        self.error: str | None = None

    def notify(self, unit_ids: list[str]) -> None:
        """Embed these new units once the store has been quiet for ``QUIET_S`` (returns at once)."""
        with self._lock:
            self._pending.extend(unit_ids)
            if unit_ids:
                self._quiet_at = max(self._quiet_at, time.monotonic() + self.quiet_s)
        self._kick()

    def leave_catch_up(self) -> None:
        """Someone else embeds every missing unit now (``LocalBackend.backfill``): this worker
        skips its own catch-up, or ends it after the batch in hand, instead of doing it twice."""
        self._caught_up = True

    def start_after(self, delay_s: float) -> None:
        """Load the model and catch up on units without vectors, but not before ``delay_s``.

        A hook process that lives for one hook ends long before that, so it never pays for
        loading a model it would not use; a long-lived process (a host, the warm helper) does.
        """
        with self._lock:
            self._quiet_at = max(self._quiet_at, time.monotonic() + delay_s)
        self._kick()

    def hurry(self) -> None:
        """Embed without waiting for a quiet moment (the backfill command, tests, benches)."""
        with self._lock:
            self._quiet_at = 0.0
        self._kick()

    def submit(self, task: Callable[[], None]) -> None:
        """Run ``task`` on the worker thread soon (used to load a bank's matrix; reads only)."""
        with self._lock:
            self._tasks.append(task)
        self._kick()

    def _kick(self) -> None:
        if self.owner_pid != os.getpid():  # forked: the parent's thread (and maybe its lock) is not ours
            self.owner_pid = os.getpid()
            self._lock = threading.Lock()
            self._thread = None
        with self._lock:
            if self._stopped:
                return
            self.idle.clear()
            self._wake.set()
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="hindsight-vectors", daemon=True)
                self._thread.start()

    def _quiet_left(self) -> float:
        """Seconds until the store has been quiet long enough to write vectors (0 = now)."""
        with self._lock:
            return max(0.0, self._quiet_at - time.monotonic())

    def _await_quiet(self) -> None:
        """Wait (between batches too) while retains keep arriving: their writes go first."""
        while not self._stop.is_set():
            left = self._quiet_left()
            if left <= 0:
                return
            self._wake.wait(left)
            self._wake.clear()

    def _run(self) -> None:
        """Work while there is work; after ``IDLE_S`` without any, close this thread's connection and end.

        Reads (a bank's matrix) run at once; vector writes wait until no retain has arrived for
        ``QUIET_S``: a vector transaction holding the write lock, or the embedding holding the CPU,
        while a hook writes its turn would add its cost to the hook (measured: ``agent_end`` p50
        8.5 → 35 ms when the worker wrote as soon as it was told).
        """
        try:
            while True:
                with self._lock:
                    self._wake.clear()
                    tasks, self._tasks = self._tasks, []
                    embed_work = bool(self._pending) or not self._caught_up
                    if not tasks and not embed_work:
                        self.idle.set()
                if self._stopped:
                    return
                if tasks:
                    self._safely(partial(self._run_tasks, tasks))
                    continue
                if embed_work:
                    left = self._quiet_left()
                    if left > 0:
                        self._wake.wait(left)
                        continue
                    with self._lock:
                        pending, self._pending = self._pending, []
                    self._safely(partial(self._embed, pending))
                    continue
                if not self._wake.wait(IDLE_S):
                    with self._lock:
                        if not self._wake.is_set():
                            return
        finally:
            with self._lock:
                self._thread = None
                self.idle.set()
            if self._done is not None:
                self._done()

    def _safely(self, step: Callable[[], object]) -> None:
        try:
            self.embedder.load()
            step()
        except Exception as exc:  # vectors are optional: a failure costs them, never a write
            self.error = f"{type(exc).__name__}: {exc}"[:300]
            self._caught_up = True

    def _run_tasks(self, tasks: list[Callable[[], None]]) -> None:
        for task in tasks:
            if not self._stop.is_set():
                task()

    def _embed(self, pending: list[str]) -> None:
        if pending and not self._stop.is_set():
            self._embed_ids(pending)
        if not self._caught_up:
            backfill = Backfill(self.embedder, self._read, self._write, written=self._written, pause=self._await_quiet)
            for _ in backfill.batches(self._stop):
                if self._caught_up:  # leave_catch_up: the backfill command took it over
                    break
            self._caught_up = True

    def stop(self, timeout: float = 10.0) -> None:
        """Finish the batch in hand and end (the backend is closing its connections)."""
        with self._lock:
            self._stopped = True
            thread = self._thread
        self._stop.set()
        self._wake.set()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _embed_ids(self, ids: list[str]) -> None:
        for start in range(0, len(ids), BATCH):
            if self._stop.is_set():
                return
            chunk = ids[start : start + BATCH]
            marks = ", ".join("?" for _ in chunk)
            with self._read() as conn:
                rows = conn.execute(
                    f"SELECT id, content, context, rowid FROM units WHERE id IN ({marks})", chunk
                ).fetchall()
            if not rows:
                continue
            vectors = self.embedder.embed_array([embed_text(str(c), str(x or "")) for _, c, x, _ in rows])
            with self._write() as conn:
                write_vectors(conn, self.embedder.model, [str(r[0]) for r in rows], vectors)
            if self._written is not None:
                self._written([int(r[3]) for r in rows])

    def wait_idle(self, timeout: float | None = None) -> bool:
        """True once nothing is queued or running (tests and the benches wait for vectors here)."""
        return self.idle.wait(timeout)
