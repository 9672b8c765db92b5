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

This module is the loader's front door: it runs the steps in order and re-exports the public
names. Each step has its own module (ADR 156): ``config_files`` (where the files are, reading
TOML), ``config_entries`` (tables as flat entries), ``config_env`` (the environment layer),
``config_layers`` (what one layer may set), ``config_checks`` (the rule and message per value),
``config_schema`` (keys and defaults from ``config_model``), ``config_merge`` (layer over layer,
with sources), ``config_describe`` (``config show``) and ``config_resolve`` (API key, paths).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from hindsight_hooks.config_files import default_user_config_path, project_config_path, read_config_file
from hindsight_hooks.config_model import Config, default_config
from hindsight_hooks.config_resolve import resolve_api_key, resolve_local_path, resolve_path

if TYPE_CHECKING:
    from hindsight_hooks.config_describe import MASK, describe_config
    from hindsight_hooks.config_env import ENV_PREFIX
    from hindsight_hooks.config_layers import PROJECT_FORBIDDEN, PROJECT_NARROW_ONLY, PROJECT_REFUSED
    from hindsight_hooks.config_schema import config_keys, flatten_config

__all__ = [
    "ENV_PREFIX",
    "MASK",
    "PROJECT_FORBIDDEN",
    "PROJECT_NARROW_ONLY",
    "PROJECT_REFUSED",
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

#: Public names whose modules load on first use: the plugin imports this module at start-up but
#: reads its config at ``session_start``, so the loader's steps stay out of the import (ADR 156).
_LAZY = {
    "MASK": "config_describe",
    "describe_config": "config_describe",
    "ENV_PREFIX": "config_env",
    "PROJECT_FORBIDDEN": "config_layers",
    "PROJECT_NARROW_ONLY": "config_layers",
    "PROJECT_REFUSED": "config_layers",
    "config_keys": "config_schema",
    "flatten_config": "config_schema",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"hindsight_hooks.{module}"), name)


@dataclass
class LoadedConfig:
    """The effective config plus everything a status report or ``doctor`` needs to explain it."""

    config: Config
    sources: dict[str, str]
    warnings: list[str] = field(default_factory=list)
    error: str | None = None
    files: dict[str, Path] = field(default_factory=dict)
    project_base_url: bool = False
    error_fix: str = ""
    """What to do about ``error``, matching its cause (a TOML typo, a mode, a directory)."""


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
    from hindsight_hooks.config_entries import Entry, Warnings, flatten_table
    from hindsight_hooks.config_env import env_entries
    from hindsight_hooks.config_layers import layer_entries
    from hindsight_hooks.config_merge import apply_entries, cross_key_rules, defaults_state, nest
    from hindsight_hooks.config_schema import key_schema

    env = os.environ if env is None else env
    user_path = user_config_path if user_config_path is not None else default_user_config_path(env)
    project_path = project_config_path(Path(cwd))
    files: dict[str, Path] = {}
    layers: list[tuple[str, dict[str, Any], Path]] = []
    errors: list[str] = []
    fixes: list[str] = []
    for source, path in (("user", user_path), ("project", project_path)):
        data, problem = read_config_file(path)
        if problem is not None:
            errors.append(problem[0])
            if problem[1] not in fixes:
                fixes.append(problem[1])
            files[source] = path  # it exists (it just does not parse): never report it as missing
        elif data is not None:
            files[source] = path
            layers.append((source, data, path))
    if errors:
        cfg = default_config()
        cfg.enabled = False
        sources = dict.fromkeys(key_schema().leaves, "default")
        return LoadedConfig(cfg, sources, [], "; ".join(errors), files, False, "; ".join(fixes))

    warns = Warnings()
    state = defaults_state()
    for source, data, path in layers:
        raw: list[Entry] = []
        flatten_table("", data, str(path), raw, warns)
        apply_entries(state, layer_entries(raw, source, warns), source, warns)
    apply_entries(state, layer_entries(env_entries(env, warns), "env", warns), "env", warns)
    cross_key_rules(state, warns)

    try:
        cfg = Config.model_validate(nest(state.values))
    except Exception as exc:  # pragma: no cover - a schema bug; loading still must not raise
        warns.add("config", "(all)", f"internal validation failed ({type(exc).__name__}); using defaults")
        cfg = default_config()
        state = defaults_state()
    return LoadedConfig(
        config=cfg,
        sources=dict(state.sources),
        warnings=list(warns.items),
        error=None,
        files=files,
        project_base_url=state.sources.get("hindsight.base_url") == "project",
    )
