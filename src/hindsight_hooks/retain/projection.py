"""The retain projection (docs/retain.md#projection): the JSON form of the delta that becomes memory.

Memory should hold what was said and done, not transport noise: the projection keeps the
configured content kinds, drops recursive memory-tool traffic and noisy tool output through the
tool filters, never carries image bytes, and turns epoch-ms timestamps into ISO strings the
memory engine can read. The result is a JSON array of messages — never a summary.

Pure: no I/O, no mutation of the input. Redaction is the job builder's (docs/retain.md#jobs).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, Literal

from ..config_model import RetainConfig
from ..hooks.messages import Message, message_text
from ..timefmt import iso_from_ms
from ..timing import now_ms as _now_ms
from .echo_guard import scrub_value
from .injected import is_injected

ToolResultPolicy = Literal["errors-only", "summary", "content"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ELLIPSIS = "…"


def _own_time(value: Any) -> str | None:
    """A message's own time: epoch ms → ISO, a non-empty string kept as the timestamp it is;
    ``None`` when it has none."""
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return iso_from_ms(int(value // 1))
        except (OverflowError, ValueError):
            pass  # NaN, infinities, years beyond 9999: treat as missing
    return None


def _timestamp(value: Any, now: int) -> str:
    """The message's own time, else ``now``."""
    own = _own_time(value)
    return own if own is not None else iso_from_ms(now)


