"""Merging our command hooks into an agent's JSON settings file, and taking exactly them out again.

Claude Code (``.claude/settings.json``), Codex CLI (``hooks.json``) and Gemini CLI
(``.gemini/settings.json``) all keep command hooks in one shape::

    {"hooks": {"<Event>": [{"matcher": "...", "hooks": [{"type": "command", "command": "...", ...}]}]}}

The rules, for every host:

- **Ours is recognisable.** A hook is ours when its ``command`` contains :data:`MARKER`
  (``hindsight_hooks.hosts hook``); nothing else of the file is ever looked at as ours.
- **Idempotent.** Installing removes our previous hooks and adds the current ones (so a moved
  virtualenv is picked up); when that changes nothing, the file is not written at all.
- **Nothing of the user's touched.** Other hooks, other keys and their order stay as they were;
  a group that held one of ours and the user's keeps the user's.
- **A backup first.** Before a file that exists is changed, its bytes are copied to
  ``<file>.hindsight-hooks.bak`` (0600).
- **Uninstall removes exactly what install added:** our hooks, then the groups, event lists and
  the ``hooks`` object that became empty by that; a file left as ``{}`` is removed.
- **A file that is not a JSON object is refused** (an error naming the file), never rewritten.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import HindsightHooksError

MARKER = "hindsight_hooks.hosts hook"
BACKUP_SUFFIX = ".hindsight-hooks.bak"


class SettingsError(HindsightHooksError):
    """The settings file cannot be read as a JSON object; it was not touched."""


@dataclass(frozen=True)
class HookSpec:
    """One command hook to install: ``event`` runs ``command`` (optionally for ``matcher``)."""

    event: str
    command: str
    timeout_s: int | None = None
    matcher: str | None = None

    def entry(self) -> dict[str, Any]:
        hook: dict[str, Any] = {"type": "command", "command": self.command}
        if self.timeout_s is not None:
            hook["timeout"] = self.timeout_s
        group: dict[str, Any] = {}
        if self.matcher is not None:
            group["matcher"] = self.matcher
        group["hooks"] = [hook]
        return group


@dataclass
class Change:
    """What an install or uninstall did to one file."""

    path: Path
    changed: bool
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    backup: Path | None = None
    deleted: bool = False
    files: list[str] = field(default_factory=list)
    """Command files written or removed beside the settings (e.g. Claude Code's slash commands)."""


def hook_command(host: str, event: str, python: str | None = None) -> str:
    """The command line a host runs for ``event``: this interpreter, absolute, on the light path."""
    exe = python or sys.executable
    return f"{shlex.quote(os.path.abspath(exe))} -m hindsight_hooks.hosts hook {host} {event}"


def is_ours(hook: Any) -> bool:
    return isinstance(hook, dict) and isinstance(hook.get("command"), str) and MARKER in hook["command"]


def our_hooks(settings: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each hook of ours in a hooks-shaped settings object, with its event, in file order."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else []:
            inner = group.get("hooks") if isinstance(group, dict) else None
            for hook in inner if isinstance(inner, list) else []:
                if is_ours(hook):
                    yield event, hook


def read_settings(path: Path) -> dict[str, Any] | None:
    """The file as a dict, ``None`` when it does not exist; :class:`SettingsError` otherwise."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SettingsError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise SettingsError(f"{path} is not valid JSON ({exc}); fix it first, nothing was changed") from exc
    if not isinstance(data, dict):
        raise SettingsError(f"{path} is not a JSON object; nothing was changed")
    return data


def _without_ours(settings: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A copy without our hooks (and the containers that only they filled), and their events."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return dict(settings), []
    removed: list[str] = []
    new_hooks: dict[str, Any] = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            new_hooks[event] = groups
            continue
        kept_groups: list[Any] = []
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list) or not any(is_ours(h) for h in inner):
                kept_groups.append(group)
                continue
            removed.extend(event for h in inner if is_ours(h))
            kept = [h for h in inner if not is_ours(h)]
            if kept:
                kept_groups.append({**group, "hooks": kept})
        if kept_groups or not groups:
            new_hooks[event] = kept_groups
    out = dict(settings)
    if new_hooks or not hooks:
        out["hooks"] = new_hooks
    else:
        del out["hooks"]
    return out, removed


def _with(settings: dict[str, Any], specs: Iterable[HookSpec]) -> dict[str, Any]:
    out = dict(settings)
    hooks = dict(out.get("hooks") or {})
    for spec in specs:
        groups = hooks.get(spec.event)
        hooks[spec.event] = [*(groups if isinstance(groups, list) else []), spec.entry()]
    out["hooks"] = hooks
    return out


def backup_path(path: Path) -> Path:
    """Where the bytes of ``path`` from before our change are kept."""
    return path.with_name(path.name + BACKUP_SUFFIX)


def backup_file(path: Path) -> Path:
    """Copy the existing ``path`` to its backup (0600); returns the backup's path."""
    from ..fsutil import atomic_write_bytes

    backup = backup_path(path)
    atomic_write_bytes(backup, path.read_bytes(), 0o600)
    return backup


def write_text(path: Path, text: str, existed: bool) -> None:
    """Write ``text`` atomically, keeping the file's mode when it ``existed`` (else 0644)."""
    from ..fsutil import atomic_write_text

    path.parent.mkdir(parents=True, exist_ok=True)
    mode = (os.stat(path).st_mode & 0o777) if existed else 0o644
    atomic_write_text(path, text, mode)


def write_settings(path: Path, data: dict[str, Any] | None, existed: bool) -> Path | None:
    """Back the old file up, then write ``data`` as JSON (or remove the file for ``None``); the backup."""
    backup = backup_file(path) if existed else None
    if data is None:
        path.unlink()
        return backup
    write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", existed)
    return backup


def install_hooks(path: Path, specs: list[HookSpec]) -> Change:
    current = read_settings(path)
    existed = current is not None
    base, removed = _without_ours(current or {})
    wanted = _with(base, specs)
    if existed and wanted == current:
        return Change(path, False)
    backup = write_settings(path, wanted, existed)
    return Change(path, True, added=[s.event for s in specs], removed=removed, backup=backup)


def uninstall_hooks(path: Path) -> Change:
    current = read_settings(path)
    if current is None:
        return Change(path, False)
    cleaned, removed = _without_ours(current)
    if not removed:
        return Change(path, False)
    backup = write_settings(path, cleaned if cleaned else None, True)
    return Change(path, True, removed=removed, backup=backup, deleted=not cleaned)


def installed_events(path: Path) -> list[str]:
    """The events our hooks are installed for in ``path`` (``[]`` when none or unreadable)."""
    try:
        current = read_settings(path)
    except SettingsError:
        return []
    return [event for event, _ in our_hooks(current or {})]


# --------------------------------------------------------------------------- command files

FILE_MARKER = "installed by `hindsight-hooks install`"
"""Every command file we write carries this line; only files that do are ever replaced or removed."""


def install_files(folder: Path, files: dict[str, str]) -> list[str]:
    """Write ``files`` (name -> text) into ``folder``; returns the names written or changed.

    A file of the same name that is not ours (no :data:`FILE_MARKER`) is left alone and skipped.
    Files of ours that are no longer wanted are removed.
    """
    from ..fsutil import atomic_write_text

    changed: list[str] = []
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        path = folder / name
        try:
            old = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            old = None
        if old == text or (old is not None and FILE_MARKER not in old):
            continue
        atomic_write_text(path, text, 0o644)
        changed.append(name)
    for path in sorted(folder.glob("*.md")):
        if path.name not in files and _is_our_file(path):
            path.unlink()
            changed.append(path.name)
    return changed


def uninstall_files(folder: Path) -> list[str]:
    """Remove the files of ours in ``folder`` (and the folder, when that leaves it empty)."""
    removed: list[str] = []
    if not folder.is_dir():
        return removed
    for path in sorted(folder.iterdir()):
        if path.is_file() and _is_our_file(path):
            path.unlink()
            removed.append(path.name)
    if removed and not any(folder.iterdir()):
        folder.rmdir()
        if not any(folder.parent.iterdir()):  # the commands folder we made for it
            folder.parent.rmdir()
    return removed


def _is_our_file(path: Path) -> bool:
    try:
        return FILE_MARKER in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
