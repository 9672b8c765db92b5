"""The config loader: TOML files and env vars → one normalised ``Config`` (docs/configuration.md).

Why this shape: the plugin lives inside other people's processes, so a broken config must
never raise (invariant 2). Every layer is therefore read into *flat entries*
(``dotted.key → raw value``, plus where it came from), each entry is checked on its own, and a
bad value reverts that key to its default with a warning naming the key and the file or env
var. Only the final, already-valid values are handed to the pydantic models, so the models
never see user input they could reject.

Layers, lowest first: defaults < user file < project file < env. The project file is the one
a cloned repository controls, so it may not name secrets, code, paths outside the project
(docs/configuration.md#sources-and-safety) or banks to read beyond its own (ADR-063).
Decisions the spec leaves open are recorded in ``adr/004-config-format-and-layering.md``.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import posixpath
import re
import tomllib
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel

from hindsight_hooks.config_model import Config, Entity, default_config
from hindsight_hooks.errors import HindsightHooksError
from hindsight_hooks.governance.redact import redact_text, redact_value
from hindsight_hooks.timefmt import is_iso8601

__all__ = [
    "Config",
    "LoadedConfig",
    "Source",
    "config_keys",
    "default_user_config_path",
    "describe_config",
    "flatten_config",
    "load_config",
    "project_config_path",
    "resolve_api_key",
    "resolve_local_path",
    "resolve_path",
]

Source = Literal["default", "user", "project", "env"]

ENV_PREFIX = "HINDSIGHT_HOOKS_"
MASK = "***"

#: Keys a repository may not set: it could pair its own server with the user's secret, or run code.
PROJECT_FORBIDDEN = frozenset({"hindsight.api_key", "hindsight.api_key_ref", "local.embedder"})

#: Keys that choose which memory we read beyond the project's own repo-filtered scope (ADR-063).
#: A repository naming another project's bank as the "user bank", or dropping the user filter,
#: would pull that project's memories into this one's context. Only the value listed may come
#: from the project file (it narrows reads); any other value is dropped with a warning.
PROJECT_NARROW_ONLY: dict[str, Any] = {
    "banks.user.enabled": False,
    "banks.user.derive": None,
    "banks.user.bank_id": None,
    "banks.user.retain_mission": None,
    "banks.user.reflect_mission": None,
    "banks.user.observations_mission": None,
    "banks.user.retain_extraction_mode": None,
    "banks.user.retain_structured_chunk_size": None,
    "scope.user_scope_tags": None,
    "scope.include_shared_observations": False,
}
PROJECT_REFUSED = "may not be set by the project file (ignored); set it in your user config"

#: docs/identity-and-scope.md#observation-scopes observation-scope placeholders.
SCOPE_PLACEHOLDERS = ("{repoKey}", "{sessionId}", "{cwdHash}", "{projectBankId}", "{bankId}", "{hostName}")

_TOOL_FILTERS = frozenset({"retain.tool_filter.tool_call", "retain.tool_filter.tool_result"})
_LEGACY_TABLES = (("banks.global", "banks.user"), ("global_retain", "user_retain"))
_LEGACY_PREAMBLE = ("recall.global_query_preamble", "recall.user_query_preamble")
_LEGACY_TOOL_RESULTS = "retain.include_tool_results"
_TOOL_RESULTS_MAP: dict[str, list[str]] = {"all": ["content", "error"], "errors": ["error"], "none": []}
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_EMBEDDER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$")
_TOML_POS = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")
_TOML_END = re.compile(r"\s*\(at end of document\)\s*$")
_ENV_BOOLS = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}
_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


@dataclass
class LoadedConfig:
    """The effective config plus everything a status report or ``doctor`` needs to explain it."""

    config: Config
    sources: dict[str, str]
    warnings: list[str] = field(default_factory=list)
    error: str | None = None
    files: dict[str, Path] = field(default_factory=dict)
    project_base_url: bool = False


# --------------------------------------------------------------------------- value checks


class _Bad(HindsightHooksError):
    """A value that breaks its rule. The text says why and never echoes the value (it may be a secret)."""


Check = Callable[[Any], Any]


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    return "a " + type(value).__name__


def _check_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise _Bad(f"must be true or false, got {_kind(value)}")


def _check_pos_int(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    raise _Bad(f"must be a positive integer, got {_kind(value)}" + (" ≤ 0" if isinstance(value, int) else ""))


def _check_nonneg_int(value: Any) -> int:
    """``flush_interval_ms``: any integer, clamped at 0 (0 = off)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return max(0, value)
    raise _Bad(f"must be an integer, got {_kind(value)}")


