"""What the writers of agent session files for tests share (``claude_lines``, ``codex_lines``, ``gemini_lines``).

Each agent keeps a session as a JSON-lines file that grows while it runs, and hands a hook the
same four fields about it. The writers differ in what a line says; appending, timestamps that
increase by a second a line, and those four hook fields are the same for all.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class SessionLines:
    """One session file being appended to, as an agent would."""

    def __init__(self, path: Path, cwd: Path, session_id: str) -> None:
        self.path = path
        self.cwd = cwd
        self.session_id = session_id
        self.clock = 0
        path.parent.mkdir(parents=True, exist_ok=True)

    def _stamp(self) -> str:
        """The next line's timestamp (one second after the last)."""
        self.clock += 1
        return f"2026-11-24T10:{self.clock // 60:02d}:{self.clock % 60:02d}.000Z"

    def write(self, obj: dict[str, Any]) -> None:
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(obj) + "\n")

    def write_raw(self, text: str) -> None:
        """``text`` as is (a torn line, garbage) to see the reader cope."""
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(text)

    def hook_fields(self, name: str) -> dict[str, Any]:
        """What every hook event of these agents says about the session."""
        return {
            "session_id": self.session_id,
            "transcript_path": str(self.path),
            "cwd": str(self.cwd),
            "hook_event_name": name,
        }
