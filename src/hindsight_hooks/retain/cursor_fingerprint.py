"""What the retain cursor hashes: a message's fingerprint and id, and the hash chains over them (ADR-011).

Why apart from the cursor's logic: these are pure functions of the message, and the spec fixes
their bytes (docs/retain.md#cursor); a stored cursor is only readable as long as they never
change, so they sit where nothing else is edited alongside them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import orjson

from ..hooks.messages import Message

if TYPE_CHECKING:
    from .cursor_position import CursorState


_FINGERPRINT_KEYS = ("id", "role", "timestamp", "content", "toolName", "isError", "model", "stopReason")


_EMPTY_HASH = ""


_dumps = orjson.dumps


_sha256 = hashlib.sha256


def _opaque(value: Any) -> Any:
    """Stand-in for values that are not JSON (a host broke the contract): stable, content-free."""
    if isinstance(value, bytes | bytearray | memoryview):
        return f"<bytes:{hashlib.sha256(bytes(value)).hexdigest()}>"
    if isinstance(value, set | frozenset):
        return sorted(canonical_json(v).decode("utf-8", "surrogatepass") for v in value)
    return f"<{type(value).__qualname__}>"


def canonical_json(value: Any) -> bytes:
    """Compact UTF-8 JSON, keys in insertion order (ADR-011).

    orjson is ~4x faster than ``json.dumps`` and byte-identical to
    ``json.dumps(value, separators=(",", ":"), ensure_ascii=False)`` for strings, integers,
    booleans, null, lists and str-keyed dicts; it differs only in the spelling of tiny floats
    (``0.00001`` vs ``1e-05``) and non-finite floats (``null``). Values orjson refuses (ints
    beyond 64 bits, non-string keys, lone surrogates) fall back to ``json.dumps``; either way the
    bytes are a pure function of the value, which is all a fingerprint needs.
    """
    try:
        return _dumps(value, default=_opaque)
    except TypeError:
        return _json_fallback(value)


def _json_fallback(value: Any) -> bytes:
    # Nesting beyond ``MAX_DEPTH`` is cut first (json.dumps recurses, and whether it overflows
    # would depend on the caller's stack): still a pure function of the value, which is all a
    # fingerprint needs. Surrogates are kept (``surrogatepass``) so earlier fingerprints hold.
    from ..sanitize import sanitize

    shallow = sanitize(value, scrub=False)
    text = json.dumps(shallow, separators=(",", ":"), ensure_ascii=False, default=_opaque, skipkeys=True)
    return text.encode("utf-8", "surrogatepass")


def fingerprint(msg: Message) -> str:
    """sha256 of the canonical JSON of ``id, role, timestamp, content, toolName, isError, model,
    stopReason`` in that order; absent and ``None`` keys are omitted."""
    # Hot path (runs for every tail message on every agent_end): canonical_json inlined.
    if isinstance(msg, dict):
        get = msg.get
        fields = {key: value for key in _FINGERPRINT_KEYS if (value := get(key)) is not None}
    else:
        fields = {"content": msg}
    try:
        data = _dumps(fields, default=_opaque)
    except TypeError:
        data = _json_fallback(fields)
    return _sha256(data).hexdigest()


def message_id(msg: Message) -> str:
    """The id if it is a string; ``str(id)`` for an int (not a bool); otherwise ``""``."""
    value = msg.get("id") if isinstance(msg, dict) else None
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return ""


def _step(h: str, value: str) -> str:
    return hashlib.sha256((h + value).encode("utf-8", "surrogatepass")).hexdigest()


def chain(values: Sequence[str], through: int) -> str:
    """``h=""``; for each ``i`` in ``0..through``: ``h=sha256(h+values[i])`` (stops at the end)."""
    h = _EMPTY_HASH
    for value in values[: max(0, through + 1)]:
        h = _step(h, value)
    return h


def chain_extend(h: str, values: Sequence[str]) -> str:
    """Continue a chain: ``chain(a+b, len(a+b)-1) == chain_extend(chain(a, len(a)-1), b)``."""
    for value in values:
        h = _step(h, value)
    return h


class FingerprintMemo:
    """Fingerprints by object identity, for the duration of ONE agent_end call.

    Filtering, ``retained_through_index`` and ``advance`` look at the same message objects;
    sharing a memo means each message is serialised and hashed at most once per call, and a
    tail that ``filter_new`` found intact is not compared again by ``advance``. The memo holds a
    reference to every object it keys by ``id()``, so an id cannot be reused while it lives.
    Do not keep one across calls: a host may edit a message object in place between turns.
    """

    __slots__ = ("_fps", "_intact")

    def __init__(self) -> None:
        self._fps: dict[int, tuple[Message, str]] = {}
        self._intact: dict[tuple[int, int, int, str, str], Sequence[Message]] = {}

    def fp(self, msg: Message) -> str:
        key = id(msg)
        hit = self._fps.get(key)
        if hit is not None and hit[0] is msg:
            return hit[1]
        value = fingerprint(msg)
        self._fps[key] = (msg, value)
        return value

    @staticmethod
    def _tail_key(msgs: Sequence[Message], cursor: CursorState) -> tuple[int, int, int, str, str]:
        last = cursor.fingerprints[-1] if cursor.fingerprints else ""
        return (id(msgs), cursor.index, cursor.tail_start, cursor.chain_hash, last)

    def mark_intact(self, msgs: Sequence[Message], cursor: CursorState) -> None:
        """Record that ``msgs`` carries ``cursor``'s whole tail at its positions."""
        self._intact[self._tail_key(msgs, cursor)] = msgs

    def is_intact(self, msgs: Sequence[Message], cursor: CursorState) -> bool:
        return self._intact.get(self._tail_key(msgs, cursor)) is msgs

    def __len__(self) -> int:
        return len(self._fps)
