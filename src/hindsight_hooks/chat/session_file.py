"""The chat host's transcript on disk, in the Pi session format (JSONL, version 3).

Why Pi's format: the importer (docs/import.md) reads Pi session files, so a conversation held
in ``hindsight-hooks chat`` can later be imported like any Pi session, and Pi's own tools can
read ours. Line 1 is the header ``{"type":"session","version":3,"id","timestamp","cwd"}``; each
message is one ``{"type":"message","id","parentId","timestamp","message"}`` entry whose
``parentId`` links to the entry before it. Lines are appended (O_APPEND, 0600) as the
conversation goes, so a crash loses at most the line being written.

Only the host's own transcript is written here: the messages a plugin adds in ``context``
(the injected recall block) never reach this module. Secrets are redacted before a line is
written (Invariant 4); the live conversation in memory is left as the person typed it.
"""

from __future__ import annotations

import json
import os
import secrets
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import HindsightHooksError
from ..fsutil import ensure_private_dir, open_private_append
from ..governance.redact import redact_value
from ..hooks import Message
from ..timefmt import iso_now

SESSION_VERSION = 3
SESSIONS_DIR = ("sessions",)
"""Under the project state folder: ``<cwd>/.hindsight/sessions/``."""


class SessionFileError(HindsightHooksError):
    """A session file that cannot be resumed. The message names the file, never its content."""


def new_session_path(cwd: Path) -> Path:
    """A fresh file under ``<cwd>/.hindsight/sessions/``; the folders are created private.

    The name sorts by time and carries a random suffix, so two chats started in the same
    second never share a file.
    """
    state = ensure_private_dir(Path(cwd) / ".hindsight", gitignore=True)
    folder = ensure_private_dir(state.joinpath(*SESSIONS_DIR))
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    return folder / f"{stamp}-{secrets.token_hex(3)}.jsonl"


@dataclass
class ParsedSession:
    """What resuming needs from an existing file."""

    header: dict[str, Any]
    messages: list[Message] = field(default_factory=list)
    """The messages of the current branch (the one ending at the last entry), oldest first."""
    last_id: str | None = None
    ids: set[str] = field(default_factory=set)
    bad_lines: int = 0


def read_session(path: Path) -> ParsedSession:
    """Parse a v2/v3 session file; unparsable lines are counted and skipped, never rewritten."""
    header: dict[str, Any] | None = None
    entries: dict[str, dict[str, Any]] = {}
    last_id: str | None = None
    bad = 0
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except ValueError:
                    bad += 1
                    continue
                if not isinstance(obj, dict):
                    bad += 1
                    continue
                if header is None:
                    header = obj
                    continue
                entry_id = obj.get("id")
                if not isinstance(entry_id, str) or not entry_id:
                    bad += 1
                    continue
                entries[entry_id] = obj
                last_id = entry_id
    except OSError as exc:
        raise SessionFileError(f"cannot read session file {path}: {type(exc).__name__}") from exc
    if header is None or header.get("type") != "session":
        raise SessionFileError(f"{path} is not a session file (no session header on its first line)")
    version = header.get("version")
    if version not in (2, SESSION_VERSION):
        raise SessionFileError(f"{path} is a version {version!r} session file; only versions 2 and 3 can be resumed")
    # Walk the branch that ends at the last entry, crossing non-message entries (docs/import.md "Tree").
    chain: list[Message] = []
    seen: set[str] = set()
    cursor = last_id
    while cursor is not None and cursor in entries and cursor not in seen:
        seen.add(cursor)
        entry = entries[cursor]
        if entry.get("type") == "message" and isinstance(entry.get("message"), dict):
            chain.append(entry["message"])
        parent = entry.get("parentId")
        cursor = parent if isinstance(parent, str) else None
    chain.reverse()
    return ParsedSession(header=header, messages=chain, last_id=last_id, ids=set(entries), bad_lines=bad)


class SessionFile:
    """An open session file: appends one entry per message, linking each to the previous one."""

    def __init__(self, path: Path, fd: int, session_id: str, last_id: str | None, ids: set[str]) -> None:
        self.path = path
        self.session_id = session_id
        self._fd: int | None = fd
        self._last_id = last_id
        self._ids = ids

    @classmethod
    def create(cls, path: Path, cwd: Path) -> SessionFile:
        """Start a new file with its header. Refuses to touch a non-empty existing file."""
        path = Path(path)
        if path.exists() and path.stat().st_size > 0:
            raise SessionFileError(f"{path} already exists")
        path.parent.mkdir(parents=True, exist_ok=True)
        session_id = str(uuid.uuid4())
        fd = open_private_append(path)
        header = {
            "type": "session",
            "version": SESSION_VERSION,
            "id": session_id,
            "timestamp": iso_now(),
            "cwd": str(Path(cwd).absolute()),
        }
        os.write(fd, _line(header))
        return cls(path, fd, session_id, None, set())

    @classmethod
    def open(cls, path: Path, cwd: Path) -> tuple[SessionFile, ParsedSession | None]:
        """Resume ``path`` if it holds a session, else create it; returns the file and what was read."""
        path = Path(path)
        if not path.exists() or path.stat().st_size == 0:
            return cls.create(path, cwd), None
        parsed = read_session(path)
        fd = open_private_append(path)
        sid = parsed.header.get("id")
        return cls(path, fd, sid if isinstance(sid, str) else "", parsed.last_id, set(parsed.ids)), parsed

    def _new_id(self) -> str:
        while True:
            candidate = secrets.token_hex(4)
            if candidate not in self._ids:
                self._ids.add(candidate)
                return candidate

    def append(self, message: Message) -> str:
        """Write one message entry (redacted) and return its id."""
        if self._fd is None:
            raise SessionFileError(f"{self.path} is closed")
        entry_id = self._new_id()
        entry = {
            "type": "message",
            "id": entry_id,
            "parentId": self._last_id,
            "timestamp": iso_now(),
            "message": redact_value(message),
        }
        os.write(self._fd, _line(entry))
        self._last_id = entry_id
        return entry_id

    def close(self) -> None:
        if self._fd is not None:
            try:
                os.close(self._fd)
            finally:
                self._fd = None


def _line(obj: dict[str, Any]) -> bytes:
    return (json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=str) + "\n").encode("utf-8")
