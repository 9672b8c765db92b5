"""Deliver queued jobs now, within a budget, and tell the user the truth about it.

Shared by auto-retain, the retain tools, commands, import and the timers: one place flushes,
writes receipts, records the last error and keeps failures visible (status, one notice per
streak) without ever raising into the host.

A Hindsight bank whose server gave no answer at all (refused, timed out) is offline for the
recall cooldown: automatic deliveries (``skip_offline``: agent_end, the timers, shutdown) leave
its jobs queued without touching the network until the cooldown ends, and any delivery that
gets no answer starts that cooldown (ADR 069). Explicit requests (the retain tools,
``/hindsight:flush``, import) still try, as tools ignore the recall cooldown (docs/recall.md#gates).
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from ..governance.redact import redact_error
from ..queue.flush import FlushResult
from ..timing import Deadline
from .banks import BankEnsurer

if TYPE_CHECKING:
    from .session import DeliverySession


@dataclass
class DeliveryReport(FlushResult):
    """The queue's flush result as it came back, plus what delivery adds: the banks it left
    queued because they are offline, and why no flush ran at all (``error``)."""

    offline: list[str] = field(default_factory=list)
    error: str | None = None

    @classmethod
    def of(cls, result: FlushResult) -> DeliveryReport:
        """The flush's own result, not a field-by-field retelling of it."""
        return cls(**{f.name: getattr(result, f.name) for f in fields(FlushResult)})

    def delivered_job(self, job_id: str) -> dict[str, Any] | None:
        for d in self.delivered:
            if d.get("queue_job_id") == job_id:
                return d
        return None


def deliver(
    rt: DeliverySession,
    *,
    banks: set[str] | None,
    budget_ms: int | None,
    max_jobs: int | None = None,
    force: bool = False,
    warn: bool = True,
    skip_offline: bool = False,
) -> DeliveryReport:
    """Flush (a subset of) the queue and report; failures become status + notices, never raises.

    ``skip_offline``: leave the jobs of banks in their offline cooldown queued, untouched.
    """
    report = DeliveryReport()
    backend = rt.backend()
    if backend is None:
        report.error = rt.backend_error or rt.not_initialised_message()
        return report
    request_ms = rt.cfg.hindsight.timeout_ms if rt.caps.remote else None
    deadline = Deadline(budget_ms)
    cap_s = None if request_ms is None else request_ms / 1000.0

    ensurer = BankEnsurer.for_config(backend, rt.backend_key, rt.cfg, rt.user_bank())

    def ensure_within_budget(bank_id: str) -> None:
        # The queue ensures a bank before its first delivery; that request belongs to the same
        # budget as the retain itself. Unclipped, a dead server would cost the client's full
        # timeout plus its GET retries (seconds) on every flush, and shutdown would overrun docs/shutdown.md.
        ensurer(bank_id, timeout_s=deadline.remaining_s(cap_s))

    offline = offline_banks(rt) if skip_offline and rt.caps.remote else []
    try:
        with rt.backend_use():
            result = rt.queue().flush(
                backend,
                ensure_bank=ensure_within_budget,
                max_jobs=max_jobs,
                max_elapsed_ms=budget_ms,
                force=force,
                banks=banks,
                request_timeout_ms=request_ms,
                skip_banks=set(offline),
            )
    except Exception as exc:
        report.error = redact_error(exc)
        rt.last_error = report.error
        if warn:
            rt.warn_once("flush", f"retain delivery failed: {report.error}; jobs stay queued on disk")
        return report
    report = DeliveryReport.of(result)
    if rt.caps.remote:
        for bank_id in result.unreachable:
            rt.start_cooldown(bank_id)
    if result.outcome:
        rt.last_outcome = dict(result.outcome)
    if result.receipt_error is not None:  # the queue wrote them under its lock (ADR 144)
        rt.warn_once("receipts", f"could not write retain receipts: {result.receipt_error}")
    for bank_id, err in report.errors.items():
        rt.last_error = err
        if warn:
            rt.warn_once(
                f"deliver:{bank_id}",
                f"retain to bank {bank_id} failed: {err}; the job stays queued and will be retried",
            )
    if report.sent and not report.errors:
        for bank_id in banks or set():
            rt.notifier.success(f"deliver:{bank_id}")
        rt.notifier.success("flush")
    if report.dead_lettered and warn:
        rt.warn_once("dead-letter", f"{report.dead_lettered} retain job(s) moved to the dead-letter file")
    if report.malformed and warn:
        rt.warn_once("malformed", f"{report.malformed} malformed queue line(s) quarantined")
    wanted = [b for b in offline if banks is None or b in banks]
    report.offline = wanted
    for bank_id in wanted:  # already reported when the server stopped answering: no new notice
        report.errors.setdefault(bank_id, _offline_reason(rt))
    return report


