"""How the embedded store wires in vectors: the [semantic] worker (ADR 116) or a foreign embedder.

Why apart: vectors are optional and asynchronous; the write and read paths only ask this part
for vectors (``_embed``, ``_embed_items``) or hand it unit ids, and never wait for a model.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from functools import partial

from .capabilities import MeaningReport
from .local_connections import LocalConnections
from .local_dense import DenseIndex
from .local_embedding import Backfill, VectorWorker, count_missing, damaged_vectors, forget_vectors
from .local_schema import SLOT_BITS, slot_range
from .local_vectors import normalise
from .local_write import PreparedItem
from .semantic import StaticEmbedder


class LocalVectorWiring(LocalConnections):
    """The vector part of ``LocalBackend``: the worker, the in-memory matrices, the backfill."""

    _embedder: object | None
    _semantic: StaticEmbedder | None
    _dense: DenseIndex
    _worker: VectorWorker | None
    _vector_quiet_s: float

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

    @property
    def semantic(self) -> StaticEmbedder | None:
        return self._semantic

    def wait_for_vectors(self, timeout: float | None = None) -> bool:
        """Wait until the model is loaded and every unit retained so far has its vector.

        Hooks never call this; the read tools (through :meth:`prepare_meaning`), the backfill
        command, the benches and the tests do.
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
        model = self._semantic.model
        with self._read("embed") as conn:
            damaged = damaged_vectors(conn, model, self._semantic.dim)
        if damaged:  # recomputed below with the units that never had one
            with self._write("embed") as conn:
                forget_vectors(conn, model, damaged)
        with self._read("embed") as conn:
            missing, _ = count_missing(conn, model)
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

    def prepare_meaning(self, bank_ids: list[str], timeout_s: float) -> bool:
        """Load the model now, let the worker give the units it has not embedded yet their vectors,
        and bring these banks' vectors into memory, within ``timeout_s`` (the vectors are read even
        when the worker is not done); True when every unit had its vector in time.

        For callers that asked for a search themselves (the recall and reflect tools, the command
        line): a one-shot ``hindsight-hooks recall`` would otherwise always search by words, since
        the background load waits until a process has lived a while (ADR 116). Hooks never call it.
        """
        if self._semantic is None or self._worker is None:
            return False
        caught_up = self.wait_for_vectors(max(0.0, timeout_s))  # the model first, then the worker
        if not self._semantic.ready:
            return False
        # A large backlog (a store from before the extra) may not be done in time: the banks'
        # vectors are read all the same, so what has a vector is found by meaning already.
        self._warm_banks(bank_ids)
        return caught_up

    def warm_meaning(self, bank_ids: list[str], *, long_lived: bool) -> bool:
        """Load the model and these banks' vectors on the worker, in the background; never waits.

        For a session that starts in a process that will still be there for its first turn (the
        host said so with ``long_lived``, or the process has lived past the embedder's start-up
        delay, as the hook helper has): that turn is then searched by meaning as well as by words.
        A process that runs one hook and exits is left alone (ADR 116). True when work was handed
        to the worker.
        """
        if self._semantic is None or self._worker is None or not (long_lived or self._semantic.settled):
            return False
        self._worker.submit(partial(self._warm_banks, list(bank_ids)))
        return True

    def _warm_banks(self, bank_ids: list[str]) -> None:
        """Read each bank's vectors that this process has not yet (the model is loaded)."""
        assert self._semantic is not None
        model = self._semantic.model
        with self._read("embed") as conn:
            slots = [slot for slot in (self._slot(conn, b) for b in bank_ids) if slot is not None]
        for slot in slots:
            lo, hi = slot_range(slot)
            self._warm(lo, hi, model)

    def meaning_report(self) -> MeaningReport:
        """For doctor and ``embed --check``: is recall by meaning on, and how many memories lack a
        usable vector. Counts are read from the file (every stored vector, for the damaged ones);
        the model is not loaded. A foreign embedder reports "off" here."""
        if self._semantic is None:
            return MeaningReport(on=False)
        model, dim = self._semantic.model, self._semantic.dim
        with self._read("embed") as conn:
            missing, total = count_missing(conn, model)
            damaged = len(damaged_vectors(conn, model, dim))
        return MeaningReport(on=True, model=model, units=total, without_vector=missing, damaged=damaged)

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
            raw = self._embedder.embed(texts)  # type: ignore[attr-defined]
        except Exception:
            return [None for _ in texts]
        if not isinstance(raw, list) or len(raw) != len(texts):
            return [None for _ in texts]
        return [normalise(v) if isinstance(v, list | tuple) else None for v in raw]

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
