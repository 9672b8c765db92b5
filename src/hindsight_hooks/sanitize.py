"""Making host-supplied data safe to encode: no lone surrogates, no unbounded nesting.

Messages and tool arguments come from the host, and two things in them broke every later
step. A lone surrogate (``"\\ud800"``, what a bad UTF-16 decode leaves behind) is a valid
Python ``str`` but not UTF-8: orjson refuses it, SQLite refuses it, ``str.encode`` raises, so
one such message failed the turn's recall and stopped automatic retain for the rest of the
session (the cursor never moved past a job that could not be written). A structure nested
thousands of levels deep raised ``RecursionError`` in every recursive walker (copies,
projection, JSON encoders).

:func:`sanitize` is applied where such data enters the plugin (the recall input, the retain
delta before projection, every queue item, every tool argument). It is an iterative walk that
replaces each lone surrogate with U+FFFD (a split pair is joined back into its character) and
a container nested deeper than :data:`MAX_DEPTH` with :data:`TOO_DEEP`, and returns the very
same objects where nothing had to change.
"""

from __future__ import annotations

from typing import Any, TypeVar

import orjson

_T = TypeVar("_T")

MAX_DEPTH = 100
"""Containers kept per path from the root. Well above any real message (a few levels of
parts and tool arguments), well below the ~1000 frames recursive walkers may use."""

TOO_DEEP = "[omitted: nested more than 100 levels deep]"
"""What replaces a container beyond :data:`MAX_DEPTH` (a clear, content-free skip)."""


def has_lone_surrogate(text: str) -> bool:
    """Whether ``text`` cannot be encoded as UTF-8 (it holds a surrogate code point)."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def scrub_text(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD; the same object when it has none."""
    if not has_lone_surrogate(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


class _Frame:
    """One container being rebuilt: its children are visited one at a time."""

    __slots__ = ("changed", "depth", "original", "out", "scrub", "values")

    def __init__(self, original: dict[Any, Any] | list[Any] | tuple[Any, ...], depth: int, scrub: bool) -> None:
        self.original = original
        self.scrub = scrub
        self.depth = depth
        self.values: list[Any] = list(original.values()) if isinstance(original, dict) else list(original)
        self.out: list[Any] = []
        self.changed = False

    def put(self, value: Any) -> None:
        self.changed = self.changed or value is not self.values[len(self.out)]
        self.out.append(value)

    def build(self) -> Any:
        original = self.original
        if isinstance(original, dict):
            keys = [scrub_text(k) if self.scrub and isinstance(k, str) else k for k in original]
            if not self.changed and all(a is b for a, b in zip(keys, original, strict=True)):
                return original
            return dict(zip(keys, self.out, strict=True))
        if not self.changed:
            return original
        return tuple(self.out) if isinstance(original, tuple) else self.out


def sanitize(value: _T, max_depth: int = MAX_DEPTH, *, scrub: bool = True) -> _T:
    """``value`` with lone surrogates replaced and too-deep containers cut (never recurses).

    Dicts, lists and tuples are walked; other values are left as they are. Unchanged parts are
    returned as the same objects, so a clean value costs one walk and no copy. ``scrub=False``
    only cuts the nesting (strings are kept as they are).
    """
    if isinstance(value, str):
        return scrub_text(value) if scrub else value  # type: ignore[return-value]
    if not isinstance(value, dict | list | tuple):
        return value
    stack = [_Frame(value, 1, scrub)]
    while True:
        frame = stack[-1]
        if len(frame.out) < len(frame.values):
            child = frame.values[len(frame.out)]
            if isinstance(child, dict | list | tuple):
                if frame.depth >= max_depth:
                    frame.put(TOO_DEEP)
                else:
                    stack.append(_Frame(child, frame.depth + 1, scrub))
            else:
                frame.put(scrub_text(child) if scrub and isinstance(child, str) else child)
            continue
        stack.pop()
        built = frame.build()
        if not stack:
            return built  # type: ignore[no-any-return]
        stack[-1].put(built)


def sanitize_if_needed(value: _T) -> _T:
    """:func:`sanitize`, skipped when orjson encodes ``value`` as it is.

    orjson refuses lone surrogates and nesting beyond 255 levels in one C-speed pass, so the
    common, clean transcript costs no Python walk. (A value between ``MAX_DEPTH`` and 255
    levels passes unchanged: still far from the recursion limit.)
    """
    try:
        orjson.dumps(value)
    except TypeError:
        return sanitize(value)
    return value


__all__ = ["MAX_DEPTH", "TOO_DEEP", "has_lone_surrogate", "sanitize", "sanitize_if_needed", "scrub_text"]
