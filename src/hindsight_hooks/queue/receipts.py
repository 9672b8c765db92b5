"""Delivery receipts, ``retain-receipts.json`` (docs/retain.md#receipts).

A receipt says *that* something was delivered, never *what*: bank, document, job, mode,
source, a redacted and bounded context, tags, operation ids and the outcome aggregates. The
file keeps the 50 newest, newest first, one per ``(bank_id, document_id)``, so a live session
that appends to one document every turn occupies one slot. A corrupt file reads as empty and is
repaired by the next write (atomic), because receipts are a convenience, not a record of truth.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import orjson

from ..fsutil import atomic_write_bytes, ensure_private_dir
from ..governance.redact import redact_text, redact_value
from ..timefmt import iso_ms

VERSION = 1
MAX_RECEIPTS = 50
CONTEXT_LIMIT = 1000
TRUNCATED = "…[truncated]"


def bounded_context(text: str) -> str:
    """The context redacted, cut at 1000 characters with a visible marker."""
    text = redact_text(text or "")
    if len(text) <= CONTEXT_LIMIT or (text.endswith(TRUNCATED) and len(text) == CONTEXT_LIMIT + len(TRUNCATED)):
        return text  # already bounded (idempotent, so bounding twice never stacks markers)
    return text[:CONTEXT_LIMIT] + TRUNCATED


def read_receipts(path: Path) -> list[dict[str, Any]]:
    """The stored receipts, newest first; a missing or corrupt file is empty."""
    try:
        with open(path, "rb") as fh:
            data = orjson.loads(fh.read())
    except (OSError, orjson.JSONDecodeError):
        return []
    if not isinstance(data, dict) or not isinstance(data.get("receipts"), list):
        return []
    return [r for r in data["receipts"] if isinstance(r, dict)]


def receipts_for(delivered: Sequence[dict[str, Any]], now: float) -> list[dict[str, Any]]:
    """One receipt per delivered item, newest first (later jobs and later items are newer)."""
    created_at = iso_ms(now)
    out: list[dict[str, Any]] = []
    for job in reversed(delivered):
        outcome = dict(job.get("outcome") or {})
        for item in reversed(job.get("items") or []):
            out.append(
                {
                    "created_at": created_at,
                    "bank_id": job.get("bank_id"),
                    "document_id": item.get("document_id"),
                    "queue_job_id": job.get("queue_job_id"),
                    "update_mode": item.get("update_mode"),
                    "source": job.get("source"),
                    "context": bounded_context(str(item.get("context") or "")),
                    "tags": redact_value(list(item.get("tags") or [])),
                    "operation_ids": list(outcome.get("operations") or []),
                    "outcome": outcome,
                }
            )
    return out


def merge_receipts(new: Iterable[dict[str, Any]], existing: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Newest first, one per ``(bank_id, document_id)``, at most 50."""
    seen: set[tuple[Any, Any]] = set()
    out: list[dict[str, Any]] = []
    for receipt in [*new, *existing]:
        key = (receipt.get("bank_id"), receipt.get("document_id"))
        if key in seen:
            continue
        seen.add(key)
        out.append(receipt)
        if len(out) >= MAX_RECEIPTS:
            break
    return out


def record_receipts(path: Path, delivered: Sequence[dict[str, Any]], now: float | None = None) -> None:
    """Add receipts for a flush's delivered jobs (read-modify-write).

    The one writer is the queue's flush commit, which calls this under the queue lock, so two
    sessions that deliver at the same moment never lose each other's receipts. ``now``
    defaults to the wall clock.
    """
    new = receipts_for(delivered, time.time() if now is None else now)
    if not new:
        return
    merged = merge_receipts(new, read_receipts(path))
    ensure_private_dir(Path(path).parent)
    atomic_write_bytes(Path(path), orjson.dumps({"version": VERSION, "receipts": merged}))


#: The name the plugin's own writer used before the queue became the only writer (ADR 144).
record_deliveries = record_receipts
