"""Deadlines: every hook, request and lock wait is bounded, so time budgets are passed around."""

from __future__ import annotations

import time


def now_ms() -> int:
    """Wall-clock epoch milliseconds."""
    return int(time.time() * 1000)


class Deadline:
    """A monotonic deadline; ``None`` budget means unbounded."""

    __slots__ = ("_end",)

    def __init__(self, budget_ms: float | None) -> None:
        self._end = None if budget_ms is None else time.monotonic() + max(0.0, budget_ms) / 1000.0

    @classmethod
    def unbounded(cls) -> Deadline:
        return cls(None)

    def remaining_s(self, cap_s: float | None = None) -> float | None:
        """Seconds left (never negative), optionally capped; ``None`` when unbounded and uncapped."""
        if self._end is None:
            return cap_s
        left = max(0.0, self._end - time.monotonic())
        return left if cap_s is None else min(left, cap_s)

    def expired(self) -> bool:
        return self._end is not None and time.monotonic() >= self._end
