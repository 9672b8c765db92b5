"""Flush: claim under the lock, deliver without it, commit under it (docs/queue.md#flush).

Why three phases: the lock must never be held across the network (a slow server would stall
every other process's enqueue), yet two flushers must never send the same job at once. A claim
(``claimed_at`` + ``claim_token`` stamped under the lock) reserves jobs; delivery runs unlocked;
the commit re-reads the file (enqueues may have landed meanwhile) and applies only what this
flush knows, identified by its token.

Crash anywhere: every job is still in the active file. An orphaned claim is abandoned as soon as
its claimant process is known to be gone (``claims``, ADR 178), else after ``claim_ttl_ms``; the
job is resent with the same ``operation_id``.
Dead letters are appended (deduplicated by id) *before* the active file is rewritten without
them, so a crash in between leaves a job in both files, never in neither.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..backends.base import MemoryBackend, RetainOutcome
from ..governance.redact import redact_error, redact_value
from ..timefmt import iso_ms
from ..timing import Deadline
from .claims import CLAIMANT_FIELD, claimant, live_claim, release
from .errors import QueueError
from .jobs import document_ids, dumps_line
from .outcome import as_retain_outcome, sum_outcomes
from .paths import QueuePaths
from .policy import Failure, apply_failure, classify, is_due
from .receipts import bounded_context, record_receipts
from .store import Entry, Snapshot, append_durably, quarantine, read_tolerant, rewrite
from .tombstones import ItemFilter

if TYPE_CHECKING:
    from pathlib import Path

    from ..config_model import QueueConfig
    from .lock import QueueLock


@dataclass
class FlushResult:
    """What one flush did. ``errors`` maps a bank to its (redacted) last error in this flush."""

    sent: int = 0
    remaining: int = 0
    waiting: int = 0
    dead_lettered: int = 0
    malformed: int = 0
    operation_ids: list[str] = field(default_factory=list)
    outcome: dict[str, Any] | None = None
    delivered: list[dict[str, Any]] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)
    error_kinds: dict[str, str] = field(default_factory=dict)
    unreachable: set[str] = field(default_factory=set)
    """Banks whose delivery got no answer at all (timeout, refused): the caller may cool them down."""
    in_flight: int = 0
    """Jobs another flush (this or another process) has claimed and is delivering right now."""
    failed: int = 0
    dead_letter_ids: list[str] = field(default_factory=list)
    quarantine_error: str | None = None
    receipt_error: str | None = None
    """Why the receipts could not be written (redacted); the delivery itself stands."""
    forgotten: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per job id, the items a tombstone kept out: ``{"items": n, "forgotten_at": iso}`` (ADR 173);
    its delivered entry carries the same, so a retain can say "not stored" instead of "stored"."""

    def as_dict(self) -> dict[str, Any]:
        """The docs/queue.md#flush result shape (``operation_ids``/``outcome`` only when something was delivered)."""
        out: dict[str, Any] = {
            "sent": self.sent,
            "remaining": self.remaining,
            "waiting": self.waiting,
            "dead_lettered": self.dead_lettered,
            "malformed": self.malformed,
        }
        if self.operation_ids:
            out["operation_ids"] = list(self.operation_ids)
        if self.outcome is not None:
            out["outcome"] = dict(self.outcome)
        out["delivered"] = [dict(d) for d in self.delivered]
        if self.errors:
            out["errors"] = dict(self.errors)
        return out


@dataclass
class FlushContext:
    """What a flush needs from its queue; ``on_rewrite`` keeps the enqueue index in step."""

    paths: QueuePaths
    cfg: QueueConfig
    lock: QueueLock
    clock: Callable[[], float]
    rng: random.Random
    on_rewrite: Callable[[tuple[int, int], list[Entry]], None]
    receipts_path: Path | None = None
    on_claim_lock: Callable[[], None] | None = None
    """Runs first under the claim's hold (the queue's once-per-object temp-file sweep)."""
    item_filter: ItemFilter | None = None
    """Drops the items a tombstone keeps out before delivery (``tombstones``, ADR 132, ADR 173)."""


@dataclass
class _Claim:
    token: str
    jobs: list[dict[str, Any]]
    remaining: int
    waiting: int
    malformed: int
    quarantine_error: str | None
    in_flight: int = 0