def _check_opt_pos_int(value: Any) -> int | None:
    return _check_pos_int(value)


def _check_str(value: Any) -> str:
    if isinstance(value, str):
        return value
    raise _Bad(f"must be a string, got {_kind(value)}")


def _check_path(value: Any) -> str:
    text = _check_str(value)
    if not text.strip():
        raise _Bad("must not be blank")
    return text


def _check_base_url(value: Any) -> str:
    text = _check_str(value).strip().rstrip("/")
    if text and not re.match(r"^https?://[^/\s]", text, re.I):
        raise _Bad("must be an http:// or https:// URL")
    return text


def _check_bank_id(value: Any) -> str:
    """Surrounding blanks are dropped, so a whitespace-only id counts as no id everywhere."""
    return _check_str(value).strip()


def _check_api_key(value: Any) -> str:
    # The table form {source="env", name=...} is turned into api_key_ref before checks run.
    return _check_str(value)


def _check_api_key_ref(value: Any) -> str:
    text = _check_str(value)
    name = text[4:] if text.startswith("env:") else text
    if text and not _ENV_NAME.match(name):
        raise _Bad("must name an environment variable (env:NAME or NAME, NAME matching [A-Za-z_][A-Za-z0-9_]*)")
    return text


def _check_embedder(value: Any) -> str:
    text = _check_str(value)
    if text and not _EMBEDDER.match(text):
        raise _Bad("must be empty or module:factory")
    return text


def _check_timestamp(value: Any) -> str | None:
    """An ISO 8601 anchor for recall; "" means unset. TOML datetimes are accepted as such."""
    if isinstance(value, _dt.date):  # datetime is a date too
        return value.isoformat()
    text = _check_str(value).strip()
    if not text:
        return None
    if not is_iso8601(text):
        raise _Bad("must be an ISO 8601 date or datetime")
    return text


def _check_str_list(value: Any, *, non_empty: bool = False) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _Bad(f"must be a list of strings, got {_kind(value)}")
    if non_empty and not all(v.strip() for v in value):
        raise _Bad("must not contain empty strings")
    return list(value)


def _check_tags(value: Any) -> list[str]:
    return _check_str_list(value, non_empty=True)


def _enum(allowed: tuple[str, ...]) -> Check:
    shown = ", ".join(repr(a) for a in allowed)

    def check(value: Any) -> str:
        if isinstance(value, str) and value in allowed:
            return value
        raise _Bad(f"must be one of {shown}")

    return check


def _enum_list(allowed: tuple[str, ...]) -> Check:
    shown = ", ".join(repr(a) for a in allowed)

    def check(value: Any) -> list[str]:
        if isinstance(value, list) and all(isinstance(v, str) and v in allowed for v in value):
            return list(value)
        raise _Bad(f"must be a list of {shown}")

    return check


def _check_scopes(value: Any) -> list[list[str]]:
    if not isinstance(value, list):
        raise _Bad(f"must be a list of lists of strings, got {_kind(value)}")
    out: list[list[str]] = []
    for group in value:
        if not isinstance(group, list) or not group:
            raise _Bad("every scope group must be a non-empty list of strings")
        for item in group:
            if not isinstance(item, str) or not item.strip():
                raise _Bad("every scope entry must be a non-empty string")
            rest = item
            for placeholder in SCOPE_PLACEHOLDERS:
                rest = rest.replace(placeholder, "")
            if "{" in rest or "}" in rest:
                raise _Bad("uses an unknown placeholder (known: " + ", ".join(SCOPE_PLACEHOLDERS) + ")")
        out.append(list(group))
    return out


