"""The message model: JSON-compatible dicts in the Pi agent-message shape (camelCase keys).

Messages stay plain dicts so Pi session files import as they are and unknown roles or part
types pass through untouched. Helpers here only *read* messages.
"""

from __future__ import annotations

from typing import Any

Message = dict[str, Any]
"""One agent message: ``{"role": "user"|"assistant"|"toolResult"|..., "content": ..., ...}``."""


def user_message(text: str, timestamp: int | None = None, **extra: Any) -> Message:
    """Build a user message (epoch-ms timestamp, defaulting to now)."""
    import time

    msg: Message = {"role": "user", "content": text, "timestamp": timestamp or int(time.time() * 1000)}
    msg.update(extra)
    return msg


def assistant_message(text: str, timestamp: int | None = None, model: str = "echo", **extra: Any) -> Message:
    """Build an assistant message with one text part."""
    import time

    msg: Message = {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "model": model,
        "stopReason": "stop",
        "timestamp": timestamp or int(time.time() * 1000),
    }
    msg.update(extra)
    return msg


def message_text(msg: Message) -> str:
    """Concatenate the plain text of a message (string content or text parts), newline-joined."""
    content = msg.get("content")
    if isinstance(content, str):
        return content
    parts: list[str] = []
    if isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
                parts.append(part["text"])
    return "\n".join(parts)
