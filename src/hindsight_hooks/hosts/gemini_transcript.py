"""Gemini CLI's session file as our Pi-shaped messages (what ``agent_end`` and ``context`` read).

Gemini CLI 0.61 records a session in ``~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl``
(the hook events' ``transcript_path``). The file is a log of operations that Gemini CLI itself
replays to load a session, and we replay it the same way:

- a metadata line (``sessionId`` + ``projectHash``, possibly with ``messages``);
- ``{"$set": {...}}``: metadata updates; one that carries ``messages`` replaces the whole list
  (Gemini writes that after it edits history, e.g. after compressing it);
- ``{"$rewindTo": id}``: the message ``id`` and everything after it are taken back (no such id:
  all of them);
- a message record (it has an ``id``): appended, or, when the id is known, replacing that
  message where it stands (a reply is written again as its tool calls complete).

A legacy single-JSON session file (``{"sessionId", "messages": [...]}``) is read too.

What becomes a message:

- ``user`` records: what the person typed. Gemini keeps that in ``displayContent`` when the
  model was sent more (``@file`` expansions, and the ``<hook_context>`` part that carries hook
  context); otherwise the text parts of ``content`` minus any ``<hook_context>…</hook_context>``
  part. Records Gemini itself ignores on resume are dropped: empty ones, slash commands and
  ``?`` help, ``<session_context>`` preambles, hook context alone. So the memory block we
  injected (which arrives HTML-escaped inside ``<hook_context>``) is never read back.
- ``gemini`` records: text (string or parts), ``thoughts`` as ``thinking``, and each of
  ``toolCalls`` as a ``toolCall`` part followed by its ``toolResult`` (``functionResponse``
  output, or the result's text). ``functionResponse`` parts of user records are the same
  results again and are skipped.
- ``info``, ``error`` and ``warning`` records are the CLI's own and are dropped.
- The output of our own slash commands (a user record opening with :data:`COMMAND_MARKER`, see
  :mod:`.gemini_commands`) and the model's reply to it are dropped: status text is not memory.
- A compression's summary (a user record opening with ``<state_snapshot>`` and the model's
  fixed acknowledgement after it) is dropped: it restates what was retained already.

Each message's ``id`` is its record's ``id``; ``timestamp`` is epoch milliseconds.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..hooks.messages import Message
from ..importer.jsonl_lines import read_lines
from ..timefmt import epoch_ms

COMMAND_MARKER = "[hindsight-hooks command output]"
"""The first line of every prompt our Gemini slash commands send (see :mod:`.gemini_commands`)."""
SNAPSHOT_OPENING = "<state_snapshot>"
SNAPSHOT_ACK = "Got it. Thanks for the additional context!"
_IGNORED_OPENINGS = ("/", "?", "<session_context>", "<hook_context>")
_HOOK_CONTEXT = re.compile(r"<hook_context>.*?</hook_context>", re.S)


def replay(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The session's message records after every ``$set``, ``$rewindTo`` and rewrite, in order."""
    by_id: dict[str, dict[str, Any]] = {}
    for record in records:
        rewind = record.get("$rewindTo")
        if isinstance(rewind, str):
            if rewind in by_id:
                ids = list(by_id)
                for stale in ids[ids.index(rewind) :]:
                    del by_id[stale]
            else:
                by_id.clear()
            continue
        update = record.get("$set")
        if isinstance(update, dict):
            if isinstance(update.get("messages"), list):
                by_id = _indexed(update["messages"])
            continue
        if isinstance(record.get("id"), str):
            by_id[record["id"]] = record
        elif isinstance(record.get("sessionId"), str) and isinstance(record.get("messages"), list):
            by_id.update(_indexed(record["messages"]))  # the metadata line (or a legacy file)
    return list(by_id.values())


def _indexed(messages: list[Any]) -> dict[str, dict[str, Any]]:
    return {m["id"]: m for m in messages if isinstance(m, dict) and isinstance(m.get("id"), str)}


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return []
    return [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]


def _typed_text(record: dict[str, Any]) -> str:
    """What the person typed: ``displayContent`` if recorded, else ``content`` without hook context."""
    shown = _texts(record.get("displayContent"))
    texts = shown if shown else _texts(record.get("content"))
    kept = [_HOOK_CONTEXT.sub("", t) for t in texts]
    return "\n".join(t for t in kept if t.strip())


