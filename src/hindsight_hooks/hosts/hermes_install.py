"""``hindsight-hooks install hermes`` / ``uninstall hermes``: make our memory provider Hermes' active one.

Hermes Agent 0.19.0 finds a memory provider only among its bundled ones or in
``$HERMES_HOME/plugins/<name>/`` (``HERMES_HOME`` defaults to ``~/.hermes``). Install writes that folder,
``plugins/hindsight_hooks/`` with a two-line ``__init__.py`` (``register(ctx)`` hands Hermes
:class:`~.hermes.HindsightHooksProvider`) and a ``plugin.yaml`` (what ``hermes memory setup`` shows), then
makes the two settings of :mod:`.hermes_config`. Newer Hermes releases also find the provider through our
``hermes_agent.memory_providers`` entry point; the folder does no harm there (ADR-100).

- **Ours is recognisable**: the folder holds ``.hindsight-hooks-install.json`` (the files install wrote
  with their SHA-256, and the config record). A ``hindsight_hooks`` folder without it is refused.
- **Idempotent**: only files whose bytes differ are written; nothing changed, nothing written.
- **Uninstall removes exactly what install wrote**: the listed files that still have install's bytes,
  the record, Python's ``__pycache__`` of them, the folder if that left it empty, and our config settings.

The provider runs inside Hermes, so the hindsight-hooks package must be importable by Hermes' Python
(pip-install it into Hermes' environment); :func:`hermes_python_has_us` checks when it can.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import HindsightHooksError
from .hermes import PROVIDER_NAME
from .hermes_config import ConfigChange, ConfigError, ConfigRecord, apply, revert
from .owned_files import PLAIN_MODE, remove_unchanged, sha256_hex, write_changed

MANIFEST = ".hindsight-hooks-install.json"

INIT_PY = '''"""hindsight-hooks: long-term memory for Hermes (the memory provider `hindsight_hooks`).

Written by `hindsight-hooks install hermes`; `hindsight-hooks uninstall hermes` removes it. Hermes loads
this folder when config.yaml says `memory: {provider: hindsight_hooks}`; register(ctx) calls
ctx.register_memory_provider with the provider from the hindsight-hooks package, which must be
installed in the Python that runs Hermes.
"""


def register(ctx):
    try:
        from hindsight_hooks.hosts.hermes import register as register_provider
    except ImportError as exc:
        import logging

        logging.getLogger("hindsight_hooks").warning(
            "hindsight-hooks is not installed in the Python that runs Hermes (%s): "
            "pip install hindsight-hooks into Hermes' environment", exc
        )
        return
    register_provider(ctx)
'''


def _plugin_yaml() -> str:
    from .. import __version__

    return (
        f"name: {PROVIDER_NAME}\n"
        f'version: "{__version__}"\n'
        "description: hindsight-hooks - durable long-term memory (embedded SQLite store, or a Hindsight server)\n"
        "kind: exclusive\n"
    )


class InstallError(HindsightHooksError):
    """Hermes' files cannot be changed here; nothing was changed."""


@dataclass
class HermesChange:
    """What install/uninstall did under ``home``."""

    home: Path
    folder: Path
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    config: ConfigChange | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.written or self.removed or (self.config is not None and self.config.changed))


def hermes_home(env: dict[str, str] | None = None) -> Path:
    """``$HERMES_HOME``, else ``~/.hermes`` (as Hermes resolves it on Linux and macOS)."""
    environ = os.environ if env is None else env
    named = environ.get("HERMES_HOME", "").strip()
    return Path(named).expanduser() if named else Path.home() / ".hermes"


