"""Merging checked entries, layer over layer, into one set of values with the source of each.

Why values and sources together: ``config show`` and ``doctor`` say where every key came from,
and a key set as a consequence of another (a pinned bank id makes ``derive`` manual) inherits
that key's source.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hindsight_hooks.config_checks import BadValue
from hindsight_hooks.config_entries import Entry, Warnings
from hindsight_hooks.config_schema import copy_value, key_schema


@dataclass
class State:
    values: dict[str, Any]
    sources: dict[str, str]
    wheres: dict[str, str]

    def set(self, key: str, value: Any, source: str, where: str) -> None:
        self.values[key] = value
        self.sources[key] = source
        self.wheres[key] = where

    def follow(self, key: str, cause: str, value: Any) -> None:
        """Set ``key`` as a consequence of ``cause``: it inherits the cause's source and origin."""
        self.set(key, value, self.sources[cause], self.wheres[cause])

    def reset(self, key: str) -> None:
        self.set(key, copy_value(key_schema().leaves[key].default), "default", "defaults")


def apply_entries(state: State, entries: list[Entry], source: str, warns: Warnings) -> None:
    for entry in entries:
        leaf = key_schema().leaves[entry.key]
        if entry.revert:
            state.reset(entry.key)
            state.wheres[entry.key] = entry.where
            continue
        try:
            value = leaf.check(entry.value)
        except BadValue as exc:
            warns.add(entry.where, entry.label, f"{exc}; reverted to the default")
            state.reset(entry.key)
            state.wheres[entry.key] = entry.where
            continue
        state.set(entry.key, value, source, entry.where)


def cross_key_rules(state: State, warns: Warnings) -> None:
    """Rules that look at more than one key, applied once to the merged values (docs/configuration.md#normalisation)."""
    v, src = state.values, state.sources
    # Preamble fallbacks: an explicit generic preamble stands in for unset specific ones.
    for specific in ("recall.project_query_preamble", "recall.user_query_preamble"):
        if src[specific] == "default" and src["recall.query_preamble"] != "default":
            state.follow(specific, "recall.query_preamble", v["recall.query_preamble"])
    # A pinned project bank id means derive = manual; manual without an id cannot name a bank.
    if v["banks.project.bank_id"]:
        if v["banks.project.derive"] != "manual":
            state.follow("banks.project.derive", "banks.project.bank_id", "manual")
    elif v["banks.project.derive"] == "manual":
        reason = "is manual but banks.project.bank_id is empty; reverted to the default"
        warns.add(state.wheres["banks.project.derive"], "banks.project.derive", reason)
        state.reset("banks.project.derive")
    # The user bank is on only with enabled = true and a bank id.
    if v["banks.user.enabled"] and not v["banks.user.bank_id"]:
        reason = "is true but banks.user.bank_id is empty; the user bank stays disabled"
        warns.add(state.wheres["banks.user.enabled"], "banks.user.enabled", reason)
        state.follow("banks.user.enabled", "banks.user.enabled", False)


def nest(values: Mapping[str, Any]) -> dict[str, Any]:
    root: dict[str, Any] = {}
    for key, value in values.items():
        node = root
        *parents, last = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = copy_value(value)
    return root


def defaults_state() -> State:
    schema = key_schema()
    return State(
        {k: copy_value(leaf.default) for k, leaf in schema.leaves.items()},
        dict.fromkeys(schema.leaves, "default"),
        dict.fromkeys(schema.leaves, "defaults"),
    )
