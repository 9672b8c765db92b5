"""Which kind of session file this is, decided by its content, never by its name or folder.

``import-file`` takes any path, and people copy transcripts around (a Claude Code session
saved as ``notes.jsonl``, a Pi session in a download folder), so the name proves nothing.
What each format writes is distinctive:

* a **Pi session** starts with its header, ``{"type": "session", "version": …}``;
* a **Claude Code** transcript has conversation lines that carry ``sessionId`` together with a
  ``parentUuid`` key (null on a root line) — no other format we read links lines that way;
* a **Codex** rollout is lines of ``{"timestamp", "type", "payload": {…}}`` whose types are
  Codex's own (``session_meta``, ``response_item``, ``turn_context``, ``event_msg``, …);
* anything else that holds JSON objects is a chat or gateway event log.

The first :data:`~.pi_session.SNIFF_LINES` non-blank lines decide, so a torn first line does
not hide what follows. Pi's own rule for a damaged header (refuse rather than file a project
session in the user bank) still applies: what is neither Claude Code nor Codex goes through
:func:`~.pi_session.sniff`, which raises for it, and for an empty file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .pi_session import SNIFF_LINES, numbered_lines, parse_header, sniff

PI_SESSION = "session"
CHAT = "chat"
CLAUDE_CODE = "claude-code"
CODEX = "codex"

CODEX_LINE_TYPES = frozenset({"session_meta", "response_item", "turn_context", "event_msg", "compacted"})


def is_claude_line(obj: Any) -> bool:
    """A Claude Code conversation line: ``sessionId`` and a ``parentUuid`` key (which may be null)."""
    return isinstance(obj, dict) and isinstance(obj.get("sessionId"), str) and "parentUuid" in obj


def is_codex_line(obj: Any) -> bool:
    """A Codex rollout line: one of Codex's line types with an object ``payload``."""
    return isinstance(obj, dict) and obj.get("type") in CODEX_LINE_TYPES and isinstance(obj.get("payload"), dict)


def _objects(path: Path) -> list[Any]:
    import orjson

    out: list[Any] = []
    for count, (_, raw) in enumerate(numbered_lines(path)):
        try:
            out.append(orjson.loads(raw))
        except orjson.JSONDecodeError:
            out.append(None)
        if count + 1 >= SNIFF_LINES:
            break
    return out


def detect_format(path: Path) -> str:
    """:data:`PI_SESSION`, :data:`CLAUDE_CODE`, :data:`CODEX` or :data:`CHAT`.

    Raises :class:`~.pi_session.EmptyFileError` for an empty file and
    :class:`~.pi_session.SessionFormatError` for a damaged Pi header or a file with no JSON
    object at all (the message names the line, never its content).
    """
    objects = _objects(Path(path))
    if objects:
        try:
            if parse_header(objects[0]) is not None:
                return PI_SESSION
        except ValueError:
            return PI_SESSION  # a header with a version we do not read: the Pi parser says so
    if any(is_claude_line(obj) for obj in objects):
        return CLAUDE_CODE
    if any(is_codex_line(obj) for obj in objects):
        return CODEX
    return sniff(Path(path))
