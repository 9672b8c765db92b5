"""Hindsight ``tag_groups``: validation and a pure evaluator for one unit's tag set.

Scope isolation depends on these rules being exactly the server's (docs/identity-and-scope.md#scope-filters,
docs/backends.md#embedded-store),
so they live in one small module that both the local store and the tools can use: the local
backend compiles the same rules to SQL (``local_query.tag_groups_sql``) and the tests hold the
two implementations to each other.

A list of groups is AND-ed. A group is a leaf ``{"tags": [...], "match": ...}`` (``match``
defaults to ``any_strict`` as in the server's schema) or a compound ``{"and": [...]}``,
``{"or": [...]}``, ``{"not": group}``. ``{"and": []}`` is true and ``{"or": []}`` is false,
the identities of the operators.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, Literal, cast

from ..errors import HindsightHooksError

MatchMode = Literal["any", "all", "any_strict", "all_strict", "exact"]
MATCH_MODES: frozenset[str] = frozenset({"any", "all", "any_strict", "all_strict", "exact"})
_KIND_KEYS = ("tags", "and", "or", "not")
_MAX_DEPTH = 32


class TagGroupError(HindsightHooksError, ValueError):
    """A malformed ``tag_groups`` value; the message names the offending path (never tag values)."""


def validate_tag_groups(groups: object) -> list[dict[str, Any]]:
    """Check ``groups`` and return it normalised (leaf tags deduplicated, ``match`` filled in).

    ``None`` means "no filter" and gives ``[]``. Anything malformed raises ``TagGroupError``
    rather than being ignored: silently dropping a scope filter would leak memories.
    """
    if groups is None:
        return []
    if not isinstance(groups, Sequence) or isinstance(groups, str | bytes):
        raise TagGroupError("tag_groups must be a list of groups")
    return [_validate(g, f"tag_groups[{i}]", 0) for i, g in enumerate(groups)]


def _validate(group: object, path: str, depth: int) -> dict[str, Any]:
    if depth > _MAX_DEPTH:
        raise TagGroupError(f"{path}: nested deeper than {_MAX_DEPTH}")
    if not isinstance(group, Mapping):
        raise TagGroupError(f"{path}: a group must be an object")
    kinds = [k for k in _KIND_KEYS if k in group]
    if len(kinds) != 1:
        raise TagGroupError(f"{path}: a group needs exactly one of tags/and/or/not, got {len(kinds)}")
    kind = kinds[0]
    if kind == "tags":
        tags = group["tags"]
        if not isinstance(tags, Sequence) or isinstance(tags, str | bytes):
            raise TagGroupError(f"{path}.tags must be a list of strings")
        if not all(isinstance(t, str) for t in tags):
            raise TagGroupError(f"{path}.tags must contain only strings")
        match = group.get("match", "any_strict")
        if match not in MATCH_MODES:
            raise TagGroupError(f"{path}.match must be one of {sorted(MATCH_MODES)}")
        resolve = group.get("resolve", "exact")
        if resolve not in ("exact", "fuzzy"):
            raise TagGroupError(f"{path}.resolve must be 'exact' or 'fuzzy'")
        return {"tags": list(dict.fromkeys(cast(Sequence[str], tags))), "match": match}
    if kind == "not":
        return {"not": _validate(group["not"], f"{path}.not", depth + 1)}
    children = group[kind]
    if not isinstance(children, Sequence) or isinstance(children, str | bytes):
        raise TagGroupError(f"{path}.{kind} must be a list of groups")
    return {kind: [_validate(c, f"{path}.{kind}[{i}]", depth + 1) for i, c in enumerate(children)]}


def match_leaf(unit_tags: Collection[str], tags: Sequence[str], match: str) -> bool:
    """One leaf against one unit's tag set (the docs/backends.md#embedded-store table, including the empty-list
    cases)."""
    have = unit_tags if isinstance(unit_tags, set | frozenset) else set(unit_tags)
    untagged = not have
    if match == "any_strict":
        return any(t in have for t in tags)
    if match == "any":
        return untagged or not tags or any(t in have for t in tags)
    if match == "all_strict":
        return not untagged and all(t in have for t in tags)
    if match == "all":
        return untagged or all(t in have for t in tags)
    if match == "exact":
        return have == set(tags)
    raise TagGroupError(f"unknown match mode {match!r}")


def _match_group(have: frozenset[str], group: Mapping[str, Any]) -> bool:
    if "tags" in group:
        return match_leaf(have, group["tags"], group.get("match", "any_strict"))
    if "and" in group:
        return all(_match_group(have, g) for g in group["and"])
    if "or" in group:
        return any(_match_group(have, g) for g in group["or"])
    if "not" in group:
        return not _match_group(have, group["not"])
    raise TagGroupError("a group needs exactly one of tags/and/or/not")


def match_tag_groups(unit_tags: Collection[str], groups: Sequence[Mapping[str, Any]] | None) -> bool:
    """True when a unit with ``unit_tags`` passes every group of ``groups`` (validated or not).

    Unvalidated input is validated first, so a malformed filter raises instead of matching.
    """
    if not groups:
        return True
    checked = validate_tag_groups(groups)
    have = frozenset(unit_tags)
    return all(_match_group(have, g) for g in checked)
