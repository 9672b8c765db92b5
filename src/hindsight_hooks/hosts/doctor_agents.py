"""``doctor``'s agent section: what of ours is installed where, whether it can run, and whether it does.

The plugin's own doctor (``plugin/control/doctor.py``) knows the project's state files but nothing of
agent programs, and must not: the plugin never imports ``hosts/``. So the CLI's ``doctor`` (which
is also what ``/hindsight:doctor`` runs inside Claude Code and Gemini CLI) appends this section.

For every agent ``install`` knows, and each scope (``--user``, ``--project``), it reads the
agent's own files (never writes them) and says:

- **installed or not**, and in which file;
- **whether it can run**: each hook command (and MCP server, Pi's recorded Python) names an
  absolute executable; one that no longer exists (a deleted or moved virtualenv, the commonest
  breakage) means every hook of that agent fails before it starts, silently: that is a ``fail``
  with the command that rewrites it;
- **whether each hook is live**: when it last ran in this project (:mod:`.hookseen`). A hook
  never seen here is reported as such, not as a fault: the agent may just not have run here yet.
"""

from __future__ import annotations

import json
import os
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HOSTS = ("claude-code", "codex", "gemini", "pi", "hermes")
HOOK_HOSTS = ("claude-code", "codex", "gemini")
"""The agents that run our hooks as commands (Pi and Hermes load us in-process)."""
LIVE_S = 7 * 24 * 3600.0
"""A hook that ran within this long counts as live; older evidence is shown but not counted."""


@dataclass
class ScopeInstall:
    """What of ours one agent has in one scope."""

    host: str
    scope: str
    file: Path
    installed: bool = False
    hooks: dict[str, str] = field(default_factory=dict)
    """event -> the executable its command runs."""
    executables: dict[str, str] = field(default_factory=dict)
    """what (``hook UserPromptSubmit``, ``mcp server``, ``python``) -> executable path."""
    unreadable: str = ""
    also: list[str] = field(default_factory=list)
    """Other places of ours, said after the file (``MCP server in <config.toml>``)."""

    def missing(self) -> dict[str, str]:
        return {what: exe for what, exe in self.executables.items() if not _runnable(exe)}

    def without_us(self) -> dict[str, str]:
        """The Pythons that exist but cannot import ``hindsight_hooks`` (uninstalled, or another venv)."""
        return {
            what: exe
            for what, exe in self.executables.items()
            if (what.startswith("hook ") or what == "python") and _runnable(exe) and not _imports_us(exe)
        }


def _runnable(exe: str) -> bool:
    return os.path.isabs(exe) and os.path.isfile(exe) and os.access(exe, os.X_OK)


_IMPORTS: dict[str, bool] = {}


def _imports_us(python: str) -> bool:
    """Whether ``python`` can import us: asked once per interpreter (a child process; ours is known)."""
    import subprocess
    import sys

    if python == os.path.abspath(sys.executable):  # not its realpath: a venv's python links to a bare one
        return True
    if python not in _IMPORTS:
        try:
            done = subprocess.run(
                [python, "-c", "import hindsight_hooks.hosts"],
                capture_output=True,
                timeout=IMPORT_CHECK_S,
                check=False,
                env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
            )
            _IMPORTS[python] = done.returncode == 0
        except (OSError, subprocess.SubprocessError):
            _IMPORTS[python] = True  # could not ask in time: not evidence of a fault
    return _IMPORTS[python]


IMPORT_CHECK_S = 15.0


def _executable(command: str) -> str:
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    return words[0] if words else ""


# --------------------------------------------------------------------------- readers, per agent


def _hook_commands(path: Path) -> dict[str, str]:
    """event -> executable of each of our hooks in a hooks-shaped JSON settings file."""
    from .install import our_hooks, read_settings

    return {str(event): _executable(hook["command"]) for event, hook in our_hooks(read_settings(path) or {})}


def _with_hooks(found: ScopeInstall) -> ScopeInstall:
    found.hooks = _hook_commands(found.file)
    found.installed = bool(found.hooks)
    found.executables.update({f"hook {event}": exe for event, exe in found.hooks.items()})
    return found


def _claude_code(scope: str, cwd: Path) -> ScopeInstall:
    from .claude_code import settings_path
    from .claude_commands import commands_folder
    from .install import FILE_MARKER

    found = _with_hooks(ScopeInstall("claude-code", scope, settings_path(scope, cwd)))
    folder = commands_folder(scope, cwd)
    for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
        text = path.read_text(encoding="utf-8", errors="replace")
        line = next((ln for ln in text.splitlines() if ln.startswith("!`")), "")
        if FILE_MARKER in text and line:
            found.installed = True
            found.executables["slash commands"] = _executable(line[2:].rstrip("`"))
            found.also.append(f"slash commands in {folder}")
            break
    return found


