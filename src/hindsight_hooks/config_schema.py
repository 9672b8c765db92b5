"""Every config key, its default and its rule, read once from the pydantic models in ``config_model``.

Why derived and not written out: a key added to the model gets its checks, its env parsing and
its place in ``config show`` with no second list to keep in step.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel

from hindsight_hooks.config_checks import (
    OVERRIDES,
    Check,
    check_bool,
    check_entities,
    check_opt_pos_int,
    check_path,
    check_pos_int,
    check_str,
    check_str_list,
    enum_check,
    enum_list_check,
)
from hindsight_hooks.config_model import Config, Entity, default_config


@dataclass(frozen=True)
class Leaf:
    key: str
    default: Any
    check: Check
    stringy: bool  # env values for this key are taken verbatim unless they are a quoted TOML string
    boolean: bool  # env values for this key also accept 1/0/yes/no/on/off


@dataclass(frozen=True)
class Schema:
    leaves: dict[str, Leaf]
    tables: frozenset[str]


def is_path_key(key: str) -> bool:
    return key.rsplit(".", 1)[-1].endswith("path")


def _literal_args(tp: Any) -> tuple[str, ...] | None:
    if get_origin(tp) is Literal:
        return tuple(str(a) for a in get_args(tp))
    return None


def check_for(key: str, tp: Any) -> tuple[Check, bool]:
    """The rule for one leaf, derived from its annotation in ``config_model`` (so they cannot drift)."""
    if key in OVERRIDES:
        return OVERRIDES[key], key not in {"retain.flush_interval_ms", "observations.scopes", "scope.user_scope_tags"}
    origin = get_origin(tp)
    if origin in (types.UnionType, typing.Union):
        inner = [a for a in get_args(tp) if a is not type(None)]
        if len(inner) == 1 and inner[0] is int:
            return check_opt_pos_int, False
        if len(inner) == 1 and get_origin(inner[0]) is list:
            return check_for(key, inner[0])
        raise TypeError(f"config schema: unsupported type for {key}: {tp!r}")
    if tp is bool:
        return check_bool, False
    if tp is int:
        return check_pos_int, False
    if tp is str:
        return (check_path if is_path_key(key) else check_str), True
    allowed = _literal_args(tp)
    if allowed is not None:
        return enum_check(allowed), True
    if origin is list:
        (item,) = get_args(tp)
        if item is str:
            return check_str_list, False
        item_allowed = _literal_args(item)
        if item_allowed is not None:
            return enum_list_check(item_allowed), False
        if item is Entity:
            return check_entities, False
    raise TypeError(f"config schema: unsupported type for {key}: {tp!r}")


def _walk(model: BaseModel, prefix: str, leaves: dict[str, Leaf], tables: set[str]) -> None:
    for name, info in type(model).model_fields.items():
        key = prefix + (info.alias or name)
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            tables.add(key)
            _walk(value, key + ".", leaves, tables)
            continue
        check, stringy = check_for(key, info.annotation)
        plain = [v.model_dump() for v in value] if key == "retain.entities" else value
        leaves[key] = Leaf(key, plain, check, stringy, info.annotation is bool)


@lru_cache(maxsize=1)
def key_schema() -> Schema:
    leaves: dict[str, Leaf] = {}
    tables: set[str] = set()
    _walk(default_config(), "", leaves, tables)
    return Schema(leaves, frozenset(tables))


def config_keys() -> list[str]:
    """Every dotted config key, in schema order (``retain.async``, ``import.mode``: TOML names)."""
    return list(key_schema().leaves)


def copy_value(value: Any) -> Any:
    if isinstance(value, list):
        return [copy_value(v) for v in value]
    if isinstance(value, dict):
        return {k: copy_value(v) for k, v in value.items()}
    return value


def flatten_config(cfg: Config) -> dict[str, Any]:
    """``{dotted key: plain value}`` for every key, in schema order, using the TOML key names."""
    nested = cfg.model_dump(by_alias=True)
    out: dict[str, Any] = {}
    for key in key_schema().leaves:
        node: Any = nested
        for part in key.split("."):
            node = node[part]
        out[key] = node
    return out
