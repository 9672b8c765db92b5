"""What a host hands to every hook: where we are, how to talk to the person, how to abort."""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, TextIO, runtime_checkable

NotifyLevel = Literal["info", "warning", "error"]


@runtime_checkable
class UI(Protocol):
    """The host's user interface, as far as plugins may use it."""

    def notify(self, text: str, level: NotifyLevel = "info") -> None: ...

    def set_status(self, key: str, text: str | None) -> None: ...

    def select(self, title: str, options: list[str]) -> str | None: ...


class NullUI:
    """A UI with no person behind it: notices vanish and every question is cancelled."""

    def notify(self, text: str, level: NotifyLevel = "info") -> None:
        return None

    def set_status(self, key: str, text: str | None) -> None:
        return None

    def select(self, title: str, options: list[str]) -> str | None:
        return None


class ConsoleUI:
    """Prints notices to a stream (stderr by default); status changes are kept, not printed."""

    def __init__(self, stream: TextIO | None = None, answer: str | None = None) -> None:
        self._stream = stream
        self._answer = answer
        self.status: dict[str, str] = {}

    def notify(self, text: str, level: NotifyLevel = "info") -> None:
        stream = self._stream or sys.stderr
        prefix = {"info": "", "warning": "warning: ", "error": "error: "}[level]
        print(f"[hindsight] {prefix}{text}", file=stream)

    def set_status(self, key: str, text: str | None) -> None:
        if text is None:
            self.status.pop(key, None)
        else:
            self.status[key] = text

    def select(self, title: str, options: list[str]) -> str | None:
        return self._answer if self._answer in options else None


class RecordingUI:
    """Records every notice, status change and question; answers questions from a script."""

    def __init__(self, answers: list[str | None] | None = None) -> None:
        self.notices: list[tuple[str, str]] = []
        self.status_history: list[tuple[str, str | None]] = []
        self.status: dict[str, str] = {}
        self.questions: list[tuple[str, list[str]]] = []
        self.answers: list[str | None] = list(answers or [])
        self._lock = threading.Lock()

    def notify(self, text: str, level: NotifyLevel = "info") -> None:
        with self._lock:
            self.notices.append((level, text))

    def set_status(self, key: str, text: str | None) -> None:
        with self._lock:
            self.status_history.append((key, text))
            if text is None:
                self.status.pop(key, None)
            else:
                self.status[key] = text

    def select(self, title: str, options: list[str]) -> str | None:
        with self._lock:
            self.questions.append((title, list(options)))
            return self.answers.pop(0) if self.answers else None

    def texts(self, level: str | None = None) -> list[str]:
        """Notice texts, optionally only those of one level."""
        return [t for (lv, t) in self.notices if level is None or lv == level]


@dataclass
class HostContext:
    """Passed to every hook, command and tool.

    ``short_lived`` is true when the host runs every hook in a fresh process that exits as soon
    as the hook returns (the command hooks of Claude Code, Codex CLI and Gemini CLI, driven by
    ``hindsight-hooks hook``). A plugin then keeps each hook to its durable, local part: nothing in
    memory survives to the next hook, a background thread would die with the process, and waiting
    for the network is the user's latency on every prompt. So ``agent_end`` queues the new part of
    the transcript and returns without delivering it; the host delivers later, in a process of
    its own (``session_start`` then ``shutdown``). Hosts that do not set it get the default,
    ``False``, and plugins read it with ``getattr(ctx, "short_lived", False)`` because foreign
    hosts may pass contexts without it (ADR-025).
    """

    cwd: Path
    session_file: Path | None = None
    host_name: str = "agent"
    ui: UI = field(default_factory=NullUI)
    signal: threading.Event = field(default_factory=threading.Event)
    is_subagent: bool = False
    short_lived: bool = False
