"""The words of ``recall``/``retain``/``reflect`` as tool arguments, and bad ones as advice.

The tools validate their arguments with pydantic models (``plugin.control.tool_params``), whose errors
are written for a model that reads a schema: ``query: String should have at least 1 character``.
A person at a shell needs to hear what to type instead. So the CLI checks the arguments against
the same models before the session starts and turns each failure into one line of advice
(exit 2, like any usage error); the tool's own check stays the authority inside a host.
"""

from __future__ import annotations

import re
import sys
from typing import Any, TextIO

STDIN_WORD = "-"
"""``retain -`` reads the memory from stdin: a 1 MB note cannot be passed as an argument."""

_ADVICE = {
    ("hindsight_recall", "query"): "give a non-empty query: hindsight-hooks recall 'what we decided about X'",
    ("hindsight_reflect", "query"): "give a question: hindsight-hooks reflect 'why did we choose SQLite?'",
    ("hindsight_retain", "items"): (
        "give the text to store: hindsight-hooks retain 'we chose SQLite for the cache'"
        " (or `hindsight-hooks retain -` to read it from stdin)"
    ),
    ("hindsight_retain", "content"): (
        "give the text to store: hindsight-hooks retain 'we chose SQLite for the cache'"
        " (or `hindsight-hooks retain -` to read it from stdin)"
    ),
}
_FIELD_ADVICE = {
    "max_tokens": "--max-tokens must be 0 or more, e.g. --max-tokens 800",
}
_OPTION = {"max_tokens": "--max-tokens", "tags": "--tag", "tags_match": "--tags-match", "context": "--context"}


def text_of(words: list[str], stdin: TextIO | None = None) -> str:
    """The words as one text; a lone ``-`` means the text is on stdin (read whole, as UTF-8)."""
    if words == [STDIN_WORD]:
        stream = stdin if stdin is not None else sys.stdin
        return stream.read()
    return " ".join(words)


def advice(tool: str, arguments: dict[str, Any]) -> str | None:
    """``None`` when ``arguments`` are valid for ``tool``; otherwise what to do instead."""
    if tool == "hindsight_retain":
        items = arguments.get("items") or [{}]
        if not str(items[0].get("content") or "").strip():
            return _ADVICE[(tool, "content")]
    if tool in ("hindsight_recall", "hindsight_reflect") and not str(arguments.get("query") or "").strip():
        return _ADVICE[(tool, "query")]
    from pydantic import BaseModel, ValidationError

    from .plugin.control.tool_params import RecallParams, ReflectParams, RetainParams

    models: dict[str, type[BaseModel]] = {
        "hindsight_recall": RecallParams,
        "hindsight_reflect": ReflectParams,
        "hindsight_retain": RetainParams,
    }
    params = models.get(tool)
    if params is None:
        return None
    try:
        params.model_validate(arguments)
    except ValidationError as exc:
        return "; ".join(_one(tool, err) for err in exc.errors())
    return None


def _one(tool: str, err: Any) -> str:
    loc = [str(p) for p in err.get("loc", ())]
    field = loc[0] if loc else ""
    known = _ADVICE.get((tool, loc[-1] if loc else "")) or _ADVICE.get((tool, field))
    if known is None:
        known = _FIELD_ADVICE.get(field)
    if known is not None:
        return known
    why = str(err.get("msg", "is not valid")).removeprefix("Value error, ")
    why = re.sub(r"^tags\[(\d+)\]", lambda m: f"tag {int(m.group(1)) + 1}", why)  # tags[0] -> tag 1
    option = _OPTION.get(field, f"--{field.replace('_', '-')}")
    return f"{option}: {why}"
