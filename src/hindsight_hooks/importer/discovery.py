"""``import-project-sessions``: this project's sessions, wherever each agent keeps them.

Three places, each with its own rule for "this project's" (docs/import.md "Belonging" everywhere: the
folder a session recorded is this project's cwd or lies inside its root):

* Pi and chat sessions beside the current session file (:func:`~.sources.discover`);
* Claude Code's ``~/.claude/projects/<slug>/`` folders (:mod:`.claude_sources`);
* Codex's ``$CODEX_HOME/sessions`` tree (:mod:`.codex_sources`).

One plan per file that belongs; a file that claims to belong but cannot be planned is
reported with the reason, never silently dropped.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from .claude_sources import discover_claude
from .codex_sources import discover_codex
from .documents import ImportSettings
from .formats import CODEX
from .runner import HOST_NAMES, ImportFailure, Plan, plan_host_session, plan_session
from .sources import Discovery, HostDiscovery, ImportRefused, discover

if TYPE_CHECKING:
    from ..retain.session import ImportSession


@dataclass
class ProjectSessions:
    """What discovery found: plans, refusals, and where it looked."""

    folder: Path | None
    """The current session's folder (``None`` when the session is not saved to a file)."""
    pi: Discovery | None
    hosts: list[HostDiscovery]
    plans: list[Plan] = field(default_factory=list)
    refused: list[tuple[Path, str]] = field(default_factory=list)

    @property
    def candidates(self) -> int:
        """Files that belong here (planned or not)."""
        return len(self.pi.accepted if self.pi else []) + sum(len(h.accepted) for h in self.hosts)

    @property
    def host_folders(self) -> list[Path]:
        return [f for h in self.hosts for f in h.folders]

    def scope(self, bank: str | None) -> str:
        """``project bank B from N session file(s) in F and M Claude Code session(s) in G ...``."""
        parts = [f"{len(self.pi.accepted)} session file(s) in {self.folder}"] if self.pi and self.pi.accepted else []
        for host in self.hosts:
            if host.accepted:
                folders = sorted({str(p.parent) for p in host.accepted})
                where = str(host.base) if host.kind == CODEX else ", ".join(folders)  # Codex: one tree of dates
                parts.append(f"{len(host.accepted)} {HOST_NAMES[host.kind]} session(s) in {where}")
        return f"project bank {bank} from {' and '.join(parts)}"


def plan_project_sessions(
    rt: ImportSession, session_file: str | os.PathLike[str] | None, settings: ImportSettings
) -> ProjectSessions:
    """Find and plan every session of this project (reads only; a preview may call it)."""
    assert rt.identity is not None
    cwd, root = rt.cwd, rt.identity.root
    folder = Path(os.path.abspath(session_file)).parent if session_file is not None else None
    found = ProjectSessions(
        folder=folder,
        pi=discover(folder, cwd, root) if folder is not None else None,
        hosts=[discover_claude(rt.env, cwd, root), discover_codex(rt.env, cwd, root)],
    )
    if found.pi is not None:
        found.refused += found.pi.refused
        for path in found.pi.accepted:
            _plan(found, path, lambda p: plan_session(rt, p, settings, explicit=False))
    for host in found.hosts:
        found.refused += host.refused
        for path in host.accepted:
            _plan(found, path, partial(_host_plan, rt, host.kind, settings))
    return found


def _host_plan(rt: ImportSession, kind: str, settings: ImportSettings, path: Path) -> Plan:
    return plan_host_session(rt, path, kind, settings, explicit=False)


def _plan(found: ProjectSessions, path: Path, make: Callable[[Path], Plan]) -> None:
    try:
        found.plans.append(make(path))
    except (ImportFailure, ImportRefused) as exc:
        found.refused.append((path, str(exc)))
