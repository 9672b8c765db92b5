"""What the embedded store's index holds of a unit's message: its words, without provenance (ADR 179).

A transcript unit is stored as it is shown, ``"<role>: <text>"``, with a tool call written as
``[toolCall <name>] {"<key>": <value>, …}``. The role label, the tool call's marker and name, and
its argument keys say how a message was carried, not what it said. They recur on most of a
bank's units: "user" on every prompt; "file" and "path" (``file_path``) on every read and edit;
"command" and "description" on every shell call. When the index held them, a prompt that said
"file" or "user" matched all of those units. So the index holds, for a transcript or import
unit, its text after the label, with each tool call reduced to its argument values. A memory the
model wrote (``source = 'tool'``) is indexed as written.

The store computes this text once, at write, and keeps it in ``units.search_text`` when it
differs from the content (``local_schema``'s version 6); the index and the coverage rule both
read it from there (``coalesce(search_text, content)``), so nothing computes it twice.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import orjson

from .local_change_marks import change_marks
from .local_script import unit_script_terms
from .local_text import without_role_label
from .local_windows import neighbour_of

LABELLED_SOURCES = frozenset({"transcript", "import"})  # units made of messages, "<role>: <text>"
TOOL_OUTPUT_LABEL = "toolResult: "  # a tool's output, as such a unit is labelled
_TOOL_CALL = re.compile(r"^\[toolCall [^\]\n]*\] ?(.*)$", re.M)
_JSON_KEY = re.compile(r'"(?:[^"\\\n]|\\.)*"\s*:')


def indexed_content(content: str, source: str) -> str:
    """The words the index holds of a unit's content (see the module doc)."""
    if source not in LABELLED_SOURCES:
        return content
    text = without_role_label(content)
    if "[toolCall " in text:
        text = _TOOL_CALL.sub(lambda m: _argument_values(m.group(1)), text)
    return text


def search_text_of(content: str, source: str) -> str | None:
    """``units.search_text``: the indexed words when they differ from the content, else None
    (a memory the model wrote stores nothing twice)."""
    text = indexed_content(content, source)
    return None if text == content else text


def indexed_columns(content: str, source: str, context: str) -> tuple[str | None, str]:
    """A unit's ``(search_text, script_terms)`` as every writer stores them: the words the index
    takes, and the bigrams and emoji tokens (ADR 115) of those words and the unit's turn terms,
    then the marks of what a change leaves behind (ADR 209)."""
    search = search_text_of(content, source)
    words = content if search is None else search
    script = unit_script_terms(words, neighbour_of(context))
    # A tool's output (a listing, a diff, a log: "replace the old handler") decides nothing.
    marks = "" if content.startswith(TOOL_OUTPUT_LABEL) or "[toolCall " in content else change_marks(words)
    return search, f"{script} {marks}" if script and marks else script or marks


def stale_index_columns(rows: Iterable[Sequence[Any]]) -> list[tuple[str | None, str, int]]:
    """``(search_text, script_terms, rowid)`` for each unit of ``rows`` whose stored columns
    differ from what :func:`indexed_columns` gives. A row is a unit's ``(rowid, content, source,
    context, search_text, script_terms)`` as stored; a deleted unit (content None) is skipped.
    What the migration to version 6 and the healing of an older process's units (ADR 182) both
    write back."""
    updates: list[tuple[str | None, str, int]] = []
    for rowid, content, source, context, search, terms in rows:
        if content is None:
            continue
        words, script = indexed_columns(str(content), str(source), str(context or ""))
        if words != search or script != terms:
            updates.append((words, script, int(rowid)))
    return updates


def _argument_values(arguments: str) -> str:
    """A tool call's argument values, space-separated; without its keys when it is not whole JSON
    (a long call split across units)."""
    try:
        value = orjson.loads(arguments)
    except orjson.JSONDecodeError:
        return _JSON_KEY.sub(" ", arguments)
    leaves: list[str] = []
    stack: list[Any] = [value]
    while stack:  # iterative: a tool call's arguments may nest deeper than Python's recursion limit
        item = stack.pop()
        if isinstance(item, str):
            leaves.append(item)
        elif isinstance(item, int | float) and not isinstance(item, bool):
            leaves.append(str(item))
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))
    return " ".join(leaves)