def _check_entities(value: Any) -> list[dict[str, Any]]:
    bad = _Bad("must be a list of {text = <non-empty string>, type = <string>} tables")
    if not isinstance(value, list):
        raise bad
    out: list[dict[str, Any]] = []
    for item in value:
        if not isinstance(item, dict) or not set(item) <= {"text", "type"}:
            raise bad
        text, kind = item.get("text"), item.get("type")
        if not isinstance(text, str) or not text.strip() or not (kind is None or isinstance(kind, str)):
            raise bad
        out.append({"text": text, "type": kind or None})
    return out


_OVERRIDES: dict[str, Check] = {
    "hindsight.base_url": _check_base_url,
    "hindsight.api_key": _check_api_key,
    "hindsight.api_key_ref": _check_api_key_ref,
    "local.embedder": _check_embedder,
    "banks.project.bank_id": _check_bank_id,
    "banks.user.bank_id": _check_bank_id,
    "recall.query_timestamp": _check_timestamp,
    "retain.flush_interval_ms": _check_nonneg_int,
    "observations.scopes": _check_scopes,
    "scope.user_scope_tags": _check_tags,
}


# --------------------------------------------------------------------------- schema


@dataclass(frozen=True)
class _Leaf:
    key: str
    default: Any
    check: Check
    stringy: bool  # env values for this key are taken verbatim unless they are a quoted TOML string
    boolean: bool  # env values for this key also accept 1/0/yes/no/on/off


@dataclass(frozen=True)
class _Schema:
    leaves: dict[str, _Leaf]
    tables: frozenset[str]


def _is_path_key(key: str) -> bool:
    return key.rsplit(".", 1)[-1].endswith("path")


def _literal_args(tp: Any) -> tuple[str, ...] | None:
    if get_origin(tp) is Literal:
        return tuple(str(a) for a in get_args(tp))
    return None


def _check_for(key: str, tp: Any) -> tuple[Check, bool]:
    """The rule for one leaf, derived from its annotation in ``config_model`` (so they cannot drift)."""
    if key in _OVERRIDES:
        return _OVERRIDES[key], key not in {"retain.flush_interval_ms", "observations.scopes", "scope.user_scope_tags"}
    origin = get_origin(tp)
    if origin in (types.UnionType, typing.Union):
        inner = [a for a in get_args(tp) if a is not type(None)]
        if len(inner) == 1 and inner[0] is int:
            return _check_opt_pos_int, False
        if len(inner) == 1 and get_origin(inner[0]) is list:
            return _check_for(key, inner[0])
        raise TypeError(f"config schema: unsupported type for {key}: {tp!r}")
    if tp is bool:
        return _check_bool, False
    if tp is int:
        return _check_pos_int, False
    if tp is str:
        return (_check_path if _is_path_key(key) else _check_str), True
    allowed = _literal_args(tp)
    if allowed is not None:
        return _enum(allowed), True
    if origin is list:
        (item,) = get_args(tp)
        if item is str:
            return _check_str_list, False
        item_allowed = _literal_args(item)
        if item_allowed is not None:
            return _enum_list(item_allowed), False
        if item is Entity:
            return _check_entities, False
    raise TypeError(f"config schema: unsupported type for {key}: {tp!r}")


def _walk(model: BaseModel, prefix: str, leaves: dict[str, _Leaf], tables: set[str]) -> None:
    for name, info in type(model).model_fields.items():
        key = prefix + (info.alias or name)
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            tables.add(key)
            _walk(value, key + ".", leaves, tables)
            continue
        check, stringy = _check_for(key, info.annotation)
        plain = [v.model_dump() for v in value] if key == "retain.entities" else value
        leaves[key] = _Leaf(key, plain, check, stringy, info.annotation is bool)


@lru_cache(maxsize=1)
def _schema() -> _Schema:
    leaves: dict[str, _Leaf] = {}
    tables: set[str] = set()
    _walk(default_config(), "", leaves, tables)
    return _Schema(leaves, frozenset(tables))


def config_keys() -> list[str]:
    """Every dotted config key, in schema order (``retain.async``, ``import.mode``: TOML names)."""
    return list(_schema().leaves)


def _copy(value: Any) -> Any:
    if isinstance(value, list):
        return [_copy(v) for v in value]
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    return value


# --------------------------------------------------------------------------- reading layers


@dataclass
class _Entry:
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


