"""Claude Code's session JSONL as our Pi-shaped messages (what ``agent_end``, ``context`` and imports read).

Pure (reads one file, writes nothing). It lives in ``importer/`` because both the Claude Code
hook adapter (``hosts/claude_code.py``) and the importer read sessions with it, and the
importer sits below ``hosts/``: one reader, so an imported session and the same session
retained live by the hooks are the same messages to the retain cursor (ADR-110).

Claude Code writes one JSON object per line to ``~/.claude/projects/<cwd-slug>/<session>.jsonl``.
Lines with a ``uuid`` form a tree through ``parentUuid``; the conversation the model saw last is
the chain from the newest line back to the root. Rewinds and edits start a new branch from an
older line, so reading the file top to bottom would mix branches: we follow the chain instead.
A compaction writes a ``system``/``compact_boundary`` line whose ``parentUuid`` is null and whose
``logicalParentUuid`` names the line before it; we follow that link, so the transcript stays one
append-only conversation across compactions (and the retain cursor sees only the new part),
and we drop the compaction summary (``isCompactSummary``): it restates what was retained already.

What becomes a message:

- ``user`` lines: their text (string content or ``text`` blocks) and images (type and media type
  only, no bytes); each ``tool_result`` block becomes its own ``toolResult`` message (with the
  ``toolName`` of the call it answers). Claude Code's own insertions are dropped: ``isMeta``
  lines, ``<system-reminder>`` blocks, slash-command echoes (``<command-name>``,
  ``<local-command-stdout>``, ...).
- ``assistant`` lines: Claude Code writes one line per content block of a reply, all with the
  same ``message.id``; consecutive ones are merged back into one message. ``text``, ``thinking``
  and ``tool_use`` (as ``toolCall``) blocks are kept; synthetic replies (model ``<synthetic>``,
  API error placeholders) are not.
- Everything else is dropped: ``attachment`` lines (hook output, including the
  ``hook_additional_context`` record of the memory block we injected, and hook system
  messages), ``system`` lines, sidechains (``isSidechain``: a subagent's own conversation), and
  lines without a ``uuid`` (queue operations, summaries, file snapshots).

Each message's ``id`` is its line's ``uuid`` and its ``timestamp`` is epoch milliseconds, so
the retain cursor recognises a message it has seen however the file around it changed.

``tail_bytes`` reads only the end of the file (recall needs the last turns, not a 50 MB
history); the chain then simply stops where the window does. Unparsable lines are skipped
(the importer reports them by line number, :func:`~.jsonl_lines.numbered_objects`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..hooks.messages import Message
from ..timefmt import epoch_ms
from .jsonl_lines import read_lines

_NOISE_PREFIXES = (
    "<system-reminder>",
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<user-prompt-submit-hook>",
)
_STOP_REASONS = {"end_turn": "stop", "tool_use": "toolUse", "max_tokens": "length", "stop_sequence": "stop"}


def current_chain(lines: Iterable[dict[str, Any]], *, across_compactions: bool = True) -> list[dict[str, Any]]:
    """The lines of the current branch, oldest first (the newest non-sidechain line is the leaf).

    ``across_compactions=False`` stops at the newest compaction boundary: what the model is sent
    now, not what it was sent before a compaction (ADR 183).
    """
    by_uuid: dict[str, dict[str, Any]] = {}
    leaf: dict[str, Any] | None = None
    for obj in lines:
        uid = obj.get("uuid")
        if not isinstance(uid, str) or not uid:
            continue
        by_uuid[uid] = obj
        if not obj.get("isSidechain"):
            leaf = obj
    chain: list[dict[str, Any]] = []
    seen: set[str] = set()
    node = leaf
    while node is not None:
        uid = str(node.get("uuid"))
        if uid in seen:  # a loop in a damaged file
            break
        seen.add(uid)
        chain.append(node)
        parent = node.get("parentUuid")
        if not parent and node.get("type") == "system" and node.get("subtype") == "compact_boundary":
            if not across_compactions:
                break
            parent = node.get("logicalParentUuid")
        node = by_uuid.get(parent) if isinstance(parent, str) else None
    chain.reverse()
    return chain


def _is_noise(text: str) -> bool:
    return text.lstrip().startswith(_NOISE_PREFIXES)


def _result_parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    parts: list[dict[str, Any]] = []
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                parts.append({"type": "text", "text": block["text"]})
            elif block.get("type") == "image":
                parts.append(_image(block))
    return parts


def _image(block: dict[str, Any]) -> dict[str, Any]:
    source = block.get("source")
    media = source.get("media_type") if isinstance(source, dict) else None
    out: dict[str, Any] = {"type": "image"}
    if isinstance(media, str):
        out["mimeType"] = media
    return out


class _Builder:
    """Turns chain lines into messages, remembering tool names for the results that follow."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.tool_names: dict[str, str] = {}
        self._open_reply: str | None = None  # message.id of the assistant message being merged

    def add(self, line: dict[str, Any]) -> None:
        kind = line.get("type")
        if line.get("isSidechain") or kind not in ("user", "assistant"):
            if kind in ("user", "assistant"):
                self._open_reply = None
            return
        message = line.get("message")
        if not isinstance(message, dict):
            return
        if kind == "assistant":
            self._assistant(line, message)
        else:
            self._open_reply = None
            if not (line.get("isMeta") or line.get("isCompactSummary") or line.get("isVisibleInTranscriptOnly")):
                self._user(line, message)

    def _base(self, line: dict[str, Any], role: str) -> Message:
        msg: Message = {"role": role, "id": str(line.get("uuid"))}
        ms = epoch_ms(line.get("timestamp"))
        if ms is not None:
            msg["timestamp"] = ms
        return msg

    def _user(self, line: dict[str, Any], message: dict[str, Any]) -> None:
        content = message.get("content")
        if isinstance(content, str):
            if content.strip() and not _is_noise(content):
                self.messages.append({**self._base(line, "user"), "content": content})
            return
        if not isinstance(content, list):
            return
        parts: list[dict[str, Any]] = []
        for block in content:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "tool_result":
                self._tool_result(line, block)
            elif btype == "text":
                text = block.get("text")
                if isinstance(text, str) and text.strip() and not _is_noise(text):
                    parts.append({"type": "text", "text": text})
            elif btype == "image":
                parts.append(_image(block))
        if parts:
            self.messages.append({**self._base(line, "user"), "content": parts})

    def _tool_result(self, line: dict[str, Any], block: dict[str, Any]) -> None:
        call_id = block.get("tool_use_id")
        msg = self._base(line, "toolResult")
        msg["id"] = f"{msg['id']}:{call_id}"
        if isinstance(call_id, str):
            msg["toolCallId"] = call_id
            if call_id in self.tool_names:
                msg["toolName"] = self.tool_names[call_id]
        msg["content"] = _result_parts(block.get("content"))
        msg["isError"] = bool(block.get("is_error"))
        self.messages.append(msg)

    def _assistant(self, line: dict[str, Any], message: dict[str, Any]) -> None:
        model = message.get("model")
        if model == "<synthetic>" or line.get("isApiErrorMessage"):
            self._open_reply = None
            return
        parts: list[dict[str, Any]] = []
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks if isinstance(blocks, list) else []:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "text" and isinstance(block.get("text"), str) and block["text"].strip():
                parts.append({"type": "text", "text": block["text"]})
            elif btype == "thinking" and isinstance(block.get("thinking"), str) and block["thinking"].strip():
                parts.append({"type": "thinking", "thinking": block["thinking"]})
            elif btype == "tool_use":
                call_id, name = block.get("id"), block.get("name")
                if isinstance(call_id, str) and isinstance(name, str):
                    self.tool_names[call_id] = name
                parts.append({"type": "toolCall", "id": call_id, "name": name, "arguments": block.get("input")})
        reply_id = message.get("id") if isinstance(message.get("id"), str) else None
        stop = message.get("stop_reason")
        last = self.messages[-1] if self.messages else None
        if reply_id is not None and reply_id == self._open_reply and last is not None and last["role"] == "assistant":
            last["content"].extend(parts)
            if isinstance(stop, str):
                last["stopReason"] = _STOP_REASONS.get(stop, stop)
            return
        self._open_reply = reply_id
        msg = self._base(line, "assistant")
        msg["content"] = parts
        if isinstance(model, str):
            msg["model"] = model
        if isinstance(stop, str):
            msg["stopReason"] = _STOP_REASONS.get(stop, stop)
        self.messages.append(msg)


def to_messages(chain: Iterable[dict[str, Any]]) -> list[Message]:
    builder = _Builder()
    for line in chain:
        builder.add(line)
    return [m for m in builder.messages if m["role"] != "assistant" or m["content"]]


def read_transcript(path: Path, tail_bytes: int | None = None, *, since_compaction: bool = False) -> list[Message]:
    """The current branch of a Claude Code transcript as Pi-shaped messages, oldest first; with
    ``since_compaction``, only what follows its newest compaction (what the model reads now)."""
    return to_messages(current_chain(read_lines(path, tail_bytes), across_compactions=not since_compaction))
