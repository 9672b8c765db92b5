"""OpenAI-style chat messages <-> our Pi-shaped messages: the one converter every Python adapter uses.

Most Python agent frameworks (Hermes Agent, the OpenAI Agents SDK, LangChain's ``convert_to_openai_messages``,
pydantic-ai's OpenAI mapping) can show their history as OpenAI Chat Completions messages. Our hooks read the Pi
shape (:mod:`hindsight_hooks.hooks.messages`). Converting at one place keeps every adapter's idea of "what was
said" the same, so memory retained from Hermes and from LangChain reads alike.

API (all pure; the input is never modified; plain dicts, or objects with ``model_dump()`` such as the ``openai``
SDK's typed messages):

- :func:`to_messages` (OpenAI -> Pi). ``system``/``developer`` stay messages of that role; ``user`` keeps its
  content (string, or parts: ``text``; a base64 ``image_url`` data URL becomes a Pi ``image`` part; other parts
  pass through); ``assistant`` becomes ``content: [text parts..., toolCall parts...]`` with each call's JSON
  ``arguments`` decoded to a dict (kept as the raw string when it is not a JSON object, so a caller can answer
  with an error rather than run a tool on guessed input); ``tool`` becomes ``toolResult`` with ``toolCallId``,
  ``toolName`` (from the assistant call it answers, else its ``name``) and text parts. Keys the mapping does not
  use (``name``, ``refusal``, ``audio``, vendor fields ...) are kept under ``msg["openai"]["extra"]`` and the
  original content form under ``msg["openai"]["form"]``, so that :func:`to_openai` gives back the same dicts.
  No ``timestamp`` is invented: the retain cursor fingerprints messages, and a fresh "now" on every conversion
  would make the whole history look new at each turn (pass ``timestamp_ms`` to stamp them all).
- :func:`to_openai` (Pi -> OpenAI): the inverse. Pi ``custom`` messages (our injected recall block is a user
  message with ``customType``) become ``user`` messages; ``thinking`` parts and Pi-only keys (``timestamp``,
  ``model``, ``usage``, ``details``, ...) are dropped; an assistant message with nothing to send is left out.
- :func:`for_retain` (OpenAI -> Pi, for ``agent_end``): :func:`to_messages`, then without ``system``/``developer``
  messages (instructions, not conversation), without our injected block messages, and with every complete
  ``<hindsight-memory>`` block (raw or HTML-escaped, as some hosts echo it) cut out of every text; messages left
  with no content are dropped.

Round trip: ``to_openai(to_messages(m)) == m`` for OpenAI messages whose call arguments are JSON objects and whose
``tool`` messages answer an earlier call; ``to_messages(to_openai(p)) == p`` for any ``p`` made by
:func:`to_messages`. Tests: ``tests/hosts/test_openai_messages.py`` (a hypothesis property for both directions).

Kept free of heavy imports: block stripping loads the plugin's predicate only when :func:`for_retain` runs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from ..hooks.messages import Message

_O = TypeVar("_O")

OpenAIMessage = dict[str, Any]
"""One Chat Completions message: ``{"role": "system"|"developer"|"user"|"assistant"|"tool", ...}``."""

META_KEY = "openai"
"""The Pi-message key holding what only the OpenAI form needs (``extra`` keys, content ``form``)."""

_DATA_URL = re.compile(r"data:([A-Za-z0-9.+/-]+);base64,([A-Za-z0-9+/=]*)\Z")
_USED_KEYS = {
    "system": ("role", "content"),
    "developer": ("role", "content"),
    "user": ("role", "content"),
    "assistant": ("role", "content", "tool_calls"),
    "tool": ("role", "content", "tool_call_id"),
}
_INSTRUCTION_ROLES = ("system", "developer")
_ABSENT = "absent"


def _as_dict(item: Any) -> dict[str, Any] | None:
    """A plain dict for a dict-like or pydantic-like message, else ``None`` (skipped)."""
    if isinstance(item, Mapping):
        return dict(item)
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        value = dump(exclude_none=True)
        return dict(value) if isinstance(value, Mapping) else None
    return None


def _copy(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_copy(v) for v in value]
    return value


# --------------------------------------------------------------------------- parts


def _user_part_to_pi(part: Any) -> Any:
    """A base64 ``image_url`` data URL with nothing else becomes a Pi image; everything else is copied."""
    if isinstance(part, Mapping) and part.get("type") == "image_url" and set(part) == {"type", "image_url"}:
        inner = part.get("image_url")
        if isinstance(inner, Mapping) and set(inner) == {"url"} and isinstance(inner.get("url"), str):
            match = _DATA_URL.match(inner["url"])
            if match:
                return {"type": "image", "data": match.group(2), "mimeType": match.group(1)}
    return _copy(part)


def _user_part_to_openai(part: Any) -> Any:
    if isinstance(part, Mapping) and part.get("type") == "image" and isinstance(part.get("data"), str):
        mime = part.get("mimeType") if isinstance(part.get("mimeType"), str) else "image/png"
        return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{part['data']}"}}
    return _copy(part)


def _parts_to_pi(content: Any) -> list[Any]:
    """Assistant/tool content as Pi parts: a string is one text part; a list is copied; null is none."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list | tuple):
        return [_copy(p) for p in content]
    return []


