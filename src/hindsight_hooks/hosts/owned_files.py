"""A folder of files we install into another program's tree, recorded by their SHA-256.

The Hermes provider folder and the Pi extension folder are both installed the same way: write
only the files whose bytes differ (so a second install writes nothing), remember each file's
digest, and on uninstall delete only the files that still carry the bytes we wrote, so that a
file the user edited since is kept. How each installer reads and words its record differs (Pi
refuses an unreadable record, Hermes treats it as not ours), so the record itself stays with them.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..fsutil import atomic_write_bytes

PLAIN_MODE = 0o666
"""Files in another program's tree are plain files: the umask decides their mode, as for ``write_bytes``."""


def sha256_hex(data: bytes) -> str:
    """The digest an install record keeps for ``data``."""
    return hashlib.sha256(data).hexdigest()


def write_changed(folder: Path, wanted: dict[str, bytes]) -> list[str]:
    """Write each of ``wanted`` into ``folder`` whose bytes differ (atomically); the names written."""
    written: list[str] = []
    for name, data in wanted.items():
        target = folder / name
        try:
            same = target.read_bytes() == data
        except OSError:
            same = False
        if not same:
            atomic_write_bytes(target, data, PLAIN_MODE)
            written.append(name)
    return written


def remove_unchanged(folder: Path, digests: dict[str, str]) -> tuple[list[str], list[str]]:
    """Delete the recorded files that still have the recorded bytes: ``(removed, kept)``.

    A recorded file that is already gone is in neither list.
    """
    removed: list[str] = []
    kept: list[str] = []
    for name, digest in sorted(digests.items()):
        target = folder / name
        try:
            data = target.read_bytes()
        except FileNotFoundError:
            continue
        if sha256_hex(data) == digest:
            target.unlink()
            removed.append(name)
        else:
            kept.append(name)
    return removed, kept


__all__ = ["PLAIN_MODE", "remove_unchanged", "sha256_hex", "write_changed"]
