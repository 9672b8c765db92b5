"""Where Codex keeps its sessions, and which of them were recorded in this project.

Codex CLI writes every session, whatever its folder, to
``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session id>.jsonl`` (``$CODEX_HOME`` defaults
to ``~/.codex``), and the rollout's first line, ``session_meta``, records the folder it ran in
(``payload.cwd``). So discovery walks that tree and keeps the rollouts whose recorded folder
belongs to this project (docs/import.md "Belonging", as for Pi sessions). The tree holds every project's
sessions: the others are not ours to report and are passed over silently, as is a rollout
whose ``session_meta`` cannot be read (nothing says whose it is; ``import-file`` can still take
it by name).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from .formats import CODEX
from .jsonl_lines import numbered_objects
from .sources import HostDiscovery, ImportRefused, check_cwd_belongs

PEEK_LINES = 5
"""``session_meta`` is the first line; a few more allow for a torn or blank start."""


def codex_home(env: Mapping[str, str]) -> Path:
    """``$CODEX_HOME``, else ``$HOME/.codex``."""
    chosen = env.get("CODEX_HOME")
    if chosen:
        return Path(os.path.expanduser(chosen))
    return Path(env.get("HOME") or str(Path.home())) / ".codex"


def recorded_cwd(path: Path) -> str | None:
    """``payload.cwd`` of the rollout's ``session_meta`` line (read up to :data:`PEEK_LINES` lines)."""
    for count, (_, obj, _nl) in enumerate(numbered_objects(path)):
        payload = obj.get("payload") if obj is not None else None
        if obj is not None and obj.get("type") == "session_meta" and isinstance(payload, dict):
            cwd = payload.get("cwd")
            return cwd if isinstance(cwd, str) and cwd else None
        if count + 1 >= PEEK_LINES:
            break
    return None


def discover_codex(env: Mapping[str, str], cwd: Path, root: Path) -> HostDiscovery:
    """The Codex sessions recorded in this project, oldest folder first."""
    found = HostDiscovery(kind=CODEX, base=codex_home(env) / "sessions")
    if not found.base.is_dir():
        return found
    found.folders.append(found.base)
    for folder, dirs, files in os.walk(found.base):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith(".jsonl"):
                continue
            path = Path(folder) / name
            try:
                recorded = recorded_cwd(path)
            except OSError:
                continue
            if recorded is None:
                continue
            try:
                check_cwd_belongs(path, recorded, cwd, root, explicit=False)
            except ImportRefused:
                continue
            found.accepted.append(path)
    return found
