"""Small, careful file primitives shared by every writer of state files.

State files hold transcripts, so they are created 0600 inside a 0700 folder, and every
rewrite is atomic (temp file in the same folder, fsync, ``os.replace``, fsync of the folder):
a crash leaves either the old or the new file, never a torn one.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

FILE_MODE = 0o600
DIR_MODE = 0o700
GITIGNORE_TEXT = "*\n!.gitignore\n!config.toml\n"


def free_name(path: Path, label: str, stamp: int | str, *, reserve: bool = False) -> Path:
    """A name beside ``path`` that nothing uses yet: ``<name>.<label>-<stamp>``, else with
    ``-1``, ``-2``... appended.

    Two moves (or backups) in one clock tick must not overwrite each other: nothing we move
    aside is ever lost. ``reserve`` creates the file (0600, ``O_EXCL``) so that two processes
    racing for a name never share one; the caller then writes or replaces it.
    """
    base = f"{path.name}.{label}-{stamp}"
    n = 0
    while True:
        target = path.with_name(base if n == 0 else f"{base}-{n}")
        n += 1
        if not reserve:
            if not os.path.lexists(target):
                return target
            continue
        try:
            os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
        except FileExistsError:
            continue
        return target


def move_aside(path: Path, stamp: int | str, label: str = "corrupt") -> Path:
    """Rename ``path`` to a free ``<name>.<label>-<stamp>[-n]`` (never deleted, never over
    another moved-aside file) and return the new path."""
    target = free_name(path, label, stamp)
    os.replace(path, target)
    return target


def fsync_dir(path: Path) -> None:
    """fsync a directory so a rename inside it is durable (best effort: not every FS allows it)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write_bytes(path: Path, data: bytes, mode: int = FILE_MODE, *, durable: bool = True) -> None:
    """Replace ``path`` with ``data`` atomically; the temp file never outlives a failure.

    ``durable=False`` skips both fsyncs: still never torn, but a power cut may lose the write
    (for state whose loss costs little, written on a hot path)."""
    path = Path(path)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable:
        fsync_dir(path.parent)


def atomic_write_text(path: Path, text: str, mode: int = FILE_MODE) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), mode)


def ensure_private_dir(path: Path, gitignore: bool = False) -> Path:
    """Create ``path`` (0700) if missing; with ``gitignore``, add one that keeps only config.toml.

    An existing ``.gitignore`` is never overwritten.
    """
    path = Path(path)
    if not path.exists():
        path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        with contextlib.suppress(OSError):
            os.chmod(path, DIR_MODE)
    if gitignore:
        gi = path / ".gitignore"
        if not gi.exists():
            with contextlib.suppress(FileExistsError):
                fd = os.open(gi, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write(GITIGNORE_TEXT)
    return path


def open_private_append(path: Path) -> int:
    """Open ``path`` for O_APPEND writing, creating it 0600; returns a raw fd."""
    return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
