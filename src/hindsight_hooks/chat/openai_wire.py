"""Pi agent messages <-> OpenAI chat-completions wire shapes.

The chat host keeps its transcript in the Pi shape (so session files import as they are) and
translates only at the edge of an OpenAI-compatible request. Kept separate from the HTTP code
so the mapping can be tested on plain dicts.
"""

from __future__ import annotations

import json
import time
from typing import Any

from ..hooks import Message, message_text


def _text_of(content: Any) -> str:
    return message_text({"content": content})


def _user_content(content: Any) -> str | list[dict[str, Any]]:
    """String content stays a string; parts become OpenAI text / image_url parts."""
    if isinstance(content, str):
        return content
    parts: list[dict[str, Any]] = []
    if isinstance(content, list):
        for part in content:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "text" and isinstance(part.get("text"), str):
                parts.append({"type": "text", "text": part["text"]})
            elif part.get("type") == "image" and isinstance(part.get("data"), str):
                mime = part.get("mimeType") or "image/png"
                parts.append({"type": "image_url", "image_url": {"url": f"data:{mime};base64,{part['data']}"}})
    return parts or ""


def to_openai(messages: list[Message], system_prompt: str | None = None) -> list[dict[str, Any]]:
    """The request ``messages``. Roles the API cannot take are folded or dropped (never sent raw).

    - ``user`` and plugin-injected ``custom`` messages become user messages;
    - an assistant's ``toolCall`` parts become ``tool_calls`` (arguments JSON-encoded), its
      ``thinking`` parts are dropped, and an assistant turn with neither text nor calls (an
      aborted or failed reply) is left out, since the API rejects empty assistant turns;
    - ``toolResult`` becomes a ``tool`` message answering its call id.
    """
    out: list[dict[str, Any]] = []
    if system_prompt:
        out.append({"role": "system", "content": system_prompt})
    for msg in messages:
        role = msg.get("role")
        if role in ("user", "custom"):
            out.append({"role": "user", "content": _user_content(msg.get("content"))})
        elif role == "assistant":
            text = _text_of(msg.get("content"))
            calls = []
            for part in msg.get("content") or []:
                if isinstance(part, dict) and part.get("type") == "toolCall":
                    args = part.get("arguments")
                    calls.append(
                        {
                            "id": str(part.get("id", "")),
                            "type": "function",
                            "function": {
                                "name": str(part.get("name", "")),
                                "arguments": json.dumps(args if args is not None else {}, ensure_ascii=False),
                            },
                        }
                    )
            if not text and not calls:
                continue
            wire: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                wire["tool_calls"] = calls
            out.append(wire)
        elif role == "toolResult":
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": str(msg.get("toolCallId", "")),
                    "content": _text_of(msg.get("content")) or ("(error)" if msg.get("isError") else "(empty)"),
                }
            )
    return out


def _parse_arguments(raw: Any) -> dict[str, Any] | str:
    """Decoded tool arguments, or the raw string when the model sent something that is not a JSON object."""
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        if not raw.strip():
            return {}
        try:
            value = json.loads(raw)
        except ValueError:
            return raw
        return value if isinstance(value, dict) else raw
    return {}


_STOP_REASONS = {"stop": "stop", "length": "length", "tool_calls": "toolUse", "function_call": "toolUse"}


def from_openai(body: dict[str, Any], model: str) -> Message:
    """A Pi assistant message from a chat-completions response body.

    Arguments that are not a JSON object are kept as the raw string, so the loop can answer the
    call with an error instead of running a tool on guessed input.
    """
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ValueError("response has no choices")
    choice = choices[0]
    wire = choice.get("message")
    if not isinstance(wire, dict):
        raise ValueError("response choice has no message")
    content: list[dict[str, Any]] = []
    text = wire.get("content")
    if isinstance(text, str) and text:
        content.append({"type": "text", "text": text})
    calls = wire.get("tool_calls")
    for i, call in enumerate(calls if isinstance(calls, list) else []):
        if not isinstance(call, dict):
            continue
        raw_fn = call.get("function")
        fn: dict[str, Any] = raw_fn if isinstance(raw_fn, dict) else {}
        content.append(
            {
                "type": "toolCall",
                "id": str(call.get("id") or f"call_{i}"),
                "name": str(fn.get("name", "")),
                "arguments": _parse_arguments(fn.get("arguments")),
            }
        )
    has_calls = any(p["type"] == "toolCall" for p in content)
    finish = choice.get("finish_reason")
    stop = "toolUse" if has_calls else _STOP_REASONS.get(str(finish), "stop")
    raw_usage = body.get("usage")
    usage: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
    prompt = int(usage.get("prompt_tokens") or 0)
    completion = int(usage.get("completion_tokens") or 0)
    return {
        "role": "assistant",
        "content": content,
        "model": str(body.get("model") or model),
        "stopReason": stop,
        "usage": {
            "input": prompt,
            "output": completion,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": int(usage.get("total_tokens") or prompt + completion),
        },
        "timestamp": int(time.time() * 1000),
    }