class _Warnings:
    """Ordered, de-duplicated warnings; each one names its key and the file or env var."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, where: str, key: str, text: str) -> None:
        line = f"{where}: {key}: {text}"
        if line not in self.items:
            self.items.append(line)


def _legacy_rename(key: str) -> tuple[str, str | None]:
    for old, new in _LEGACY_TABLES:
        if key == old or key.startswith(old + "."):
            return new + key[len(old) :], old
    return key, None


def _flatten(key: str, value: Any, where: str, out: list[_Entry], warns: _Warnings, written: str = "") -> None:
    """Turn one (possibly table) value into leaf entries. ``written`` is the key as the user spelled it."""
    schema = _schema()
    written = written or key
    renamed, old = _legacy_rename(key)
    if old is not None:
        warns.add(where, old, f"is a legacy name; use {_legacy_rename(old)[0]}")
        key = renamed
    if key in _TOOL_FILTERS:
        out.extend(_tool_filter_entries(key, value, where, warns, written))
        return
    if key in schema.tables:
        if not isinstance(value, dict):
            for leaf in schema.leaves:
                if leaf.startswith(key + "."):
                    out.append(_Entry(leaf, None, where, written + leaf[len(key) :], revert=True))
            warns.add(where, written, f"must be a table, got {_kind(value)}; its keys keep their defaults")
            return
        _flatten_table(key + ".", value, where, out, warns, written + ".")
        return
    if key in schema.leaves or key in (_LEGACY_PREAMBLE[0], _LEGACY_TOOL_RESULTS):
        out.append(_Entry(key, value, where, written))
        return
    warns.add(where, written, "unknown key (ignored)")


def _flatten_table(
    prefix: str, table: dict[str, Any], where: str, out: list[_Entry], warns: _Warnings, written_prefix: str = ""
) -> None:
    written_prefix = written_prefix or prefix
    for sub, sub_value in table.items():
        if not sub or "." in sub or sub != sub.strip():
            # A quoted TOML key such as "recall.top_k" is one odd name, not a path: never a config key.
            warns.add(where, written_prefix + json.dumps(sub, ensure_ascii=False), "unknown key (ignored)")
            continue
        _flatten(prefix + sub, sub_value, where, out, warns, written_prefix + sub)


def _tool_filter_entries(key: str, value: Any, where: str, warns: _Warnings, written: str) -> list[_Entry]:
    """A tool filter is checked as a unit: a bad half, or no half at all, reverts the whole filter."""

    def entry(half: str, half_value: Any = None, revert: bool = False) -> _Entry:
        return _Entry(f"{key}.{half}", half_value, where, f"{written}.{half}", revert)

    def revert(reason: str) -> list[_Entry]:
        warns.add(where, written, f"{reason}; reverted to the default")
        return [entry("include", revert=True), entry("exclude", revert=True)]

    if not isinstance(value, dict):
        return revert(f"must be a table with include and/or exclude, got {_kind(value)}")
    for sub in value:
        if sub not in ("include", "exclude"):
            warns.add(where, f"{written}.{sub}", "unknown key (ignored)")
    halves = [h for h in ("include", "exclude") if h in value]
    if not halves:
        return revert("needs include or exclude")
    for half in halves:
        try:
            _check_str_list(value[half])
        except _Bad as exc:
            return revert(f"{half} {exc}")
    return [entry(h, value[h]) for h in halves]


def _read_toml(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """(data, None), (None, error) or (None, None) when the file does not exist."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"{path}: cannot read config file: {exc.strerror or type(exc).__name__}"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        return None, f"{path}: invalid TOML at line {line}, column {column}: not valid UTF-8"
    text = text.removeprefix("\ufeff")
    try:
        return tomllib.loads(text), None
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        match = _TOML_POS.search(message)
        if match:
            line, column = int(match.group(1)), int(match.group(2))
            message = message[: match.start()]
        else:
            end = _TOML_END.search(message)
            if end:
                message = message[: end.start()]
            line = text.count("\n") + 1
            column = len(text) - (text.rfind("\n") + 1) + 1
        return None, f"{path}: invalid TOML at line {line}, column {column}: {message}"


