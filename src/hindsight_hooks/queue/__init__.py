"""The durable JSONL retain queue (docs/queue.md): one facade, ``RetainQueue``.

Every retain — automatic, tool, import, command — goes through here: a job is *acknowledged*
only once its line is fsynced (or a merge is atomically on disk), and from then on it is
delivered or kept (active or dead-letter file), whatever crashes, outages, corrupt files or
concurrent processes do (docs/design.md#crash-safety). Delivery is at-least-once; the job id is the
``operation_id``, which makes a resend idempotent on the server.

Module map: ``jobs`` (schema), ``store`` (files), ``lock`` (the lock), ``index`` (cheap enqueue),
``coalesce`` (merging), ``policy`` (failures/backoff/dead letters), ``flush`` (claim/deliver/commit),
``outcome``, ``receipts``, ``diagnostics``, ``requeue``.
"""

from __future__ import annotations

import contextlib
import os
import random
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..fsutil import FILE_MODE, ensure_private_dir, fsync_dir
from ..timefmt import parse_iso
from . import coalesce as _coalesce
from .diagnostics import jobs_view as _jobs_view
from .diagnostics import report as _report
from .errors import (
    LockTimeoutError,
    MalformedQueueError,
    QueueClosedError,
    QueueError,
    QueueFullError,
)
from .flush import FlushContext, FlushResult, run_flush
from .index import ActiveIndex
from .jobs import InvalidJobError, check_new_job, dumps_line, loads_line, new_job
from .lock import QueueLock
from .paths import QueuePaths
from .requeue import requeue_dead as _requeue_dead
from .store import (
    Entry,
    describe_os_error,
    read_bytes,
    read_strict,
    read_tolerant,
    rewrite,
    summarize,
    write_fully,
)
from .tempfiles import TempFile, find_temp_files, remove_abandoned
from .tombstones import delivery_filter

if TYPE_CHECKING:
    from ..backends.base import MemoryBackend
    from ..config_model import QueueConfig

__all__ = [
    "EnqueueResult",
    "FlushResult",
    "InvalidJobError",
    "LockTimeoutError",
    "MalformedQueueError",
    "QueueClosedError",
    "QueueError",
    "QueueFullError",
    "QueuePaths",
    "RetainQueue",
    "new_job",
    "read_strict",
    "read_tolerant",
    "summarize",
]

_APPEND_FLAGS = os.O_RDWR | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True)
class EnqueueResult:
    """An acknowledged enqueue.

    ``job_id`` is the id of the job that now holds the items (the tail's id after a merge);
    ``bank_head``: no earlier job of that bank is queued, so a tool may deliver it at once;
    ``flush_due`` (coalesced delivery): the tail is full or the bank's oldest job is older than
    ``coalesce_max_age_ms``; always True for a plain append.
    """

    job_id: str
    bank_head: bool
    merged: bool = False
    merge_kind: str | None = None
    flush_due: bool = True


