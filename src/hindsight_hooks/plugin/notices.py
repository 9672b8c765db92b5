"""Notify once per streak: a failure is told once, then silence until a success clears it.

Users run agents all day; a server that is down must cost them one plain warning, not one
per turn per bank. A key that keeps failing is re-announced at most every 10 minutes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from ..governance.redact import redact_text
from ..hooks import UI

REANNOUNCE_S = 600.0


class StreakNotifier:
    """Remembers which failure keys are in a streak and when each was last announced."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._last: dict[str, float] = {}
        self._lock = threading.Lock()

    def failure(self, ui: UI, key: str, text: str, level: str = "warning") -> bool:
        """Warn for ``key`` unless already announced in this streak (and < 10 min ago)."""
        now = self._clock()
        with self._lock:
            last = self._last.get(key)
            if last is not None and now - last < REANNOUNCE_S:
                return False
            self._last[key] = now
        safe_notify(ui, text, level)
        return True

    def success(self, key: str) -> None:
        """End the streak for ``key`` so its next failure is told again."""
        with self._lock:
            self._last.pop(key, None)

    def in_streak(self, key: str) -> bool:
        with self._lock:
            return key in self._last


def safe_notify(ui: UI, text: str, level: str = "info") -> None:
    """Notify with redaction; a broken UI never breaks a hook."""
    lv = level if level in ("info", "warning", "error") else "info"
    try:
        ui.notify(redact_text(text), lv)  # type: ignore[arg-type]
    except Exception:
        pass


def safe_status(ui: UI, key: str, text: str | None) -> None:
    try:
        ui.set_status(key, text)
    except Exception:
        pass
