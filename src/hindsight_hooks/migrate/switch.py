"""Pointing the project's config at the server after a complete migration (``--switch-config``).

The project file (``.hindsight/config.toml``, the file ``hindsight:init`` writes) gets
``backend = "hindsight"`` and ``[hindsight] base_url``; every other key stays as it was. The
previous file is kept beside it as ``config.toml.bak-<time>`` (the same backup ``init --force``
makes), and the new text is parsed back before it replaces the old one: if it would not read
as the same settings plus the two keys, nothing is written (ADR 153).

The API key is never written here: a project file may not hold one (ADR-004); the server's key
stays in the user config or the environment, where the hooks already look for it.

Comments of the old file do not survive the rewrite (Python has no TOML writer that keeps
them); they are in the backup.
"""

from __future__ import annotations

import math
import re
import shutil
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..config import project_config_path
from ..errors import HindsightHooksError
from ..fsutil import atomic_write_text, ensure_private_dir, free_name

HEADER = "# hindsight-hooks project config (keys: see the README); rewritten by `hindsight-hooks migrate`\n"
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


@dataclass
class Switched:
    path: Path
    backup: Path | None


CREDENTIALS_IN_URL = (
    "the server URL holds a user name or password, which a project file must not: "
    "give the URL without them and the key through hindsight.api_key_ref in your user config"
)


class SwitchError(HindsightHooksError):
    """The project config could not be rewritten; the old file is untouched."""


def has_credentials(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return bool(parts.username or parts.password)


def switch_project_config(cwd: Path, base_url: str) -> Switched:
    if has_credentials(base_url):
        raise SwitchError(CREDENTIALS_IN_URL)
    path = project_config_path(cwd)
    data: dict[str, Any] = {}
    if path.exists():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
            raise SwitchError(f"{path} does not parse ({type(exc).__name__}); fix it or move it away first") from None
    wanted = dict(data)
    wanted["backend"] = "hindsight"
    section = wanted.get("hindsight")
    if section is not None and not isinstance(section, dict):
        raise SwitchError(f"{path}: `hindsight` is not a table")
    wanted["hindsight"] = {**(section or {}), "base_url": base_url.rstrip("/")}
    text = HEADER + dumps(wanted)
    if tomllib.loads(text) != wanted:
        raise SwitchError(f"{path} holds values this writer cannot reproduce; set backend and base_url by hand")
    ensure_private_dir(path.parent, gitignore=True)
    backup = None
    if path.exists():
        backup = free_name(path, "bak", time.strftime("%Y%m%dT%H%M%S"), reserve=True)
        shutil.copy2(path, backup)
    atomic_write_text(path, text, mode=0o644)
    return Switched(path, backup)


def dumps(data: dict[str, Any]) -> str:
    """TOML for what a config file holds: scalars, arrays, inline tables in arrays, nested tables."""
    lines: list[str] = []
    _table(data, [], lines)
    return "\n".join(lines).strip("\n") + "\n"


def _table(data: dict[str, Any], path: list[str], lines: list[str]) -> None:
    plain = {k: v for k, v in data.items() if not isinstance(v, dict)}
    tables = {k: v for k, v in data.items() if isinstance(v, dict)}
    if path and (plain or not tables):
        lines.append("")
        lines.append("[" + ".".join(_key(p) for p in path) + "]")
    for key, value in plain.items():
        lines.append(f"{_key(key)} = {_value(value)}")
    for key, value in tables.items():
        _table(value, [*path, key], lines)


def _key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _string(key)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise SwitchError("a config value is not a finite number")
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + "}"
    raise SwitchError(f"a config value of type {type(value).__name__} cannot be written back")


def _string(text: str) -> str:
    out = ['"']
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)
