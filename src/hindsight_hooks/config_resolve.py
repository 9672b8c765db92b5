"""Turning configured values into what the plugin uses: the API key to send and real paths.

Why at use time and not at load: ``$VAR`` and ``~`` in a path, and the variable an
``api_key_ref`` names, are read from the environment of the process that uses them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from hindsight_hooks.config_files import home_dir
from hindsight_hooks.config_model import Config

_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


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
        data_home = str(home_dir(env) / ".local" / "share")
    known = {**env, "XDG_DATA_HOME": data_home, "HOME": str(home_dir(env))}

    def sub(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return known.get(name, match.group(0))

    text = _VAR.sub(sub, text)
    if text == "~" or text.startswith("~/"):
        text = str(home_dir(env)) + text[1:]
    return text


def resolve_path(value: str, cwd: Path, env: Mapping[str, str] | None = None) -> Path:
    """A configured path as a real location: ``$VAR``/``~`` expanded, relative paths under ``cwd``."""
    env = os.environ if env is None else env
    path = Path(_expand(value, env))
    return path if path.is_absolute() else Path(cwd) / path


def resolve_local_path(cfg: Config, env: Mapping[str, str] | None = None, cwd: Path | None = None) -> Path:
    """``local.path`` with ``$XDG_DATA_HOME`` (default ``~/.local/share``) expanded."""
    return resolve_path(cfg.local.path, cwd if cwd is not None else Path.cwd(), env)