def _gemini(scope: str, cwd: Path) -> ScopeInstall:
    from .gemini import settings_path
    from .install import read_settings
    from .mcp_config import SERVER_NAME, is_our_server

    found = _with_hooks(ScopeInstall("gemini", scope, settings_path(scope, cwd)))
    servers = (read_settings(found.file) or {}).get("mcpServers")
    entry = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    if is_our_server(entry):
        assert isinstance(entry, dict)
        found.installed = True
        found.executables["mcp server"] = str(entry["command"])
        found.also.append("with the MCP server")
    return found


def _codex(scope: str, cwd: Path) -> ScopeInstall:
    import tomllib

    from .codex import config_path, hooks_path
    from .mcp_config import SERVER_NAME, toml_installed

    found = _with_hooks(ScopeInstall("codex", scope, hooks_path(scope, cwd)))
    config = config_path(scope, cwd)
    if toml_installed(config):
        found.installed = True
        found.also.append(f"MCP server in {config}")
        try:
            server = tomllib.loads(config.read_text(encoding="utf-8")).get("mcp_servers", {}).get(SERVER_NAME, {})
            if isinstance(server, dict) and isinstance(server.get("command"), str):
                found.executables["mcp server"] = server["command"]
        except (OSError, ValueError):
            pass
    return found


def _pi(scope: str, cwd: Path) -> ScopeInstall:
    from .pi_install import FOLDER, MANIFEST, SETTINGS_FILE, extensions_dir

    folder = extensions_dir(scope, cwd) / FOLDER
    found = ScopeInstall("pi", scope, folder)
    found.installed = (folder / MANIFEST).is_file()
    if found.installed:
        try:
            python = json.loads((folder / SETTINGS_FILE).read_text(encoding="utf-8")).get("python")
        except (OSError, ValueError, AttributeError):
            python = None
        found.executables["python"] = python if isinstance(python, str) else f"(unreadable {SETTINGS_FILE})"
    return found


def _hermes(scope: str, cwd: Path) -> ScopeInstall | None:
    if scope != "user":  # Hermes has one home, no project settings
        return None
    from .hermes import PROVIDER_NAME
    from .hermes_install import MANIFEST, hermes_home

    folder = hermes_home() / "plugins" / PROVIDER_NAME
    return ScopeInstall("hermes", scope, folder, installed=(folder / MANIFEST).is_file())


READERS: dict[str, Callable[[str, Path], ScopeInstall | None]] = {
    "claude-code": _claude_code,
    "codex": _codex,
    "gemini": _gemini,
    "pi": _pi,
    "hermes": _hermes,
}


def scan(cwd: Path) -> list[ScopeInstall]:
    """Every agent and scope (never raises: an unreadable file is reported, not fatal)."""
    out: list[ScopeInstall] = []
    for host in HOSTS:
        for scope in ("user", "project"):
            try:
                found = READERS[host](scope, cwd)
            except Exception as exc:  # a settings file that is not JSON, an unreadable folder
                found = ScopeInstall(host, scope, Path("?"), unreadable=_reason(exc))
            if found is not None:
                out.append(found)
    return out


def _reason(exc: Exception) -> str:
    from ..governance.redact import redact_error

    return redact_error(exc)


# --------------------------------------------------------------------------- the section


