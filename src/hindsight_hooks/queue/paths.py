"""The files of one queue (docs/queue.md#files): all derive from the active file's path ``Q``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class QueuePaths:
    active: Path
    dead: Path
    malformed: Path
    lock: Path
    owner: Path

    @classmethod
    def for_queue(cls, queue_path: Path) -> QueuePaths:
        q = Path(queue_path)
        return cls(
            active=q,
            dead=q.with_name(q.name + ".dead.jsonl"),
            malformed=q.with_name(q.name + ".malformed.jsonl"),
            lock=q.with_name(q.name + ".lock"),
            owner=q.with_name(q.name + ".lock.owner.json"),
        )
