"""``/hindsight:<command>`` inside Gemini CLI: custom command files that run our subcommand.

Gemini CLI turns ``<gemini dir>/commands/hindsight/<name>.toml`` into the slash command
``/hindsight:<name>``. Its ``prompt`` may hold ``!{shell command}``, run when the command is typed
and replaced by its output, with ``{{args}}`` inside it replaced by the typed arguments as ONE
shell-quoted word. Each file we write runs::

    <python> -m hindsight_hooks.hosts.gemini_commands <name> {{args}}

This module is that entry. It splits the arguments again, finds the Gemini session the command
was typed in, and runs ``hindsight-hooks <name> --host-name gemini --session-file <that
session's file> ARGS``, so ``/hindsight:mode read-only`` switches exactly the session the hooks
serve. The prompt opens with :data:`~.gemini_transcript.COMMAND_MARKER`: the hooks do not
recall for it, and the transcript reader drops it and the model's reply to it.

**Which session.** Gemini CLI gives a shell command no session id (its hooks get one), so every
hook event records the session it serves as the project's *current* Gemini session
(:func:`mark_current`, ``.hindsight/hosts/gemini-current.json``); the command uses that one. A
session starts with the ``SessionStart`` hook, before any command can be typed, so a command
always finds its own session unless two Gemini sessions in one project take turns (then it is
the one that last started or was prompted; ADR-090).

**Headless runs.** Gemini CLI asks before running a command's shell part, and refuses in
``-p`` mode; ``hindsight-hooks install gemini`` therefore adds a user policy rule that allows
exactly this entry (:func:`policy_text`), together with our MCP tools but ``memory_edit``.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from .install import FILE_MARKER

FOLDER = "hindsight"
MODULE = "hindsight_hooks.hosts.gemini_commands"
CURRENT = "gemini-current.json"
ALLOWED_TOOLS = ("hindsight_retain", "hindsight_retain_global", "hindsight_recall", "hindsight_reflect")


# --------------------------------------------------------------------------- the current session


def current_path(cwd: Path) -> Path:
    return Path(cwd) / ".hindsight" / "hosts" / CURRENT


def mark_current(cwd: Path, session_id: str) -> None:
    """Record ``session_id`` as the project's current Gemini session (best effort, never raises)."""
    from ..fsutil import atomic_write_text, ensure_private_dir

    path = current_path(cwd)
    try:
        if read_current(cwd) == session_id:
            return
        ensure_private_dir(path.parent.parent, gitignore=True)
        ensure_private_dir(path.parent)
        atomic_write_text(path, json.dumps({"session_id": session_id}))
    except OSError:
        pass


def read_current(cwd: Path) -> str | None:
    try:
        data = json.loads(current_path(cwd).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    sid = data.get("session_id") if isinstance(data, dict) else None
    return sid if isinstance(sid, str) and sid.strip() else None


# --------------------------------------------------------------------------- the files we install


def entry_command(python: str | None = None) -> str:
    """The command prefix the files run (and the policy allows): this interpreter, absolute."""
    exe = Path(python or sys.executable).absolute()
    return f"{shlex.quote(str(exe))} -m {MODULE}"


def command_files(python: str | None = None) -> dict[str, str]:
    """``<name>.toml`` -> text, one per command of :data:`.claude_commands.COMMANDS`."""
    from .claude_commands import COMMANDS
    from .gemini_transcript import COMMAND_MARKER

    prefix = entry_command(python)
    files: dict[str, str] = {}
    for name, description, hint in COMMANDS:
        usage = f" Usage: /hindsight:{name} {hint}." if hint else ""
        prompt = (
            f"{COMMAND_MARKER}\n!{{{prefix} {name} {{{{args}}}}}}\n\n"
            "Show the user the output above exactly as it is, in a code block, with no commentary."
        )
        files[f"{name}.toml"] = (
            f"# {FILE_MARKER}; `hindsight-hooks uninstall gemini` removes it\n"
            f"description = {json.dumps(f'{description} (hindsight memory).{usage}')}\n"
            f"prompt = {json.dumps(prompt)}\n"
        )
    return files


def commands_folder(scope: str, cwd: Path, home: Path | None = None) -> Path:
    base = cwd if scope == "project" else (home if home is not None else Path.home())
    return base / ".gemini" / "commands" / FOLDER


def policy_path(scope: str, cwd: Path, home: Path | None = None) -> Path:
    """Our user policy file; one per installed scope (Gemini 0.61 reads no project policies)."""
    import hashlib

    folder = (home if home is not None else Path.home()) / ".gemini" / "policies"
    if scope == "project":
        digest = hashlib.sha256(str(Path(cwd).absolute()).encode("utf-8", "surrogatepass")).hexdigest()[:12]
        return folder / f"hindsight-hooks-project-{digest}.toml"
    return folder / "hindsight-hooks.toml"


def policy_text(python: str | None = None) -> str:
    rules = [
        f"# {FILE_MARKER}; `hindsight-hooks uninstall gemini` removes it",
        "# Lets /hindsight:<command> run its one shell command, and the model call our memory tools",
        "# (memory_edit still asks).",
        "",
        "[[rule]]",
        'toolName = "run_shell_command"',
        f"commandPrefix = {json.dumps(entry_command(python))}",
        'decision = "allow"',
        "priority = 100",
    ]
    for tool in ALLOWED_TOOLS:
        rules += [
            "",
            "[[rule]]",
            'mcpName = "hindsight"',
            f"toolName = {json.dumps(tool)}",
            'decision = "allow"',
            "priority = 100",
        ]
    return "\n".join(rules) + "\n"


# --------------------------------------------------------------------------- the entry


def split_arguments(raw: list[str]) -> list[str]:
    """Gemini hands ``{{args}}`` over as one quoted word: split it the way a shell would."""
    out: list[str] = []
    for word in raw:
        try:
            out.extend(shlex.split(word))
        except ValueError:  # an unbalanced quote in free text: plain words
            out.extend(word.split())
    return out


def argv_for(name: str, raw: list[str], cwd: Path) -> list[str]:
    from .hookcmd import session_file_for

    argv = [name, "--host-name", "gemini"]
    sid = read_current(cwd)
    if sid is not None:
        argv += ["--session-file", str(session_file_for(cwd, sid))]
    return [*argv, *split_arguments(raw)]


def main(argv: list[str]) -> int:
    if not argv:
        print(f"usage: python -m {MODULE} <command> [ARGS]", file=sys.stderr)
        return 2
    from ..cli import main as cli_main

    return cli_main(argv_for(argv[0], argv[1:], Path.cwd()))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
