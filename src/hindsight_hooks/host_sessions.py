"""How a host's own session id names a session of ours (ADR-081 docs/configuration.md), in one place.

The plugin derives a session's sid (its cursor, mode, tags and live document) from the
session *file* it is given. Hosts that run us as hook commands (Claude Code, Codex, Gemini
CLI) only know their own session id, so every adapter, the CLI's ``--session-id``, the MCP
server and the importer name the session by the never-written file
``<cwd>/.hindsight/sessions/<id>.jsonl``. The importer needs the same rule as the hooks, or a
session imported and the same session retained live would be two sessions to the cursor and
be stored twice (ADR-110); it lives here, below both, with no imports beyond the stdlib, so
the hook command's start-up does not pay for it.
"""

from __future__ import annotations

import re
from pathlib import Path

_UNSAFE_ID = re.compile(r"[^A-Za-z0-9._-]")


def session_file_for(cwd: Path, session_id: str) -> Path:
    """The never-written file that names the host's session ``session_id`` in the project at ``cwd``.

    ``cwd`` is used as given (the host's own spelling of it): the sid is a hash of this path,
    so the hooks and the importer must build it from the same string.
    """
    cleaned = _UNSAFE_ID.sub("-", session_id.strip())
    return Path(cwd) / ".hindsight" / "sessions" / f"{cleaned}.jsonl"