def _parts_to_openai(parts: list[Any], form: Any, empty: Any = None) -> Any:
    """The OpenAI content for Pi parts: one text part is a string, none is ``empty``, else the list (or as
    ``form``)."""
    if form == "parts":
        return parts
    if form == "null":
        return None
    if form == "string":
        return "".join(p.get("text", "") for p in parts if isinstance(p, Mapping))
    if not parts:
        return empty
    only = parts[0] if len(parts) == 1 else None
    if isinstance(only, Mapping) and set(only) == {"type", "text"} and only["type"] == "text":
        text = only["text"]
        if isinstance(text, str):
            return text
    return parts


def _form_of(original: dict[str, Any], parts: list[Any], empty: Any) -> str | None:
    """How to spell the content on the way back, when the default would spell it differently."""
    if "content" not in original:
        return _ABSENT
    if _parts_to_openai(parts, None, empty) == original["content"]:
        return None
    content = original["content"]
    if content is None:
        return "null"
    if isinstance(content, list | tuple):
        return "parts"
    return "string"


# --------------------------------------------------------------------------- tool calls


def _decode_arguments(raw: Any) -> Any:
    """Arguments as a dict when they are a JSON object; otherwise the raw value, untouched."""
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            return raw
        return value if isinstance(value, dict) else raw
    return _copy(raw)


def _encode_arguments(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)


def _call_to_pi(call: Any, index: int) -> dict[str, Any]:
    call = _as_dict(call) or {}
    raw_fn = call.get("function")
    fn: dict[str, Any] = dict(raw_fn) if isinstance(raw_fn, Mapping) else {}
    raw_args = fn.get("arguments")
    part: dict[str, Any] = {
        "type": "toolCall",
        "id": str(call["id"]) if call.get("id") is not None else f"call_{index}",
        "name": str(fn.get("name", "")),
        "arguments": _decode_arguments(raw_args),
    }
    wire: dict[str, Any] = {}
    if isinstance(raw_args, str) and _encode_arguments(part["arguments"]) != raw_args:
        wire["arguments"] = raw_args  # spacing / key order as the model wrote them
    extra_call = {k: _copy(v) for k, v in call.items() if k not in ("id", "type", "function")}
    if call.get("type", "function") != "function":
        extra_call["type"] = call.get("type")
    if "type" not in call:
        wire["noType"] = True
    if call.get("id") is None:
        wire["noId"] = True
    extra_fn = {k: _copy(v) for k, v in fn.items() if k not in ("name", "arguments")}
    if extra_call:
        wire["extra"] = extra_call
    if extra_fn:
        wire["fnExtra"] = extra_fn
    if "arguments" not in fn:
        wire["noArguments"] = True
    if wire:
        part[META_KEY] = wire
    return part


def _call_to_openai(part: Mapping[str, Any]) -> dict[str, Any]:
    raw_wire = part.get(META_KEY)
    wire: Mapping[str, Any] = raw_wire if isinstance(raw_wire, Mapping) else {}
    arguments = part.get("arguments")
    raw = wire.get("arguments")
    if isinstance(raw, str) and _decode_arguments(raw) == arguments:
        encoded = raw
    else:
        encoded = _encode_arguments(arguments)
    fn: dict[str, Any] = {"name": str(part.get("name", ""))}
    if not wire.get("noArguments"):
        fn["arguments"] = encoded
    fn.update(_copy(wire.get("fnExtra") or {}))
    call: dict[str, Any] = {}
    if not wire.get("noId"):
        call["id"] = str(part.get("id", ""))
    if not wire.get("noType"):
        call["type"] = "function"
    call["function"] = fn
    call.update(_copy(wire.get("extra") or {}))
    return call


