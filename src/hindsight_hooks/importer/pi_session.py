"""Pi session files (JSONL, versions 1–3) as a tree of entries (docs/import.md "Parsing").

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

from ..errors import HindsightHooksError
from ..hooks.messages import Message

SUPPORTED_VERSIONS = (1, 2, 3)
LINEAR_LEAF_ID = "current"
"""The leaf id of a version-1 (linear) session, whose entries carry no ids."""


MAX_REPORTED_LINES = 10
"""How many unparsable line numbers a parse keeps for the warning (the count is always exact)."""

SNIFF_LINES = 50
"""How many non-empty lines ``sniff`` reads to tell a damaged session from a chat transcript."""


class SessionFormatError(HindsightHooksError, ValueError):
    """The file is not a Pi session we can read (the message names the file, never its content)."""


class EmptyFileError(SessionFormatError):
    """The file holds no line at all: nothing to import yet (not damage)."""


@dataclass
class BadLines:
    """Unparsable lines: the exact count, the first line numbers (1-based), a cut-off last line.

    The importer never modifies the file it reads, so nothing is lost by skipping a line; the
    numbers let the person find and repair it. Content is never quoted.
    """

    count: int = 0
    numbers: list[int] = field(default_factory=list)
    truncated_tail: bool = False

    def add(self, lineno: int) -> None:
        self.count += 1
        if len(self.numbers) < MAX_REPORTED_LINES:
            self.numbers.append(lineno)

    def describe(self, path: Path | str) -> str:
        """``<file>: 2 unparsable line(s) skipped (lines 5, 9)`` and a note on a cut-off end."""
        shown = ", ".join(str(n) for n in self.numbers) + (", …" if self.count > len(self.numbers) else "")
        text = f"{path}: {self.count} unparsable line(s) skipped (line{'s' if self.count > 1 else ''} {shown})"
        if self.truncated_tail:
            text += "; the last line is cut off (the file may have been truncated while it was being written)"
        return text


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
    bad: BadLines = field(default_factory=BadLines)
    unlinked_entries: int = 0
    duplicate_ids: int = 0
    _by_id: dict[str, Entry] = field(default_factory=dict, repr=False)

    @property
    def bad_lines(self) -> int:
        return self.bad.count

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

    def dangling(self) -> int:
        """Entries whose ``parentId`` names no entry in the file (usually an unparsable line).

        The walk from a leaf stops there, so what came before that point is not on the leaf's
        branch. We do not guess the missing link: a wrong guess could pull an abandoned branch
        into this one. The caller reports it; ``--all-leaves`` imports the cut-off part as its
        own document.
        """
        if self.linear:
            return 0
        return sum(
            1 for e in self.entries if e.id is not None and e.parent_id is not None and e.parent_id not in self._by_id
        )

    def _linked_messages(self) -> list[Entry]:
        """Message entries that are reachable by id (the winner when an id is duplicated)."""
        return [e for e in self.entries if e.message is not None and e.id is not None and self._by_id.get(e.id) is e]


# -- reading -----------------------------------------------------------------------------------


def _lines(path: Path) -> Iterator[bytes]:
    for _, raw in numbered_lines(path):
        yield raw


def numbered_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """The non-empty lines of ``path`` with their 1-based line numbers."""
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if raw.strip():
                yield lineno, raw


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


def _looks_like_entry(obj: Any) -> bool:
    """A Pi session entry (not a chat event): a header, a message entry, or a tree link."""
    if not isinstance(obj, dict):
        return False
    if obj.get("type") in ("session", "message") and ("message" in obj or "version" in obj):
        return True
    return "parentId" in obj


def sniff(path: Path) -> str:
    """``"session"`` or ``"chat"`` for an explicit file, or a ``SessionFormatError`` naming the line.

    A Pi session starts with its header. When the first line is not JSON at all, the file is
    either a session whose header was damaged, or a chat log with a torn first event; importing
    a damaged session as a chat log would file it in the wrong bank, so a file whose next lines
    look like session entries is refused, naming the line to repair. Empty → ``EmptyFileError``.
    """
    path = Path(path)
    first_no: int | None = None
    saw_object = False
    for count, (lineno, raw) in enumerate(numbered_lines(path)):
        obj = _loads(raw)
        if first_no is None:
            first_no = lineno
            try:
                if parse_header(obj) is not None:
                    return "session"
            except SessionFormatError:
                return "session"  # a header with a version we do not read: parse_session says so
            if isinstance(obj, dict):
                return "chat"
            continue
        if _looks_like_entry(obj):
            raise SessionFormatError(
                f"{path}: line {first_no} should be the session header but is damaged (not valid JSON); "
                "the lines after it are Pi session entries. Nothing imported: repair or remove that line and retry"
            )
        saw_object = saw_object or isinstance(obj, dict)
        if count + 1 >= SNIFF_LINES:
            break
    if first_no is None:
        raise EmptyFileError(f"{path} is empty: nothing to import")
    if saw_object:
        return "chat"
    raise SessionFormatError(
        f"{path}: line {first_no} is not valid JSON and no JSON object follows it: "
        "neither a Pi session nor a chat transcript; nothing imported"
    )


def parse_session(path: Path) -> ParsedSession:
    """Parse a whole session file; unparsable lines are counted (with their numbers) and skipped."""
    path = Path(path)
    lines = numbered_lines(path)
    try:
        first_no, first = next(lines)
    except StopIteration:
        raise EmptyFileError(f"{path} is empty: nothing to import") from None
    try:
        header = parse_header(_loads(first))
    except SessionFormatError as exc:
        raise SessionFormatError(f"{path}: line {first_no}: {exc}") from None
    if header is None:
        raise SessionFormatError(
            f"{path}: line {first_no} is not a session header (damaged, or not a Pi session file); nothing imported"
        )
    session = ParsedSession(path=path, header=header)
    order = 0
    for lineno, raw in lines:
        obj = _loads(raw)
        message: Message | None = None
        valid = isinstance(obj, dict) and isinstance(obj.get("type"), str)
        if valid and obj["type"] == "message":
            msg = obj.get("message")
            valid = isinstance(msg, dict) and isinstance(msg.get("role"), str)
            message = msg if valid else None
        if not valid:
            session.bad.add(lineno)
            session.bad.truncated_tail = not raw.endswith(b"\n")
            continue
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
