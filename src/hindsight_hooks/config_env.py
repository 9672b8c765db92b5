"""The environment layer: ``HINDSIGHT_HOOKS_*`` overrides and the ``HINDSIGHT_*`` shortcuts.

See docs/configuration.md#environment.

Why its own parser: a shell variable is always text, so each value is read as TOML first and
kept as the raw string when the key holds a string (``…BANK_ID=123`` is the bank ``"123"``).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from typing import Any

from hindsight_hooks.config_entries import Entry, Warnings, flatten_value, legacy_rename
from hindsight_hooks.config_schema import key_schema

ENV_PREFIX = "HINDSIGHT_HOOKS_"


_ENV_BOOLS = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}


def _env_value(key: str, raw: str) -> Any:
    """Parse one env value: TOML first, falling back to the raw string (docs/configuration.md#environment).

    Keys holding strings keep the raw text unless it is a quoted TOML string, so
    ``…BANK_ID=123`` is the bank ``"123"`` and not a type error.
    """
    leaf = key_schema().leaves.get(legacy_rename(key)[0])
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


def env_entries(env: Mapping[str, str], warns: Warnings) -> list[Entry]:
    out: list[Entry] = []
    for name, key in (
        ("HINDSIGHT_BASE_URL", "hindsight.base_url"),
        ("HINDSIGHT_API_KEY", "hindsight.api_key"),
        ("HINDSIGHT_API_KEY_REF", "hindsight.api_key_ref"),
    ):
        raw = env.get(name)
        if raw:  # an empty export means "unset", as shells make it easy to leave one behind
            out.append(Entry(key, raw, name))
    for name in sorted(env):
        if not name.startswith(ENV_PREFIX):
            continue
        segments = name[len(ENV_PREFIX) :].lower().split("__")
        if not all(re.fullmatch(r"[a-z0-9_]+", s) for s in segments):
            warns.add(name, name[len(ENV_PREFIX) :].lower() or "(empty)", "is not a config key path (ignored)")
            continue
        key = ".".join(segments)
        flatten_value(key, _env_value(key, env[name]), name, out, warns)
    # docs/configuration.md#environment: a bank id from env also switches the bank on / to manual, unless env says
    # otherwise.
    keys = {e.key for e in out}
    implied: list[Entry] = []
    for bank_key, flag_key, flag_value in (
        ("banks.project.bank_id", "banks.project.derive", "manual"),
        ("banks.user.bank_id", "banks.user.enabled", True),
    ):
        if bank_key in keys and flag_key not in keys:
            where = next(e.where for e in out if e.key == bank_key)
            implied.append(Entry(flag_key, flag_value, where))
    return out + implied
