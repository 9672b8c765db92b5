"""A Codex rollout as a :class:`~.host_import.HostFile` (what an import reads of it).

The messages are exactly what Codex's ``Stop`` hook reads (:mod:`.codex_session`: what the
person typed, the replies, tool calls and results, roll-backs applied; never the ``developer``
message where Codex records our hook context, nor compaction summaries), with injected blocks
dropped as ``agent_end`` drops them, so the import and the hooks share one retain cursor
(ADR-110). Who the session is comes from its first ``session_meta`` line: ``session_id`` (or
``id``) is the id Codex gives its hooks, ``cwd`` the folder it ran in (checked against a real
Codex 0.169 run: the hook's ``session_id`` and ``cwd`` are those two fields). A rollout without
one falls back on the id at the end of its file name (``rollout-<time>-<id>.jsonl``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..retain.injected import drop_injected
from .codex_session import to_messages
from .host_import import HostFile, read_objects

HOST = "codex"
_ID_AT_END = re.compile(r"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$")


def session_meta(lines: list[dict[str, Any]]) -> dict[str, Any]:
    """The payload of the first ``session_meta`` line (``{}`` when there is none)."""
    for obj in lines:
        payload = obj.get("payload")
        if obj.get("type") == "session_meta" and isinstance(payload, dict):
            return payload
    return {}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def parse_codex_file(path: Path) -> HostFile:
    """A Codex rollout's conversation, with its session id, folder and bad lines."""
    path = Path(path)
    lines, bad = read_objects(path)
    meta = session_meta(lines)
    found = _ID_AT_END.search(path.stem)
    session_id = _str(meta.get("session_id")) or _str(meta.get("id")) or (found.group(1) if found else path.stem)
    first_time = next((str(o["timestamp"]) for o in lines if isinstance(o.get("timestamp"), str)), None)
    return HostFile(
        path=path,
        host=HOST,
        session_id=session_id,
        cwd=_str(meta.get("cwd")),
        started_at=_str(meta.get("timestamp")) or first_time,
        messages=drop_injected(to_messages(lines)),
        bad=bad,
    )
