"""A deep copy of JSON-shaped data that never recurses, for the ``Host``'s per-plugin copies.

``copy.deepcopy`` recurses once per nesting level, so a message nested a few thousand levels
deep (hostile or merely odd tool output) raised ``RecursionError`` out of ``Host.context`` and
``Host.agent_end`` into the agent. Messages are dicts and lists of atoms, so those are copied
here with an explicit work list: the depth costs heap, not stack. Anything else (a dict or list
subclass, a tuple, an arbitrary object a host put in breaking the contract) goes to
``copy.deepcopy`` with the same memo, so aliasing and cycles are kept exactly as ``deepcopy``
keeps them: a container seen twice is copied once, and a cycle stays a cycle.
"""

from __future__ import annotations

import copy
from typing import Any, TypeVar

_T = TypeVar("_T")

_ATOMS = frozenset({str, int, float, bool, type(None), bytes})
"""Immutable leaves: shared, as ``copy.deepcopy`` shares them."""
_MISSING = object()


def deep_copy(value: _T) -> _T:
    """A deep copy of ``value``; dicts and lists at any depth are copied without recursion.

    Raises only what ``copy.deepcopy`` raises for the non-JSON objects it is handed (which may
    still be ``RecursionError`` for a deeply nested custom object; the ``Host`` catches that).
    """
    memo: dict[int, Any] = {}
    pending: list[tuple[Any, Any]] = []  # (original container, its empty copy) still to fill

    def copy_of(obj: Any) -> Any:
        kind = type(obj)
        if kind in _ATOMS:
            return obj
        seen = memo.get(id(obj), _MISSING)
        if seen is not _MISSING:
            return seen
        if kind is list or kind is dict:
            new: Any = [] if kind is list else {}
            memo[id(obj)] = new
            pending.append((obj, new))
            return new
        return copy.deepcopy(obj, memo)

    result = copy_of(value)
    while pending:
        original, new = pending.pop()
        if type(original) is list:
            new.extend([copy_of(item) for item in original])
        else:
            for key, item in original.items():
                new[key if type(key) in _ATOMS else copy.deepcopy(key, memo)] = copy_of(item)
    return result  # type: ignore[no-any-return]


__all__ = ["deep_copy"]
