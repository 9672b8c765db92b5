"""How a one-shot ``hindsight-hooks`` command talks to the person who ran it (ADR-072).

A subcommand is a whole session in one process, so everything the plugin would say to a host
over a long session lands on one terminal: the start notice ("backend local ..."), the import
announcement, and so on. On success that is noise above the answer. So the CLI shows notices
only at ``warning`` and above (plus import progress, which a long import owes the person, ADR-045),
and prints results without a bare ``warning:`` line over a report whose lines carry their own marks.

A question (an import's "Import?", a read-only session's "Allow retain?") needs a person. With
no terminal and no ``--yes`` the question is declined, as before, but the CLI now remembers it,
so the command can exit non-zero and say what to pass instead of reporting a quiet success.
"""

from __future__ import annotations

import sys

from .chat.terminal_ui import TerminalUI, is_progress
from .hooks import CommandResult
from .hooks.context import NotifyLevel

CLI_TAG = "hindsight-hooks: "
"""Prefix of what the CLI itself says on stderr (argparse and the loader use the program name too)."""


class CliUI(TerminalUI):
    """A :class:`TerminalUI` on stderr that is quiet below ``warning`` and records unasked questions."""

    def __init__(self, *, assume_yes: bool, interactive: bool) -> None:
        super().__init__(out=sys.stderr, assume_yes=assume_yes, interactive=interactive)
        self.unanswered: list[str] = []

    def notify(self, text: str, level: NotifyLevel = "info") -> None:
        if level == "info" and not is_progress(text):
            return
        super().notify(text, level)

    def select(self, title: str, options: list[str]) -> str | None:
        if options and not self.assume_yes and not self.interactive:
            self.unanswered.append(title)
            return None
        return super().select(title, options)


def needs_yes_hint(ui: CliUI) -> str | None:
    """What to tell a person whose command stopped at a question nobody could answer, if it did."""
    if not ui.unanswered:
        return None
    question = " ".join(ui.unanswered[0].split())
    return (
        f"{CLI_TAG}stopped at a question that needs an answer ({question}), and there is no terminal to ask;"
        " run it again with --yes to answer yes"
    )


def format_result(result: CommandResult) -> str:
    """A command result as the CLI prints it.

    A one-line warning or error reads ``warning: <text>``. A multi-line result is a report whose
    lines say for themselves what is wrong (``warn  queue: ...``, ``config error: ...``), so it is
    printed as it is; a bare ``warning:`` line above it reads like a failure on a good run.
    """
    text = result.text.rstrip("\n")
    if result.level in ("warning", "error") and "\n" not in text.strip():
        return f"{result.level}: {text.strip()}"
    return text