def _result_parts(result: Any) -> list[dict[str, Any]]:
    if isinstance(result, str):
        return [{"type": "text", "text": result}] if result else []
    parts: list[dict[str, Any]] = []
    items = result if isinstance(result, list) else [result]
    for item in items:
        if not isinstance(item, dict):
            continue
        response = item.get("functionResponse")
        if isinstance(response, dict):
            body = response.get("response")
            if isinstance(body, dict) and isinstance(body.get("output"), str):
                text = body["output"]
            elif isinstance(body, dict) and isinstance(body.get("error"), str):
                text = body["error"]
            else:
                text = json.dumps(body, ensure_ascii=False) if body is not None else ""
            if text:
                parts.append({"type": "text", "text": text})
        elif isinstance(item.get("text"), str) and item["text"]:
            parts.append({"type": "text", "text": item["text"]})
        elif isinstance(item.get("inlineData"), dict):
            mime = item["inlineData"].get("mimeType")
            parts.append({"type": "image", **({"mimeType": mime} if isinstance(mime, str) else {})})
    return parts


class _Builder:
    def __init__(self) -> None:
        self.messages: list[Message] = []
        self._skip_reply = False  # the previous user record was dropped with its reply

    def _base(self, record: dict[str, Any], role: str, suffix: str = "") -> Message:
        msg: Message = {"role": role, "id": f"{record['id']}{suffix}"}
        ms = epoch_ms(record.get("timestamp"))
        if ms is not None:
            msg["timestamp"] = ms
        return msg

    def add(self, record: dict[str, Any]) -> None:
        kind = record.get("type")
        if kind == "user":
            self._user(record)
        elif kind == "gemini":
            skip, self._skip_reply = self._skip_reply, False
            if not skip:
                self._reply(record)

    def _user(self, record: dict[str, Any]) -> None:
        full = "\n".join(_texts(record.get("content"))).strip()
        if not full and not record.get("displayContent"):
            return  # tool results only (``functionResponse`` parts): read from the reply's toolCalls
        self._skip_reply = False
        text = _typed_text(record)
        opening = text.lstrip()
        if full.startswith(COMMAND_MARKER) or opening.startswith(COMMAND_MARKER):
            self._skip_reply = True
            return
        if opening.startswith(SNAPSHOT_OPENING):
            self._skip_reply = True
            return
        if not opening or full.startswith(_IGNORED_OPENINGS) or opening.startswith(_IGNORED_OPENINGS):
            return
        self.messages.append({**self._base(record, "user"), "content": text})

    def _reply(self, record: dict[str, Any]) -> None:
        parts: list[dict[str, Any]] = []
        for thought in record.get("thoughts") or []:
            if isinstance(thought, dict):
                words = " ".join(str(thought[k]) for k in ("subject", "description") if isinstance(thought.get(k), str))
                if words.strip():
                    parts.append({"type": "thinking", "thinking": words})
        text = "\n".join(_texts(record.get("content")))
        if text.strip() and text.strip() != SNAPSHOT_ACK:
            parts.append({"type": "text", "text": text})
        results: list[Message] = []
        for call in record.get("toolCalls") or []:
            if not isinstance(call, dict):
                continue
            call_id, name = call.get("id"), call.get("name")
            parts.append({"type": "toolCall", "id": call_id, "name": name, "arguments": call.get("args")})
            if "result" in call and call.get("result") is not None:
                result = self._base(record, "toolResult", f":{call_id}")
                if isinstance(call_id, str):
                    result["toolCallId"] = call_id
                if isinstance(name, str):
                    result["toolName"] = name
                result["content"] = _result_parts(call.get("result"))
                result["isError"] = call.get("status") == "error"
                results.append(result)
        if parts:
            msg = {**self._base(record, "assistant"), "content": parts}
            if isinstance(record.get("model"), str):
                msg["model"] = record["model"]
            self.messages.append(msg)
        self.messages.extend(results)


def to_messages(records: Iterable[dict[str, Any]]) -> list[Message]:
    builder = _Builder()
    for record in replay(records):
        builder.add(record)
    return builder.messages


def read_transcript(path: Path, tail_bytes: int | None = None) -> list[Message]:
    """A Gemini CLI session file as Pi-shaped messages, oldest first.

    With ``tail_bytes`` only the end of a JSONL file is replayed (recall needs the last turns); a
    ``$set`` that rewrote the list before that window is then simply not seen.
    """
    lines = read_lines(path, tail_bytes)
    if not lines and path.suffix == ".json":
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        lines = [data] if isinstance(data, dict) else []
    return to_messages(lines)