# --------------------------------------------------------------------------- messages


def _meta(original: dict[str, Any], role: str, form: str | None) -> dict[str, Any]:
    extra = {k: _copy(v) for k, v in original.items() if k not in _USED_KEYS[role]}
    meta: dict[str, Any] = {}
    if extra:
        meta["extra"] = extra
    if form is not None:
        meta["form"] = form
    return meta


def _one_to_pi(original: dict[str, Any], names: dict[str, str]) -> Message:
    role = original.get("role")
    msg: Message
    form: str | None = None
    if role in _INSTRUCTION_ROLES or role == "user":
        assert isinstance(role, str)
        content = original.get("content")
        if role == "user" and isinstance(content, list | tuple):
            msg = {"role": role, "content": [_user_part_to_pi(p) for p in content]}
        else:
            msg = {"role": role, "content": _copy(content)}
        if "content" not in original:
            form = _ABSENT
    elif role == "assistant":
        parts = _parts_to_pi(original.get("content"))
        form = _form_of(original, parts, None)
        calls = original.get("tool_calls")
        call_parts = [_call_to_pi(c, i) for i, c in enumerate(calls if isinstance(calls, list | tuple) else [])]
        for call in call_parts:
            names[call["id"]] = call["name"]
        msg = {"role": "assistant", "content": parts + call_parts}
        if not parts and not call_parts and form is None:
            form = "null"  # said explicitly, so to_openai keeps it (it drops Pi's empty, aborted replies)
        if "tool_calls" in original and not isinstance(calls, list | tuple):
            msg[META_KEY] = {"calls": _copy(calls)}
        elif isinstance(calls, list | tuple) and not calls:
            msg[META_KEY] = {"calls": []}
    elif role == "tool":
        parts = _parts_to_pi(original.get("content"))
        form = _form_of(original, parts, "")
        call_id = original.get("tool_call_id")
        name = original.get("name")
        call_key = str(call_id) if call_id is not None else ""
        msg = {
            "role": "toolResult",
            "toolCallId": call_key,
            "toolName": names.get(call_key, name if isinstance(name, str) else ""),
            "content": parts,
            "isError": False,
        }
        if call_id is None:
            msg[META_KEY] = {"noCallId": True}
    else:
        copied: Message = _copy(original)
        return copied  # a role we do not map (legacy "function", vendor roles): kept as it is
    meta = {**msg.get(META_KEY, {}), **_meta(original, role, form)}
    if meta:
        msg[META_KEY] = meta
    return msg


def to_messages(messages: Iterable[Any], *, timestamp_ms: int | None = None) -> list[Message]:
    """OpenAI Chat Completions messages -> Pi-shaped messages (see the module docstring)."""
    names: dict[str, str] = {}
    out: list[Message] = []
    for item in messages:
        original = _as_dict(item)
        if original is None:
            continue
        msg = _one_to_pi(original, names)
        if timestamp_ms is not None:
            msg["timestamp"] = timestamp_ms
        out.append(msg)
    return out


def _restore(out: OpenAIMessage, meta: Mapping[str, Any]) -> OpenAIMessage:
    extra = meta.get("extra")
    if isinstance(extra, Mapping):
        for key, value in extra.items():
            out.setdefault(key, _copy(value))
    return out


