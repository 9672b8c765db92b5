"""The queue files on disk: reading, durable appends, quarantine and atomic rewrites.

Every function here assumes the caller holds the queue lock when it writes. The rules that
make a kill -9 anywhere harmless (docs/queue.md, docs/design.md#crash-safety):

* an acknowledged job is one ``write`` of a whole line to an ``O_APPEND`` descriptor followed by
  ``fsync``; a failed append is truncated back, so it never leaves half a job behind;
* a torn fragment left by someone else is never glued to a new job: the append writes ``\\n``
  first when the file does not end with one;
* rewrites go through ``fsutil.atomic_write_bytes`` (temp file, fsync, rename, fsync dir);
* lines that do not parse are copied to the quarantine file *before* any rewrite drops them;
  unreadable bytes are kept (base64) rather than dropped.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..fsutil import FILE_MODE, atomic_write_bytes, ensure_private_dir, fsync_dir
from ..timefmt import iso_ms
from .errors import MalformedQueueError, QueueError
from .jobs import loads_line

_READ_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)
_APPEND_FLAGS = os.O_RDWR | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)


@dataclass
class Entry:
    """One non-blank line of a queue file: its raw bytes, and the job if it parsed."""

    raw: bytes
    job: dict[str, Any] | None


@dataclass
class Snapshot:
    """A queue file as read once. ``ident`` is ``(st_dev, st_ino)``; ``None`` when missing."""

    path: Path
    entries: list[Entry] = field(default_factory=list)
    size: int = 0
    ident: tuple[int, int] | None = None

    @property
    def jobs(self) -> list[dict[str, Any]]:
        return [e.job for e in self.entries if e.job is not None]

    @property
    def malformed_lines(self) -> list[bytes]:
        return [e.raw for e in self.entries if e.job is None]


def describe_os_error(exc: OSError) -> str:
    """A short, content-free description of an OS error (errno name and message, no data)."""
    name = errno.errorcode.get(exc.errno or 0, "")
    text = exc.strerror or type(exc).__name__
    return f"{name}: {text}" if name else text


def split_lines(data: bytes) -> list[Entry]:
    """Parse file bytes into entries; blank lines are dropped, a torn tail is a malformed entry."""
    entries: list[Entry] = []
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        entries.append(Entry(raw, loads_line(raw)))
    return entries


def read_bytes(path: Path) -> tuple[bytes, tuple[int, int] | None]:
    """The whole file and its identity; a missing file is empty. Other errors are ``QueueError``."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except FileNotFoundError:
        return b"", None
    except OSError as exc:
        raise QueueError(f"cannot read retain queue file {path}: {describe_os_error(exc)}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise QueueError(f"cannot read retain queue file {path}: not a regular file")
        chunks: list[bytes] = []
        while True:
            chunk = os.read(fd, max(1 << 20, st.st_size + 1))
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks), (st.st_dev, st.st_ino)
    except OSError as exc:
        raise QueueError(f"cannot read retain queue file {path}: {describe_os_error(exc)}") from None
    finally:
        os.close(fd)


def read_tolerant(path: Path) -> Snapshot:
    """Every line of ``path``: valid jobs and malformed lines, in file order (docs/queue.md#job-schema tolerant
    reader)."""
    data, ident = read_bytes(path)
    return Snapshot(Path(path), split_lines(data), len(data), ident)


def read_strict(path: Path) -> list[dict[str, Any]]:
    """The jobs of ``path``, failing if any line is malformed (docs/queue.md#job-schema strict reader)."""
    snap = read_tolerant(path)
    bad = len(snap.malformed_lines)
    if bad:
        raise MalformedQueueError(f"malformed queue file {path}: {bad} invalid line(s)")
    return snap.jobs


def serialize(raws: Iterable[bytes]) -> bytes:
    return b"".join(raw + b"\n" for raw in raws)


def rewrite(path: Path, raws: Sequence[bytes]) -> tuple[tuple[int, int], int]:
    """Atomically replace ``path`` with these lines; returns the new file's identity and size."""
    data = serialize(raws)
    try:
        atomic_write_bytes(path, data, FILE_MODE)
        st = os.stat(path)
    except OSError as exc:
        raise QueueError(f"cannot rewrite retain queue file {path}: {describe_os_error(exc)}") from None
    return (st.st_dev, st.st_ino), len(data)


def append_durably(path: Path, data: bytes) -> None:
    """Append ``data`` with one ``O_APPEND`` write and ``fsync``; on failure truncate it back.

    Used for the dead-letter and quarantine files; the active file has its own fast path in
    the queue facade, with the same guarantees.
    """
    if not data:
        return
    created = False
    try:
        try:
            fd = os.open(path, _APPEND_FLAGS)
        except FileNotFoundError:
            ensure_private_dir(Path(path).parent)
            fd = os.open(path, _APPEND_FLAGS | os.O_CREAT, FILE_MODE)
            created = True
    except OSError as exc:
        raise QueueError(f"cannot open {path} for appending: {describe_os_error(exc)}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise QueueError(f"cannot append to {path}: not a regular file")
        prefix = b""
        if st.st_size > 0 and os.pread(fd, 1, st.st_size - 1) != b"\n":
            prefix = b"\n"
        write_all(fd, prefix + data, st.st_size)
    except OSError as exc:
        raise QueueError(f"cannot append to {path}: {describe_os_error(exc)}") from None
    finally:
        os.close(fd)
    if created:
        fsync_dir(Path(path).parent)


def write_fully(fd: int, data: bytes, size_before: int) -> None:
    """Write every byte; on any failure cut the file back to ``size_before`` and re-raise.

    Cutting back matters for short writes (a full disk, ``RLIMIT_FSIZE``): half a line must
    never stay behind to be mistaken for, or glued to, a later job. The caller holds the lock,
    so nobody can have appended after us.
    """
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            if written <= 0:
                raise OSError(errno.EIO, "short write")
            view = view[written:]
    except BaseException:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, size_before)
        raise


def write_all(fd: int, data: bytes, size_before: int) -> None:
    """``write_fully`` then ``fsync``; a failed fsync also cuts the bytes back."""
    write_fully(fd, data, size_before)
    try:
        os.fsync(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, size_before)
        raise


def quarantine_record(line: bytes, source_queue: Path, now: float) -> bytes:
    """One quarantine line: ``{quarantined_at, source_queue, line}``; non-UTF-8 lines are base64."""
    record: dict[str, Any] = {"quarantined_at": iso_ms(now), "source_queue": str(source_queue)}
    try:
        record["line"] = line.decode("utf-8")
    except UnicodeDecodeError:
        record["line"] = base64.b64encode(line).decode("ascii")
        record["line_encoding"] = "base64"
    return orjson.dumps(record) + b"\n"


def quarantine(malformed_path: Path, lines: Sequence[bytes], source_queue: Path, now: float) -> None:
    """Append unreadable lines to the quarantine file (durably) so a rewrite may drop them."""
    if lines:
        append_durably(malformed_path, b"".join(quarantine_record(line, source_queue, now) for line in lines))


def summarize(path: Path) -> dict[str, Any]:
    """``{path, valid, malformed, error}`` for any queue-shaped file; never raises (docs/queue.md#diagnostics)."""
    out: dict[str, Any] = {"path": str(path), "valid": 0, "malformed": 0, "error": None}
    try:
        snap = read_tolerant(path)
    except Exception as exc:
        out["error"] = str(exc) if isinstance(exc, QueueError) else type(exc).__name__
        return out
    out["valid"] = len(snap.jobs)
    out["malformed"] = len(snap.malformed_lines)
    return out
