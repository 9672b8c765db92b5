"""Queue diagnostics for ``/hindsight``, ``/hindsight:queue`` and ``doctor`` (docs/queue.md#diagnostics).

Read-only and lock-free (rewrites are atomic, so a read sees a whole file), and content-free:
the report carries counts, dates, ids, document ids, tags, metadata *keys* and byte sizes,
and errors that were redacted when stored and are redacted again here. It never raises for a
broken file: the broken file shows up as an ``error`` instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..governance.redact import redact_error, redact_value
from ..timefmt import iso_ms, parse_iso
from .errors import QueueError
from .policy import is_due
from .store import read_bytes, read_tolerant, summarize


def _error_text(exc: Exception) -> str:
    return str(exc) if isinstance(exc, QueueError) else type(exc).__name__


def active_summary(path: Path, now: float) -> dict[str, Any]:
    """``{valid, malformed, error, due, waiting, oldest_created_at, next_attempt_at, last_error}``."""
    out: dict[str, Any] = {
        "valid": 0,
        "malformed": 0,
        "error": None,
        "due": 0,
        "waiting": 0,
        "oldest_created_at": None,
        "next_attempt_at": None,
        "last_error": None,
    }
    try:
        snap = read_tolerant(path)
    except Exception as exc:
        out["error"] = _error_text(exc)
        return out
    jobs = snap.jobs
    out["valid"] = len(jobs)
    out["malformed"] = len(snap.malformed_lines)
    oldest: float | None = None
    next_at: float | None = None
    last_err: tuple[float, str] | None = None
    for job in jobs:
        if is_due(job, now):
            out["due"] += 1
        else:
            out["waiting"] += 1
            due_at = parse_iso(job.get("next_attempt_at"))
            if due_at is not None and (next_at is None or due_at < next_at):
                next_at = due_at
        created = parse_iso(job.get("created_at"))
        if created is not None and (oldest is None or created < oldest):
            oldest = created
        if isinstance(job.get("last_error"), str):
            when = parse_iso(job.get("last_attempt_at")) or 0.0
            if last_err is None or when >= last_err[0]:
                last_err = (when, job["last_error"])
    out["oldest_created_at"] = None if oldest is None else iso_ms(oldest)
    out["next_attempt_at"] = None if next_at is None else iso_ms(next_at)
    out["last_error"] = None if last_err is None else redact_error(last_err[1])
    return out


def count_lines(path: Path) -> dict[str, Any]:
    """``{lines, error}`` of a quarantine file (its lines are never parsed as jobs)."""
    try:
        data, _ident = read_bytes(path)
    except Exception as exc:
        return {"lines": 0, "error": _error_text(exc)}
    return {"lines": sum(1 for line in data.split(b"\n") if line.strip()), "error": None}


def report(
    active: Path,
    dead: Path,
    malformed: Path,
    *,
    now: float,
    lock_owner: dict[str, Any] | None = None,
    last_outcome: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The docs/queue.md#diagnostics report, plus the quarantine file's line count.

    ``malformed`` counts every line that did not parse: those still in the active file (moved
    aside by the next flush) plus those already quarantined. A flush moves them out of the
    active file at once, so its own count alone would read 0 right after every flush.
    """
    dead_summary = summarize(dead)
    active_part = active_summary(active, now)
    quarantined = count_lines(malformed)
    out: dict[str, Any] = {
        "queue_path": str(active),
        "dead_letter_path": str(dead),
        "malformed_path": str(malformed),
        "active": active_part,
        "dead_letter": {k: dead_summary[k] for k in ("valid", "malformed", "error")},
        "quarantine": quarantined,
        "malformed": {
            "total": int(active_part["malformed"]) + int(quarantined["lines"]),
            "in_queue": int(active_part["malformed"]),
            "quarantined": int(quarantined["lines"]),
        },
    }
    if lock_owner is not None:
        out["lock_owner"] = lock_owner
    if last_outcome is not None:
        out["last_outcome"] = dict(last_outcome)
    return out


def job_view(job: dict[str, Any], state: str) -> dict[str, Any]:
    """One job for ``--jobs``: bookkeeping and per-item sizes, never content or metadata values."""
    error = job.get("last_error")
    return {
        "state": state,
        "id": job.get("id"),
        "bank_id": job.get("bank_id"),
        "source": job.get("source"),
        "created_at": job.get("created_at"),
        "attempts": job.get("attempts"),
        "next_attempt_at": job.get("next_attempt_at"),
        "last_error": redact_error(error) if isinstance(error, str) else None,
        "last_error_kind": job.get("last_error_kind"),
        "dead_lettered_at": job.get("dead_lettered_at"),
        "items": [
            {
                "document_id": item.get("document_id"),
                "update_mode": item.get("update_mode"),
                "tags": redact_value(list(item.get("tags") or [])),
                "metadata_keys": sorted(str(k) for k in (item.get("metadata") or {})),
                "content_bytes": len(str(item.get("content", "")).encode("utf-8", "surrogatepass")),
                "context_bytes": len(str(item.get("context", "")).encode("utf-8", "surrogatepass")),
            }
            for item in job.get("items") or []
        ],
    }


def jobs_view(active: Path, dead: Path) -> list[dict[str, Any]]:
    """Every readable job of the active file, then of the dead-letter file; unreadable files are skipped."""
    out: list[dict[str, Any]] = []
    for path, state in ((active, "active"), (dead, "dead")):
        try:
            snap = read_tolerant(path)
        except Exception:
            continue
        out.extend(job_view(job, state) for job in snap.jobs)
    return out
