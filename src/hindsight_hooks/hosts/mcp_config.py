"""Our MCP server's entry in an agent's own settings: added idempotently, removed exactly.

``hindsight-hooks install codex|gemini`` registers ``hindsight-hooks mcp`` (ADR-085) as the MCP
server ``hindsight`` where the agent looks for MCP servers:

- **Gemini CLI**: ``mcpServers.hindsight`` in the same ``settings.json`` as the hooks (JSON).
- **Codex CLI**: a ``[mcp_servers.hindsight]`` table in ``config.toml`` (TOML). Python can read
  TOML but has no writer that keeps a user's comments and layout, so ours is a block of text
  between two marker comment lines (:data:`TOML_BEGIN` … :data:`TOML_END`) appended at the end
  of the file; the file with the block is parsed with ``tomllib`` before it is written, and a
  file that would not parse is never written.

The same rules as the hooks (:mod:`.install`): ours is recognisable (the JSON entry runs our
console script with ``mcp``; the TOML block sits between our markers), installing again
replaces only ours, an entry named ``hindsight`` that is not ours is left alone and reported,
a backup of the file precedes any change, and removing takes out exactly what was added.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .install import SettingsError, backup_file, read_settings, write_settings, write_text

SERVER_NAME = "hindsight"
TOML_BEGIN = "# >>> hindsight-hooks: installed by `hindsight-hooks install codex` (uninstall removes this block)"
TOML_END = "# <<< hindsight-hooks"


@dataclass
class McpChange:
    path: Path
    changed: bool
    backup: Path | None = None
    deleted: bool = False
    skipped: str | None = None
    """Why nothing was done although something was asked (e.g. someone else's ``hindsight``)."""


def is_our_server(entry: Any) -> bool:
    """Our JSON entry: it runs a ``hindsight-hooks`` console script with ``mcp``."""
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return False
    args = entry.get("args")
    return os.path.basename(entry["command"]) == "hindsight-hooks" and isinstance(args, list) and args[:1] == ["mcp"]


# --------------------------------------------------------------------------- JSON (Gemini CLI)


def install_json(path: Path, entry: dict[str, Any]) -> McpChange:
    current = read_settings(path)
    existed = current is not None
    data = dict(current or {})
    servers = data.get("mcpServers")
    if servers is not None and not isinstance(servers, dict):
        raise SettingsError(f"{path}: mcpServers is not an object; nothing was changed")
    old = (servers or {}).get(SERVER_NAME)
    if old is not None and not is_our_server(old):
        return McpChange(path, False, skipped=f"an MCP server named {SERVER_NAME!r} that is not ours is in {path}")
    if old == entry:
        return McpChange(path, False)
    data["mcpServers"] = {**(servers or {}), SERVER_NAME: entry}
    return McpChange(path, True, backup=write_settings(path, data, existed))


def uninstall_json(path: Path) -> McpChange:
    current = read_settings(path)
    if current is None:
        return McpChange(path, False)
    servers = current.get("mcpServers")
    if not isinstance(servers, dict) or not is_our_server(servers.get(SERVER_NAME)):
        return McpChange(path, False)
    data = dict(current)
    rest = {k: v for k, v in servers.items() if k != SERVER_NAME}
    if rest:
        data["mcpServers"] = rest
    else:
        del data["mcpServers"]
    backup = write_settings(path, data or None, True)
    return McpChange(path, True, backup=backup, deleted=not data)


def json_installed(path: Path) -> bool:
    try:
        current = read_settings(path)
    except SettingsError:
        return False
    servers = (current or {}).get("mcpServers")
    return isinstance(servers, dict) and is_our_server(servers.get(SERVER_NAME))


# --------------------------------------------------------------------------- TOML (Codex CLI)


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"cannot read {path}: {exc}") from exc


def _parse(path: Path, text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path} is not valid TOML ({exc}); fix it first, nothing was changed") from exc


def _without_block(text: str) -> tuple[str, bool]:
    """``text`` without our marked block (and the blank line we put before it)."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    inside = found = False
    for line in lines:
        stripped = line.strip()
        if not inside and stripped == TOML_BEGIN:
            inside = found = True
            if out and not out[-1].strip():
                out.pop()
            continue
        if inside:
            if stripped == TOML_END:
                inside = False
            continue
        out.append(line)
    if inside:  # a begin marker without its end: not ours to cut, keep the file as it was
        return text, False
    return "".join(out), found


def toml_block(body: str) -> str:
    return f"{TOML_BEGIN}\n{body.rstrip()}\n{TOML_END}\n"


def install_toml(path: Path, body: str) -> McpChange:
    """Put ``body`` (TOML defining ``[mcp_servers.hindsight]`` and its sub-tables) in our block."""
    text = _read_text(path)
    existed = text is not None
    base, _ = _without_block(text or "")
    current = _parse(path, base)
    servers = current.get("mcp_servers")
    if isinstance(servers, dict) and SERVER_NAME in servers:
        return McpChange(path, False, skipped=f"an MCP server named {SERVER_NAME!r} that is not ours is in {path}")
    joined = base if not base or base.endswith("\n") else base + "\n"
    wanted = joined + ("\n" if joined.strip() else "") + toml_block(body)
    if text == wanted:
        return McpChange(path, False)
    _parse(path, wanted)
    backup = backup_file(path) if existed else None
    write_text(path, wanted, existed)
    return McpChange(path, True, backup=backup)


def uninstall_toml(path: Path) -> McpChange:
    text = _read_text(path)
    if text is None:
        return McpChange(path, False)
    rest, found = _without_block(text)
    if not found:
        return McpChange(path, False)
    backup = backup_file(path)
    if not rest.strip():
        path.unlink()
        return McpChange(path, True, backup=backup, deleted=True)
    write_text(path, rest, True)
    return McpChange(path, True, backup=backup)


def toml_installed(path: Path) -> bool:
    try:
        text = _read_text(path)
    except SettingsError:
        return False
    return text is not None and _without_block(text)[1]
