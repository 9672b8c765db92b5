"""When each installed hook last ran in a project: evidence for ``doctor`` that a hook is live.

An install can look right on disk and still never run: the agent was not restarted, the user
never trusted the project's hooks, or the settings file is one the agent does not read. The only
proof that a hook is live is that it ran. So every hook call stamps
``<cwd>/.hindsight/hooks-seen.json`` (0600)::

    {"claude-code": {"UserPromptSubmit": 1764011234.5, "Stop": 1764011240.1}, ...}

Only the host name, the event name and a wall-clock time are written, never anything of the
event. Cheap on purpose (it runs on every prompt): one small read, and a write only when the
stored time is older than :data:`RESOLUTION_S`. Best effort: a lost race between two hooks, an
unwritable folder or a corrupt file costs at most one stamp, never the hook's answer.
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path

from ..fsutil import atomic_write_text, ensure_private_dir

FILE_NAME = "hooks-seen.json"
RESOLUTION_S = 60.0
"""A stamp younger than this is not rewritten: "ran in the last minute" is precise enough."""
MAX_NAME = 64


def seen_path(cwd: Path) -> Path:
    return Path(cwd) / ".hindsight" / FILE_NAME


def read_seen(cwd: Path) -> dict[str, dict[str, float]]:
    """``{host: {event: last_run_epoch_s}}`` for ``cwd`` (``{}`` when absent or unreadable)."""
    try:
        data = json.loads(seen_path(cwd).read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    out: dict[str, dict[str, float]] = {}
    for host, events in data.items():
        if isinstance(host, str) and isinstance(events, dict):
            out[host] = {
                str(e): float(t) for e, t in events.items() if isinstance(t, int | float) and not isinstance(t, bool)
            }
    return out


def stamp(cwd: Path, host: str, event: str, now: float | None = None) -> None:
    """Record that ``host``'s ``event`` hook ran in ``cwd`` (never raises)."""
    with contextlib.suppress(Exception):
        at = time.time() if now is None else now
        host, event = host[:MAX_NAME], event[:MAX_NAME]
        seen = read_seen(cwd)
        last = seen.get(host, {}).get(event)
        if last is not None and 0 <= at - last < RESOLUTION_S:
            return
        seen.setdefault(host, {})[event] = round(at, 1)
        path = seen_path(cwd)
        ensure_private_dir(path.parent, gitignore=True)
        atomic_write_text(path, json.dumps(seen, sort_keys=True))
