"""What the import needs from the durable queue beyond ``enqueue`` (docs/import.md "Delivery").

Before enqueueing a document, the import looks for a queued job that already carries it:

* same bank and document but different content → that job is *stale* (the file changed since
  it was queued) and is removed, so memory never receives the old version after the new one;
* same content → it is *identical*, and nothing new is enqueued: the queued job will deliver
  exactly what we would.

``RetainQueue`` has no "remove these jobs" operation, so removal is done here with the
queue's own lock and atomic rewrite (``store.rewrite``), keeping every other line — malformed
ones included — byte for byte. Only whole jobs whose every item is a stale copy of our
documents are removed, and never a job another process has claimed (it may be on the wire);
a stale item that shares a job with other items stays, which is harmless: the newer job comes
later in the same bank's order and replaces it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..queue import RetainQueue
from ..queue.claims import live_claim
from ..queue.store import read_tolerant, rewrite


@dataclass
class QueueMatch:
    """Queued jobs that carry one (bank, document)."""

    identical_job_id: str | None = None
    stale_job_ids: list[str] = field(default_factory=list)


def _items_for(job: dict[str, Any], document_id: str) -> list[dict[str, Any]]:
    return [i for i in job.get("items", []) if isinstance(i, dict) and i.get("document_id") == document_id]


def _claimed(job: dict[str, Any], now: float, claim_ttl_ms: int) -> bool:
    return bool(job.get("claim_token")) and live_claim(job, now, claim_ttl_ms / 1000.0)


def find_queued(queue: RetainQueue, bank_id: str, document_id: str, content: str) -> QueueMatch:
    """Jobs in the active file holding ``document_id`` for ``bank_id`` (read-only)."""
    match = QueueMatch()
    for job in read_tolerant(queue.paths.active).jobs:
        if job.get("bank_id") != bank_id:
            continue
        items = _items_for(job, document_id)
        if not items:
            continue
        if any(i.get("content") == content for i in items):
            match.identical_job_id = match.identical_job_id or str(job["id"])
        else:
            match.stale_job_ids.append(str(job["id"]))
    return match


def remove_stale(queue: RetainQueue, bank_id: str, stale: dict[str, str]) -> list[str]:
    """Remove unclaimed jobs of ``bank_id`` whose every item is a stale copy of a document.

    ``stale`` maps a document id to its *current* content; an item of that document with other
    content is stale. Returns the removed job ids.
    """
    if not stale:
        return []
    now = queue.now()
    with queue.lock.hold():
        snap = read_tolerant(queue.paths.active)
        keep: list[bytes] = []
        removed: list[str] = []
        for entry in snap.entries:
            job = entry.job
            if (
                job is not None
                and job.get("bank_id") == bank_id
                and not _claimed(job, now, queue.cfg.claim_ttl_ms)
                and job.get("items")
                and all(
                    i.get("document_id") in stale and i.get("content") != stale[i["document_id"]] for i in job["items"]
                )
            ):
                removed.append(str(job["id"]))
                continue
            keep.append(entry.raw)
        if removed:
            rewrite(queue.paths.active, keep)
    return removed


def queued_state(queue: RetainQueue, bank_id: str, document_id: str, content: str) -> tuple[str, str | None]:
    """Where this exact document is: ``("queued", job id)`` in the active file, ``("dead", job id)``
    in the dead-letter file, or ``("gone", None)`` — delivered, since a queued job only ever
    leaves the active file by delivery or dead-lettering."""
    for state, path in (("queued", queue.paths.active), ("dead", queue.paths.dead)):
        for job in read_tolerant(path).jobs:
            if job.get("bank_id") == bank_id and any(i.get("content") == content for i in _items_for(job, document_id)):
                return state, str(job["id"])
    return "gone", None


def job_states(queue: RetainQueue, job_ids: set[str]) -> dict[str, str]:
    """For each job id: ``claimed`` (another flush is delivering it now), ``queued``, ``dead`` or
    ``gone`` (delivered — by us or by any other flusher, e.g. the startup flush)."""
    now = queue.now()
    states = {job_id: "gone" for job_id in job_ids}
    for job in read_tolerant(queue.paths.dead).jobs:
        if job.get("id") in states:
            states[str(job["id"])] = "dead"
    for job in read_tolerant(queue.paths.active).jobs:
        if job.get("id") in states:
            states[str(job["id"])] = "claimed" if _claimed(job, now, queue.cfg.claim_ttl_ms) else "queued"
    return states