class RetainQueue:
    """The queue at ``path`` (already resolved against cwd).

    ``clock`` gives epoch seconds and drives every queue date (created, backoff, claims,
    dead-lettering), so tests can simulate a day-long outage; lock waits use real time.
    ``receipts_path``, when given, receives a receipt per delivered item (docs/retain.md#receipts).
    """

    def __init__(
        self,
        path: Path,
        cfg: QueueConfig,
        *,
        clock: Callable[[], float] | None = None,
        receipts_path: Path | None = None,
        rng: random.Random | None = None,
        force_soft_lock: bool = False,
    ) -> None:
        self.path = Path(path)
        self.paths = QueuePaths.for_queue(self.path)
        self._active_str = str(self.path)
        self.cfg = cfg
        self.receipts_path = receipts_path
        self._clock: Callable[[], float] = clock or time.time
        self._rng = rng or random.Random()
        self._lock = QueueLock(
            self.path,
            timeout_ms=cfg.lock_timeout_ms,
            retry_ms=cfg.lock_retry_ms,
            stale_ms=cfg.lock_stale_ms,
            force_soft=force_soft_lock,
        )
        self._index = ActiveIndex()
        self._ensured: set[str] = set()
        self._swept = False
        self._closed = False
        self._last_outcome: dict[str, Any] | None = None

    # -- lifecycle ----------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def lock(self) -> QueueLock:
        return self._lock

    def close(self) -> None:
        """Refuse later writes (shutdown docs/shutdown.md step 5); jobs on disk stay for the next process."""
        self._closed = True

    def now(self) -> float:
        return self._clock()

    # -- enqueue ------------------------------------------------------------------------------

    def enqueue(self, job: dict[str, Any], *, coalesce: bool = False) -> EnqueueResult:
        """Durably add ``job`` (docs/queue.md#enqueue); returns only once it is on disk.

        ``coalesce`` is ``retain.delivery == "coalesced"``; the queue also coalesces on its own
        when the bank is in backoff. Raises ``QueueFullError`` (back-pressure), ``LockTimeoutError``,
        ``InvalidJobError``, ``QueueClosedError`` or ``QueueError``; after any of them the job is
        not acknowledged and nothing queued before is touched.
        """
        if self._closed:
            raise QueueClosedError()
        fresh = check_new_job(job)
        line = dumps_line(fresh)
        held = self._lock.acquire()
        try:
            self._sweep_locked()
            result, fd, created = self._enqueue_locked(fresh, line, coalesce)
        finally:
            self._lock.release(held)
        if fd is None:
            return result  # a merge: already durable through the atomic rewrite
        # The append's position and bytes were fixed under the lock; making them durable does not
        # need it, so concurrent enqueuers share journal commits instead of queueing behind each
        # other's fsync (adr/002). The job is acknowledged only once this returns.
        try:
            os.fsync(fd)
        except OSError as exc:
            raise QueueError(
                f"could not sync retain queue {self.paths.active}: {describe_os_error(exc)}; "
                "the job is not acknowledged"
            ) from None
        finally:
            os.close(fd)
        if created:
            fsync_dir(self.paths.active.parent)
        return result

    def _open_active(self) -> tuple[int, bool]:
        path = self.paths.active
        try:
            return os.open(self._active_str, _APPEND_FLAGS), False
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise QueueError(f"cannot open retain queue {path}: {describe_os_error(exc)}") from None
        try:
            ensure_private_dir(path.parent)
            return os.open(path, _APPEND_FLAGS | os.O_CREAT, FILE_MODE), True
        except OSError as exc:
            raise QueueError(f"cannot create retain queue {path}: {describe_os_error(exc)}") from None

    def _enqueue_locked(
        self, job: dict[str, Any], line: bytes, coalesce: bool
    ) -> tuple[EnqueueResult, int | None, bool]:
        """Merge or append under the lock. For an append, returns the still-open descriptor that the
        caller must fsync (and close) before acknowledging; ``None`` after a merge."""
        fd, created = self._open_active()
        keep_open = False
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise QueueError(f"cannot append to retain queue {self.paths.active}: not a regular file")
            try:
                self._index.sync(fd, st)
            except OSError as exc:
                self._index.invalidate()
                raise QueueError(f"cannot read retain queue {self.paths.active}: {describe_os_error(exc)}") from None
            if job["id"] in self._index.ids:
                raise InvalidJobError("a job with this id is already queued")
            bank = job["bank_id"]
            bank_head = self._index.count(bank) == 0
            now = self._clock()
            flush_due = True
            if coalesce or self._index.in_backoff(bank, now):
                merged, flush_due = self._coalesce_locked(job, now)
                if merged is not None:
                    return merged, None, False
            size = st.st_size
            prefix = b"\n" if size and os.pread(fd, 1, size - 1) != b"\n" else b""
            data = prefix + line + b"\n"
            if size + len(data) > self.cfg.max_active_bytes:
                raise QueueFullError(
                    f"retain queue {self.paths.active} is full (max_active_bytes={self.cfg.max_active_bytes}); "
                    "the job was not queued"
                )
            try:
                write_fully(fd, data, size)
            except OSError as exc:
                self._index.invalidate()
                raise QueueError(
                    f"could not append to retain queue {self.paths.active}: {describe_os_error(exc)}; "
                    "the job was not queued"
                ) from None
            self._index.note_append(fd, job, size, data)
            keep_open = True
            return EnqueueResult(job["id"], bank_head, flush_due=flush_due), fd, created
        finally:
            if not keep_open:
                os.close(fd)

    def _coalesce_locked(self, job: dict[str, Any], now: float) -> tuple[EnqueueResult | None, bool]:
        """Merge into the tail and rewrite atomically (docs/queue.md#enqueue step 3).

        Returns ``(result, flush_due)``; ``result`` is ``None`` when the job must be appended, and
        ``flush_due`` then says whether that append leaves a batch worth flushing now. The index
        says whether a merge is possible at all; only then is the file read (raw, parsing just the
        tail) and rewritten.
        """
        index = self._index
        bank = job["bank_id"]
        oldest = index.oldest.get(bank)
        too_old = oldest is not None and (now - oldest) * 1000.0 >= self.cfg.coalesce_max_age_ms
        tail = index.tail
        if tail is None or not _coalesce.can_take(tail, job):
            return None, too_old or _coalesce.is_full(job, self.cfg)
        merged = _coalesce.merge(tail, job, self.cfg)
        if merged is None:
            return None, True  # an eligible tail that cannot take more is a full batch: due now
        new_tail, kind = merged
        data, _ident = read_bytes(self.paths.active)
        raws = [raw for raw in data.split(b"\n") if raw.strip()]
        pos = next((i for i in range(len(raws) - 1, -1, -1) if loads_line(raws[i]) is not None), None)
        if pos is None or loads_line(raws[pos]) != tail:
            index.invalidate()  # the index was out of step: do not merge on a guess, append instead
            return None, True
        raws[pos] = dumps_line(new_tail)
        new_size = sum(len(r) + 1 for r in raws)
        if new_size > self.cfg.max_active_bytes and new_size > len(data):
            raise QueueFullError(
                f"retain queue {self.paths.active} is full (max_active_bytes={self.cfg.max_active_bytes}); "
                "the job was not queued"
            )
        try:
            ident, size = rewrite(self.paths.active, raws)
        except QueueError:
            index.invalidate()
            raise
        index.note_tail_merge(ident, size, new_tail, raws[-1])
        bank_head = index.first_ids.get(bank) == new_tail["id"]
        flush_due = too_old or _coalesce.is_full(new_tail, self.cfg)
        result = EnqueueResult(new_tail["id"], bank_head, merged=True, merge_kind=kind, flush_due=flush_due)
        return result, flush_due

    def _on_rewrite(self, ident: tuple[int, int], entries: list[Entry]) -> None:
        self._index.load(ident, [e.raw for e in entries], [e.job for e in entries])

    # -- the lock, and what the first hold of a process cleans up ------------------------------

    @contextlib.contextmanager
    def _hold(self) -> Iterator[None]:
        with self._lock.hold():
            self._sweep_locked()
            yield

    def _sweep_locked(self) -> None:
        """Once per queue object, under the lock: remove temp files killed writers left (ADR 071)."""
        if self._swept:
            return
        self._swept = True
        with contextlib.suppress(Exception):  # housekeeping never fails a queue operation
            remove_abandoned(self.paths.active.parent, locked_bases=self.own_file_names)

    @property
    def own_file_names(self) -> frozenset[str]:
        """The files only ever rewritten under this queue's lock (their temp files are ours)."""
        return frozenset(p.name for p in (self.paths.active, self.paths.dead, self.paths.malformed))

    def temp_files(self) -> list[TempFile]:
        """Leftover temp files next to the queue (diagnostics; read-only, no lock). The queue's
        own are called removable when nobody holds the lock right now (no rewrite under way)."""
        held, _error = self._lock.probe()
        return find_temp_files(self.paths.active.parent, locked_bases=() if held else self.own_file_names)

    def remove_temp_files(self) -> list[TempFile]:
        """``doctor --fix``: remove, under the lock, every leftover temp file that may go."""
        with self._lock.hold():
            self._swept = True
            return remove_abandoned(self.paths.active.parent, locked_bases=self.own_file_names)

    # -- flush --------------------------------------------------------------------------------

    def flush(
        self,
        backend: MemoryBackend,
        *,
        ensure_bank: Callable[[str], None] | None = None,
        max_jobs: int | None = None,
        max_elapsed_ms: int | None = None,
        force: bool = False,
        banks: set[str] | None = None,
        request_timeout_ms: int | None = None,
        skip_banks: set[str] | None = None,
    ) -> FlushResult:
        """Deliver due jobs (docs/queue.md#flush). ``ensure_bank`` runs once per bank per queue object, and again
        after a 404; ``skip_banks`` are left queued untouched (their server is known to be down).
        Raises ``QueueError``/``LockTimeoutError`` only for file or lock failures; delivery
        failures are recorded on the jobs and reported in the result."""
        ctx = FlushContext(
            paths=self.paths,
            cfg=self.cfg,
            lock=self._lock,
            clock=self._clock,
            rng=self._rng,
            on_rewrite=self._on_rewrite,
            receipts_path=self.receipts_path,
            on_claim_lock=self._sweep_locked,  # the sweep in the claim's hold, not a hold of its own
            item_filter=delivery_filter(self.path),
        )
        result = run_flush(
            ctx,
            backend,
            ensured=self._ensured,
            ensure_bank=ensure_bank,
            max_jobs=max_jobs,
            max_elapsed_ms=max_elapsed_ms,
            force=force,
            banks=banks,
            request_timeout_ms=request_timeout_ms,
            skip_banks=skip_banks,
        )
        if result.outcome is not None:
            self._last_outcome = dict(result.outcome)
        return result

    # -- bank state (cheap: the index) ------------------------------------------------------------

    def _synced_index(self) -> ActiveIndex:
        try:
            fd = os.open(self.paths.active, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            self._index.reset(None)
            return self._index
        except OSError as exc:
            raise QueueError(f"cannot read retain queue {self.paths.active}: {describe_os_error(exc)}") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise QueueError(f"cannot read retain queue {self.paths.active}: not a regular file")
            self._index.sync(fd, st)
        finally:
            os.close(fd)
        return self._index

    def bank_in_backoff(self, bank_id: str) -> bool:
        """The bank's first queued job is not due yet (its delivery would be skipped)."""
        with self._hold():
            return self._synced_index().in_backoff(bank_id, self._clock())

    def is_due_head(self, bank_id: str) -> bool:
        """The bank has a queued job and its first one is due (a flush would try it now)."""
        with self._hold():
            index = self._synced_index()
            return index.count(bank_id) > 0 and not index.in_backoff(bank_id, self._clock())

    def coalesced_flush_due(self, bank_id: str | None = None) -> bool:
        """Coalesced delivery (docs/retain.md#delivery): flush now when the tail job (of ``bank_id``, if given) is full,
        or the oldest queued job (of that bank) is older than ``coalesce_max_age_ms``. Reads the file."""
        now = self._clock()
        jobs = [j for j in read_tolerant(self.paths.active).jobs if bank_id is None or j["bank_id"] == bank_id]
        if not jobs:
            return False
        if _coalesce.is_full(jobs[-1], self.cfg):
            return True
        created = [t for j in jobs if (t := parse_iso(j.get("created_at"))) is not None]
        return bool(created) and (now - min(created)) * 1000.0 >= self.cfg.coalesce_max_age_ms

    def count_active(self) -> int:
        """Valid jobs in the active file."""
        with self._hold():
            return self._synced_index().total()

    # -- diagnostics and maintenance ------------------------------------------------------------

    def report(self) -> dict[str, Any]:
        """The docs/queue.md#diagnostics report (never raises for broken files; content-free). ``lock_error`` says why
        the lock file cannot be used at all (then no holder is named: nobody can hold it)."""
        held, lock_error = self._lock.probe()
        out = _report(
            self.paths.active,
            self.paths.dead,
            self.paths.malformed,
            now=self._clock(),
            lock_owner=self._lock.owner() if held else None,
            last_outcome=self._last_outcome,
        )
        if lock_error is not None:
            out["lock_error"] = lock_error
        return out

    def jobs_view(self) -> list[dict[str, Any]]:
        """The ``--jobs`` view of active then dead jobs: no content, no metadata values."""
        return _jobs_view(self.paths.active, self.paths.dead)

    def requeue_dead(self) -> int:
        """Move every readable dead letter back to the active file, reset; returns the count."""
        with self._lock.hold():
            return _requeue_dead(self.paths, self.cfg, self._on_rewrite)
