"""Subcommands for agent programs that are hosts through their own hook systems.

- ``hindsight-hooks hook <host> <event>``: what a host's hook configuration runs (the event on
  stdin, the answer on stdout, always exit 0; see :mod:`hindsight_hooks.hosts.hookcmd`). Installed
  hooks call the same thing on a lighter path, ``python -m hindsight_hooks.hosts hook ...``.
- ``hindsight-hooks install <host> [--project|--user]`` / ``uninstall <host> [...]``: merge our
  hooks into the host's own settings file, or take exactly them out again
  (:mod:`hindsight_hooks.hosts.install`).

Everything is imported when a subcommand runs, never when the CLI is built.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

from hindsight_hooks.cli import cwd_of, register

INSTALLABLE = ("claude-code", "pi", "hermes", "codex", "gemini")


def _hook_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("host", help="the agent program: claude-code, codex or gemini")
    parser.add_argument("event", help="the host's hook event name, e.g. UserPromptSubmit")


def _run_hook(ns: argparse.Namespace) -> int:
    from hindsight_hooks.hosts.hookcmd import run_process

    run_process(ns.host, ns.event)
    return 0  # not reached: run_process ends the process with exit 0


def _install_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("host", choices=INSTALLABLE, help="the agent program")
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument(
        "--user",
        dest="scope",
        action="store_const",
        const="user",
        help="the agent's user settings, e.g. ~/.claude, ~/.codex, ~/.gemini (the default)",
    )
    scope.add_argument(
        "--project",
        dest="scope",
        action="store_const",
        const="project",
        help="the project's settings, e.g. <project>/.claude, .codex, .gemini",
    )
    parser.set_defaults(scope="user")


def _target(ns: argparse.Namespace) -> Path:
    from hindsight_hooks.hosts.claude_code import settings_path

    return settings_path(ns.scope, cwd_of(ns))


def _commands_folder(ns: argparse.Namespace) -> Path:
    from hindsight_hooks.hosts.claude_commands import commands_folder

    return commands_folder(ns.scope, cwd_of(ns))


def _run_pi(ns: argparse.Namespace, verb: str) -> int:
    """Pi loads a TypeScript extension, not hooks: copy it where Pi looks (hosts/pi_install.py)."""
    from hindsight_hooks.hosts import pi_install

    try:
        run = pi_install.install if verb == "install" else pi_install.uninstall
        change = run(ns.scope, cwd_of(ns))
    except (pi_install.InstallError, OSError) as exc:
        print(f"hindsight-hooks {verb}: {exc}")
        return 1
    if ns.json:
        fields = {"host": "pi", "scope": ns.scope, "folder": str(change.folder), "changed": change.changed}
        print(json.dumps({**fields, "written": change.written, "removed": change.removed, "kept": change.kept}))
    else:
        print(pi_install.report(change, verb))
    return 0


def _run_hermes(ns: argparse.Namespace, verb: str) -> int:
    """Hermes loads a memory provider from $HERMES_HOME (hosts/hermes_install.py); there is no project scope."""
    from hindsight_hooks.hosts import hermes_install

    if ns.scope == "project":
        print(f"hindsight-hooks {verb}: Hermes has no project settings; its home is $HERMES_HOME (default ~/.hermes)")
        return 2
    try:
        change = (hermes_install.install if verb == "install" else hermes_install.uninstall)()
    except (hermes_install.InstallError, OSError) as exc:
        print(f"hindsight-hooks {verb}: {exc}")
        return 1
    if ns.json:
        config = change.config
        fields = {"host": "hermes", "home": str(change.home), "folder": str(change.folder), "changed": change.changed}
        fields |= {"written": change.written, "removed": change.removed, "kept": change.kept}
        fields["config"] = str(config.path) if config else None
        fields["config_changed"] = bool(config and config.changed)
        fields["backup"] = str(config.backup) if config and config.backup else None
        print(json.dumps({**fields, "warnings": change.warnings}))
    else:
        print(hermes_install.report(change, verb))
    return 0


def _run_agent(ns: argparse.Namespace, verb: str) -> int:
    """Codex CLI and Gemini CLI: hooks, MCP server (and Gemini's commands) in one go (hosts/agent_install.py)."""
    from hindsight_hooks.hosts import agent_install
    from hindsight_hooks.hosts.install import SettingsError

    try:
        report = agent_install.run(ns.host, verb, ns.scope, cwd_of(ns))
    except (SettingsError, OSError) as exc:
        print(f"hindsight-hooks {verb}: {exc}")
        return 1
    print(json.dumps(report.as_json()) if ns.json else "\n".join(report.lines()))
    return 0


def _run_claude_code(ns: argparse.Namespace, verb: str) -> int:
    """Claude Code: hooks and read-tool permissions in settings.json, slash commands, MCP server (ADR-083).

    The settings file may take two edits (hooks, permissions); its backup is the file as it was
    before both.
    """
    from hindsight_hooks.hosts import claude_mcp
    from hindsight_hooks.hosts.agent_install import Report, keep_original_backup, read_bytes
    from hindsight_hooks.hosts.claude_code import hook_specs
    from hindsight_hooks.hosts.claude_commands import command_files, console_script
    from hindsight_hooks.hosts.install import (
        SettingsError,
        install_files,
        install_hooks,
        uninstall_files,
        uninstall_hooks,
    )
    from hindsight_hooks.hosts.mcp_config import install_json, uninstall_json

    settings = _target(ns)
    mcp_file = claude_mcp.mcp_path(ns.scope, cwd_of(ns))
    try:
        original = read_bytes(settings)
        if verb == "install":
            change = install_hooks(settings, hook_specs())
            allowed = claude_mcp.install_settings(settings, ns.scope)
            change.files = install_files(_commands_folder(ns), command_files())
            mcp = install_json(mcp_file, claude_mcp.mcp_entry(console_script()))
        else:
            allowed = claude_mcp.uninstall_settings(settings)
            change = uninstall_hooks(settings)
            change.files = uninstall_files(_commands_folder(ns))
            mcp = uninstall_json(mcp_file)
        if allowed:
            change.changed = True
            change.backup = keep_original_backup(settings, original)
            change.deleted = not settings.exists()
    except (SettingsError, OSError) as exc:
        print(f"hindsight-hooks {verb}: {exc}")
        return 1
    report = Report(ns.host, ns.scope, verb, hooks=change, mcp_path=mcp.path, mcp_changed=mcp.changed,
                    mcp_skipped=mcp.skipped, mcp_backup=mcp.backup, commands_folder=_commands_folder(ns),
                    command_files=change.files)  # fmt: skip
    if allowed:
        done = "permission to call our read-only memory tools without asking written to"
        undone = "removed our tool permissions from"
        report.notes.append(f"{ns.host}: {done if verb == 'install' else undone} {settings}")
    if change.deleted:
        report.notes.append(f"{settings} held nothing else and was removed")
    print(json.dumps(report.as_json()) if ns.json else "\n".join(report.lines()))
    return 0


_RUNNERS: dict[str, Callable[[argparse.Namespace, str], int]] = {
    "claude-code": _run_claude_code,
    "pi": _run_pi,
    "hermes": _run_hermes,
    "codex": _run_agent,
    "gemini": _run_agent,
}


def _run_verb(verb: str) -> Callable[[argparse.Namespace], int]:
    def run(ns: argparse.Namespace) -> int:
        return _RUNNERS[ns.host](ns, verb)

    return run


register(
    "hook",
    "answer one hook event of an agent program (JSON on stdin -> JSON on stdout; always exits 0)",
    _hook_args,
    _run_hook,
)
register(
    "install",
    "add our memory hooks to an agent program's settings (a backup first)",
    _install_args,
    _run_verb("install"),
)
register("uninstall", "remove exactly the hooks `install` added", _install_args, _run_verb("uninstall"))
