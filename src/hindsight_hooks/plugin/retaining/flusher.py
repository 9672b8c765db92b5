"""Background delivery: the periodic flush timer and the bounded shutdown flush (docs/shutdown.md).

The timer is a daemon thread, single-flight (a tick is skipped while another runs), so a slow
server can never pile up flushes; shutdown stops it (waiting at most 1 s) and then drains what
it can within ``shutdown_flush_timeout_ms``, leaving the rest on disk.

The one-off startup flush (docs/session-start.md step 5) runs on the same single-flight lock and is tracked like
the timer: shutdown joins it before its own flush, so the two never race for the same jobs (a
fresh claim would block the bank and shutdown would send nothing), and the backend is never
closed while it is still delivering (ADR 018).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from ...retain.delivery import deliver

if TYPE_CHECKING:
    from ..runtime import SessionRuntime

STOP_WAIT_S = 1.0


class PeriodicFlusher:
    """Runs ``flush(periodic bounds)`` every ``interval_ms`` (0 = no timer) until stopped."""

    def __init__(self, rt: SessionRuntime, interval_ms: int) -> None:
        self._rt = rt
        self._interval_s = interval_ms / 1000.0
        self._stop = threading.Event()
        self._busy = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._threads_lock = threading.Lock()

    def _spawn(self, target: Callable[[], object], name: str) -> None:
        thread = threading.Thread(target=target, name=name, daemon=True)
        with self._threads_lock:
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(thread)
        thread.start()

    def start(self) -> None:
        """Start the timer thread (only when an interval is configured)."""
        if self._interval_s > 0:
            self._spawn(self._loop, "hindsight-periodic-flush")

    def run_once_in_background(self) -> None:
        """One bounded flush on its own thread (the startup flush), tracked for ``stop``."""
        self._spawn(self.tick, "hindsight-startup-flush")

    def _loop(self) -> None:
        while not self._stop.wait(self._interval_s):
            self.tick()

    def tick(self) -> bool:
        """One bounded flush; returns False when skipped because another is running."""
        if not self._busy.acquire(blocking=False):
            return False
        try:
            rt = self._rt
            if rt.closed:
                return True
            if rt.queue().count_active() == 0:
                return True
            deliver(
                rt,
                banks=None,
                budget_ms=rt.cfg.retain.periodic_flush_timeout_ms,
                max_jobs=rt.cfg.retain.periodic_flush_max_jobs,
                skip_offline=True,
            )
            return True
        except Exception:
            return True
        finally:
            self._busy.release()

    def busy(self) -> bool:
        """A startup or periodic flush is running right now."""
        return self._busy.locked()

    @contextlib.contextmanager
    def exclusive(self, wait_s: float) -> Iterator[bool]:
        """Wait (at most ``wait_s``) for a running startup/periodic flush to end, then keep the
        timer from starting another while the block runs. Yields False when the wait ran out
        (the block then runs alongside it, and must say so)."""
        acquired = self._busy.acquire(timeout=max(0.0, wait_s))
        try:
            yield acquired
        finally:
            if acquired:
                self._busy.release()

    def stop(self, wait_s: float = STOP_WAIT_S) -> bool:
        """Stop the timer and wait (at most ``wait_s`` in all) for running flushes; True if none is left."""
        self._stop.set()
        end = time.monotonic() + max(0.0, wait_s)
        me = threading.current_thread()
        with self._threads_lock:
            threads = [t for t in self._threads if t is not me]
        for thread in threads:
            if thread.is_alive():
                thread.join(max(0.0, end - time.monotonic()))
        return not any(t.is_alive() for t in threads)


def start_background(rt: SessionRuntime) -> None:
    """Start the periodic timer (if configured) and one background flush if jobs are due."""
    cfg = rt.cfg
    if not rt.enabled or not cfg.retain.enabled:
        return
    if rt.flusher is not None:
        rt.flusher.stop(STOP_WAIT_S)
        rt.flusher = None
    flusher = PeriodicFlusher(rt, cfg.retain.effective_flush_interval_ms())
    rt.flusher = flusher
    flusher.start()
    try:
        due = rt.queue().report().get("active", {}).get("due", 0)
    except Exception:
        due = 0
    if due:
        flusher.run_once_in_background()


def shutdown_flush(rt: SessionRuntime) -> None:
    """Stop the timer, flush within the shutdown bound, report leftovers once, close."""
    cfg = rt.cfg
    if rt.flusher is not None:
        rt.flusher.stop(STOP_WAIT_S)
        rt.flusher = None
    try:
        if rt.enabled and rt.backend() is not None and rt.queue().count_active() > 0:
            report = deliver(
                rt,
                banks=None,
                budget_ms=cfg.retain.shutdown_flush_timeout_ms,
                max_jobs=cfg.retain.shutdown_flush_max_jobs,
                warn=False,
                skip_offline=True,
            )
            if report.error:
                rt.warn_once("shutdown", f"shutdown flush failed: {report.error}; the queue stays on disk")
            elif report.remaining or report.dead_lettered:
                rt.warn_once(
                    "shutdown",
                    f"shutdown flush: {report.sent} sent, {report.remaining} still queued, "
                    f"{report.dead_lettered} dead-lettered; they stay on disk and show in /hindsight",
                )
    except Exception as exc:
        from ...governance.redact import redact_error

        rt.warn_once("shutdown", f"shutdown flush failed: {redact_error(exc)}; the queue stays on disk")
    finally:
        rt.close_quietly()