def _ago(seconds: float) -> str:
    s = max(0, int(seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if s >= size:
            return f"{s // size} {unit} ago"
    return "within the last minute"  # stamps are refreshed once a minute (hookseen.RESOLUTION_S)


def agent_section(cwd: Path, now: float | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(checks, agents)``: doctor check lines (``name``/``status``/``detail``/``fix``) and the
    structured report for ``--json``."""
    from .hookseen import read_seen

    at = time.time() if now is None else now
    seen = read_seen(cwd)
    found = scan(cwd)
    checks: list[dict[str, Any]] = []
    agents: list[dict[str, Any]] = []
    for host in HOSTS:
        scopes = [f for f in found if f.host == host]
        ran = seen.get(host, {})
        agents.append(
            {
                "host": host,
                "scopes": [_scope_json(f, ran, at) for f in scopes],
                "seen_here": {event: {"last_run": ts, "live": at - ts < LIVE_S} for event, ts in sorted(ran.items())},
            }
        )
        live = [f for f in scopes if f.installed or f.unreadable]
        if not live:
            where = "; ".join(f"{f.scope}: {f.file}" for f in scopes)
            checks.append(_check(f"agent {host}", "ok", f"not installed ({where})"))
        for f in live:
            checks.append(_scope_check(f, ran, at))
    return checks, agents


def _scope_json(f: ScopeInstall, ran: dict[str, float], at: float) -> dict[str, Any]:
    return {
        "scope": f.scope,
        "installed": f.installed,
        "file": str(f.file),
        "error": f.unreadable or None,
        "hooks": [
            {
                "event": event,
                "executable": exe,
                "executable_exists": _runnable(exe),
                "last_run": ran.get(event),
                "live": event in ran and at - ran[event] < LIVE_S,
            }
            for event, exe in sorted(f.hooks.items())
        ],
        "executables": {what: {"path": exe, "exists": _runnable(exe)} for what, exe in f.executables.items()},
    }


def _scope_check(f: ScopeInstall, ran: dict[str, float], at: float) -> dict[str, Any]:
    name = f"agent {f.host} ({f.scope})"
    reinstall = f"hindsight-hooks install {f.host} --{f.scope}"
    if f.unreadable:
        return _check(name, "warn", f"cannot read its settings: {f.unreadable}", "fix or move the file named")
    missing = f.missing()
    if missing:
        exes = sorted(set(missing.values()))
        whats = ", ".join(sorted(missing))
        return _check(
            name,
            "fail",
            f"installed in {f.file}, but {whats} run{'s' if len(missing) == 1 else ''} {', '.join(exes)}, which "
            f"{'does' if len(exes) == 1 else 'do'} not exist any more (a moved or deleted virtualenv?): "
            f"these hooks fail before they start",
            f"run `{reinstall}` with the hindsight-hooks you use now: it rewrites them to run that Python",
        )
    without = f.without_us()
    if without:
        exes = sorted(set(without.values()))
        return _check(
            name,
            "fail",
            f"installed in {f.file}, but {', '.join(sorted(without))} run {', '.join(exes)}, which cannot import "
            "hindsight_hooks (uninstalled from it, or another virtualenv): these hooks do nothing",
            f"run `{reinstall}` with the hindsight-hooks you use now, or `{exes[0]} -m pip install hindsight-hooks`",
        )
    detail = f"installed in {f.file}"
    if f.also:
        detail += " (" + "; ".join(f.also) + ")"
    if not f.hooks and f.host in HOOK_HOSTS:
        return _check(
            name,
            "warn",
            detail + "; but none of our hooks: memory is neither recalled nor retained automatically",
            f"run `{reinstall}`",
        )
    events = list(f.hooks) or ["session_start"]  # Pi and Hermes: a session of ours started here
    fresh = {e: ran[e] for e in events if e in ran and at - ran[e] < LIVE_S}
    if not fresh:
        what = "hook of it has" if f.hooks else "session of it has"
        detail += f"; no {what} run in this project in the last {int(LIVE_S // 86400)} days ({NOT_SEEN[f.host]})"
    elif f.hooks:
        detail += "; live here: " + ", ".join(f"{e} {_ago(at - fresh[e])}" for e in sorted(fresh))
        idle = sorted(set(f.hooks) - set(fresh))
        if idle:
            detail += "; not seen here yet: " + ", ".join(idle)
    else:
        detail += f"; live here: last session started {_ago(at - fresh['session_start'])}"
    return _check(name, "ok", detail)


NOT_SEEN = {
    "claude-code": "Claude Code reads its hooks when it starts: start a new session here",
    "codex": "Codex runs new hooks only after you review them: start codex here and accept them with /hooks",
    "gemini": "Gemini CLI runs hooks only in a trusted folder: start gemini here and trust it",
    "pi": "Pi loads extensions when it starts: start pi here",
    "hermes": "Hermes loads its memory provider when it starts: start hermes here",
}
"""What to do when an installed agent has not been seen running in this project."""


def _check(name: str, status: str, detail: str, fix: str = "") -> dict[str, Any]:
    return {"name": name, "status": status, "detail": detail, "fix": fix}


def with_agent_section(text: str, data: Any, level: str, cwd: Path) -> tuple[str, Any, str]:
    """The plugin doctor's result (``text``, ``data``, ``level``) with the agent section added:
    lines appended to the text, ``checks`` and ``agents`` in the data, the level raised to the worst."""
    try:
        checks, agents = agent_section(cwd)
    except Exception:
        return text, data, level
    lines = [_line(c) for c in checks]
    worst = max((c["status"] for c in checks), key=_RANK.__getitem__, default="ok")
    if isinstance(data, dict):
        data = {**data, "checks": [*data.get("checks", []), *checks], "agents": agents}
        old = str(data.get("status", "ok"))
        data["status"] = max(old, worst, key=lambda s: _RANK.get(s, 0))
    new_level = max(level, _LEVEL[worst], key=lambda lv: _LEVEL_RANK.get(lv, 0))
    body, _, fixed = text.partition("\nfixed: ")
    joined = "\n".join([body.rstrip("\n"), *lines])
    return (joined + ("\nfixed: " + fixed if fixed else "")), data, new_level


_RANK = {"ok": 0, "warn": 1, "fail": 2}
_LEVEL = {"ok": "info", "warn": "warning", "fail": "error"}
_LEVEL_RANK = {"info": 0, "warning": 1, "error": 2}


def _line(c: dict[str, Any]) -> str:
    tail = f" — {c['fix']}" if c["fix"] and c["status"] != "ok" else ""
    return f"{c['status']:<4} {c['name']}: {c['detail']}{tail}"
