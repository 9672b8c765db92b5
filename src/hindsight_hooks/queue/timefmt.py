"""Timestamps in the queue files: ISO 8601 UTC with milliseconds and ``Z``.

The queue compares times read back from disk (``next_attempt_at``, ``claimed_at``, ...) with an
injectable clock, so parsing must be cheap and must never raise: a field it cannot read is
treated as absent, which errs on the side of delivering (a job is *due* when it has no readable
``next_attempt_at``).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

_last_second: tuple[int, str] = (-1, "")


def iso_ms(epoch_s: float) -> str:
    """``2024-05-01T12:00:00.123Z`` for an epoch time in seconds (the seconds part is memoised)."""
    global _last_second
    whole = int(epoch_s // 1)
    millis = round((epoch_s - whole) * 1000)
    if millis >= 1000:
        whole += 1
        millis -= 1000
    cached = _last_second
    if cached[0] != whole:
        cached = _last_second = (whole, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)))
    return f"{cached[1]}.{millis:03d}Z"


def parse_iso(value: object) -> float | None:
    """Epoch seconds for an ISO 8601 string, or ``None`` when it is missing or unreadable."""
    if not isinstance(value, str) or not value:
        return None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    try:
        return parsed.timestamp()
    except (OverflowError, OSError, ValueError):
        return None
