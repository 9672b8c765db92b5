"""Turning one retained item into searchable units, without a model (docs/backends.md#embedded-store step 2-3).

The Hindsight server extracts facts with an LLM; the embedded store cannot, so it keeps the
words and makes them findable: a transcript (a JSON array of host messages, or an import
object with ``messages``) becomes one unit per message that carries text, and anything else
is one unit. Units stay small enough for FTS ranking and for the recall budget to mean
something, so long texts are split at paragraph breaks.

Everything here is pure: no SQLite, no clock (the caller passes ``now``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import orjson

from ..timefmt import normalize_timestamp

MESSAGE_UNIT_CHARS = 2000
PLAIN_UNIT_CHARS = 4000
TOOL_VALUE_CHARS = 120
"""A tool call's string argument keeps this many characters in its unit (ADR 184): the file an
edit touched, the command a shell ran, the start of a long value; not a whole file's code."""
_TOOL_VALUE_DEPTH = 6
_MAX_ROLE_CHARS = 40
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")

Origin = Literal["explicit", "transcript", "import"]


@dataclass(frozen=True)
class UnitAttributes:
    """The docs/backends.md#embedded-store step-3 table: what kind of memory a unit is, by where it came from."""

    type: str
    source: str
    importance: float


ATTRIBUTES: dict[Origin, UnitAttributes] = {
    "explicit": UnitAttributes("world", "tool", 0.75),
    "transcript": UnitAttributes("experience", "transcript", 0.65),
    "import": UnitAttributes("experience", "import", 0.65),
}


@dataclass(frozen=True)
class DerivedUnit:
    content: str
    occurred_at: str | None = None


# -- timestamps -------------------------------------------------------------------------------------


# -- splitting --------------------------------------------------------------------------------------


def split_text(text: str, limit: int) -> list[str]:
    """Cut ``text`` into pieces of at most ``limit`` chars, preferring paragraph breaks.

    Paragraphs are packed greedily; a paragraph that alone is too long is cut at line breaks,
    then at spaces, and only then mid-word. Blank pieces are dropped.
    """
    text = text.strip()
    if len(text) <= limit:
        return [text] if text else []
    pieces: list[str] = []
    current = ""
    for para in (p.strip() for p in _PARAGRAPH_BREAK.split(text)):
        if not para:
            continue
        if len(para) > limit:
            if current:
                pieces.append(current)
            *full, current = _split_long(para, limit)
            pieces.extend(full)
            continue
        joined = f"{current}\n\n{para}" if current else para
        if len(joined) <= limit:
            current = joined
        else:
            pieces.append(current)
            current = para
    if current:
        pieces.append(current)
    return pieces


def _split_long(para: str, limit: int) -> list[str]:
    out: list[str] = []
    rest = para
    while len(rest) > limit:
        window = rest[: limit + 1]
        cut = window.rfind("\n")
        if cut <= 0:
            cut = window.rfind(" ")
        if cut <= 0:
            cut = limit
        head = rest[:cut].rstrip()
        if head:
            out.append(head)
        rest = rest[cut:].lstrip()
    if rest:
        out.append(rest)
    return out


# -- messages ---------------------------------------------------------------------------------------


def _compact_json(value: object) -> str:
    try:
        return orjson.dumps(value).decode("utf-8")
    except TypeError:
        return str(value)


def shortened_arguments(value: object, depth: int = 0) -> object:
    """A tool call's arguments with each string longer than :data:`TOOL_VALUE_CHARS` cut there and
    ending in "…" (nested lists and objects too, to a bounded depth). The transcript the unit comes
    from keeps them whole in its document."""
    if isinstance(value, str):
        return value if len(value) <= TOOL_VALUE_CHARS else value[:TOOL_VALUE_CHARS].rstrip() + "…"
    if depth >= _TOOL_VALUE_DEPTH:
        return value if not isinstance(value, list | dict) else "…"
    if isinstance(value, list):
        return [shortened_arguments(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {k: shortened_arguments(v, depth + 1) for k, v in value.items()}
    return value


def _parts_text(content: object) -> str:
    """Text of a message ``content``: a string, or text/toolCall parts (images, thinking skipped)."""
    if isinstance(content, str):
        return content.strip()
    if not isinstance(content, list):
        return ""
    lines: list[str] = []
    for part in content:
        if isinstance(part, str):
            lines.append(part)
            continue
        if not isinstance(part, Mapping):
            continue
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str):
            lines.append(part["text"])
        elif kind == "toolCall":
            name = part.get("name") if isinstance(part.get("name"), str) else "tool"
            args = part.get("arguments")
            shown = f" {_compact_json(shortened_arguments(args))}" if args else ""
            lines.append(f"[toolCall {name}]{shown}")
    return "\n".join(line for line in lines if line.strip()).strip()


def message_text(message: Mapping[str, Any]) -> str:
    """The searchable text of one host message (any role); empty when it has none."""
    text = _parts_text(message.get("content"))
    if text:
        return text
    for key in ("summary", "text"):
        value = message.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    command, output = message.get("command"), message.get("output")
    if isinstance(command, str) and command.strip():
        tail = f"\n{output.strip()}" if isinstance(output, str) and output.strip() else ""
        return f"$ {command.strip()}{tail}"
    return ""


def unit_prefix(message: Mapping[str, Any]) -> str:
    """The label each unit of ``message`` starts with (``"user: "``), its role as the store spells it."""
    role = str(message.get("role", "")).strip()[:_MAX_ROLE_CHARS] or "message"
    return f"{role}: "


def piece_limit(prefix: str) -> int:
    """How long a message's text may be after its ``prefix`` label in one unit: a text up to this
    long is one unit, ``prefix + text``; a longer one is cut into pieces of at most this."""
    return MESSAGE_UNIT_CHARS - len(prefix)


def _is_message(value: object) -> bool:
    return isinstance(value, Mapping) and isinstance(value.get("role"), str)


def parse_messages(content: str) -> tuple[list[Mapping[str, Any]], Origin] | None:
    """The messages of a transcript (array) or import (object with ``messages``), else None."""
    head = content.lstrip()[:1]
    if head not in ("[", "{"):
        return None
    try:
        data = orjson.loads(content)
    except orjson.JSONDecodeError:
        return None
    if isinstance(data, list) and data and all(_is_message(m) for m in data):
        return list(data), "transcript"
    if isinstance(data, dict):
        msgs = data.get("messages")
        if isinstance(msgs, list) and all(_is_message(m) for m in msgs):
            return list(msgs), "import"
    return None


def derive_units(content: str) -> tuple[list[DerivedUnit], Origin | None]:
    """Units for one item's content, plus the origin its shape suggests (None = plain text)."""
    parsed = parse_messages(content)
    if parsed is None:
        return [DerivedUnit(piece) for piece in split_text(content, PLAIN_UNIT_CHARS)], None
    messages, shape = parsed
    units: list[DerivedUnit] = []
    for message in messages:
        text = message_text(message)
        if not text:
            continue
        prefix = unit_prefix(message)
        occurred = normalize_timestamp(message.get("timestamp"))
        for piece in split_text(text, piece_limit(prefix)):
            units.append(DerivedUnit(prefix + piece, occurred))
    return units, shape


def origin_of(metadata: Mapping[str, Any] | None, shape: Origin | None) -> Origin:
    """Origin from ``metadata.retain_source`` (tool/command → explicit, auto, import), else shape."""
    source = metadata.get("retain_source") if metadata else None
    if source in ("tool", "command"):
        return "explicit"
    if source == "auto":
        return "transcript"
    if source == "import":
        return "import"
    return shape or "explicit"
