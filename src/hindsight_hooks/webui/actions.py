"""What the page can do, as calls of the commands a person would type (ADR 155).

The page computes nothing itself: a list is ``/hindsight:memories list …``, a forget is
``/hindsight:memories forget …`` (first with ``--dry-run``, then confirmed), the queue is
``/hindsight:queue`` and the doctor is ``/hindsight:doctor --json`` with the agent section the
shell adds. So the page and the shell can never disagree about what is stored or how the queue
stands, and every rule of those commands (redaction, tombstones, the question before a forget)
holds here too.

One ``Host`` serves every request, one request at a time (the lock): commands were written for
one person at one terminal, and a page used by one person loses nothing by waiting its turn.
"""

from __future__ import annotations

import shlex
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..hooks import CommandResult
from ..hooks.context import NotifyLevel

MEMORIES = "hindsight:memories"
FORGET_BY = ("id", "document", "session", "tag", "query")
LIST_KEYS = ("bank", "text", "tag", "document", "session", "since", "until", "page", "limit")
CONFIRM = "Confirm"
"""The answer the forget command's question expects (``memories.CONFIRM``)."""


class CommandHost(Protocol):
    """The part of :class:`~hindsight_hooks.hooks.Host` the page uses."""

    def command(self, line: str) -> CommandResult: ...


class PageUI:
    """The host UI behind the page: quiet, and it answers a question only when the page armed it.

    The forget command asks "Forget N memories?" through ``select``. A person answers it on the
    page's confirmation step; the POST that follows arms exactly one ``Confirm`` for exactly one
    command run, so no other question is ever answered on anyone's behalf.
    """

    def __init__(self) -> None:
        self._armed: str | None = None
        self.warnings: list[str] = []

    def arm(self, answer: str | None) -> None:
        self._armed = answer

    def notify(self, text: str, level: NotifyLevel = "info") -> None:
        if level != "info":
            self.warnings = [*self.warnings[-4:], text]

    def set_status(self, key: str, text: str | None) -> None:
        return None

    def select(self, title: str, options: list[str]) -> str | None:
        answer, self._armed = self._armed, None
        return answer if answer in options else None


@dataclass
class Answer:
    """A command's answer as the page shows it."""

    text: str
    level: str
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.level == "info"

    @classmethod
    def of(cls, result: CommandResult) -> Answer:
        return cls(result.text, result.level, dict(result.data or {}))


class Actions:
    """The page's operations; each one is a command line run on ``host``."""

    def __init__(self, host: CommandHost, ui: PageUI, cwd: Path) -> None:
        self.host = host
        self.ui = ui
        self.cwd = cwd
        self._lock = threading.Lock()

    def _run(self, name: str, words: list[str], *, confirm: bool = False) -> Answer:
        line = f"/{name}" + (f" {shlex.join(words)}" if words else "")
        with self._lock:
            self.ui.arm(CONFIRM if confirm else None)
            try:
                result = self.host.command(line)
            finally:
                self.ui.arm(None)
        return Answer.of(result)

    # -- memories ------------------------------------------------------------------------------
    def list_memories(self, query: dict[str, list[str]]) -> Answer:
        """``memories list`` with the page's filters (``key=value`` words, empty ones left out)."""
        words = ["list"]
        for key in LIST_KEYS:
            for value in query.get(key, []):
                if value.strip():
                    words.append(f"{key}={value.strip()}")
        return self._run(MEMORIES, words)

    def show(self, bank: str, memory_id: str) -> Answer:
        return self._run(MEMORIES, ["show", memory_id, f"bank={bank}"])

    def forget_plan(self, bank: str, by: str, value: str) -> Answer:
        """What a forget would remove (``--dry-run``): the confirmation step shows this."""
        return self._run(MEMORIES, [*self._forget_words(bank, by, value), "--dry-run"])

    def forget(self, bank: str, by: str, value: str) -> Answer:
        """The forget itself, its question answered ``Confirm`` (the person confirmed on the page)."""
        return self._run(MEMORIES, self._forget_words(bank, by, value), confirm=True)

    @staticmethod
    def _forget_words(bank: str, by: str, value: str) -> list[str]:
        if by not in FORGET_BY:
            raise ValueError(f"forget by must be one of {', '.join(FORGET_BY)}")
        if not value.strip():
            raise ValueError("nothing named to forget")
        return ["forget", by, value.strip(), f"bank={bank}"]

    # -- queue and doctor ------------------------------------------------------------------------
    def queue(self) -> Answer:
        """``/hindsight:queue``: its text is what the page shows, so the numbers are the same."""
        return self._run("hindsight:queue", [])

    def doctor(self) -> Answer:
        """``hindsight-hooks doctor --json``: the plugin's checks plus the agent programs' section."""
        answer = self._run("hindsight:doctor", ["--json"])
        if not answer.data:
            return answer
        from ..hosts.doctor_agents import with_agent_section

        text, data, level = with_agent_section(answer.text, answer.data, answer.level, self.cwd)
        return Answer(text, level, dict(data) if isinstance(data, dict) else answer.data)
