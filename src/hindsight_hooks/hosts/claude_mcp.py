"""Our MCP server in Claude Code: where Claude Code reads it, and the settings that let ``-p`` use it.

Why a module of its own: Claude Code keeps MCP servers apart from hooks, in files it also
writes itself, so ``install claude-code`` touches up to three files and each needs the same
care (a backup first, only our keys, exact removal). ADR-083 records the choices:

- **Where.** ``--user``: the top-level ``mcpServers`` of ``~/.claude.json`` (Claude Code's own
  state file; it rewrites it often, so we change only ``mcpServers.hindsight``). ``--project``:
  ``<project>/.mcp.json``, which Claude Code starts only once the server is approved; the
  project's ``.claude/settings.json`` gets ``"hindsight"`` in ``enabledMcpjsonServers`` (never
  ``enableAllProjectMcpServers``, which would approve servers that are not ours).
- **Which session.** Claude Code starts each stdio MCP server with ``CLAUDE_CODE_SESSION_ID`` in
  its environment (2.1.197). The entry passes ``--session-id-env CLAUDE_CODE_SESSION_ID``, so
  the server speaks for ``<cwd>/.hindsight/sessions/<that id>.jsonl``: the session its hooks and
  slash commands use, whose mode and tags the tools then obey.
- **Permissions.** ``claude -p`` refuses a tool nobody allowed. The settings file that gets our
  hooks also gets ``permissions.allow`` entries for the tools that only read memory
  (:data:`READ_TOOLS`); retain and edit stay for the person to approve.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .install import read_settings
from .mcp_config import SERVER_NAME

SESSION_ENV = "CLAUDE_CODE_SESSION_ID"
"""What Claude Code puts in the environment of every stdio MCP server it starts."""
READ_TOOLS = ("hindsight_recall", "hindsight_reflect")
"""Our tools that only read memory: allowed without a prompt (Claude Code's ``mcp__<server>__<tool>``)."""
ENABLED_KEY = "enabledMcpjsonServers"


def allowed_rules() -> list[str]:
    return [f"mcp__{SERVER_NAME}__{tool}" for tool in READ_TOOLS]


def mcp_path(scope: str, cwd: Path, home: Path | None = None) -> Path:
    """``<project>/.mcp.json`` (``project``) or ``~/.claude.json`` (``user``)."""
    if scope == "project":
        return cwd / ".mcp.json"
    return (home if home is not None else Path.home()) / ".claude.json"


def mcp_entry(script: str) -> dict[str, Any]:
    """Our ``mcpServers.hindsight``: the console script's ``mcp``, for the Claude Code session."""
    return {
        "type": "stdio",
        "command": script,
        "args": ["mcp", "--host-name", "claude-code", "--session-id-env", SESSION_ENV],
    }


# --------------------------------------------------------------------------- settings.json keys


def _with_ours(settings: dict[str, Any], scope: str) -> dict[str, Any]:
    out = _without_ours(settings)
    permissions = out.get("permissions")
    permissions = dict(permissions) if isinstance(permissions, dict) else {}
    allow = permissions.get("allow")
    allow = list(allow) if isinstance(allow, list) else []
    permissions["allow"] = allow + [rule for rule in allowed_rules() if rule not in allow]
    out["permissions"] = permissions
    if scope == "project":
        enabled = out.get(ENABLED_KEY)
        enabled = list(enabled) if isinstance(enabled, list) else []
        out[ENABLED_KEY] = enabled if SERVER_NAME in enabled else [*enabled, SERVER_NAME]
    return out


def _without_ours(settings: dict[str, Any]) -> dict[str, Any]:
    """A copy without our allow rules and our approval (and the containers only they filled)."""
    out = dict(settings)
    permissions = out.get("permissions")
    if isinstance(permissions, dict) and isinstance(permissions.get("allow"), list):
        ours = set(allowed_rules())
        allow = [rule for rule in permissions["allow"] if rule not in ours]
        rest = dict(permissions)
        if allow:
            rest["allow"] = allow
        else:
            del rest["allow"]
        if rest:
            out["permissions"] = rest
        else:
            del out["permissions"]
    enabled = out.get(ENABLED_KEY)
    if isinstance(enabled, list) and SERVER_NAME in enabled:
        kept = [name for name in enabled if name != SERVER_NAME]
        if kept:
            out[ENABLED_KEY] = kept
        else:
            del out[ENABLED_KEY]
    return out


def install_settings(path: Path, scope: str) -> bool:
    """Add our allow rules (and, for a project, our approval) to ``path``; whether it changed.

    No backup here: the caller backs the file up once, as it was before the whole install.
    """
    current = read_settings(path)
    wanted = _with_ours(current or {}, scope)
    if current is not None and wanted == current:
        return False
    _write(path, wanted, current is not None)
    return True


def uninstall_settings(path: Path) -> bool:
    current = read_settings(path)
    if current is None:
        return False
    cleaned = _without_ours(current)
    if cleaned == current:
        return False
    if cleaned:
        _write(path, cleaned, True)
    else:
        path.unlink()
    return True


def _write(path: Path, data: dict[str, Any], existed: bool) -> None:
    import json
    import os

    from ..fsutil import atomic_write_bytes

    mode = (os.stat(path).st_mode & 0o777) if existed else 0o644
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"), mode)
