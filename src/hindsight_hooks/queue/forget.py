"""Forgetting what is still queued (``/hindsight:memories forget``, ADR 132).

A forget writes its tombstones and takes the matching items out of the queued jobs in one hold
of the queue lock, so no flush claims a job between the two. A job left with no items is
removed; one with some left is rewritten with the rest. The active and the dead-letter files
are both cleaned (a requeue must not bring a forgotten item back); malformed lines are kept as
they are (never delete what we cannot parse). A job another process is delivering right now
cannot be called back: its count is reported, and the tombstone drops it should it be retried.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..timefmt import iso_ms
from .claims import live_claim
from .jobs import dumps_line
from .store import read_tolerant, rewrite
from .tombstones import Tombstone, add_tombstones, matcher_for, tombstone_path

if TYPE_CHECKING:
    from . import RetainQueue


@dataclass
class QueuedForget:
    items: int = 0
    jobs_removed: int = 0
    in_flight: int = 0
    tombstones_added: int = 0


def queued_matches(queue: RetainQueue, bank_id: str, match: Callable[[dict[str, Any]], bool]) -> int:
    """How many queued items (active and dead) ``match`` (the dry run's count; no lock needed)."""
    n = 0
    for path in (queue.paths.active, queue.paths.dead):
        for job in read_tolerant(path).jobs:
            if job.get("bank_id") == bank_id:
                n += sum(1 for item in job.get("items") or [] if match(item))
    return n


def forget_queued(queue: RetainQueue, stones: list[Tombstone]) -> QueuedForget:
    """Write ``stones`` and drop every queued item they match, under one queue-lock hold.

    The stones are dated here, inside the hold, not when the forget was planned (the person may
    take a while to confirm): a tombstone keeps out what was said or queued at or before its time
    (ADR 173), so its time must be the moment no job can be queued or claimed unseen. Every job
    still queued then predates it and is cleaned whatever its items' times."""
    out = QueuedForget()
    now = queue.now()
    ttl_s = queue.cfg.claim_ttl_ms / 1000.0
    with queue.lock.hold():
        written = iso_ms(queue.now())  # the clock the queue dates its jobs with
        stones = [replace(s, created_at=written) for s in stones]
        out.tombstones_added = add_tombstones(tombstone_path(queue.path), stones)
        for path in (queue.paths.active, queue.paths.dead):
            _clean(path, stones, now, ttl_s, out)
    return out


def _clean(path: Path, stones: list[Tombstone], now: float, ttl_s: float, out: QueuedForget) -> None:
    snap = read_tolerant(path)
    changed = False
    raws: list[bytes] = []
    for entry in snap.entries:
        job = entry.job
        if job is None:
            raws.append(entry.raw)
            continue
        matcher = matcher_for(stones, str(job.get("bank_id")))
        items = job.get("items") or []
        keep = [i for i in items if not matcher.matches(i)] if matcher else items
        if len(keep) == len(items):
            raws.append(entry.raw)
            continue
        if live_claim(job, now, ttl_s):
            out.in_flight += 1
        out.items += len(items) - len(keep)
        changed = True
        if keep:
            raws.append(dumps_line({**job, "items": keep}))
        else:
            out.jobs_removed += 1
    if changed:
        rewrite(path, raws)
