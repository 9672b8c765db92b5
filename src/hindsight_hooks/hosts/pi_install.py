"""``hindsight-hooks install pi`` / ``uninstall pi``: put the Pi extension where Pi looks for it.

Pi auto-loads ``<dir>/index.ts`` from every folder in ``$PI_CODING_AGENT_DIR/extensions``
(default ``~/.pi/agent/extensions``; ``--user``, the default) and in the project's
``.pi/extensions`` (``--project``). Install copies the extension's files from ``extensions/pi``
into ``<that>/hindsight/`` and writes ``hindsight.json`` beside them naming the Python that ran
the install (``sys.executable``): that Python has hindsight-hooks, so Pi never depends on
``PATH`` or an activated virtualenv.

- **Ours is recognisable**: the folder holds ``.hindsight-hooks-install.json``, the list of the
  files install wrote with their SHA-256. A ``hindsight`` folder without it is someone else's
  and is refused, never overwritten.
- **Idempotent**: installing again rewrites only files whose bytes differ (a moved virtualenv
  or a newer extension is picked up); nothing changed, nothing written.
- **Uninstall removes exactly what install wrote**: the listed files that still have the bytes
  install gave them, the list, and the folder if that left it empty. A file the user edited
  since is kept and named.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import HindsightHooksError
from ..fsutil import atomic_write_bytes
from .owned_files import PLAIN_MODE, remove_unchanged, sha256_hex, write_changed

EXTENSION_FILES = ("index.ts", "bridge.ts", "session.ts", "settings.ts")
SETTINGS_FILE = "hindsight.json"
MANIFEST = ".hindsight-hooks-install.json"
FOLDER = "hindsight"
PROTOCOL_VERSION = 1


class InstallError(HindsightHooksError):
    """The extension cannot be installed or removed here; nothing was changed."""


@dataclass
class PiChange:
    """What install/uninstall did in ``folder``."""

    folder: Path
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    python: str = ""

    @property
    def changed(self) -> bool:
        return bool(self.written or self.removed)


def extensions_dir(scope: str, cwd: Path, env: dict[str, str] | None = None) -> Path:
    """Where Pi auto-loads extensions for ``scope`` (``user`` or ``project``)."""
    environ = os.environ if env is None else env
    if scope == "project":
        return cwd / ".pi" / "extensions"
    agent_dir = environ.get("PI_CODING_AGENT_DIR")
    base = Path(agent_dir).expanduser() if agent_dir else Path.home() / ".pi" / "agent"
    return base / "extensions"


def extension_source() -> Path:
    """``extensions/pi`` of the checkout this package runs from."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent / "extensions" / "pi"
        if all((candidate / name).is_file() for name in EXTENSION_FILES):
            return candidate
    raise InstallError(
        "the Pi extension's files (extensions/pi) are not beside this installation; "
        "install hindsight-hooks from its source folder (pip install -e <checkout>) and run this again"
    )


def _read_manifest(folder: Path) -> dict[str, str] | None:
    try:
        raw = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise InstallError(f"{folder / MANIFEST} cannot be read ({type(exc).__name__}); nothing was changed") from exc
    files = raw.get("files") if isinstance(raw, dict) else None
    if not isinstance(files, dict):
        raise InstallError(f"{folder / MANIFEST} is not an install record; nothing was changed")
    return {str(k): str(v) for k, v in files.items()}


def _settings_bytes(python: str) -> bytes:
    from .. import __version__

    settings = {
        "python": python,
        "protocolVersion": PROTOCOL_VERSION,
        "installedBy": f"hindsight-hooks {__version__}",
    }
    return (json.dumps(settings, indent=2) + "\n").encode("utf-8")


def install(scope: str, cwd: Path, *, python: str | None = None) -> PiChange:
    """Copy the extension into ``<extensions>/hindsight`` and record which Python runs it."""
    folder = extensions_dir(scope, cwd) / FOLDER
    interpreter = python or sys.executable
    source = extension_source()
    if folder.exists() and _read_manifest(folder) is None:
        raise InstallError(f"{folder} exists and was not made by hindsight-hooks; move it away first")
    wanted = {name: (source / name).read_bytes() for name in EXTENSION_FILES}
    wanted[SETTINGS_FILE] = _settings_bytes(interpreter)
    change = PiChange(folder, python=interpreter)
    folder.mkdir(parents=True, exist_ok=True)
    change.written.extend(write_changed(folder, wanted))
    manifest = {"files": {name: sha256_hex(data) for name, data in wanted.items()}}
    manifest_bytes = (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode("utf-8")
    if change.written or not (folder / MANIFEST).is_file():
        atomic_write_bytes(folder / MANIFEST, manifest_bytes, PLAIN_MODE)
    return change


def uninstall(scope: str, cwd: Path) -> PiChange:
    """Remove the files install wrote (unchanged since), its record, and the folder if empty."""
    folder = extensions_dir(scope, cwd) / FOLDER
    change = PiChange(folder)
    if not folder.exists():
        return change
    files = _read_manifest(folder)
    if files is None:
        raise InstallError(f"{folder} was not made by hindsight-hooks; nothing was removed")
    change.removed, change.kept = remove_unchanged(folder, files)
    (folder / MANIFEST).unlink()
    change.removed.append(MANIFEST)
    try:
        folder.rmdir()
    except OSError:
        pass  # the user's own files (or edited ones) are still there
    return change


def report(change: PiChange, verb: str) -> str:
    """The lines ``install``/``uninstall`` print."""
    if verb == "install":
        if not change.changed:
            return f"pi: already installed in {change.folder} (runs {change.python})"
        return (
            f"pi: extension installed in {change.folder} (runs {change.python}); "
            "Pi loads it at its next start (or /reload)"
        )
    if not change.changed:
        return f"pi: nothing of ours to remove in {change.folder}"
    lines = [f"pi: removed the extension from {change.folder}"]
    if change.kept:
        lines.append(f"kept, because they were changed after install: {', '.join(change.kept)}")
    return "\n".join(lines)
