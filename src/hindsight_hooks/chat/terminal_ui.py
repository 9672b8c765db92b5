"""A ``UI`` for a person at a terminal: notices are printed, status is kept, questions are asked.

Used by ``hindsight-hooks chat`` (everything on the terminal) and by the one-shot CLI
subcommands (notices on stderr so ``--json`` output stays clean; ``--yes`` answers questions).

``select`` may be called from the worker thread that runs an agent turn while the main thread
waits for Ctrl-C, so it reads the terminal itself (polling, so an abort can stop the wait)
instead of going through ``input()``.
"""

from __future__ import annotations

import os
import re
import select as _select
import sys
import threading
from typing import TextIO

from ..hooks import CommandResult
from ..hooks.context import NotifyLevel

AFFIRMATIVE = ("Import", "Allow", "Yes", "Continue", "Confirm", "OK")
"""Answers ``--yes`` picks. A question whose options hold none of these is cancelled instead:
guessing at an unknown question would be worse than declining it."""

_PREFIX = {"info": "", "warning": "warning: ", "error": "error: "}
_PROGRESS = re.compile(r"^import: (?P<done>\d+)/(?P<total>\d+) (?P<rest>.*)$")
_BAR_WIDTH = 24


def is_progress(text: str) -> bool:
    """Whether a notice is import progress (``import: i/N ...``), which is shown even when quiet."""
    return _PROGRESS.match(text) is not None


def progress_bar(done: int, total: int, rest: str) -> str:
    """``import [#######.....]  7/12 document(s) delivered to bank`` (clamped to the total)."""
    total = max(total, 1)
    done = min(max(done, 0), total)
    filled = round(_BAR_WIDTH * done / total)
    width = len(str(total))
    return f"import [{'#' * filled}{'.' * (_BAR_WIDTH - filled)}] {done:>{width}}/{total} {rest}"


def format_result(result: CommandResult) -> str:
    """A command result for a person: its level, then its text.

    A one-line result reads ``warning: <text>``; a multi-line one (a report whose lines carry
    their own ok/warn marks) gets the level on a line of its own, so the mark is not mistaken
    for part of the first line. Info results are shown as they are.
    """
    label = {"warning": "warning", "error": "error"}.get(result.level)
    if label is None:
        return result.text
    if "\n" in result.text.strip():
        return f"{label}:\n{result.text}"
    return f"{label}: {result.text}"


class TerminalUI:
    """Prints notices to ``out``; records ``set_status``; asks ``select`` questions on ``inp``.

    ``assume_yes`` answers every question with its affirmative option without asking;
    ``interactive=False`` cancels questions (returns ``None``) when not assuming yes.
    """

    def __init__(
        self,
        out: TextIO | None = None,
        inp: TextIO | None = None,
        *,
        assume_yes: bool = False,
        interactive: bool = True,
        tag: str = "[hindsight] ",
        cancel: threading.Event | None = None,
    ) -> None:
        self._out = out
        self._inp = inp
        self.assume_yes = assume_yes
        self.interactive = interactive
        self.tag = tag
        self.cancel = cancel
        self.status: dict[str, str] = {}
        self._lock = threading.RLock()
        self._bar_open = False

    @property
    def out(self) -> TextIO:
        return self._out if self._out is not None else sys.stderr

    @property
    def inp(self) -> TextIO:
        return self._inp if self._inp is not None else sys.stdin

    def notify(self, text: str, level: NotifyLevel = "info") -> None:
        """Print a notice; on a terminal, import progress (``import: i/N ...``) is one live bar.

        A long import sends one notice per document. On a terminal those become a single line
        redrawn in place (a progress bar), finished by a newline at ``N/N`` or before any other
        notice; anywhere else (a pipe, a log) each stays a plain line that can be grepped.
        """
        with self._lock:
            match = _PROGRESS.match(text) if level == "info" else None
            if match is not None and _is_tty(self.out):
                done, total = int(match["done"]), int(match["total"])
                bar = progress_bar(done, total, match["rest"])
                end = "\n" if done >= total else ""
                print(f"\r\x1b[2K{self.tag}{bar}", end=end, file=self.out, flush=True)
                self._bar_open = not end
                return
            if self._bar_open:
                print(file=self.out)
                self._bar_open = False
            print(f"{self.tag}{_PREFIX.get(level, '')}{text}", file=self.out, flush=True)

    def set_status(self, key: str, text: str | None) -> None:
        with self._lock:
            if text is None:
                self.status.pop(key, None)
            else:
                self.status[key] = text

    def status_text(self) -> str:
        """Every status entry, in key order, for the prompt."""
        with self._lock:
            return " ".join(self.status[k] for k in sorted(self.status))

    def select(self, title: str, options: list[str]) -> str | None:
        if not options:
            return None
        if self.assume_yes:
            return next((o for o in options if o in AFFIRMATIVE), None)
        if not self.interactive:
            return None
        with self._lock:
            if self._bar_open:
                print(file=self.out)
                self._bar_open = False
            print(title, file=self.out)
            for i, option in enumerate(options, 1):
                print(f"  {i}) {option}", file=self.out)
            while True:
                print(f"choose 1-{len(options)} (empty = cancel): ", end="", file=self.out, flush=True)
                line = self._read_line()
                if line is None:
                    print(file=self.out, flush=True)
                    return None
                answer = line.strip()
                if not answer:
                    return None
                if answer.isdigit() and 1 <= int(answer) <= len(options):
                    return options[int(answer) - 1]
                match = [o for o in options if o.lower() == answer.lower()]
                if match:
                    return match[0]
                print(f"not an option: {answer}", file=self.out)

    def _read_line(self) -> str | None:
        """One line from ``inp``; ``None`` on EOF or when the run is aborted while waiting."""
        stream = self.inp
        try:
            fd = stream.fileno()
            tty = os.isatty(fd)
        except (AttributeError, OSError, ValueError):
            fd, tty = -1, False
        # A terminal is polled on its descriptor so an abort can end the wait; pipes and files
        # go through the stream, whose read-ahead buffer a raw read would skip.
        if tty:
            while True:
                if self.cancel is not None and self.cancel.is_set():
                    return None
                try:
                    ready, _, _ = _select.select([fd], [], [], 0.2)
                except (OSError, ValueError):
                    break
                if ready:
                    data = _read_fd_line(fd)
                    return data
        line = stream.readline()
        return line if line else None


def _is_tty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, OSError, ValueError):
        return False


def _read_fd_line(fd: int) -> str | None:
    """Read up to a newline straight from the descriptor (a tty in canonical mode gives whole lines)."""
    chunks: list[bytes] = []
    while True:
        try:
            b = os.read(fd, 1)
        except OSError:
            return None
        if not b:
            return b"".join(chunks).decode("utf-8", "replace") if chunks else None
        if b == b"\n":
            return b"".join(chunks).decode("utf-8", "replace")
        chunks.append(b)
