"""``/hindsight:<command>`` inside Claude Code: one command file per ``hindsight-hooks`` subcommand.

Claude Code turns ``<claude dir>/commands/hindsight/<name>.md`` into the slash command
``/hindsight:<name>``. Each file we write runs the matching subcommand of this installation
(its console script, by absolute path) through Claude Code's ``!`command``` expansion, for the
session it is typed in: ``${CLAUDE_SESSION_ID}`` names the session file the hooks use
(:func:`~.hookcmd.session_file_for`), so ``/hindsight:mode read-only`` switches exactly that session.
The command's output is put in front of the model with the instruction to show it as it is.

Commands that need a file argument or a confirmation work as in a shell (``/hindsight:recall
cache``, ``/hindsight:flush``); importing past sessions stays a shell command.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from .install import FILE_MARKER

FOLDER = "hindsight"
SESSION_FILE = '"$PWD/.hindsight/sessions/${CLAUDE_SESSION_ID}.jsonl"'
"""The session file the hooks use for this Claude Code session (bash runs in the project folder)."""
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("status", "Memory status: backend, banks, mode, queue, last activity", ""),
    ("session", "This session's memory mode, recall, retain and tags", ""),
    ("mode", "Set this session's memory mode", "normal|read-only|ignored"),
    ("retain", "Turn automatic retain on or off for this session", "on|off"),
    ("next-opt-out", "Skip automatic retain for the next run only", ""),
    ("tag", "Add or remove a session tag", "add|remove <tag>"),
    ("recall", "Search memory", "<query>"),
    ("last-recall", "Show what memory was injected last", "[--json]"),
    ("queue", "Retain queue state and dead letters", "[--jobs] [--requeue-dead]"),
    ("flush", "Deliver queued memory now", ""),
    ("doctor", "Check config, state files, server, queue and store", "[--fix]"),
    ("route", "Dry-run the memory router on a text", "<text>"),
    (
        "memories",
        "List, show, edit, forget (add --yes to confirm), export or import memories",
        "list|show|edit|forget|export|import|markdown [args] [--dry-run] [--yes]",
    ),
    ("init", "Write .hindsight/config.toml for this project", ""),
)


def console_script(python: str | None = None) -> str:
    """The ``hindsight-hooks`` script beside the interpreter (where pip puts it)."""
    return str(Path(python or sys.executable).absolute().parent / "hindsight-hooks")


def command_files(script: str | None = None) -> dict[str, str]:
    exe = shlex.quote(script or console_script())
    files: dict[str, str] = {}
    for name, description, hint in COMMANDS:
        lines = ["---", f"description: {description} (hindsight memory)"]
        if hint:
            lines.append(f"argument-hint: {hint}")
        lines += [
            f"allowed-tools: Bash({exe}:*)",
            "---",
            f"<!-- {FILE_MARKER}; `hindsight-hooks uninstall claude-code` removes it -->",
            f"!`{exe} {name} --host-name claude-code --session-file {SESSION_FILE} $ARGUMENTS`",
            "",
            "Show the user the output above exactly as it is, in a code block, with no commentary.",
            "",
        ]
        files[f"{name}.md"] = "\n".join(lines)
    return files


def commands_folder(scope: str, cwd: Path, home: Path | None = None) -> Path:
    base = cwd if scope == "project" else (home if home is not None else Path.home())
    return base / ".claude" / "commands" / FOLDER
