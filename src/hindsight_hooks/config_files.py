"""Where the config files are and how one is read: TOML, with a line and column for any error.

Why apart from the rest: a file that does not parse switches the plugin off (the user must
see it), while a bad *value* only reverts one key; this module is the first of those two.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

_TOML_POS = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")


_TOML_END = re.compile(r"\s*\(at end of document\)\s*$")


SYNTAX_FIX = "fix the TOML syntax at the named line"


def unreadable_fix(path: Path, exc: OSError) -> str:
    """What to do about a config file the OS would not read: it matches the cause, because
    "fix the TOML syntax" sends a user with a permission problem looking for a typo."""
    if isinstance(exc, IsADirectoryError) or path.is_dir():
        return f"{path} is a directory: move it away and put the config file (TOML) there, or remove it"
    if isinstance(exc, PermissionError):
        return f"make it readable for this user: chmod u+r {path} (its folders must be searchable too)"
    return f"check that {path} is a readable file"


def read_config_file(path: Path) -> tuple[dict[str, Any] | None, tuple[str, str] | None]:
    """(data, None), (None, (error, fix)) or (None, None) when the file does not exist.

    The fix travels with the error because only here is the cause known (an OSError's type or a
    TOML position); doctor shows it next to the error."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        error = f"{path}: cannot read config file: {exc.strerror or type(exc).__name__}"
        return None, (error, unreadable_fix(path, exc))
    data, syntax = _parse(path, raw)
    return data, None if syntax is None else (syntax, SYNTAX_FIX)


def _parse(path: Path, raw: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """The file's bytes as TOML, or an error with its line and column."""
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


def default_user_config_path(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/hindsight-hooks/config.toml``; a relative XDG value is ignored, per the XDG spec."""
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else home_dir(env) / ".config"
    return root / "hindsight-hooks" / "config.toml"


def project_config_path(cwd: Path) -> Path:
    return cwd / ".hindsight" / "config.toml"


def home_dir(env: Mapping[str, str]) -> Path:
    home = env.get("HOME", "")
    return Path(home) if home else Path.home()
