"""Moving dead letters back into the active queue (``/hindsight:queue --requeue-dead``).

Order matters for crash safety: the active file is rewritten *first* with the revived jobs,
and only then is the dead file rewritten without them. A crash in between leaves a job in both
files (it is skipped by id if requeued again), never in neither. Malformed dead-letter lines are
left in the dead file untouched: we never delete what we cannot parse.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import QueueFullError
from .jobs import STATE_FIELDS, dumps_line
from .store import Entry, read_tolerant, rewrite, serialize

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..config_model import QueueConfig
    from .paths import QueuePaths


def revive(job: dict[str, Any]) -> dict[str, Any]:
    """The job as if never attempted: attempts 0, no errors, dates or claim."""
    fresh = {k: v for k, v in job.items() if k not in STATE_FIELDS}
    fresh["attempts"] = 0
    return fresh


def requeue_dead(
    paths: QueuePaths,
    cfg: QueueConfig,
    on_rewrite: Callable[[tuple[int, int], list[Entry]], None],
) -> int:
    """Move every readable dead letter back (caller holds the lock); returns how many were revived."""
    dead = read_tolerant(paths.dead)
    if not dead.jobs:
        return 0
    active = read_tolerant(paths.active)
    present = {job["id"] for job in active.jobs}
    entries = list(active.entries)
    revived = 0
    for job in dead.jobs:
        if job["id"] in present:
            continue
        fresh = revive(job)
        present.add(fresh["id"])
        entries.append(Entry(dumps_line(fresh), fresh))
        revived += 1
    raws = [e.raw for e in entries]
    if revived and len(serialize(raws)) > cfg.max_active_bytes:
        raise QueueFullError(
            f"retain queue {paths.active} would exceed max_active_bytes ({cfg.max_active_bytes}); "
            "dead letters left in place"
        )
    if revived:
        ident, _size = rewrite(paths.active, raws)
        on_rewrite(ident, entries)
    rewrite(paths.dead, dead.malformed_lines)
    return revived