def run_flush(
    ctx: FlushContext,
    backend: MemoryBackend,
    *,
    ensured: set[str],
    ensure_bank: Callable[[str], None] | None = None,
    max_jobs: int | None = None,
    max_elapsed_ms: int | None = None,
    force: bool = False,
    banks: set[str] | None = None,
    request_timeout_ms: int | None = None,
    skip_banks: set[str] | None = None,
) -> FlushResult:
    """One flush; ``ensured`` is the caller's set of banks already ensured (404 removes a bank).

    ``skip_banks`` are left untouched (not claimed, not attempted): the caller knows their
    server gave no answer moments ago and keeps their jobs queued until its cooldown ends.
    """
    deadline = Deadline(max_elapsed_ms)
    limit = max_jobs
    if max_elapsed_ms is not None and max_elapsed_ms <= 0:
        limit = 0
    claim = _claim(ctx, limit=limit, force=force, banks=banks, skip=skip_banks or set())
    result = FlushResult(
        remaining=claim.remaining,
        waiting=claim.waiting,
        malformed=claim.malformed,
        quarantine_error=claim.quarantine_error,
        in_flight=claim.in_flight,
    )
    if not claim.jobs:
        return result
    outcomes, failures = _deliver(
        claim.jobs,
        backend,
        deadline=deadline,
        ensured=ensured,
        ensure_bank=ensure_bank,
        request_timeout_ms=request_timeout_ms,
        result=result,
        item_filter=ctx.item_filter,
    )
    _commit(ctx, claim, outcomes, failures, result)
    return result


# -- A. claim -------------------------------------------------------------------------------


def _quarantine_snapshot(ctx: FlushContext, snap: Snapshot, now: float) -> tuple[int, str | None]:
    """Copy malformed lines to the quarantine file; (count moved, error if it failed)."""
    bad = snap.malformed_lines
    if not bad:
        return 0, None
    try:
        quarantine(ctx.paths.malformed, bad, ctx.paths.active, now)
    except QueueError as exc:
        return 0, str(exc)  # keep them in the active file: never drop what was not copied
    return len(bad), None


def _claim(ctx: FlushContext, *, limit: int | None, force: bool, banks: set[str] | None, skip: set[str]) -> _Claim:
    now = ctx.clock()
    token = uuid.uuid4().hex
    me = claimant()
    ttl_s = ctx.cfg.claim_ttl_ms / 1000.0
    with ctx.lock.hold():
        if ctx.on_claim_lock is not None:
            ctx.on_claim_lock()
        snap = read_tolerant(ctx.paths.active)
        blocked: set[str] = set()
        claimed: list[dict[str, Any]] = []
        for entry in snap.entries:
            job = entry.job
            if job is None:
                continue
            bank = job["bank_id"]
            if bank in blocked or bank in skip or (banks is not None and bank not in banks):
                continue
            if live_claim(job, now, ttl_s):
                blocked.add(bank)  # another flush is delivering this bank right now
                continue
            if not force and not is_due(job, now):
                blocked.add(bank)
                continue
            if limit is not None and len(claimed) >= limit:
                break
            stamped = {**job, "claimed_at": iso_ms(now), "claim_token": token, CLAIMANT_FIELD: me}
            entry.job = stamped
            entry.raw = dumps_line(stamped)
            claimed.append(stamped)
        moved, q_error = _quarantine_snapshot(ctx, snap, now)
        kept = [e for e in snap.entries if e.job is not None or q_error is not None]
        if claimed or moved:
            ident, _size = rewrite(ctx.paths.active, [e.raw for e in kept])
            ctx.on_rewrite(ident, kept)
    jobs_left = [e.job for e in kept if e.job is not None]
    waiting = sum(1 for j in jobs_left if not is_due(j, now))
    in_flight = sum(1 for j in jobs_left if j.get("claim_token") not in (None, token) and live_claim(j, now, ttl_s))
    return _Claim(token, claimed, len(jobs_left), waiting, moved, q_error, in_flight)


# -- B. deliver -----------------------------------------------------------------------------


def _deliver(
    jobs: list[dict[str, Any]],
    backend: MemoryBackend,
    *,
    deadline: Deadline,
    ensured: set[str],
    ensure_bank: Callable[[str], None] | None,
    request_timeout_ms: int | None,
    result: FlushResult,
    item_filter: ItemFilter | None = None,
) -> tuple[dict[str, RetainOutcome], dict[str, Failure]]:
    outcomes: dict[str, RetainOutcome] = {}
    failures: dict[str, Failure] = {}
    failed_banks: set[str] = set()
    cap_s = None if request_timeout_ms is None else max(0.0, request_timeout_ms / 1000.0)
    for job in jobs:
        bank = job["bank_id"]
        if bank in failed_banks:
            continue  # released unattempted: the bank stops at its first failure
        if deadline.expired():
            break  # the rest are released unattempted
        items = [dict(item) for item in job["items"]]
        if item_filter is not None:
            sieved = item_filter(bank, items, job.get("created_at"))
            items = sieved.kept
            if sieved.forgotten:
                result.forgotten[job["id"]] = {"items": sieved.forgotten, "forgotten_at": sieved.forgotten_at}
            if not items:  # everything in it was forgotten: done, nothing to send
                outcomes[job["id"]] = RetainOutcome(items_count=0)
                continue
        try:
            if ensure_bank is not None and bank not in ensured:
                ensure_bank(bank)
                ensured.add(bank)
            raw = backend.retain_batch(
                bank,
                items,
                operation_id=job["id"],
                async_=bool(job.get("async", True)),
                timeout_s=deadline.remaining_s(cap_s),
            )
            outcomes[job["id"]] = as_retain_outcome(raw)
        except Exception as exc:
            failure = classify(exc)
            failures[job["id"]] = failure
            failed_banks.add(bank)
            result.errors[bank] = failure.message
            result.error_kinds[bank] = failure.kind
            if failure.reensure:
                ensured.discard(bank)
            if failure.unreachable:
                result.unreachable.add(bank)
            if failure.kind == "auth":
                break  # the key is wrong for every bank: release everything left
    return outcomes, failures


