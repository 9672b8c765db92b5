"""What ``serve --stdio`` sends about the Host's results: context edits, catalogs, tool results.

Why a module of its own: these are the shapes the Pi extension (TypeScript) consumes, so they
are kept small, JSON-only and free of pydantic or Host objects, and tested apart from the
process plumbing.

- **Context as edits.** ``context`` usually returns the host's messages with one message
  added (the recall block). Sending the whole transcript back would double the bridge's cost
  per model call and make Pi re-read objects it already has, so :func:`context_answer` says
  "unchanged", or lists the added messages with their final positions, and only falls back to
  the full list when the plugins changed something else.
- **Schemas without references.** Pi validates tool arguments with TypeBox's compiler and
  hands the schema to every provider; pydantic's ``$defs``/``$ref`` are inlined so the schema
  stands alone (:func:`standalone_schema`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..hooks import Command, CommandResult, Tool, ToolResult

#: More added messages than this is not "a block injected": send the full list instead.
MAX_INSERTS = 16


def context_answer(before: list[Any], after: list[Any]) -> dict[str, Any]:
    """``{"messages": None}`` (unchanged), ``{"inserts": [{index, message}]}`` or ``{"messages": [...]}``.

    ``inserts`` are valid only when ``after`` is ``before`` with messages added and nothing
    else changed; each ``index`` is the message's position in the final list, so applying them
    in order with ``splice(index, 0, message)`` rebuilds ``after``.
    """
    inserts: list[dict[str, Any]] = []
    i = 0
    for j, message in enumerate(after):
        if i < len(before) and message == before[i]:
            i += 1
            continue
        inserts.append({"index": j, "message": message})
        if len(inserts) > MAX_INSERTS:
            return {"messages": after}
    if i != len(before):
        return {"messages": after}
    if not inserts:
        return {"messages": None}
    return {"inserts": inserts}


def standalone_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` with every local ``#/$defs/...`` reference replaced by its definition.

    A reference cycle (a recursive model) is left as an open object at the point it recurses,
    so the result is always finite.
    """
    defs = schema.get("$defs") or schema.get("definitions") or {}

    def resolve(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [resolve(item, seen) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(("#/$defs/", "#/definitions/")):
            name = ref.rsplit("/", 1)[1]
            target = defs.get(name)
            if not isinstance(target, dict) or name in seen:
                return {"type": "object"}
            merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
            return resolve(merged, (*seen, name))
        return {k: resolve(v, seen) for k, v in node.items() if k not in ("$defs", "definitions")}

    resolved = resolve(dict(schema), ())
    return resolved if isinstance(resolved, dict) else {"type": "object"}


def tool_entry(tool: Tool) -> dict[str, Any]:
    """One tool of the ``tools`` answer: name, a label for people, description, JSON schema."""
    schema = standalone_schema(tool.parameters.model_json_schema(by_alias=False))
    label = tool.name.replace("_", " ").strip().title() or tool.name
    return {"name": tool.name, "label": label, "description": tool.description, "parameters": schema}


def command_entry(command: Command) -> dict[str, Any]:
    """One command of the ``commands`` answer; ``completions`` are the first word's choices."""
    try:
        completions = [str(c) for c in command.complete("")]
    except Exception:
        completions = []
    return {
        "name": command.name,
        "description": command.description,
        "usage": command.usage,
        "completions": completions,
    }


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON data (what is not JSON becomes its ``str``)."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


def command_answer(result: CommandResult) -> dict[str, Any]:
    return {"text": result.text, "level": result.level, "data": jsonable(result.data)}


def tool_answer(result: ToolResult) -> dict[str, Any]:
    return {"content": jsonable(result.content), "details": jsonable(result.details), "isError": result.is_error}
