"""A Claude Code transcript as a :class:`~.host_import.HostFile` (what an import reads of it).

The messages are exactly what the ``Stop`` hook reads (:mod:`.claude_session`: the current
branch, no sidechains, no compaction summaries, no hook records), with injected blocks dropped
as ``agent_end`` drops them, so the import and the hooks see one list and one retain cursor
(ADR-110). The session id and cwd are those of the newest line that records them (what the
last hook of the session was given); the file's own name stands in for a missing id.
Unparsable lines are counted with their numbers; the file is never modified.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..retain.injected import drop_injected
from .claude_session import current_chain, to_messages
from .host_import import HostFile, read_objects

HOST = "claude-code"


def _last_str(lines: list[dict[str, Any]], key: str) -> str | None:
    for obj in reversed(lines):
        value = obj.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def parse_claude_file(path: Path) -> HostFile:
    """The current branch of a Claude Code transcript, with its session id, folder and bad lines."""
    path = Path(path)
    lines, bad = read_objects(path)
    chain = current_chain(lines)
    return HostFile(
        path=path,
        host=HOST,
        session_id=_last_str(chain, "sessionId") or _last_str(lines, "sessionId") or path.stem,
        cwd=_last_str(chain, "cwd") or _last_str(lines, "cwd"),
        started_at=next((str(o["timestamp"]) for o in chain if isinstance(o.get("timestamp"), str)), None),
        messages=drop_injected(to_messages(chain)),
        bad=bad,
    )