def _env_value(key: str, raw: str) -> Any:
    """Parse one env value: TOML first, falling back to the raw string (docs/configuration.md#environment).

    Keys holding strings keep the raw text unless it is a quoted TOML string, so
    ``…BANK_ID=123`` is the bank ``"123"`` and not a type error.
    """
    leaf = _schema().leaves.get(_legacy_rename(key)[0])
    if leaf is not None and leaf.boolean and raw.strip().lower() in _ENV_BOOLS:
        return _ENV_BOOLS[raw.strip().lower()]
    try:
        parsed = tomllib.loads(f"v = {raw}")
    except tomllib.TOMLDecodeError:
        return raw
    if set(parsed) != {"v"}:
        return raw
    value = parsed["v"]
    if leaf is not None and leaf.stringy and not isinstance(value, str):
        return raw
    return value


def _env_entries(env: Mapping[str, str], warns: _Warnings) -> list[_Entry]:
    out: list[_Entry] = []
    for name, key in (
        ("HINDSIGHT_BASE_URL", "hindsight.base_url"),
        ("HINDSIGHT_API_KEY", "hindsight.api_key"),
        ("HINDSIGHT_API_KEY_REF", "hindsight.api_key_ref"),
    ):
        raw = env.get(name)
        if raw:  # an empty export means "unset", as shells make it easy to leave one behind
            out.append(_Entry(key, raw, name))
    for name in sorted(env):
        if not name.startswith(ENV_PREFIX):
            continue
        segments = name[len(ENV_PREFIX) :].lower().split("__")
        if not all(re.fullmatch(r"[a-z0-9_]+", s) for s in segments):
            warns.add(name, name[len(ENV_PREFIX) :].lower() or "(empty)", "is not a config key path (ignored)")
            continue
        key = ".".join(segments)
        _flatten(key, _env_value(key, env[name]), name, out, warns)
    # docs/configuration.md#environment: a bank id from env also switches the bank on / to manual, unless env says
    # otherwise.
    keys = {e.key for e in out}
    implied: list[_Entry] = []
    for bank_key, flag_key, flag_value in (
        ("banks.project.bank_id", "banks.project.derive", "manual"),
        ("banks.user.bank_id", "banks.user.enabled", True),
    ):
        if bank_key in keys and flag_key not in keys:
            where = next(e.where for e in out if e.key == bank_key)
            implied.append(_Entry(flag_key, flag_value, where))
    return out + implied


def _layer_entries(entries: list[_Entry], source: str, warns: _Warnings) -> list[_Entry]:
    """Apply the per-layer rules: legacy aliases, the api_key table form, project restrictions."""
    direct: dict[str, _Entry] = {}
    legacy: list[_Entry] = []
    for entry in entries:
        if entry.key == _LEGACY_PREAMBLE[0]:
            warns.add(entry.where, entry.key, f"is a legacy name; use {_LEGACY_PREAMBLE[1]}")
            legacy.append(_Entry(_LEGACY_PREAMBLE[1], entry.value, entry.where, entry.label))
        elif entry.key == _LEGACY_TOOL_RESULTS:
            mapped = _TOOL_RESULTS_MAP.get(entry.value) if isinstance(entry.value, str) else None
            if mapped is None:
                warns.add(entry.where, entry.key, "must be one of 'all', 'errors', 'none' (ignored)")
            else:
                warns.add(entry.where, entry.key, "is a legacy name; use retain.content.tool_result")
                legacy.append(_Entry("retain.content.tool_result", list(mapped), entry.where, entry.label))
        elif entry.legacy:
            legacy.append(entry)
        else:
            direct[entry.key] = entry
    for entry in legacy:  # the current name wins over a legacy one in the same layer
        direct.setdefault(entry.key, entry)

    result: list[_Entry] = []
    for entry in direct.values():
        if source == "project" and _project_may_not_set(entry):
            if not entry.revert:
                warns.add(entry.where, entry.label, PROJECT_REFUSED)
            continue
        if entry.key == "hindsight.api_key" and isinstance(entry.value, dict):
            result.extend(_api_key_table(entry, direct, warns))
            continue
        if (
            source == "project"
            and _is_path_key(entry.key)
            and isinstance(entry.value, str)
            and not entry.revert
            and _escapes_project(entry.value)
        ):
            entry = _Entry(entry.key, None, entry.where, entry.name, revert=True)
            warns.add(entry.where, entry.label, "must be a relative path inside the project; reverted to the default")
        result.append(entry)
    return result


