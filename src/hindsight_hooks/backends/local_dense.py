"""Brute-force cosine search over a bank's unit vectors, kept in memory and refreshed incrementally.

Vectors live in the store's own file (``unit_vectors``: one float16 blob per unit, ADR 116). Reading
100k blobs from SQLite takes far longer than searching them, so each process keeps a bank's vectors
in memory and only reads those written since (``unit_vectors.seq`` is AUTOINCREMENT, never reused:
a refresh asks for ``seq > last``).

In memory (ADR 117, ADR 170): each vector as int8 with one float32 scale per row (260 bytes per
unit: 26 MB per 100k, where float32 would be 102 MB, over the 64 MB target) and one sign bit per
dimension (32 bytes per unit). numpy has no fast path for float16 (converting 1,000 float16 rows to
float32 took 0.43 ms, ten times the product) and BLAS threads cost more than they save on a busy
machine, so a query is compared with *every* unit by Hamming distance between sign bits (XOR +
popcount, a few ms for 100k), and the ``RESCORE`` closest by bits get their cosine from the int8
rows (measured: at most 0.0025 from the float16 cosine over 1M pairs, mean 0.0004).
With fewer units than that, every unit is rescored: small banks are searched exactly.

Every backend of a process that opens the same store file shares one index (``shared_index``):
a new session in a long-lived process (the hook helper, a framework's agent, Pi's bridge) finds the
banks an earlier session loaded, so its first turn is searched by meaning too, and the matrices
are held once. A store file that went back in time (a backup copied over it: its newest vector is
renumbered from where the backup stopped) is read again from the start.

Deletions are not tracked: a forgotten or replaced unit's vector may stay in the matrix until the
process ends. It can only take a place among the dense candidates, which are then read back
through ``units`` with the recall's filters, where a unit that is gone simply does not come back.
A unit whose text changed gets a new vector row, which replaces its old one here on the next refresh.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .local_rwlock import ReadWriteLock

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

STORED_DTYPE = "float16"
RESCORE = 1000  # units rescored exactly per query, chosen by sign-bit Hamming distance
RECALL_WAIT_S = 0.01  # a recall waits this long for another thread's refresh or search of the index
# A unit found by its vector alone must be this much above the query's mean cosine with the
# bank's units, as well as above the model's fixed floor (ADR 200). The model is English: it puts
# all Polish texts near each other (0.4 between unrelated ones), so in such a bank every unit
# passed the fixed floor. English banks sit far under it and see no change (the benches: the same
# figures up to a margin of 0.25; 0.3 starts to cost).
BACKGROUND_MARGIN = 0.2
# ...in a bank of at least this many units. In a small one the mean is mostly the few units that
# answer: "database" has 0.28 with "we run Postgres 16" and a mean of 0.13 over a bank of four.
BACKGROUND_MIN_UNITS = 20
_CHUNK = 4096
_NEWEST_SQL = "SELECT seq, unit_id FROM unit_vectors ORDER BY seq DESC LIMIT 1"


def to_blob(vector: Any) -> bytes:
    """A unit-length vector as the float16 bytes stored in ``unit_vectors.vector``."""
    import numpy as np

    return np.asarray(vector, dtype=np.float16).tobytes()


@dataclass
class _BankMatrix:
    dim: int
    last_vector_rowid: int = 0
    last_unit_id: str = ""  # the unit whose vector row was the newest read: still there, still its
    count: int = 0
    rowids: Any = None  # int64 unit rowids, first ``count`` valid
    matrix: Any = None  # int8 (capacity, dim), first ``count`` rows valid: row ≈ matrix[i] · scales[i]
    scales: Any = None  # float32 (capacity,), one per row
    # uint64 (dim / 64, capacity): the sign bits of each row, one plane per 64 dimensions. Planes,
    # not rows: XOR + popcount + sum over 4 contiguous arrays is 8x faster than over rows of 4 words.
    bits: Any = None
    # The rowids in order and their rows, for lookups (a dict of 100k ints would cost ~10 MB);
    # new rows are merged in (a memmove), never re-sorted on a recall.
    _sorted: Any = None
    _order: Any = None
    # float64 (dim,): the sum of the valid rows as dequantized, for the bank's mean cosine with a
    # query (``DenseIndex.background``, ADR 200)
    total: Any = None

    def positions(self, unit_rowids: list[int]) -> Any:
        """The row of each unit rowid in the matrix, -1 where it has none."""
        import numpy as np

        wanted = np.asarray(unit_rowids, dtype=np.int64)
        if self.count == 0 or self._sorted is None:
            return np.full(len(wanted), -1, dtype=np.int64)
        at = np.searchsorted(self._sorted, wanted).clip(max=self.count - 1)
        return np.where(self._sorted[at] == wanted, self._order[at], -1)

    def _index(self, new_ids: Any, new_rows: Any) -> None:
        import numpy as np

        by_id = np.argsort(new_ids, kind="stable")
        new_ids, new_rows = new_ids[by_id], new_rows[by_id]
        if self._sorted is None:
            self._sorted, self._order = new_ids, new_rows
            return
        at = np.searchsorted(self._sorted, new_ids)
        self._sorted = np.insert(self._sorted, at, new_ids)
        self._order = np.insert(self._order, at, new_rows)

    def reserve(self, capacity: int, words: int) -> None:
        import numpy as np

        if self.matrix is not None and capacity <= self.matrix.shape[0]:
            return
        # np.zeros pages that are never written stay out of the resident set.
        grown = np.zeros((capacity, self.dim), dtype=np.int8)
        grown_scales = np.zeros(capacity, dtype=np.float32)
        grown_bits = np.zeros((words, capacity), dtype=np.uint64)
        ids = np.zeros(capacity, dtype=np.int64)
        if self.matrix is not None:
            grown[: self.count] = self.matrix[: self.count]
            grown_scales[: self.count] = self.scales[: self.count]
            grown_bits[:, : self.count] = self.bits[:, : self.count]
            ids[: self.count] = self.rowids[: self.count]
        self.matrix, self.scales, self.bits, self.rowids = grown, grown_scales, grown_bits, ids

    def add(self, unit_rowids: list[int], vectors: Any) -> None:
        """Add or replace rows (``vectors``: float16, one row per unit rowid)."""
        import numpy as np

        signs = sign_bits(vectors)
        quantized, scales = quantize(vectors)
        at = self.positions(unit_rowids)
        known = at >= 0
        if self.total is None:
            self.total = np.zeros(self.dim, dtype=np.float64)
        if known.any():  # re-embedded units (their text changed)
            old = at[known]
            self.total -= _row_sum(self.matrix[old], self.scales[old])
            self.total += _row_sum(quantized[known], scales[known])
            self.matrix[at[known]] = quantized[known]
            self.scales[at[known]] = scales[known]
            self.bits[:, at[known]] = signs[known].T
        fresh = np.flatnonzero(~known)
        if not len(fresh):
            return
        need = self.count + len(fresh)
        if self.matrix is None or need > self.matrix.shape[0]:
            # Grow by a quarter: doubling would leave up to half the matrix allocated and unused.
            self.reserve(max(1024, need, 0 if self.matrix is None else self.matrix.shape[0] * 5 // 4), signs.shape[1])
        self.total += _row_sum(quantized[fresh], scales[fresh])
        self.matrix[self.count : need] = quantized[fresh]
        self.scales[self.count : need] = scales[fresh]
        self.bits[:, self.count : need] = signs[fresh].T
        self.rowids[self.count : need] = np.asarray(unit_rowids, dtype=np.int64)[fresh]
        self._index(self.rowids[self.count : need].copy(), np.arange(self.count, need, dtype=np.int64))
        self.count = need

    def nbytes(self) -> int:
        """Bytes allocated for the matrix, its sign bits and rowids (capacity included)."""
        if self.matrix is None:
            return 0
        index = 0 if self._sorted is None else int(self._sorted.nbytes + self._order.nbytes)
        return int(self.matrix.nbytes + self.scales.nbytes + self.bits.nbytes + self.rowids.nbytes) + index

    def cosines(self, rows: Any, query: Any) -> Any:
        """Cosine of ``query`` with the given matrix rows, in float32 on this thread.

        ``einsum`` rather than ``@``: BLAS would hand a matrix of a few thousand rows to its thread
        pool, which on a busy machine costs 5-10× more than the work (measured: 12.8 vs 1.8 ms p50
        for a search at 10k units with the machine's other cores loaded).
        """
        import numpy as np

        return np.einsum("ij,j->i", self.matrix[rows].astype(np.float32), query) * self.scales[rows]

    def hamming(self, query_bits: Any) -> Any:
        """Hamming distance (uint16) between ``query_bits`` and every valid row's sign bits."""
        import numpy as np

        distance = np.zeros(self.count, dtype=np.uint16)  # uint16: argpartition on it is 5x faster than on int64
        for plane, word in zip(self.bits[:, : self.count], query_bits, strict=True):
            distance += np.bitwise_count(plane ^ word)
        return distance

    def dequantized(self) -> Any:
        """The valid rows as float32 (for benches that compare with an exact search)."""
        import numpy as np

        return self.matrix[: self.count].astype(np.float32) * self.scales[: self.count, None]


def _row_sum(rows: Any, scales: Any) -> Any:
    """The sum of int8 ``rows`` as dequantized (row · scale), without a float64 copy of them.

    A hook process pays this on every read of a bank's vectors: ``einsum`` over float32 rows costs
    about a fifth of multiplying out float64 rows (15 vs 77 ms for 100,000), and stays off BLAS's
    thread pool for the reason ``_BankMatrix.cosines`` gives."""
    import numpy as np

    return np.einsum("i,ij->j", scales, rows.astype(np.float32)).astype(np.float64)


def split_usable(rows: list[Any], dim: int) -> tuple[list[Any], Any, list[Any]]:
    """Rows whose third column is a usable vector of ``dim`` float16s, their matrix, and the rest.

    Unusable: not a blob, a blob of another size, or one holding NaN or inf (a damaged page, a
    flipped bit). Recall leaves those out; ``hindsight-hooks embed`` computes them again.
    """
    import numpy as np

    sized: list[Any] = []
    other: list[Any] = []
    for row in rows:
        (sized if isinstance(row[2], bytes) and len(row[2]) == 2 * dim else other).append(row)
    if not sized:
        return [], np.zeros((0, dim), dtype=np.float16), other
    vectors = np.frombuffer(b"".join(r[2] for r in sized), dtype=np.float16).reshape(len(sized), dim)
    usable = np.isfinite(vectors).all(axis=1)
    if usable.all():
        return sized, vectors, other
    keep = np.flatnonzero(usable)
    return [sized[i] for i in keep], vectors[usable], other + [sized[i] for i in np.flatnonzero(~usable)]


def quantize(vectors: Any) -> tuple[Any, Any]:
    """Rows as int8 and the float32 scale of each (max |component| maps to 127)."""
    import numpy as np

    rows = np.asarray(vectors, dtype=np.float32)
    peak = np.abs(rows).max(axis=1)
    scales = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    quantized = np.rint(rows / scales[:, None]).clip(-127, 127).astype(np.int8)
    return quantized, scales


def sign_bits(vectors: Any) -> Any:
    """One bit per dimension (set when the component is positive), packed into uint64 words."""
    import numpy as np

    packed = np.packbits(np.asarray(vectors) > 0, axis=1)
    pad = (-packed.shape[1]) % 8
    if pad:
        packed = np.pad(packed, ((0, 0), (0, pad)))
    return packed.view(np.uint64)


class DenseIndex:
    """Per (bank, model): the matrix of unit vectors, read once and then only what is new."""

    def __init__(self) -> None:
        self._lock = ReadWriteLock()  # searches share it; reading new vectors in holds it alone
        self._banks: dict[tuple[int, str], _BankMatrix] = {}

    def is_warm(self, lo: int, model: str) -> bool:
        """Has this bank's matrix been read into memory (by :meth:`refresh`) in this process?"""
        return (lo, model) in self._banks  # one dict lookup: never waits for a refresh under way

    def refresh(self, conn: sqlite3.Connection, lo: int, hi: int, model: str, dim: int) -> _BankMatrix:
        """Bring the bank's matrix up to the vectors committed in ``conn``'s snapshot (the worker:
        it waits for the searches under way, and holds new ones back while it reads)."""
        newest = conn.execute(_NEWEST_SQL).fetchone()
        self._lock.acquire_write()
        try:
            return self._refresh(conn, lo, hi, model, dim, newest)
        finally:
            self._lock.release_write()

    @contextmanager
    def searching(
        self, conn: sqlite3.Connection, lo: int, hi: int, model: str, dim: int, wait_s: float
    ) -> Iterator[_BankMatrix | None]:
        """The bank's matrix, brought up to ``conn``'s snapshot when it is behind, and held still
        while the caller searches it; ``None`` when it cannot be searched this time (the caller
        then searches by words and hands the bank to the worker).

        Searches share the index: the sessions of a process search at once and never wait for
        one another (ADR 177). Only reading new vectors in needs the index alone; when that cannot
        be had within ``wait_s`` the search goes on over what is there (the newest units are found
        by their words this turn). Why a bound at all: a bank's first read takes ~0.3 s at 100k
        vectors and holds the index, so a turn of one session must not wait for another session's
        read (ADR 175).

        ``None`` also when the bank was never read here, or when it holds rows this snapshot does
        not have. That is either a snapshot older than another session's refresh or a file that
        went back in time (a backup copied over it); only a fresh snapshot tells them apart, and
        reading the bank anew is the worker's job, never a hook's.
        """
        end = time.monotonic() + wait_s
        newest = conn.execute(_NEWEST_SQL).fetchone()
        bank = self._banks.get((lo, model))  # read without the lock: at worst a refresh for nothing
        if bank is None or _ahead(bank, newest):
            yield None
            return
        if _behind(bank, newest) and self._lock.acquire_write(wait_s):
            try:
                self._refresh(conn, lo, hi, model, dim, newest)
            finally:
                self._lock.release_write()
        if not self._lock.acquire_read(max(0.0, end - time.monotonic())):
            yield None
            return
        try:
            bank = self._banks.get((lo, model))
            usable = bank is not None and (not bank.last_vector_rowid or _still_read(conn, bank, newest))
            yield bank if usable else None
        finally:
            self._lock.release_read()

    def _refresh(
        self, conn: sqlite3.Connection, lo: int, hi: int, model: str, dim: int, newest: tuple[Any, ...] | None
    ) -> _BankMatrix:
        """:meth:`refresh` with the index held alone; ``newest``: the file's newest vector row
        (seq, unit id) in ``conn``'s snapshot."""
        bank = self._banks.setdefault((lo, model), _BankMatrix(dim))
        if bank.last_vector_rowid and not _still_read(conn, bank, newest):  # the file went back: read it anew
            bank = self._banks[(lo, model)] = _BankMatrix(dim)
        if newest is None or int(newest[0]) <= bank.last_vector_rowid:
            return bank  # nothing new anywhere: one index lookup per recall
        top = int(newest[0])
        if bank.matrix is None:  # a first load: room for every new row at once (an upper bound)
            bank.reserve(max(1024, top - bank.last_vector_rowid), (dim + 63) // 64)
        while True:  # in chunks, so loading 100k vectors never holds them twice as Python bytes
            # The vector rows first (a seq range), then their units: never a scan of the bank.
            rows = conn.execute(
                "SELECT v.seq, u.rowid, v.vector FROM unit_vectors AS v CROSS JOIN units AS u "
                "ON u.id = v.unit_id WHERE v.seq > ? AND v.seq <= ? AND v.model = ? AND u.rowid BETWEEN ? AND ? "
                "ORDER BY v.seq LIMIT ?",
                (bank.last_vector_rowid, top, model, lo, hi, _CHUNK),
            ).fetchall()
            # A damaged vector is left out: that unit is found by its words only, and no row of
            # garbage (or a warning in the host's stderr) comes of it.
            good, vectors, _ = split_usable(rows, dim)
            if good:
                bank.add([int(r[1]) for r in good], vectors)
            if len(rows) < _CHUNK:
                break
            bank.last_vector_rowid = int(rows[-1][0])
        bank.last_vector_rowid, bank.last_unit_id = top, str(newest[1])
        return bank

    def top(self, bank: _BankMatrix, query: npt.NDArray[np.float32], k: int) -> list[tuple[int, float]]:
        """The ``k`` unit rowids most similar to ``query`` (cosine > 0), best first.

        Exact when the bank has at most ``RESCORE`` vectors; above that, exact among the
        ``RESCORE`` nearest by sign bits.
        """
        import numpy as np

        if bank.count == 0 or k <= 0:
            return []
        if bank.count <= RESCORE:
            rows = np.arange(bank.count)
        else:
            rows = np.argpartition(bank.hamming(sign_bits(query[None, :])[0]), RESCORE - 1)[:RESCORE]
        sims = bank.cosines(rows, query)
        k = min(k, len(rows))
        best = np.argpartition(-sims, k - 1)[:k]
        best = best[np.argsort(-sims[best], kind="stable")]
        return [(int(bank.rowids[rows[i]]), float(sims[i])) for i in best if sims[i] > 0.0]

    def background(self, bank: _BankMatrix, query: npt.NDArray[np.float32]) -> float:
        """The mean cosine of ``query`` with the bank's units: how near it is to everything here
        (0 for a bank of fewer than :data:`BACKGROUND_MIN_UNITS`)."""
        import numpy as np

        if bank.count < BACKGROUND_MIN_UNITS or bank.total is None:
            return 0.0
        return float(np.dot(bank.total / bank.count, query.astype(np.float64)))

    def similarity(self, bank: _BankMatrix, query: npt.NDArray[np.float32], rowids: list[int]) -> dict[int, float]:
        """Exact cosine (clamped at 0) of the given units that have a vector."""
        if not rowids:
            return {}
        positions = bank.positions(rowids)
        have = positions >= 0
        if not have.any():
            return {}
        sims = bank.cosines(positions[have], query)
        kept = [rowid for rowid, ok in zip(rowids, have, strict=True) if ok]
        return {rowid: max(0.0, float(sim)) for rowid, sim in zip(kept, sims, strict=True)}

    def nbytes(self) -> int:
        self._lock.acquire_read()
        try:
            return sum(b.nbytes() for b in self._banks.values())
        finally:
            self._lock.release_read()


def _ahead(bank: _BankMatrix, newest: tuple[Any, ...] | None) -> bool:
    """Has the bank read a vector row newer than the file's newest in this snapshot?"""
    return bank.last_vector_rowid > (0 if newest is None else int(newest[0]))


def _behind(bank: _BankMatrix, newest: tuple[Any, ...] | None) -> bool:
    """Is the file's newest vector row (seq, unit id) another than the last one the bank read: new
    rows, or the file went back in time? (A bank that was never read is left to the worker.)"""
    if newest is None:
        return bank.last_vector_rowid != 0
    return int(newest[0]) != bank.last_vector_rowid or str(newest[1]) != bank.last_unit_id


def _still_read(conn: sqlite3.Connection, bank: _BankMatrix, newest: tuple[Any, ...] | None) -> bool:
    """Does the newest vector row read into ``bank`` still hold the same unit's vector?

    Not when a backup was copied over the file (its rows are numbered on from where the backup
    stopped, so a number read before may now be another unit's) or when that row was deleted (its
    unit forgotten or embedded again); the bank is then read again from the start. ``newest`` is
    the file's newest row (seq, unit id): when it is the row read last, as on most turns, it
    answers without a second statement.
    """
    if newest is None or int(newest[0]) < bank.last_vector_rowid:
        return False
    if int(newest[0]) == bank.last_vector_rowid:
        return str(newest[1]) == bank.last_unit_id
    row = conn.execute("SELECT unit_id FROM unit_vectors WHERE seq = ?", (bank.last_vector_rowid,)).fetchone()
    return row is not None and str(row[0]) == bank.last_unit_id


_SHARED: dict[tuple[str, int, int], DenseIndex] = {}
_SHARED_LOCK = threading.Lock()


def shared_index(path: str | os.PathLike[str]) -> DenseIndex:
    """The process's one ``DenseIndex`` for the store file at ``path`` (by its real path and inode).

    Why shared: the matrices are the expensive part of recall by meaning (reading 100k vectors takes
    ~0.3 s, so a hook never does it and a fresh backend's first recall is by words). Every backend
    on the file reads the same rows, so one that a later session opens starts warm.
    """
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
        key = (real, st.st_dev, st.st_ino)
    except OSError:  # the backend has just opened it; a file that cannot be stat-ed is keyed by its path
        key = (real, 0, 0)
    with _SHARED_LOCK:
        index = _SHARED.get(key)
        if index is None:
            index = _SHARED[key] = DenseIndex()
        return index