def _one_to_openai(msg: Message) -> OpenAIMessage | None:
    role = msg.get("role")
    raw_meta = msg.get(META_KEY)
    meta: Mapping[str, Any] = raw_meta if isinstance(raw_meta, Mapping) else {}
    form = meta.get("form")
    out: OpenAIMessage
    if role in _INSTRUCTION_ROLES:
        out = {"role": role}
        if form != _ABSENT:
            out["content"] = _copy(msg.get("content"))
    elif role in ("user", "custom"):
        content = msg.get("content")
        out = {"role": "user"}
        if form != _ABSENT:
            out["content"] = [_user_part_to_openai(p) for p in content] if isinstance(content, list) else _copy(content)
    elif role == "assistant":
        content = msg.get("content")
        items = content if isinstance(content, list) else _parts_to_pi(content)
        parts = [p for p in items if not (isinstance(p, Mapping) and p.get("type") in ("toolCall", "thinking"))]
        parts = [_copy(p) for p in parts]
        calls = [_call_to_openai(p) for p in items if isinstance(p, Mapping) and p.get("type") == "toolCall"]
        if not parts and not calls and not meta:
            return None  # an aborted/failed reply: the API rejects empty assistant turns
        out = {"role": "assistant"}
        if form != _ABSENT:
            out["content"] = _parts_to_openai(parts, form)
        if "calls" in meta:
            out["tool_calls"] = _copy(meta["calls"])
        elif calls:
            out["tool_calls"] = calls
    elif role == "toolResult":
        content = msg.get("content")
        parts = [_copy(p) for p in content] if isinstance(content, list) else _parts_to_pi(content)
        out = {"role": "tool"}
        if form != _ABSENT:
            out["content"] = _parts_to_openai(parts, form, "")
        if not meta.get("noCallId"):
            out["tool_call_id"] = str(msg.get("toolCallId", ""))
    else:
        copied: OpenAIMessage = _copy(msg)
        copied.pop("timestamp", None)
        return copied
    return _restore(out, meta)


def to_openai(messages: Iterable[Message]) -> list[OpenAIMessage]:
    """Pi-shaped messages -> OpenAI Chat Completions messages (see the module docstring)."""
    out: list[OpenAIMessage] = []
    for msg in messages:
        if not isinstance(msg, Mapping):
            continue
        wire = _one_to_openai(dict(msg))
        if wire is not None:
            out.append(wire)
    return out


# --------------------------------------------------------------------------- retain


def _strip_content(content: Any, strip: Any) -> Any:
    if isinstance(content, str):
        return strip(content)
    if isinstance(content, list):
        kept: list[Any] = []
        for part in content:
            if isinstance(part, Mapping) and part.get("type") == "text" and isinstance(part.get("text"), str):
                text = strip(part["text"])
                if text.strip():
                    kept.append({**part, "text": text})
            else:
                kept.append(part)
        return kept
    return content


def _has_content(content: Any) -> bool:
    if isinstance(content, str):
        return bool(content.strip())
    return isinstance(content, list) and bool(content)


def _without_meta(msg: Message) -> Message:
    """The message without the round-trip bookkeeping (memory has no use for wire spellings)."""
    out = {k: v for k, v in msg.items() if k != META_KEY}
    content = out.get("content")
    if isinstance(content, list):
        out["content"] = [
            {k: v for k, v in p.items() if k != META_KEY} if isinstance(p, Mapping) else p for p in content
        ]
    return out


def for_retain(messages: Iterable[Any], *, timestamp_ms: int | None = None) -> list[Message]:
    """What an adapter hands ``agent_end``: the conversation without instructions and without our block."""
    from ..retain.injected import is_injected, strip_injected_blocks

    out: list[Message] = []
    for msg in to_messages(messages, timestamp_ms=timestamp_ms):
        if msg.get("role") in _INSTRUCTION_ROLES or is_injected(msg):
            continue
        content = msg.get("content")
        stripped = _strip_content(content, strip_injected_blocks)
        if stripped != content:
            if not _has_content(stripped) and msg.get("role") != "toolResult":
                continue
            msg = {**msg, "content": stripped}
        out.append(_without_meta(msg))
    return out


def for_recall(chat: Sequence[Mapping[str, Any]], origins: Sequence[_O]) -> tuple[list[Message], list[_O]]:
    """What an adapter hands ``context``: a framework's history (as OpenAI messages, with where each came
    from) as the Pi-shaped conversation without ``system``/``developer`` messages, and the origins kept."""
    keep = [k for k, m in enumerate(chat) if m.get("role") not in _INSTRUCTION_ROLES]
    return to_messages([chat[k] for k in keep]), [origins[k] for k in keep]


def strip_block(text: str) -> str:
    """``text`` without our complete recall blocks (raw or HTML-escaped); for hosts that hand us bare strings."""
    from ..retain.injected import strip_injected_blocks

    return strip_injected_blocks(text)


__all__ = ["META_KEY", "OpenAIMessage", "for_recall", "for_retain", "strip_block", "to_messages", "to_openai"]