def _project_may_not_set(entry: _Entry) -> bool:
    """Secrets, code and read-widening bank keys stay with the user (docs/configuration.md#sources-and-safety, ADR-004,
    ADR-063).

    A narrow-only key passes only with its narrowing value (``banks.user.enabled = false``); a
    reverted entry (a bad table shape) is dropped too, so the user's own value stays.
    """
    if entry.key in PROJECT_FORBIDDEN:
        return True
    if entry.key not in PROJECT_NARROW_ONLY:
        return False
    allowed = PROJECT_NARROW_ONLY[entry.key]
    return entry.revert or allowed is None or entry.value is not allowed


def _api_key_table(entry: _Entry, direct: dict[str, _Entry], warns: _Warnings) -> list[_Entry]:
    """``api_key = {source="env", name="VAR"}`` is a reference, i.e. ``api_key_ref = "env:VAR"``."""
    value = entry.value
    name = value.get("name")
    if (
        set(value) == {"source", "name"}
        and value.get("source") == "env"
        and isinstance(name, str)
        and _ENV_NAME.match(name)
    ):
        if "hindsight.api_key_ref" in direct:
            return []  # an explicit api_key_ref in the same layer wins
        return [_Entry("hindsight.api_key_ref", f"env:{name}", entry.where)]
    warns.add(entry.where, entry.label, 'as a table must be {source = "env", name = "VAR"}; reverted to the default')
    return [_Entry(entry.key, None, entry.where, revert=True)]


def _escapes_project(text: str) -> bool:
    """Absolute, home-relative, variable-expanding or ``..``-escaping paths leave the project."""
    if text.startswith(("/", "\\", "~")) or "$" in text or re.match(r"^[A-Za-z]:", text):
        return True
    norm = posixpath.normpath(text.replace("\\", "/"))
    return norm == ".." or norm.startswith("../")


# --------------------------------------------------------------------------- merging


@dataclass
class _State:
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
        self.set(key, _copy(_schema().leaves[key].default), "default", "defaults")


def _apply(state: _State, entries: list[_Entry], source: str, warns: _Warnings) -> None:
    for entry in entries:
        leaf = _schema().leaves[entry.key]
        if entry.revert:
            state.reset(entry.key)
            state.wheres[entry.key] = entry.where
            continue
        try:
            value = leaf.check(entry.value)
        except _Bad as exc:
            warns.add(entry.where, entry.label, f"{exc}; reverted to the default")
            state.reset(entry.key)
            state.wheres[entry.key] = entry.where
            continue
        state.set(entry.key, value, source, entry.where)


def _cross_key_rules(state: _State, warns: _Warnings) -> None:
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


def _nest(values: Mapping[str, Any]) -> dict[str, Any]:
    root: dict[str, Any] = {}
    for key, value in values.items():
        node = root
        *parents, last = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = _copy(value)
    return root


def _defaults_state() -> _State:
    schema = _schema()
    return _State(
        {k: _copy(leaf.default) for k, leaf in schema.leaves.items()},
        dict.fromkeys(schema.leaves, "default"),
        dict.fromkeys(schema.leaves, "defaults"),
    )


# --------------------------------------------------------------------------- public API


