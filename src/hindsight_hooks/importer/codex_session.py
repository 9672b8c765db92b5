"""Codex CLI's rollout JSONL as our Pi-shaped messages (what ``agent_end``, ``context`` and imports read).

Pure. It lives in ``importer/`` because the Codex hook adapter (``hosts/codex.py``) and the
importer both read rollouts with it, and the importer sits below ``hosts/`` (ADR-110).

Codex writes each session to ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``, one
JSON object per line: ``{"timestamp", "ordinal", "type", "payload"}``. The conversation is in
the ``response_item`` lines (the items of the Responses API, as sent to the model); everything
else (``session_meta``, ``turn_context``, ``world_state``, ``event_msg``, token records) is
bookkeeping, except ``event_msg``/``thread_rolled_back``, which takes the last turns back.

What becomes a message:

- ``message`` items of role ``user``: only the parts the person typed. Codex marks each part's
  provenance (``internal_chat_message_metadata_passthrough.content_item_metadata``); parts of
  the harness (``<environment_context>``, AGENTS.md instructions, skills) are dropped. A rollout
  written without provenance falls back on the harness's fixed openings.
- ``message`` items of role ``assistant``: their ``output_text`` parts.
- ``developer`` and ``system`` messages are never messages of ours. That is where Codex puts
  hook context (``content_item_kinds: ["hooks.additional_context"]``), so the ``<hindsight-memory>``
  block we injected, and Codex's record of it, is never read back, let alone retained.
- ``reasoning`` (its readable summary only), ``function_call``, ``custom_tool_call`` and
  ``local_shell_call`` join the assistant message of the same step as ``thinking`` and
  ``toolCall`` parts; each ``*_call_output`` becomes a ``toolResult`` (with the tool's name).
  A tool of a namespace is named ``<namespace>__<tool>``, so an MCP tool reads as Claude Code
  names it (``mcp__hindsight__hindsight_recall``).
- ``compacted`` lines (a compaction's summary and replacement history) are dropped: the rollout
  stays append-only across compactions, and the summary restates what was retained already.

Each message's ``id`` is its item's ``id`` (or ``line-<ordinal>``), its ``timestamp`` epoch ms.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..hooks.messages import Message
from ..timefmt import epoch_ms
from .jsonl_lines import read_lines

HARNESS_OPENINGS = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<skills_instructions>",
    "<permissions instructions>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<subagent_notification>",
    "<collaboration_mode>",
)
"""Openings of user-role text Codex writes itself (used only when a part has no provenance)."""
CALL_ITEMS = ("function_call", "custom_tool_call", "local_shell_call")
OUTPUT_ITEMS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")


def _parts_typed_by_user(payload: dict[str, Any]) -> list[str]:
    content = payload.get("content")
    if isinstance(content, str):
        content = [{"type": "input_text", "text": content}]
    if not isinstance(content, list):
        return []
    meta = payload.get("internal_chat_message_metadata_passthrough")
    provenance = meta.get("content_item_metadata") if isinstance(meta, dict) else None
    texts: list[str] = []
    for index, part in enumerate(content):
        if not isinstance(part, dict) or not isinstance(part.get("text"), str) or not part["text"].strip():
            continue
        if isinstance(provenance, list) and index < len(provenance):
            item = provenance[index]
            origin = item.get("provenance") if isinstance(item, dict) else None
            if not (isinstance(origin, dict) and origin.get("type") == "user"):
                continue
        elif part["text"].lstrip().startswith(HARNESS_OPENINGS):
            continue
        texts.append(part["text"])
    return texts


def _output_text(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, str):
        return [{"type": "text", "text": value}] if value else []
    if isinstance(value, dict):  # {"content": ..., "success": ...} in older rollouts
        return _output_text(value.get("content"))
    parts: list[dict[str, Any]] = []
    if isinstance(value, list):
        for item in value:
            if isinstance(item, dict) and isinstance(item.get("text"), str) and item["text"]:
                parts.append({"type": "text", "text": item["text"]})
            elif isinstance(item, dict) and item.get("type") in ("input_image", "image"):
                parts.append({"type": "image"})
    return parts


def _arguments(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


class _Builder:
    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.tool_names: dict[str, str] = {}
        self._open: Message | None = None  # the assistant message this step's items join

    def _base(self, line: dict[str, Any], payload: dict[str, Any], role: str) -> Message:
        raw_id = payload.get("id")
        msg: Message = {
            "role": role,
            "id": raw_id if isinstance(raw_id, str) and raw_id else f"line-{line.get('ordinal')}",
        }
        ms = epoch_ms(line.get("timestamp"))
        if ms is not None:
            msg["timestamp"] = ms
        return msg

    def _assistant(self, line: dict[str, Any], payload: dict[str, Any]) -> Message:
        if self._open is None:
            self._open = {**self._base(line, payload, "assistant"), "content": []}
            self.messages.append(self._open)
        return self._open

    def add(self, line: dict[str, Any]) -> None:
        kind = line.get("type")
        payload = line.get("payload")
        if not isinstance(payload, dict):
            return
        if kind == "event_msg" and payload.get("type") == "thread_rolled_back":
            self._roll_back(payload.get("num_turns"))
            return
        if kind != "response_item":
            return
        item = payload.get("type")
        if item == "message":
            self._message(line, payload)
        elif item == "reasoning":
            texts = [
                s["text"]
                for s in payload.get("summary") or []
                if isinstance(s, dict) and isinstance(s.get("text"), str)
            ]
            if any(t.strip() for t in texts):
                self._assistant(line, payload)["content"].append({"type": "thinking", "thinking": "\n".join(texts)})
        elif item in CALL_ITEMS:
            self._call(line, payload)
        elif item in OUTPUT_ITEMS:
            self._output(line, payload)

    def _message(self, line: dict[str, Any], payload: dict[str, Any]) -> None:
        role = payload.get("role")
        if role == "assistant":
            content = payload.get("content")
            texts = [
                p["text"]
                for p in (content if isinstance(content, list) else [])
                if isinstance(p, dict) and isinstance(p.get("text"), str) and p["text"].strip()
            ]
            if texts:
                self._assistant(line, payload)["content"].extend({"type": "text", "text": t} for t in texts)
        elif role == "user":
            texts = _parts_typed_by_user(payload)
            if texts:
                self._open = None
                text = "\n\n".join(texts)
                self.messages.append({**self._base(line, payload, "user"), "content": text})

    def _call(self, line: dict[str, Any], payload: dict[str, Any]) -> None:
        call_id = payload.get("call_id") if isinstance(payload.get("call_id"), str) else payload.get("id")
        name = payload.get("name") if isinstance(payload.get("name"), str) else payload.get("type")
        namespace = payload.get("namespace")
        if isinstance(namespace, str) and namespace:
            name = f"{namespace}__{name}"
        arguments = _arguments(payload.get("arguments", payload.get("input", payload.get("action"))))
        if isinstance(call_id, str) and isinstance(name, str):
            self.tool_names[call_id] = name
        self._assistant(line, payload)["content"].append(
            {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}
        )

    def _output(self, line: dict[str, Any], payload: dict[str, Any]) -> None:
        self._open = None
        call_id = payload.get("call_id")
        msg = self._base(line, payload, "toolResult")
        if isinstance(call_id, str):
            msg["toolCallId"] = call_id
            if call_id in self.tool_names:
                msg["toolName"] = self.tool_names[call_id]
        output = payload.get("output")
        msg["content"] = _output_text(output)
        msg["isError"] = bool(isinstance(output, dict) and output.get("success") is False)
        self.messages.append(msg)

    def _roll_back(self, turns: Any) -> None:
        """Drop the last ``turns`` user turns (each from its user message to the end)."""
        self._open = None
        count = turns if isinstance(turns, int) and turns > 0 else 0
        while count and self.messages:
            msg = self.messages.pop()
            if msg["role"] == "user":
                count -= 1


def to_messages(lines: Iterable[dict[str, Any]], *, since_compaction: bool = False) -> list[Message]:
    """The rollout's messages; with ``since_compaction``, only those after its newest ``compacted``
    line (what the model is sent now: the compaction replaced what came before, ADR 183)."""
    builder = _Builder()
    for line in lines:
        if since_compaction and line.get("type") == "compacted":
            builder = _Builder()
            continue
        builder.add(line)
    return [m for m in builder.messages if m["role"] != "assistant" or m["content"]]


def read_transcript(path: Path, tail_bytes: int | None = None, *, since_compaction: bool = False) -> list[Message]:
    """A Codex rollout (or its last ``tail_bytes``) as Pi-shaped messages, oldest first (see
    :func:`to_messages` for ``since_compaction``)."""
    return to_messages(read_lines(path, tail_bytes), since_compaction=since_compaction)
