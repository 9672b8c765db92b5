"""What one host session's hook processes remember between them: notices told, and an outage.

Each hook is a fresh process, so the plugin's "tell a failure once per streak" memory dies with
it, and a prompt after a server timeout would wait for the same dead server again. This small
file per host session (``<cwd>/.hindsight/hosts/<host>-<hash>.json``, 0600) keeps:

- ``told``: the keys of the problems already shown to the user in this session, so a hook says
  each one once (through the host's own channel), not on every prompt;
- ``offline_until``: wall-clock seconds until which recall is skipped, set when a hook had to
  give up on the memory server (its own deadline fired), so a dead server costs one bounded
  wait per cooldown, not one per prompt;
- ``pending``: problems a detached background worker met (it has no way to reach the user), for
  the next hook of the session to show.

Every operation is best effort and never raises: an unwritable folder or a corrupt file only
means a notice may be repeated or a recall tried again. A corrupt file is moved aside with a
``.corrupt-<ms>`` name (never deleted), like every other state file of ours. Files of sessions
idle for :data:`KEEP_S` are removed when a new session's file is first written.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from ..fsutil import atomic_write_text, ensure_private_dir, move_aside

STATE_DIR = ".hindsight"
SUBDIR = "hosts"
KEEP_S = 14 * 24 * 3600.0
"""A session file untouched this long is dropped when another session starts writing."""
MAX_TOLD = 200


def state_file(cwd: Path, host: str, session_key: str) -> Path:
    """The file for one host session: the key (the host's session id) is hashed, never shown."""
    digest = hashlib.sha256(session_key.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return Path(cwd) / STATE_DIR / SUBDIR / f"{host}-{digest}.json"


class HookSessionState:
    """Read once, written only when something changed; see the module docstring."""

    def __init__(self, path: Path, clock: Any = time.time) -> None:
        self.path = path
        self._clock = clock
        self._data: dict[str, Any] = self._read()

    def _read(self) -> dict[str, Any]:
        try:
            raw = self.path.read_bytes()
        except OSError:
            return {}
        try:
            data = json.loads(raw)
            if not isinstance(data, dict):
                raise ValueError("not an object")
        except ValueError:
            with contextlib.suppress(OSError):
                move_aside(self.path, int(self._clock() * 1000))
            return {}
        return data

    def _write(self) -> None:
        try:
            fresh = not self.path.exists()
            ensure_private_dir(self.path.parent.parent, gitignore=True)
            ensure_private_dir(self.path.parent)
            atomic_write_text(self.path, json.dumps(self._data, sort_keys=True))
            if fresh:
                self._prune()
        except OSError:
            pass

    def _prune(self) -> None:
        cutoff = self._clock() - KEEP_S
        with contextlib.suppress(OSError):
            for entry in os.scandir(self.path.parent):
                if entry.name.endswith(".json") and entry.path != str(self.path):
                    with contextlib.suppress(OSError):
                        if entry.stat().st_mtime < cutoff:
                            os.unlink(entry.path)

    # -- notices ------------------------------------------------------------------------------
    def untold(self, keys: list[str]) -> list[str]:
        """The keys not told yet in this session (in order, each once); they count as told now."""
        told = self._data.get("told")
        told_list: list[str] = [k for k in told if isinstance(k, str)] if isinstance(told, list) else []
        known = set(told_list)
        fresh: list[str] = []
        for key in keys:
            if key not in known:
                known.add(key)
                fresh.append(key)
        if fresh:
            self._data["told"] = [*told_list, *fresh][-MAX_TOLD:]
            self._write()
        return fresh

    def add_pending(self, texts: list[str]) -> None:
        """Problems for the next hook to show (a background worker cannot reach the user)."""
        if texts:
            old = self._data.get("pending")
            kept = [t for t in old if isinstance(t, str)] if isinstance(old, list) else []
            self._data["pending"] = [*kept, *texts][-MAX_TOLD:]
            self._write()

    def take_pending(self) -> list[str]:
        pending = self._data.pop("pending", None)
        if not isinstance(pending, list) or not pending:
            return []
        self._write()
        return [t for t in pending if isinstance(t, str)]

    # -- outage ---------------------------------------------------------------------------------
    def offline(self) -> bool:
        until = self._data.get("offline_until")
        return isinstance(until, int | float) and self._clock() < until

    def mark_offline(self, seconds: float) -> None:
        self._data["offline_until"] = self._clock() + seconds
        self._write()

    def clear_offline(self) -> None:
        if "offline_until" in self._data:
            del self._data["offline_until"]
            self._write()
