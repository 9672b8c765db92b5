"""Small JSON state files (manifest, checkpoint): atomic writes, corrupt files set aside.

Both files are conveniences — losing them only costs a re-import, which is idempotent — so a
corrupt one must never stop an import. It is not deleted either (we never delete what we
cannot parse): it is renamed to ``<file>.corrupt-<ts>`` and a fresh one starts, with a warning.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..fsutil import FILE_MODE, atomic_write_text, ensure_private_dir


@dataclass
class Loaded:
    """``data`` is ``None`` when the file is missing or was set aside; ``warning`` says why."""

    data: dict[str, Any] | None
    warning: str | None = None


def set_aside(path: Path) -> Path:
    """Rename a corrupt file out of the way; returns the new name."""
    target = path.with_name(f"{path.name}.corrupt-{int(time.time() * 1000)}")
    os.replace(path, target)
    return target


def load_state(path: Path, valid: Callable[[Any], bool], what: str) -> Loaded:
    """Read ``path``; a file that does not parse or fails ``valid`` is set aside with a warning."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Loaded(None)
    except OSError as exc:
        return Loaded(None, f"{what} {path} is unreadable ({type(exc).__name__}); starting a new one")
    try:
        data = json.loads(raw.decode("utf-8"))
        ok = valid(data)
    except (ValueError, UnicodeDecodeError):
        ok = False
        data = None
    if ok and isinstance(data, dict):
        return Loaded(data)
    try:
        kept = set_aside(path)
        note = f"kept as {kept.name}"
    except OSError:
        note = "it could not be moved aside and will be overwritten"
    return Loaded(None, f"{what} {path} was corrupt and has been recreated ({note})")


def save_state(path: Path, data: dict[str, Any]) -> None:
    """Atomically replace ``path`` (0600, in a 0700 folder)."""
    ensure_private_dir(path.parent)
    atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", FILE_MODE)