def default_user_config_path(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/hindsight-hooks/config.toml``; a relative XDG value is ignored, per the XDG spec."""
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else _home(env) / ".config"
    return root / "hindsight-hooks" / "config.toml"


def project_config_path(cwd: Path) -> Path:
    return cwd / ".hindsight" / "config.toml"


def _home(env: Mapping[str, str]) -> Path:
    home = env.get("HOME", "")
    return Path(home) if home else Path.home()


def load_config(
    cwd: Path,
    *,
    env: Mapping[str, str] | None = None,
    user_config_path: Path | None = None,
) -> LoadedConfig:
    """Read defaults < user file < project file < env into a normalised config. Never raises.

    ``env`` replaces ``os.environ`` for both the overrides and the XDG lookup, so callers
    (and tests) control exactly what is read.
    """
    env = os.environ if env is None else env
    user_path = user_config_path if user_config_path is not None else default_user_config_path(env)
    project_path = project_config_path(Path(cwd))
    files: dict[str, Path] = {}
    layers: list[tuple[str, dict[str, Any], Path]] = []
    errors: list[str] = []
    for source, path in (("user", user_path), ("project", project_path)):
        data, error = _read_toml(path)
        if error is not None:
            errors.append(error)
            files[source] = path  # it exists (it just does not parse): never report it as missing
        elif data is not None:
            files[source] = path
            layers.append((source, data, path))
    if errors:
        cfg = default_config()
        cfg.enabled = False
        sources = dict.fromkeys(_schema().leaves, "default")
        return LoadedConfig(cfg, sources, [], "; ".join(errors), files, False)

    warns = _Warnings()
    state = _defaults_state()
    for source, data, path in layers:
        raw: list[_Entry] = []
        _flatten_table("", data, str(path), raw, warns)
        _apply(state, _layer_entries(raw, source, warns), source, warns)
    _apply(state, _layer_entries(_env_entries(env, warns), "env", warns), "env", warns)
    _cross_key_rules(state, warns)

    try:
        cfg = Config.model_validate(_nest(state.values))
    except Exception as exc:  # pragma: no cover - a schema bug; loading still must not raise
        warns.add("config", "(all)", f"internal validation failed ({type(exc).__name__}); using defaults")
        cfg = default_config()
        state = _defaults_state()
    return LoadedConfig(
        config=cfg,
        sources=dict(state.sources),
        warnings=list(warns.items),
        error=None,
        files=files,
        project_base_url=state.sources.get("hindsight.base_url") == "project",
    )


def flatten_config(cfg: Config) -> dict[str, Any]:
    """``{dotted key: plain value}`` for every key, in schema order, using the TOML key names."""
    nested = cfg.model_dump(by_alias=True)
    out: dict[str, Any] = {}
    for key in _schema().leaves:
        node: Any = nested
        for part in key.split("."):
            node = node[part]
        out[key] = node
    return out


def _masked(key: str, value: Any) -> Any:
    if key.rsplit(".", 1)[-1] == "api_key" and value:
        return MASK
    if isinstance(value, str):
        return MASK if redact_text(value) != value else value
    if isinstance(value, list | dict) and redact_value(value) != value:
        return MASK
    return value


def describe_config(loaded: LoadedConfig) -> list[tuple[str, Any, str]]:
    """(key, value, source) for every key; secrets (api_key, anything redaction would touch) → ``***``.

    Masking is by value, not by key name: ``recall.max_tokens`` contains "token" but is no secret.
    """
    flat = flatten_config(loaded.config)
    return [(key, _masked(key, value), loaded.sources.get(key, "default")) for key, value in flat.items()]


def resolve_api_key(cfg: Config, env: Mapping[str, str] | None = None) -> str:
    """The key to send: a literal ``api_key`` wins; else the variable named by ``api_key_ref``; else ""."""
    if cfg.hindsight.api_key:
        return cfg.hindsight.api_key
    ref = cfg.hindsight.api_key_ref
    if not ref:
        return ""
    env = os.environ if env is None else env
    return env.get(ref.removeprefix("env:"), "")


def _expand(text: str, env: Mapping[str, str]) -> str:
    data_home = env.get("XDG_DATA_HOME", "")
    if not (data_home and os.path.isabs(data_home)):
        data_home = str(_home(env) / ".local" / "share")
    known = {**env, "XDG_DATA_HOME": data_home, "HOME": str(_home(env))}

    def sub(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return known.get(name, match.group(0))

    text = _VAR.sub(sub, text)
    if text == "~" or text.startswith("~/"):
        text = str(_home(env)) + text[1:]
    return text


def resolve_path(value: str, cwd: Path, env: Mapping[str, str] | None = None) -> Path:
    """A configured path as a real location: ``$VAR``/``~`` expanded, relative paths under ``cwd``."""
    env = os.environ if env is None else env
    path = Path(_expand(value, env))
    return path if path.is_absolute() else Path(cwd) / path


def resolve_local_path(cfg: Config, env: Mapping[str, str] | None = None, cwd: Path | None = None) -> Path:
    """``local.path`` with ``$XDG_DATA_HOME`` (default ``~/.local/share``) expanded."""
    return resolve_path(cfg.local.path, cwd if cwd is not None else Path.cwd(), env)