def _copy(value: Any) -> Any:
    """A deep copy of JSON-shaped data (dicts and lists rebuilt, leaves shared: they are immutable)."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_copy(v) for v in value]
    return value


def _is_text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _image_placeholder(part: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "image"}
    mime = part.get("mimeType")
    if isinstance(mime, str):
        out["mimeType"] = mime
    out["omitted"] = True
    return out


def _without_images(content: Any) -> Any:
    """Copy of ``content`` with every top-level image part replaced by its placeholder."""
    if not isinstance(content, list):
        return _copy(content)
    return [
        _image_placeholder(part) if isinstance(part, dict) and part.get("type") == "image" else _copy(part)
        for part in content
    ]


def _tool_name(value: Any) -> str:
    return value if isinstance(value, str) else ""


class _Rules:
    """The config, read once per ``project`` call."""

    __slots__ = (
        "call_filter",
        "result_filter",
        "result_modes",
        "strip",
        "summary_max",
        "user_text",
        "want_text",
        "want_thinking",
        "want_tool_call",
    )

    def __init__(self, cfg: RetainConfig, policy: ToolResultPolicy | None, summary_max: int) -> None:
        self.user_text = "text" in cfg.content.user
        assistant = set(cfg.content.assistant)
        self.want_text = "text" in assistant
        self.want_thinking = "thinking" in assistant
        self.want_tool_call = "toolCall" in assistant
        if policy is None:
            self.result_modes: frozenset[str] = frozenset(cfg.content.tool_result)
        elif policy == "errors-only":
            self.result_modes = frozenset({"error"})
        elif policy == "summary":
            self.result_modes = frozenset({"error", "summary"})
        elif policy == "content":
            self.result_modes = frozenset({"error", "content"})
        else:
            raise ValueError(f"unknown tool-result policy {policy!r}")
        if summary_max < 0:
            raise ValueError("summary_max_chars must be >= 0")
        self.summary_max = summary_max
        self.call_filter = cfg.tool_filter.tool_call
        self.result_filter = cfg.tool_filter.tool_result
        self.strip = [*cfg.strip.message, *cfg.strip.top_level]


def _user(msg: Message, rules: _Rules, now: int) -> dict[str, Any] | None:
    if not rules.user_text:
        return None
    content = msg.get("content")
    kept: Any
    if isinstance(content, str):
        kept = content if _is_text(content) else None
    elif isinstance(content, list):
        parts: list[dict[str, Any]] = []
        for part in content:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text" and _is_text(part.get("text")):
                parts.append(_copy(part))
            elif kind == "image":
                parts.append(_image_placeholder(part))
        kept = parts or None
    else:
        kept = None
    if kept is None:
        return None
    return {"role": "user", "timestamp": _timestamp(msg.get("timestamp"), now), "content": kept}


def _assistant(msg: Message, rules: _Rules, now: int) -> dict[str, Any] | None:
    content = msg.get("content")
    kept: Any
    if isinstance(content, str):
        kept = content if rules.want_text and _is_text(content) else None
    elif isinstance(content, list):
        parts: list[dict[str, Any]] = []
        for part in content:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text":
                if rules.want_text and _is_text(part.get("text")):
                    parts.append(_copy(part))
            elif kind == "thinking":
                # Only the reasoning text: signatures are opaque provider blobs, useless as memory.
                if rules.want_thinking and _is_text(part.get("thinking")):
                    parts.append({"type": "thinking", "thinking": part["thinking"]})
            elif kind == "toolCall" and rules.want_tool_call and rules.call_filter.allows(_tool_name(part.get("name"))):
                parts.append(
                    {
                        "type": "toolCall",
                        "id": part.get("id"),
                        "name": part.get("name"),
                        "arguments": _copy(part.get("arguments")),
                    }
                )
        kept = parts or None
    else:
        kept = None
    if kept is None:
        return None
    out: dict[str, Any] = {"role": "assistant", "timestamp": _timestamp(msg.get("timestamp"), now), "content": kept}
    for key in ("model", "stopReason"):
        if msg.get(key) is not None:
            out[key] = msg[key]
    return out


def _tool_result(msg: Message, rules: _Rules, now: int) -> dict[str, Any] | None:
    raw_name = msg.get("toolName")
    if not rules.result_filter.allows(_tool_name(raw_name)):
        return None
    timestamp = _timestamp(msg.get("timestamp"), now)
    if msg.get("isError"):
        if "error" not in rules.result_modes:
            return None
        return _result_shape(raw_name, timestamp, True, message_text(msg))
    if "content" in rules.result_modes:
        out = {k: _copy(v) for k, v in msg.items()}
        out["timestamp"] = timestamp
        if "content" in out:
            out["content"] = _without_images(msg.get("content"))
        return out
    if "summary" in rules.result_modes:
        text = message_text(msg)
        if len(text) > rules.summary_max:
            text = text[: rules.summary_max] + _ELLIPSIS
        return _result_shape(raw_name, timestamp, False, text)
    return None


def _result_shape(name: Any, timestamp: str, is_error: bool, text: str) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "toolResult", "timestamp": timestamp}
    if isinstance(name, str):
        out["toolName"] = name
    out["isError"] = is_error
    out["content"] = text
    return out


def _other(msg: Message, now: int) -> dict[str, Any]:
    """Other roles are copied as they are; only the timestamp rule and image omission apply."""
    out = {k: _copy(v) for k, v in msg.items()}
    out["timestamp"] = _timestamp(msg.get("timestamp"), now)
    if "content" in out:
        out["content"] = _without_images(msg.get("content"))
    return out


def _blank_part(part: Any) -> bool:
    if not isinstance(part, dict):
        return False
    kind = part.get("type")
    if kind == "text":
        return not _is_text(part.get("text"))
    if kind == "thinking":
        return not _is_text(part.get("thinking"))
    return False


def _without_echo(projected: dict[str, Any], known: frozenset[str]) -> dict[str, Any] | None:
    """``projected`` with recalled memory quoted back taken out of every string (ADR-065);
    ``None`` when nothing of the message is left."""
    out: dict[str, Any] = scrub_value(projected, known)
    if out == projected:
        return projected
    content = out.get("content")
    if isinstance(content, str):
        return out if content.strip() else None
    if isinstance(content, list):
        parts = [p for p in content if not _blank_part(p)]
        if not parts:
            return None
        out["content"] = parts
    return out


def project(
    delta: Iterable[Message],
    cfg: RetainConfig,
    *,
    now_ms: int | None = None,
    tool_result_policy: ToolResultPolicy | None = None,
    summary_max_chars: int = 500,
    injected_lines: frozenset[str] = frozenset(),
    undated: bool = False,
) -> list[dict[str, Any]]:
    """Project ``delta`` per docs/retain.md#projection; messages left empty are dropped.

    ``tool_result_policy`` (the import path, docs/import.md) replaces ``retain.content.tool_result``:
    ``errors-only`` keeps only failed results, ``summary`` cuts successful ones to
    ``summary_max_chars`` + ``…``, ``content`` keeps them; failed results are always kept.
    Injected recall blocks are dropped here too, as a second line of defence against echo,
    and so is our block quoted inside any message, whatever its role: complete blocks (raw or
    HTML-escaped), the block's fixed lines, and lines whose hash is in ``injected_lines`` (the
    session's record of what it injected, :mod:`.echo_guard`, ADR-065).

    ``undated``: a message without a time of its own keeps none, instead of taking ``now_ms``. An
    import passes it when the session says no time either: a made-up time must be stable (the
    content is hashed), and the only stable one, 0, would date the memory 1970 (ADR 207).
    """
    now = _now_ms() if now_ms is None else now_ms
    rules = _Rules(cfg, tool_result_policy, summary_max_chars)
    out: list[dict[str, Any]] = []
    for msg in delta:
        if not isinstance(msg, dict) or is_injected(msg):
            continue
        role = msg.get("role")
        projected: dict[str, Any] | None
        if role == "user":
            projected = _user(msg, rules, now)
        elif role == "assistant":
            projected = _assistant(msg, rules, now)
        elif role == "toolResult":
            projected = _tool_result(msg, rules, now)
        else:
            projected = _other(msg, now)
        if projected is None:
            continue
        if undated and _own_time(msg.get("timestamp")) is None:
            projected.pop("timestamp", None)
        for key in rules.strip:  # strip.message, then strip.top_level
            projected.pop(key, None)
        projected = _without_echo(projected, injected_lines)
        if projected is not None:
            out.append(projected)
    return out


def _json_fallback(value: Any) -> Any:
    """Non-JSON values break the host contract; name their type instead of failing the retain."""
    return f"<{type(value).__qualname__}>"


def projection_json(projected: list[dict[str, Any]]) -> str:
    """The retained content: ``json.dumps(projected, indent=2, ensure_ascii=False)``."""
    return json.dumps(projected, indent=2, ensure_ascii=False, default=_json_fallback)


__all__ = ["ToolResultPolicy", "project", "projection_json"]
