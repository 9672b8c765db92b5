"""Background delivery: the periodic flush timer and the bounded shutdown flush (BEHAVIOUR.md §8).

The timer is a daemon thread, single-flight (a tick is skipped while another runs), so a slow
server can never pile up flushes; shutdown stops it (waiting at most 1 s) and then drains what
it can within ``shutdown_flush_timeout_ms``, leaving the rest on disk.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from .delivery import deliver

if TYPE_CHECKING:
    from .runtime import SessionRuntime


class PeriodicFlusher:
    """Runs ``flush(periodic bounds)`` every ``interval_ms`` until stopped."""

    def __init__(self, rt: SessionRuntime, interval_ms: int) -> None:
        self._rt = rt
        self._interval_s = interval_ms / 1000.0
        self._stop = threading.Event()
        self._busy = threading.Lock()
        self._thread = threading.Thread(target=self._loop, name="hindsight-periodic-flush", daemon=True)

    def start(self) -> None:
        self._thread.start()

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
            )
            return True
        except Exception:
            return True
        finally:
            self._busy.release()

    def stop(self, wait_s: float = 1.0) -> None:
        self._stop.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(wait_s)


def start_background(rt: SessionRuntime) -> None:
    """Start the periodic timer (if configured) and one background flush if jobs are due."""
    cfg = rt.cfg
    if not rt.enabled or not cfg.retain.enabled:
        return
    interval = cfg.retain.effective_flush_interval_ms()
    if rt.flusher is not None:
        rt.flusher.stop(1.0)
        rt.flusher = None
    flusher = PeriodicFlusher(rt, interval) if interval > 0 else None
    if flusher is not None:
        rt.flusher = flusher
        flusher.start()
    try:
        due = rt.queue().report().get("active", {}).get("due", 0)
    except Exception:
        due = 0
    if due:
        once = flusher or PeriodicFlusher(rt, 1)
        threading.Thread(target=once.tick, name="hindsight-startup-flush", daemon=True).start()


def shutdown_flush(rt: SessionRuntime) -> None:
    """Stop the timer, flush within the shutdown bound, report leftovers once, close."""
    cfg = rt.cfg
    if rt.flusher is not None:
        rt.flusher.stop(1.0)
        rt.flusher = None
    try:
        if rt.enabled and rt.backend() is not None and rt.queue().count_active() > 0:
            report = deliver(
                rt,
                banks=None,
                budget_ms=cfg.retain.shutdown_flush_timeout_ms,
                max_jobs=cfg.retain.shutdown_flush_max_jobs,
                warn=False,
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
        from ..governance.redact import redact_error

        rt.warn_once("shutdown", f"shutdown flush failed: {redact_error(exc)}; the queue stays on disk")
    finally:
        rt.close_quietly()
