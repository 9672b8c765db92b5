"""A progress bar for long CLI commands (``embed``, ``migrate``), on stderr.

On a terminal the bar is redrawn in place with a rate; when stderr is a file or a pipe (a log,
a CI job, a test) it prints one line per 10 %, so the log stays readable and still shows that
the command is alive. stdout is left alone for the command's answer (``--json``).
"""

from __future__ import annotations

import sys
import time

_BAR = 30


class Progress:
    """``show(done)`` as work advances, ``end()`` once at the end."""

    def __init__(self, label: str, total: int) -> None:
        self.label = label
        self.total = max(total, 1)
        self.tty = sys.stderr.isatty()
        self._last_step = -1
        self._started = time.monotonic()

    def show(self, done: int) -> None:
        """Draw ``done`` of the total; work that grew past the total (memories retained during an
        ``embed``) grows the total, so the bar never reads "25/20"."""
        self.total = max(self.total, done)
        share = min(1.0, done / self.total)
        if self.tty:
            filled = int(share * _BAR)
            rate = done / max(time.monotonic() - self._started, 1e-6)
            bar = "#" * filled + "." * (_BAR - filled)
            sys.stderr.write(f"\r{self.label} [{bar}] {done}/{self.total} ({rate:.0f}/s)")
            sys.stderr.flush()
            return
        step = int(share * 10)
        if step > self._last_step:
            self._last_step = step
            print(f"{self.label}: {done}/{self.total} ({100 * share:.0f} %)", file=sys.stderr, flush=True)

    def end(self) -> None:
        if self.tty:
            sys.stderr.write("\n")