@dataclass
class FlushNow:
    """What ``/hindsight:flush`` did: its own delivery, and whether it had to wait for another.

    ``waited_for`` names the flush that was already running (this session's startup or periodic
    flush, or another one: another session or process) and ``waited_s`` how long we waited;
    ``still_in_flight`` counts jobs another flush was still delivering when we stopped waiting.
    """

    report: DeliveryReport
    waited_for: str | None = None
    waited_s: float = 0.0
    still_in_flight: int = 0

    def describe(self) -> str:
        rep = self.report
        text = (
            f"sent {rep.sent}, dead-lettered {rep.dead_lettered}, remaining {rep.remaining}, "
            f"quarantined {rep.malformed}, waiting {rep.waiting}"
        )
        if self.waited_for is not None:
            text = f"a flush was already running ({self.waited_for}); waited {self.waited_s:.1f} s for it, then: {text}"
        if self.still_in_flight:
            text += (
                f"\n{self.still_in_flight} job(s) are still being delivered by a flush that is already running; "
                "/hindsight:queue shows what is left"
            )
        return text


FLUSH_NOW_WAIT_S = 30.0
"""How long ``/hindsight:flush`` waits for a flush that is already running (issue 9 item 14)."""
_IN_FLIGHT_POLL_S = 0.1
DUE_WAIT_S = 10.0
"""How long the delivery worker's flush (``due_only``) waits for another: it runs after every
hook, so it must not sit out a long import's flush; an agent that stops its MCP server kills
it within a few seconds (Codex: ~0.2 s), and then its claim is free (ADR 178)."""
_DUE_POLL_S = 0.25
"""Each look reads the whole queue file under its lock: fewer of them while another flush runs."""


def flush_now(rt: DeliverySession, *, budget_ms: int, wait_s: float | None = None, due_only: bool = False) -> FlushNow:
    """An explicit flush of everything (force), that waits — bounded — for a running one.

    ``due_only``: the delivery worker's flush (``/hindsight:flush --due``): jobs in backoff and
    banks in their failure cooldown are left alone, as every automatic delivery does; the wait
    for a running flush is kept, shorter (:data:`DUE_WAIT_S`) and with fewer looks (ADR 178).
    ``wait_s`` defaults to :data:`FLUSH_NOW_WAIT_S`, or :data:`DUE_WAIT_S` with ``due_only``.

    A flush already delivering (this session's startup or periodic flush, or another process's)
    has claimed the head jobs of its banks, and a second flush must not touch those banks until
    it commits, so without waiting the user read "sent 0, remaining 10924" while the queue was
    in fact draining. We first wait for this session's own background flush (and keep its timer
    from starting another meanwhile), then flush; while jobs are still claimed by someone else,
    we flush again every 100 ms until they are free or ``wait_s`` is spent, adding up what we
    sent. A round in which a delivery failed ends the loop: force must not hammer a failing bank.
    """
    started = time.monotonic()
    if wait_s is None:
        wait_s = DUE_WAIT_S if due_only else FLUSH_NOW_WAIT_S
    poll_s = _DUE_POLL_S if due_only else _IN_FLIGHT_POLL_S
    wait_until = started + max(0.0, wait_s)
    end = started + max(0, budget_ms) / 1000.0
    flusher = rt.flusher
    waited_for: str | None = None
    if flusher is not None and flusher.busy():
        waited_for = "this session's background flush"
    gate = flusher.exclusive(wait_s) if flusher is not None else contextlib.nullcontext(True)
    with gate:
        total = DeliveryReport()
        while True:
            left_ms = max(0, int((end - time.monotonic()) * 1000))
            rep = deliver(rt, banks=None, budget_ms=left_ms, force=not due_only, warn=False, skip_offline=due_only)
            _add(total, rep)
            if rep.error or rep.errors or rep.dead_lettered or rep.in_flight == 0:
                break
            if time.monotonic() + poll_s >= min(wait_until, end):
                break
            waited_for = waited_for or "another session or process"
            time.sleep(poll_s)
    waited = time.monotonic() - started if waited_for is not None else 0.0
    return FlushNow(total, waited_for, waited, total.in_flight)


def _add(total: DeliveryReport, rep: DeliveryReport) -> None:
    """Fold one round into the running total: counts add up, states are the latest round's."""
    total.sent += rep.sent
    total.dead_lettered += rep.dead_lettered
    total.malformed += rep.malformed
    total.delivered.extend(rep.delivered)
    total.remaining = rep.remaining
    total.waiting = rep.waiting
    total.in_flight = rep.in_flight
    total.errors.update(rep.errors)
    total.error = rep.error
    total.dead_letter_ids.extend(rep.dead_letter_ids)
    total.forgotten.update(rep.forgotten)


def offline_banks(rt: DeliverySession) -> list[str]:
    """Banks in their cooldown: their server gave no answer moments ago (ADR 069)."""
    return sorted(b for b in list(rt.cooldown_until) if rt.in_cooldown(b))


def _offline_reason(rt: DeliverySession) -> str:
    last = f" (last error: {rt.last_error})" if rt.last_error else ""
    return f"the memory server did not answer{last}; delivery resumes after the cooldown, the job stays queued"