# -- C. commit ------------------------------------------------------------------------------


def _delivered_entry(
    job: dict[str, Any], outcome: RetainOutcome, forgotten: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A delivered job as the flush result reports it; ``forgotten`` (only when a tombstone kept
    some of its items out) says how many and since which forget."""
    items = job.get("items") or []
    tags: dict[str, None] = {}
    for item in items:
        for tag in item.get("tags") or []:
            tags.setdefault(tag, None)
    last = items[-1] if items else {}
    entry: dict[str, Any] = {
        "queue_job_id": job["id"],
        "bank_id": job["bank_id"],
        "document_ids": document_ids(job),
        "update_mode": last.get("update_mode"),
        "context": bounded_context(str(last.get("context") or "")),
        "tags": redact_value(list(tags)),
        "source": job.get("source"),
        "outcome": outcome.as_outcome(),
        "items": [
            {
                "document_id": item.get("document_id"),
                "update_mode": item.get("update_mode"),
                "context": bounded_context(str(item.get("context") or "")),
                "tags": redact_value(list(item.get("tags") or [])),
            }
            for item in items
        ],
    }
    if forgotten:
        entry["forgotten"] = dict(forgotten)
    return entry


def _dead_ids(ctx: FlushContext) -> set[str]:
    """Ids already in the dead-letter file; an unreadable file fails the flush before the rewrite."""
    snap = read_tolerant(ctx.paths.dead)
    return {job["id"] for job in snap.jobs}


def _commit(
    ctx: FlushContext,
    claim: _Claim,
    outcomes: dict[str, RetainOutcome],
    failures: dict[str, Failure],
    result: FlushResult,
) -> None:
    now = ctx.clock()
    token = claim.token
    with ctx.lock.hold():
        snap = read_tolerant(ctx.paths.active)
        moved, q_error = _quarantine_snapshot(ctx, snap, now)
        result.malformed += moved
        result.quarantine_error = result.quarantine_error or q_error
        kept: list[Entry] = []
        dead: list[dict[str, Any]] = []
        for entry in snap.entries:
            job = entry.job
            if job is None:
                if q_error is not None:
                    kept.append(entry)
                continue
            job_id = job["id"]
            if job_id in outcomes:
                continue  # delivered: drop every copy of it
            if job.get("claim_token") != token:
                kept.append(entry)  # not ours (new, or another flush's claim): leave untouched
                continue
            updated = dict(job)
            failure = failures.get(job_id)
            if failure is not None:
                result.failed += 1
                if apply_failure(updated, failure, now, ctx.cfg, ctx.rng):
                    dead.append(updated)
                    continue
            else:
                release(updated)
            kept.append(Entry(dumps_line(updated), updated))
        if dead:
            known = _dead_ids(ctx)
            fresh: list[dict[str, Any]] = []
            for job in dead:
                if job["id"] not in known:
                    known.add(job["id"])
                    fresh.append(job)
            append_durably(ctx.paths.dead, b"".join(dumps_line(j) + b"\n" for j in fresh))
            result.dead_lettered = len(dead)
            result.dead_letter_ids = [j["id"] for j in dead]
        ident, _size = rewrite(ctx.paths.active, [e.raw for e in kept])
        ctx.on_rewrite(ident, kept)
        delivered_jobs = [j for j in claim.jobs if j["id"] in outcomes]
        result.delivered = [
            _delivered_entry(j, outcomes[j["id"]], result.forgotten.get(j["id"])) for j in delivered_jobs
        ]
        if ctx.receipts_path is not None and result.delivered:
            try:
                record_receipts(ctx.receipts_path, result.delivered, now)
            except Exception as exc:  # receipts are a convenience; a failure never fails the flush
                result.receipt_error = redact_error(exc)
    result.sent = len(outcomes)
    jobs_left = [e.job for e in kept if e.job is not None]
    result.remaining = len(jobs_left)
    result.waiting = sum(1 for j in jobs_left if not is_due(j, now))
    if outcomes:
        summed = sum_outcomes(outcomes[j["id"]] for j in delivered_jobs)
        result.outcome = summed
        result.operation_ids = list(summed.get("operations") or [])
