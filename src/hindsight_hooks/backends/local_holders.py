"""Whether another process has the embedded store open, and whether the file changed (ADR 190).

``repair`` puts a new file where the damaged one was. A process that still has the old file open
(an agent session, the MCP server, a framework's process) keeps writing to the old file after the
swap, and what it writes is then in the kept damaged copy, not in the store: lost to the user.
A hook process that writes while the damaged file is read leaves its memory out of the new file
the same way. So the command asks first, and again before the swap.

**Who has it open.** Every SQLite connection to a WAL file holds a shared POSIX lock on the
database file's lock bytes (the "shared" range SQLite keeps at 1 GiB + 2, 510 bytes) for as long
as it is open, idle or not. ``F_GETLK`` asks the kernel whether another process holds a lock there
and which process it is, without taking a lock and without reading the file: it works on a file
that SQLite cannot open at all. A connection of this process is never reported (POSIX locks do
not conflict within a process), which is why the command closes its own connections first.
Where ``fcntl`` or its record layout is unknown (Windows), nothing can be told, and the command
says so instead of claiming the file is free.

**Whether it changed.** The size and modification time of the file and its WAL, taken before
the read and compared before the swap: a process that opened the store, wrote and closed again
in between holds no lock any more, but moved one of them.
"""

from __future__ import annotations

import os
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

from ..errors import HindsightHooksError

# SQLite's lock bytes in every database file: the "pending" byte at 1 GiB, then the "reserved"
# byte, then the 510-byte "shared" range. They are part of the file format's locking protocol,
# which every SQLite version shares (a version that moved them would corrupt files in use).
_PENDING_BYTE = 0x40000000
_LOCK_SPAN = 512  # pending + reserved + shared

# ``struct flock`` as the kernel reads it: Linux (short type, short whence, off_t start, off_t
# len, pid_t pid) and the BSDs and macOS (off_t start, off_t len, pid_t pid, short type, short
# whence). Native alignment matches the C struct on both.
_LINUX = "hhqqi"
_BSD = "qqihh"


@dataclass(frozen=True)
class Holder:
    """Another process holding the store open: its id, and its name and command line where the
    system tells them (Linux's ``/proc``), so the caller can tell a process of its own."""

    pid: int
    name: str | None
    command: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"process {self.pid}" + (f" ({self.name})" if self.name else "")


class CannotTell(HindsightHooksError):
    """This system cannot say whether another process has the file open."""


def holder_of(path: Path) -> Holder | None:
    """Another process that has the store at ``path`` open, or ``None`` when none has.

    Raises :class:`CannotTell` where the lock query is not available.
    """
    try:
        import fcntl
    except ImportError:
        raise CannotTell("this system has no POSIX file locks to ask") from None
    layout = _layout()
    if layout is None:
        raise CannotTell(f"the lock record of {sys.platform} is not known")
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        raise CannotTell(f"the file cannot be opened to ask ({exc.strerror})") from None
    try:
        query = _flock(layout, fcntl.F_WRLCK, _PENDING_BYTE, _LOCK_SPAN)
        answer = fcntl.fcntl(fd, fcntl.F_GETLK, query)
    except OSError as exc:
        raise CannotTell(f"the lock query failed ({exc.strerror})") from None
    finally:
        os.close(fd)
    kind, pid = _read_flock(layout, answer)
    if kind == fcntl.F_UNLCK:
        return None
    return Holder(pid, _process_name(pid), _command_line(pid))


def _layout() -> str | None:
    if sys.platform.startswith("linux"):
        return _LINUX
    if sys.platform == "darwin" or "bsd" in sys.platform:
        return _BSD
    return None


def _flock(layout: str, kind: int, start: int, length: int) -> bytes:
    if layout == _LINUX:
        return struct.pack(layout, kind, os.SEEK_SET, start, length, 0)
    return struct.pack(layout, start, length, 0, kind, os.SEEK_SET)


def _read_flock(layout: str, raw: bytes) -> tuple[int, int]:
    """(lock type, pid) from a ``struct flock`` the kernel filled in."""
    if layout == _LINUX:
        kind, _, _, _, pid = struct.unpack(layout, raw)
    else:
        _, _, pid, kind, _ = struct.unpack(layout, raw)
    return int(kind), int(pid)


def _process_name(pid: int) -> str | None:
    """The holder's command name on Linux (``/proc/<pid>/comm``); ``None`` elsewhere."""
    try:
        return Path(f"/proc/{pid}/comm").read_text(encoding="utf-8", errors="replace").strip() or None
    except OSError:
        return None


def _command_line(pid: int) -> tuple[str, ...]:
    """The holder's arguments on Linux (``/proc/<pid>/cmdline``); empty elsewhere."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ()
    return tuple(part.decode("utf-8", "replace") for part in raw.split(b"\0") if part)


@dataclass(frozen=True)
class FileState:
    """Size and change time of a store file and its WAL: what a write moves."""

    stamps: tuple[tuple[int, int] | None, ...]

    @classmethod
    def of(cls, path: Path) -> FileState:
        stamps: list[tuple[int, int] | None] = []
        for suffix in ("", "-wal"):
            try:
                st = path.with_name(path.name + suffix).stat()
            except OSError:
                stamps.append(None)
            else:  # an empty WAL holds nothing: a read-only reader leaves one behind where there was none
                stamps.append((st.st_size, st.st_mtime_ns) if st.st_size or not suffix else None)
        return cls(tuple(stamps))
