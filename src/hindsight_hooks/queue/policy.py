"""Failure classes, backoff and dead-lettering (docs/queue.md#retries; adr/003-retry-backoff-dead-letter.md).

The rule that matters most: a job is dead-lettered only when it has failed ``max_attempts``
times **and** either the failure is permanent or it has been failing for
``dead_letter_after_ms`` (a week). A day-long outage or a bad API key fixed within the week
therefore loses nothing; only a request the server will never accept is put aside, and even
then it is kept in the dead-letter file, from which ``requeue_dead`` brings it back.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..backends.base import BackendError, server_unreachable
from ..governance.redact import redact_error
from ..timefmt import iso_ms, parse_iso
from .claims import release

if TYPE_CHECKING:
    from ..config_model import QueueConfig

FailureKind = Literal["transient", "auth", "permanent"]

APPEND_UNSUPPORTED = "server does not support append; upgrade Hindsight"
DEAD_LETTER_SUFFIX = "; retry limit reached, moved to dead-letter queue"
ERROR_LIMIT = 500
_TRANSIENT_STATUSES = frozenset({404, 408, 425, 429})
_RNG = random.Random()


@dataclass(frozen=True)
class Failure:
    """One classified delivery failure. ``message`` is redacted and at most 500 characters."""

    kind: FailureKind
    message: str
    reensure: bool = False  # a 404: the bank may be gone, ensure it again before the next delivery
    unreachable: bool = False  # no answer at all (timeout, refused): the caller may cool the bank down


def _names_append(detail: str) -> bool:
    low = detail.lower()
    return "update_mode" in low or "append" in low


def classify(exc: BaseException) -> Failure:
    """Map any exception from ``ensure_bank``/``retain_batch`` to a failure class (docs/queue.md#retries).

    The HTTP status wins when there is one; otherwise ``BackendError.kind`` decides. Anything
    that is not a ``BackendError`` (a bug, a socket error) is transient: retrying is safe
    because the ``operation_id`` makes the retry idempotent.
    """
    if not isinstance(exc, BackendError):
        return Failure("transient", redact_error(f"{type(exc).__name__}: {exc}", ERROR_LIMIT))
    message = redact_error(exc, ERROR_LIMIT)
    status = exc.status
    kind: FailureKind
    reensure = False
    if status is not None:
        if status in (401, 403):
            kind = "auth"
        elif status in _TRANSIENT_STATUSES or status >= 500:
            kind = "transient"
            reensure = status == 404
        elif 400 <= status < 500:
            kind = "permanent"
        else:
            kind = _kind_from_backend(exc)
            reensure = exc.kind == "not_found"
    else:
        kind = _kind_from_backend(exc)
        reensure = exc.kind == "not_found"
    if kind == "permanent" and status == 422 and _names_append(exc.detail or ""):
        message = APPEND_UNSUPPORTED
    return Failure(kind, message, reensure, server_unreachable(exc))


def _kind_from_backend(exc: BackendError) -> FailureKind:
    if exc.kind == "auth":
        return "auth"
    if exc.kind == "permanent":
        return "permanent"
    return "transient"  # transient, timeout, not_found, aborted


def backoff_ms(attempts: int, cfg: QueueConfig, jitter: float) -> float:
    """``min(retry_max, retry_base·2^(attempts-1))·(1+jitter)``, ``jitter`` in ``[0, 0.25)``."""
    exponent = max(0, min(attempts - 1, 62))
    base = min(float(cfg.retry_max_ms), float(cfg.retry_base_ms) * float(2**exponent))
    return base * (1.0 + jitter)


def apply_failure(
    job: dict[str, Any],
    failure: Failure,
    now: float,
    cfg: QueueConfig,
    rng: random.Random | None = None,
) -> bool:
    """Record a failed attempt on ``job`` (in place, claim cleared); True when it is now dead."""
    attempts = int(job.get("attempts", 0)) + 1
    job["attempts"] = attempts
    now_iso = iso_ms(now)
    job["last_attempt_at"] = now_iso
    first_failed = parse_iso(job.get("first_failed_at"))
    if first_failed is None:
        job["first_failed_at"] = now_iso
        first_failed = now
    job["last_error"] = failure.message[:ERROR_LIMIT]
    job["last_error_kind"] = failure.kind
    delay_ms = backoff_ms(attempts, cfg, (rng or _RNG).random() * 0.25)
    job["next_attempt_at"] = iso_ms(now + delay_ms / 1000.0)
    release(job)
    dead = attempts >= cfg.max_attempts and (
        failure.kind == "permanent" or (now - first_failed) * 1000.0 >= cfg.dead_letter_after_ms
    )
    if dead:
        job["dead_lettered_at"] = now_iso
        job["last_error"] = job["last_error"] + DEAD_LETTER_SUFFIX
    return dead


def is_due(job: dict[str, Any], now: float) -> bool:
    """No readable ``next_attempt_at``, or one that is not in the future (glossary: *due*)."""
    due_at = parse_iso(job.get("next_attempt_at"))
    return due_at is None or due_at <= now
