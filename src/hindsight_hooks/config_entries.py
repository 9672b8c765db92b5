"""A config table (from a file or from env) as flat entries: ``dotted.key → raw value`` and where it came from.

Why flat: each entry is then checked on its own, so one bad value reverts one key and every
warning can name the key as the user wrote it (legacy names included) and its file or env var.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from hindsight_hooks.config_checks import BadValue, check_str_list, kind_of
from hindsight_hooks.config_schema import key_schema

_TOOL_FILTERS = frozenset({"retain.tool_filter.tool_call", "retain.tool_filter.tool_result"})


_LEGACY_TABLES = (("banks.global", "banks.user"), ("global_retain", "user_retain"))


LEGACY_PREAMBLE = ("recall.global_query_preamble", "recall.user_query_preamble")


LEGACY_TOOL_RESULTS = "retain.include_tool_results"


@dataclass
class Entry:
    key: str  # the canonical dotted key
    value: Any
    where: str  # the file path or env var it came from
    name: str = ""  # the key as written, when a legacy alias was used (warnings quote what the user wrote)
    revert: bool = False  # reset this key to its default (bad table shape, project path escape, ...)

    @property
    def legacy(self) -> bool:
        return bool(self.name) and self.name != self.key

    @property
    def label(self) -> str:
        return self.name or self.key


class Warnings:
    """Ordered, de-duplicated warnings; each one names its key and the file or env var."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, where: str, key: str, text: str) -> None:
        line = f"{where}: {key}: {text}"
        if line not in self.items:
            self.items.append(line)


def legacy_rename(key: str) -> tuple[str, str | None]:
    for old, new in _LEGACY_TABLES:
        if key == old or key.startswith(old + "."):
            return new + key[len(old) :], old
    return key, None


def flatten_value(key: str, value: Any, where: str, out: list[Entry], warns: Warnings, written: str = "") -> None:
    """Turn one (possibly table) value into leaf entries. ``written`` is the key as the user spelled it."""
    schema = key_schema()
    written = written or key
    renamed, old = legacy_rename(key)
    if old is not None:
        warns.add(where, old, f"is a legacy name; use {legacy_rename(old)[0]}")
        key = renamed
    if key in _TOOL_FILTERS:
        out.extend(_tool_filter_entries(key, value, where, warns, written))
        return
    if key in schema.tables:
        if not isinstance(value, dict):
            for leaf in schema.leaves:
                if leaf.startswith(key + "."):
                    out.append(Entry(leaf, None, where, written + leaf[len(key) :], revert=True))
            warns.add(where, written, f"must be a table, got {kind_of(value)}; its keys keep their defaults")
            return
        flatten_table(key + ".", value, where, out, warns, written + ".")
        return
    if key in schema.leaves or key in (LEGACY_PREAMBLE[0], LEGACY_TOOL_RESULTS):
        out.append(Entry(key, value, where, written))
        return
    warns.add(where, written, "unknown key (ignored)")


def flatten_table(
    prefix: str, table: dict[str, Any], where: str, out: list[Entry], warns: Warnings, written_prefix: str = ""
) -> None:
    written_prefix = written_prefix or prefix
    for sub, sub_value in table.items():
        if not sub or "." in sub or sub != sub.strip():
            # A quoted TOML key such as "recall.top_k" is one odd name, not a path: never a config key.
            warns.add(where, written_prefix + json.dumps(sub, ensure_ascii=False), "unknown key (ignored)")
            continue
        flatten_value(prefix + sub, sub_value, where, out, warns, written_prefix + sub)


def _tool_filter_entries(key: str, value: Any, where: str, warns: Warnings, written: str) -> list[Entry]:
    """A tool filter is checked as a unit: a bad half, or no half at all, reverts the whole filter."""

    def entry(half: str, half_value: Any = None, revert: bool = False) -> Entry:
        return Entry(f"{key}.{half}", half_value, where, f"{written}.{half}", revert)

    def revert(reason: str) -> list[Entry]:
        warns.add(where, written, f"{reason}; reverted to the default")
        return [entry("include", revert=True), entry("exclude", revert=True)]

    if not isinstance(value, dict):
        return revert(f"must be a table with include and/or exclude, got {kind_of(value)}")
    for sub in value:
        if sub not in ("include", "exclude"):
            warns.add(where, f"{written}.{sub}", "unknown key (ignored)")
    halves = [h for h in ("include", "exclude") if h in value]
    if not halves:
        return revert("needs include or exclude")
    for half in halves:
        try:
            check_str_list(value[half])
        except BadValue as exc:
            return revert(f"{half} {exc}")
    return [entry(h, value[h]) for h in halves]
