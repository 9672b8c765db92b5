"""``hindsight-hooks install|uninstall codex|gemini [--user|--project]``: every file, one report.

What goes where (each merge idempotent, a backup before any change, removal exact):

Codex CLI (``--user``: ``$CODEX_HOME``, default ``~/.codex``; ``--project``: ``<project>/.codex``)
  - ``hooks.json``: our hooks (:func:`.codex.hook_specs`);
  - ``config.toml``: our MCP server in a marked block (:func:`.codex.mcp_toml`).
  Codex has no custom commands we could run (ADR-090). It runs hooks only once they are
  reviewed, and a project's ``.codex`` files only in a trusted project: the report says so, and
  neither is done for you (ADR-089).

Gemini CLI (``--user``: ``~/.gemini``; ``--project``: ``<project>/.gemini``)
  - ``settings.json``: our hooks and ``mcpServers.hindsight``;
  - ``commands/hindsight/*.toml``: the ``/hindsight:<command>`` slash commands;
  - ``~/.gemini/policies/hindsight-hooks[-project-<hash>].toml``: the policy rule that lets those
    commands run their one shell command, and our memory tools run, without a prompt (Gemini
    0.61 reads policies only from the user folder; one file per installed scope, so removing one
    scope never takes away another's).

When one settings file takes both hooks and MCP server, its backup is the file as it was before
this install, not the half-way state.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .install import FILE_MARKER, Change, backup_path

HOSTS = ("codex", "gemini")


@dataclass
class Report:
    host: str
    scope: str
    verb: str
    hooks: Change | None = None
    mcp_path: Path | None = None
    mcp_changed: bool = False
    mcp_skipped: str | None = None
    mcp_backup: Path | None = None
    commands_folder: Path | None = None
    command_files: list[str] = field(default_factory=list)
    policy: Path | None = None
    policy_changed: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        hooks = self.hooks is not None and self.hooks.changed
        return hooks or self.mcp_changed or bool(self.command_files) or self.policy_changed

    def as_json(self) -> dict[str, Any]:
        hooks = self.hooks
        return {
            "host": self.host,
            "scope": self.scope,
            "changed": self.changed,
            "settings": str(hooks.path) if hooks else None,
            "added": hooks.added if hooks else [],
            "removed": hooks.removed if hooks else [],
            "backup": str(hooks.backup) if hooks and hooks.backup else None,
            "deleted": hooks.deleted if hooks else False,
            "mcp": str(self.mcp_path) if self.mcp_path else None,
            "mcp_changed": self.mcp_changed,
            "mcp_skipped": self.mcp_skipped,
            "mcp_backup": str(self.mcp_backup) if self.mcp_backup else None,
            "commands": str(self.commands_folder) if self.commands_folder else None,
            "command_files": self.command_files,
            "policy": str(self.policy) if self.policy else None,
            "policy_changed": self.policy_changed,
            "notes": self.notes,
        }

    def lines(self) -> list[str]:
        out: list[str] = []
        hooks = self.hooks
        installing = self.verb == "install"
        if hooks is not None and hooks.changed and (hooks.added if installing else hooks.removed):
            if installing:
                out.append(f"{self.host}: hooks for {', '.join(hooks.added)} written to {hooks.path}")
            else:
                out.append(
                    f"{self.host}: removed our hooks for {', '.join(sorted(set(hooks.removed)))} from {hooks.path}"
                )
        if self.mcp_changed and self.mcp_path is not None:
            what = "added to" if installing else "removed from"
            out.append(f"{self.host}: MCP server 'hindsight' (hindsight-hooks mcp) {what} {self.mcp_path}")
        if self.mcp_skipped:
            out.append(f"{self.host}: {self.mcp_skipped}; left as it is")
        if self.command_files and self.commands_folder is not None:
            names = ", ".join(f"/hindsight:{Path(n).stem}" for n in self.command_files)
            done = "written" if installing else "removed"
            out.append(f"{self.host}: slash commands {done} in {self.commands_folder}: {names}")
        if self.policy_changed and self.policy is not None:
            out.append(f"{self.host}: policy {'written' if installing else 'removed'}: {self.policy}")
        for backup in dict.fromkeys(b for b in (hooks.backup if hooks else None, self.mcp_backup) if b):
            out.append(f"the previous file is saved as {backup}")
        if not out and not self.changed:
            where = hooks.path if hooks is not None else self.mcp_path
            out.append(f"{self.host}: {'already installed' if installing else 'nothing of ours to remove'} in {where}")
            return out
        return out + self.notes


def _console_script() -> str:
    from .claude_commands import console_script

    return console_script()


def keep_original_backup(path: Path, original: bytes | None) -> Path | None:
    """After several edits of one file, make its backup the bytes from before the first one."""
    from ..fsutil import atomic_write_bytes

    backup = backup_path(path)
    if original is None:  # we made the file: the "backup" is our own half-way state
        backup.unlink(missing_ok=True)
        return None
    atomic_write_bytes(backup, original, 0o600)
    return backup


def read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


# --------------------------------------------------------------------------- Codex


def _codex(verb: str, scope: str, cwd: Path) -> Report:
    from . import codex
    from .install import install_hooks, uninstall_hooks
    from .mcp_config import install_toml, uninstall_toml

    report = Report("codex", scope, verb)
    hooks_file = codex.hooks_path(scope, cwd)
    config_file = codex.config_path(scope, cwd)
    report.mcp_path = config_file
    if verb == "install":
        report.hooks = install_hooks(hooks_file, codex.hook_specs())
        mcp = install_toml(config_file, codex.mcp_toml(_console_script()))
        report.notes.append(
            "codex: Codex runs new hooks only after you review them: start `codex` and accept them "
            "(or `/hooks`); `codex exec` skips unreviewed hooks unless given --dangerously-bypass-hook-trust"
        )
        if scope == "project":
            report.notes.append(
                f"codex: a project's .codex files are read only in a trusted project (`codex --trust` in {cwd})"
            )
    else:
        report.hooks = uninstall_hooks(hooks_file)
        mcp = uninstall_toml(config_file)
    report.mcp_changed, report.mcp_skipped, report.mcp_backup = mcp.changed, mcp.skipped, mcp.backup
    return report


# --------------------------------------------------------------------------- Gemini CLI


def _gemini(verb: str, scope: str, cwd: Path) -> Report:
    from . import gemini, gemini_commands
    from .install import install_files, install_hooks, uninstall_files, uninstall_hooks
    from .mcp_config import install_json, uninstall_json

    report = Report("gemini", scope, verb)
    settings = gemini.settings_path(scope, cwd)
    folder = gemini_commands.commands_folder(scope, cwd)
    policy = gemini_commands.policy_path(scope, cwd)
    report.mcp_path, report.commands_folder, report.policy = settings, folder, policy
    original = read_bytes(settings)
    if verb == "install":
        mcp = install_json(settings, gemini.mcp_entry(_console_script()))
        report.hooks = install_hooks(settings, gemini.hook_specs())
        report.command_files = install_files(folder, gemini_commands.command_files())
        report.policy_changed = _write_policy(policy, gemini_commands.policy_text())
    else:
        mcp = uninstall_json(settings)
        report.hooks = uninstall_hooks(settings)
        report.command_files = uninstall_files(folder)
        report.policy_changed = _remove_policy(policy)
    report.mcp_changed, report.mcp_skipped = mcp.changed, mcp.skipped
    if mcp.changed and report.hooks.changed:
        report.hooks.backup = keep_original_backup(settings, original)
    elif mcp.changed and not report.hooks.changed:
        report.hooks.backup = mcp.backup
        if verb == "uninstall" and mcp.deleted:
            report.hooks.deleted = True
    return report


def _write_policy(path: Path, text: str) -> bool:
    from ..fsutil import atomic_write_text

    try:
        if path.read_text(encoding="utf-8") == text:
            return False
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, text, 0o644)
    return True


def _remove_policy(path: Path) -> bool:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return False
    if FILE_MARKER not in text:
        return False
    path.unlink()
    folder = path.parent
    if not any(folder.iterdir()):
        shutil.rmtree(folder, ignore_errors=True)
    return True


# --------------------------------------------------------------------------- entry


def run(host: str, verb: str, scope: str, cwd: Path) -> Report:
    """Install or uninstall ``host`` at ``scope``; raises ``SettingsError``/``OSError`` untouched."""
    if host not in HOSTS:
        raise ValueError(f"unknown host {host!r}")
    cwd = Path(os.path.abspath(cwd))
    return _codex(verb, scope, cwd) if host == "codex" else _gemini(verb, scope, cwd)


def installed(host: str, cwd: Path) -> list[dict[str, Any]]:
    """What of ours is installed for ``host``, per scope (for ``doctor``): never raises.

    Each entry: ``scope``, ``hooks`` (the events our hooks are registered for, in which file),
    ``mcp`` (whether our MCP server is registered, and where), and for Gemini CLI the slash
    command files and the policy file.
    """
    from .install import installed_events
    from .mcp_config import json_installed, toml_installed

    out: list[dict[str, Any]] = []
    for scope in ("user", "project"):
        try:
            if host == "codex":
                from . import codex

                hooks_file, mcp_file = codex.hooks_path(scope, cwd), codex.config_path(scope, cwd)
                entry: dict[str, Any] = {"scope": scope, "hooks_file": str(hooks_file), "mcp_file": str(mcp_file)}
                entry["hooks"] = installed_events(hooks_file)
                entry["mcp"] = toml_installed(mcp_file)
            else:
                from . import gemini, gemini_commands

                settings = gemini.settings_path(scope, cwd)
                entry = {"scope": scope, "hooks_file": str(settings), "mcp_file": str(settings)}
                entry["hooks"] = installed_events(settings)
                entry["mcp"] = json_installed(settings)
                folder = gemini_commands.commands_folder(scope, cwd)
                entry["commands"] = sorted(
                    p.stem
                    for p in folder.glob("*.toml")
                    if FILE_MARKER in p.read_text(encoding="utf-8", errors="replace")
                )
                entry["policy"] = gemini_commands.policy_path(scope, cwd).exists()
        except OSError:
            continue
        out.append(entry)
    return out