def _read_manifest(folder: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
        return None
    return data if isinstance(data, dict) else None


def _write_manifest(folder: Path, files: dict[str, str], record: ConfigRecord) -> None:
    from ..fsutil import atomic_write_text

    body = {"files": files, "config": record.to_json()}
    atomic_write_text(folder / MANIFEST, json.dumps(body, indent=2, sort_keys=True) + "\n", PLAIN_MODE)


def install(home: Path | None = None) -> HermesChange:
    """Write the provider folder and set ``memory.provider`` and ``plugins.enabled`` (see the module docstring)."""
    root = home or hermes_home()
    folder = root / "plugins" / PROVIDER_NAME
    change = HermesChange(root, folder)
    manifest = _read_manifest(folder) if folder.exists() else None
    if folder.exists() and manifest is None:
        raise InstallError(f"{folder} exists and was not made by hindsight-hooks; move it away first")
    wanted = {"__init__.py": INIT_PY.encode("utf-8"), "plugin.yaml": _plugin_yaml().encode("utf-8")}
    record = ConfigRecord.from_json(manifest.get("config")) if manifest is not None else None
    try:
        config, record = apply(root / "config.yaml", record)
    except ConfigError as exc:
        raise InstallError(str(exc)) from exc
    change.config = config
    folder.mkdir(parents=True, exist_ok=True)
    change.written.extend(write_changed(folder, wanted))
    files = {name: sha256_hex(data) for name, data in wanted.items()}
    if change.changed or manifest is None or manifest.get("files") != files:
        _write_manifest(folder, files, record)
    hint = hermes_python_has_us()
    if hint:
        change.warnings.append(hint)
    return change


def _remove_pycache(folder: Path, names: list[str]) -> None:
    """Python's compiled copies of the files we removed (Hermes imported them)."""
    cache = folder / "__pycache__"
    if not cache.is_dir():
        return
    stems = {Path(n).stem for n in names}
    for entry in cache.iterdir():
        if entry.name.split(".", 1)[0] in stems:
            entry.unlink()
    try:
        cache.rmdir()
    except OSError:
        pass


def uninstall(home: Path | None = None) -> HermesChange:
    """Remove what install wrote (files unchanged since) and take our config settings back out."""
    root = home or hermes_home()
    folder = root / "plugins" / PROVIDER_NAME
    change = HermesChange(root, folder)
    if not folder.exists():
        return change
    manifest = _read_manifest(folder)
    if manifest is None:
        raise InstallError(f"{folder} was not made by hindsight-hooks; nothing was removed")
    try:
        change.config = revert(root / "config.yaml", ConfigRecord.from_json(manifest.get("config")))
    except ConfigError as exc:
        raise InstallError(str(exc)) from exc
    change.removed, change.kept = remove_unchanged(folder, manifest["files"])
    _remove_pycache(folder, change.removed)
    (folder / MANIFEST).unlink()
    change.removed.append(MANIFEST)
    try:
        folder.rmdir()
    except OSError:
        pass  # the user's own (or edited) files are still there
    return change


def hermes_python_has_us(hermes: str | None = None) -> str | None:
    """A warning when the ``hermes`` on ``PATH`` runs a Python that cannot import hindsight_hooks; else None."""
    exe = hermes or shutil.which("hermes")
    if not exe:
        return None
    try:
        with open(exe, "rb") as fh:
            first = fh.readline(512).decode("utf-8", "replace").strip()
    except OSError:
        return None
    if not first.startswith("#!"):
        return None
    python = first[2:].strip().split(" ")[0]
    if not python or not os.access(python, os.X_OK):
        return None
    try:
        proc = subprocess.run([python, "-c", "import hindsight_hooks"], capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode == 0:
        return None
    return f"Hermes runs {python}, which cannot import hindsight_hooks: run `{python} -m pip install hindsight-hooks`"


def report(change: HermesChange, verb: str) -> str:
    """The lines ``install``/``uninstall`` print."""
    config = change.config
    lines: list[str] = []
    if verb == "install":
        if not change.changed:
            lines.append(f"hermes: already installed ({change.folder}; memory.provider is {PROVIDER_NAME})")
        else:
            lines.append(f"hermes: memory provider {PROVIDER_NAME} installed in {change.folder}")
            if config is not None and config.changed:
                lines.append(
                    f"hermes: {config.path} now sets memory.provider: {PROVIDER_NAME} and enables the "
                    "hindsight-hooks plugin (its /hindsight:* commands); Hermes uses it from its next session"
                )
            if config is not None and config.backup is not None:
                lines.append(f"the previous file is saved as {config.backup}")
    else:
        if not change.changed:
            lines.append(f"hermes: nothing of ours to remove in {change.folder}")
        else:
            lines.append(f"hermes: removed the memory provider from {change.folder}")
            if config is not None and config.restored:
                lines.append(f"hermes: {config.path} is back as it was before install")
            elif config is not None and config.changed:
                lines.append(f"hermes: took memory.provider and the plugin back out of {config.path}")
            for note in config.notes if config is not None else []:
                lines.append(f"  ({note})")
        if change.kept:
            lines.append(f"kept (edited since install): {', '.join(change.kept)}")
    lines.extend(f"warning: {w}" for w in change.warnings)
    return "\n".join(lines)


__all__ = ["HermesChange", "InstallError", "hermes_home", "hermes_python_has_us", "install", "report", "uninstall"]
