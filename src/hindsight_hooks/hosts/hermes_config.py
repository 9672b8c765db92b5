"""The two settings ``hindsight-hooks install hermes`` makes in ``$HERMES_HOME/config.yaml``, and their exact undo.

Install sets ``memory.provider: hindsight_hooks`` (Hermes runs one external memory provider, chosen there)
and adds ``hindsight-hooks`` to ``plugins.enabled`` (Hermes loads general plugins only when listed; ours
adds the slash commands and the durable end-of-turn write, ADR-100). The rules:

- **A backup first**: before a file that exists is changed, its bytes go to
  ``config.yaml.hindsight-hooks.bak`` (0600).
- **Idempotent**: when both settings are already there, the file is not written.
- **A record of what was there** (:class:`ConfigRecord`, kept by the installer): the provider before
  ours, and which keys and list entries install created.
- **Uninstall reverts exactly**: when the file still has the bytes install wrote, the backup's bytes come
  back (or the file goes, if install created it). When Hermes or the user rewrote it since, only our two
  settings are taken back (the previous provider restored, our list entry and the keys install created
  removed) and everything else they wrote stays.
- **A file that is not a YAML mapping is refused**, never rewritten.

Hermes rewrites this file itself with a YAML dump, so a rewrite here does what Hermes does (comments in the
file survive the exact undo, which restores bytes, but not an install that has to change the file).
"""

from __future__ import annotations

import importlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import HindsightHooksError
from ..fsutil import FILE_MODE, atomic_write_bytes
from .hermes import PROVIDER_NAME
from .hermes_plugin import PLUGIN_NAME
from .owned_files import sha256_hex

BACKUP_SUFFIX = ".hindsight-hooks.bak"


class ConfigError(HindsightHooksError):
    """config.yaml cannot be changed safely (not YAML, not a mapping, or no YAML library); it was not touched."""


@dataclass
class ConfigRecord:
    """What install found and did, so uninstall can put it back."""

    existed: bool = False
    had_provider: bool = False
    previous_provider: Any = None
    created_memory: bool = False
    added_enabled: bool = False
    created_enabled: bool = False
    created_plugins: bool = False
    before_sha: str = ""
    written_sha: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: object) -> ConfigRecord:
        if not isinstance(data, dict):
            return cls()
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)


@dataclass
class ConfigChange:
    path: Path
    changed: bool = False
    backup: Path | None = None
    restored: bool = False
    deleted: bool = False
    notes: list[str] = field(default_factory=list)


def _yaml() -> Any:
    try:
        return importlib.import_module("yaml")
    except ImportError as exc:
        raise ConfigError(
            "editing Hermes' config.yaml needs PyYAML, which comes with Hermes: run this with Hermes' Python, "
            "or pip install 'hindsight-hooks[hermes]'"
        ) from exc


def _load(path: Path) -> tuple[bytes | None, dict[str, Any]]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, {}
    yaml = _yaml()
    try:
        data = yaml.safe_load(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path} is not valid YAML ({type(exc).__name__}); it was not changed") from exc
    if data is None:
        return raw, {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path} does not hold a YAML mapping; it was not changed")
    return raw, data


def _dump(data: dict[str, Any]) -> bytes:
    text: str = _yaml().safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False)
    return text.encode("utf-8")


def _write(path: Path, data: bytes) -> None:
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = FILE_MODE
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, data, mode)


def _backup(path: Path, raw: bytes) -> Path:
    target = path.with_name(path.name + BACKUP_SUFFIX)
    atomic_write_bytes(target, raw, FILE_MODE)
    return target


def _section(data: dict[str, Any], key: str, path: Path) -> dict[str, Any] | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: `{key}` is not a mapping; it was not changed")
    return value


def apply(path: Path, record: ConfigRecord | None) -> tuple[ConfigChange, ConfigRecord]:
    """Set our provider and enable our plugin; returns what changed and the record to keep."""
    raw, data = _load(path)
    rec = record or ConfigRecord(existed=raw is not None, before_sha=sha256_hex(raw) if raw is not None else "")
    change = ConfigChange(path)
    memory = _section(data, "memory", path)
    plugins = _section(data, "plugins", path)
    enabled = plugins.get("enabled") if plugins is not None else None
    if enabled is not None and not isinstance(enabled, list):
        raise ConfigError(f"{path}: `plugins.enabled` is not a list; it was not changed")

    if memory is None:
        memory = {}
        data["memory"] = memory
        rec.created_memory = True
    if memory.get("provider") != PROVIDER_NAME:
        rec.had_provider = "provider" in memory
        rec.previous_provider = memory.get("provider")
        memory["provider"] = PROVIDER_NAME
        change.changed = True
    if plugins is None:
        plugins = {}
        data["plugins"] = plugins
        rec.created_plugins = True
    if enabled is None:
        enabled = []
        plugins["enabled"] = enabled
        rec.created_enabled = True
    if PLUGIN_NAME not in enabled:
        enabled.append(PLUGIN_NAME)
        rec.added_enabled = True
        change.changed = True

    if not change.changed:
        return change, rec
    if raw is None or record is None or rec.written_sha != sha256_hex(raw):  # not the file we wrote last time
        rec.existed = raw is not None
        rec.before_sha = sha256_hex(raw) if raw is not None else ""
    if raw is not None:
        change.backup = _backup(path, raw)
    written = _dump(data)
    _write(path, written)
    rec.written_sha = sha256_hex(written)
    return change, rec


def revert(path: Path, record: ConfigRecord) -> ConfigChange:
    """Take our two settings back out (exactly the old bytes when the file is as install left it)."""
    change = ConfigChange(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return change
    backup = path.with_name(path.name + BACKUP_SUFFIX)
    if record.written_sha and sha256_hex(raw) == record.written_sha:
        if not record.existed:
            path.unlink()
            change.changed = change.deleted = change.restored = True
            return change
        try:
            old = backup.read_bytes()
        except OSError:
            old = None
        if old is not None and sha256_hex(old) == record.before_sha:
            _write(path, old)
            backup.unlink()  # the same bytes as the file again
            change.changed = change.restored = True
            return change
    _, data = _load(path)
    memory = _section(data, "memory", path)
    if memory is not None and memory.get("provider") == PROVIDER_NAME:
        if record.had_provider:
            memory["provider"] = record.previous_provider
        else:
            del memory["provider"]
        if record.created_memory and not memory:
            del data["memory"]
        change.changed = True
    plugins = _section(data, "plugins", path)
    enabled = plugins.get("enabled") if plugins is not None else None
    if plugins is not None and isinstance(enabled, list) and record.added_enabled and PLUGIN_NAME in enabled:
        enabled.remove(PLUGIN_NAME)
        if record.created_enabled and not enabled:
            del plugins["enabled"]
        if record.created_plugins and not plugins:
            del data["plugins"]
        change.changed = True
    if change.changed:
        _backup(path, raw)
        _write(path, _dump(data))
        change.notes.append("config.yaml was changed since install: only our two settings were taken back")
    return change


__all__ = ["BACKUP_SUFFIX", "ConfigChange", "ConfigError", "ConfigRecord", "apply", "revert"]
