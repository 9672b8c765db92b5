"""Pi session files (JSONL, versions 1–3) as a tree of entries (BEHAVIOUR.md §12 "Parsing").

A Pi session is append-only: every entry (message, model change, thinking-level change,
compaction, custom data, label, ...) names its ``parentId``, so going back in the conversation
and continuing starts a new branch in the same file. Importing must follow that tree, not the
file order, or text the user abandoned would be stored as if it had been said on the branch
they kept. Only ``type:"message"`` entries contribute messages; the others are still walked
through, because a message's parent is often a model change or a compaction.

Version 1 files have no ids: they are one linear branch whose leaf is ``current``.

Pure: reads one file, never writes, and its errors name the file but never quote its content.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..hooks.messages import Message

SUPPORTED_VERSIONS = (1, 2, 3)
LINEAR_LEAF_ID = "current"
"""The leaf id of a version-1 (linear) session, whose entries carry no ids."""


class SessionFormatError(ValueError):
    """The file is not a Pi session we can read (the message names the file, never its content)."""


@dataclass(frozen=True)
class SessionHeader:
    """``{type:"session", version, id?, cwd?, timestamp?, parentSession?}``; a missing version is 1."""

    version: int
    id: str | None = None
    cwd: str | None = None
    timestamp: str | None = None
    parent_session: str | None = None


@dataclass(frozen=True)
class Entry:
    """One non-header line. ``order`` is its position among entries, in file order."""

    order: int
    type: str
    id: str | None
    parent_id: str | None
    timestamp: str | None
    message: Message | None = None


@dataclass(frozen=True)
class Branch:
    """The messages on the path from the root to ``leaf_id``, in conversation order."""

    leaf_id: str
    messages: list[Message]
    entry_timestamps: list[str | None]


@dataclass
class ParsedSession:
    """A parsed session file: header, entries and the counts of what had to be skipped."""

    path: Path
    header: SessionHeader
    entries: list[Entry] = field(default_factory=list)
    bad_lines: int = 0
    unlinked_entries: int = 0
    duplicate_ids: int = 0
    _by_id: dict[str, Entry] = field(default_factory=dict, repr=False)

    @property
    def linear(self) -> bool:
        """Version 1, or a file whose entries carry no ids at all: one branch in file order."""
        return self.header.version == 1 or not self._by_id

    @property
    def message_entries(self) -> list[Entry]:
        return [e for e in self.entries if e.message is not None]

    def leaves(self) -> list[str]:
        """Message entries with no message descendant, in file order (``[current]`` when linear)."""
        if self.linear:
            return [LINEAR_LEAF_ID] if self.message_entries else []
        has_message_below: set[str] = set()
        for entry in self._linked_messages():
            # Mark every ancestor; stop at the first one already marked (its ancestors are too),
            # which also ends the walk around a parentId cycle.
            parent = entry.parent_id
            while parent is not None and parent not in has_message_below:
                has_message_below.add(parent)
                above = self._by_id.get(parent)
                parent = above.parent_id if above is not None else None
        return [e.id for e in self._linked_messages() if e.id is not None and e.id not in has_message_below]

    def current_leaf(self) -> str | None:
        """The last message entry in file order (the branch the user was on when the file ended)."""
        if self.linear:
            return LINEAR_LEAF_ID if self.message_entries else None
        linked = self._linked_messages()
        return linked[-1].id if linked else None

    def branch(self, leaf_id: str) -> Branch:
        """Root → ``leaf_id``; crosses non-message entries, collects only messages."""
        if self.linear:
            if leaf_id != LINEAR_LEAF_ID:
                raise KeyError(leaf_id)
            entries = self.message_entries
        else:
            leaf = self._by_id.get(leaf_id)
            if leaf is None or leaf.message is None:
                raise KeyError(leaf_id)
            path: list[Entry] = []
            seen: set[str] = set()
            current: Entry | None = leaf
            while current is not None and current.id is not None and current.id not in seen:
                seen.add(current.id)
                path.append(current)
                current = self._by_id.get(current.parent_id) if current.parent_id is not None else None
            path.reverse()
            entries = [e for e in path if e.message is not None]
        return Branch(
            leaf_id=leaf_id,
            messages=[e.message for e in entries if e.message is not None],
            entry_timestamps=[e.timestamp for e in entries],
        )

    def _linked_messages(self) -> list[Entry]:
        """Message entries that are reachable by id (the winner when an id is duplicated)."""
        return [e for e in self.entries if e.message is not None and e.id is not None and self._by_id.get(e.id) is e]


# -- reading -----------------------------------------------------------------------------------


def _lines(path: Path) -> Iterator[bytes]:
    with open(path, "rb") as fh:
        for raw in fh:
            if raw.strip():
                yield raw


def _loads(raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None


def _opt_str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def parse_header(obj: Any) -> SessionHeader | None:
    """The header if ``obj`` is one (``type == "session"``), else ``None``; bad versions raise."""
    if not isinstance(obj, dict) or obj.get("type") != "session":
        return None
    version = obj.get("version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version not in SUPPORTED_VERSIONS:
        shown = version if isinstance(version, int) and not isinstance(version, bool) else "(not a number)"
        raise SessionFormatError(f"unsupported session version {shown} (supported: 1-3)")
    return SessionHeader(
        version=version,
        id=_opt_str(obj.get("id")),
        cwd=_opt_str(obj.get("cwd")),
        timestamp=_opt_str(obj.get("timestamp")),
        parent_session=_opt_str(obj.get("parentSession")),
    )


def first_json_line(path: Path) -> Any:
    """The first non-empty line of ``path`` parsed as JSON (``None`` when empty or unparsable)."""
    for raw in _lines(path):
        return _loads(raw)
    return None


def read_header(path: Path) -> SessionHeader | None:
    """The session header of ``path`` without reading the rest; ``None`` if it has none."""
    try:
        return parse_header(first_json_line(path))
    except SessionFormatError:
        return None


def parse_session(path: Path) -> ParsedSession:
    """Parse a whole session file; unparsable lines are counted and skipped."""
    path = Path(path)
    lines = _lines(path)
    try:
        first = next(lines)
    except StopIteration:
        raise SessionFormatError(f"{path} is empty: not a Pi session file") from None
    try:
        header = parse_header(_loads(first))
    except SessionFormatError as exc:
        raise SessionFormatError(f"{path}: {exc}") from None
    if header is None:
        raise SessionFormatError(f"{path}: the first line is not a session header: not a Pi session file")
    session = ParsedSession(path=path, header=header)
    order = 0
    for raw in lines:
        obj = _loads(raw)
        if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
            session.bad_lines += 1
            continue
        message: Message | None = None
        if obj["type"] == "message":
            msg = obj.get("message")
            if not isinstance(msg, dict) or not isinstance(msg.get("role"), str):
                session.bad_lines += 1
                continue
            message = msg
        entry = Entry(
            order=order,
            type=obj["type"],
            id=_opt_str(obj.get("id")) if header.version > 1 else None,
            parent_id=_opt_str(obj.get("parentId")) if header.version > 1 else None,
            timestamp=_opt_str(obj.get("timestamp")),
            message=message,
        )
        order += 1
        session.entries.append(entry)
        if entry.id is not None:
            if entry.id in session._by_id:
                session.duplicate_ids += 1
            session._by_id[entry.id] = entry  # the later entry wins, as in Pi
    if not session.linear:
        session.unlinked_entries = sum(1 for e in session.entries if e.id is None)
    return session


def resolve_parent_session(header: SessionHeader, session_path: Path) -> str | None:
    """``parentSession`` as an absolute path when it names a file (relative to the session's folder)."""
    parent = header.parent_session
    if parent is None:
        return None
    if "/" in parent or os.sep in parent or parent.endswith(".jsonl"):
        return os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(session_path)), parent))
    return None
