"""An incremental index of the active file, so a plain enqueue never re-reads the whole file.

Enqueue must answer three questions under the lock: is this the bank's first job
(``bank_head``), is the bank in backoff (then it coalesces), and is the id already queued.
Re-parsing a file of up to 64 MB per enqueue would make the queue quadratic, so the index
remembers how far it has parsed and which file it parsed:

* the file's identity ``(st_dev, st_ino)``: an atomic rewrite makes a new inode;
* a *signature*, the first bytes of the last complete line it parsed, re-checked with one
  ``pread``: this catches an inode number that the filesystem reused for a later rewrite.

When both match and the file only grew, only the new bytes (other processes' appends) are
parsed; otherwise the index is rebuilt from the start. Only complete lines are parsed, so a
torn tail is picked up once it is terminated.

The index is a hint for enqueue decisions, never a source of truth for delivery: flush and
diagnostics always read the file itself.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from ..timefmt import parse_iso
from .jobs import loads_line

_SIG_BYTES = 64


class ActiveIndex:
    """Per-bank job counts, each bank's first job's ``next_attempt_at``, and the queued ids."""

    def __init__(self) -> None:
        self.ident: tuple[int, int] | None = None
        self.offset = 0
        self.sig_pos = 0
        self.sig = b""
        self.counts: dict[str, int] = {}
        self.heads: dict[str, float | None] = {}
        self.oldest: dict[str, float | None] = {}
        self.first_ids: dict[str, str] = {}
        self.ids: set[str] = set()
        self.tail: dict[str, Any] | None = None

    def reset(self, ident: tuple[int, int] | None = None) -> None:
        self.ident = ident
        self.offset = 0
        self.sig_pos = 0
        self.sig = b""
        self.counts = {}
        self.heads = {}
        self.oldest = {}
        self.first_ids = {}
        self.ids = set()
        self.tail = None

    # -- queries ------------------------------------------------------------------------------

    def count(self, bank_id: str) -> int:
        return self.counts.get(bank_id, 0)

    def total(self) -> int:
        return sum(self.counts.values())

    def in_backoff(self, bank_id: str, now: float) -> bool:
        """The bank's first job has a ``next_attempt_at`` in the future."""
        if bank_id not in self.heads:
            return False
        due_at = self.heads[bank_id]
        return due_at is not None and due_at > now

    # -- updates ------------------------------------------------------------------------------

    def add(self, job: dict[str, Any]) -> None:
        bank = job["bank_id"]
        self.counts[bank] = self.counts.get(bank, 0) + 1
        if bank not in self.heads:
            self.heads[bank] = parse_iso(job.get("next_attempt_at"))
            self.oldest[bank] = parse_iso(job.get("created_at"))
            self.first_ids[bank] = job["id"]
        self.ids.add(job["id"])
        self.tail = job

    def sync(self, fd: int, st: os.stat_result) -> None:
        """Bring the index up to date with the open active file ``fd`` (``st`` = its fstat)."""
        ident = (st.st_dev, st.st_ino)
        if ident != self.ident or st.st_size < self.offset or not self._sig_matches(fd):
            self.reset(ident)
        if st.st_size > self.offset:
            self._ingest(_pread_all(fd, self.offset, st.st_size), self.offset)

    def note_append(self, fd: int, job: dict[str, Any], size_before: int, data: bytes) -> None:
        """Record our own append of ``data`` (one line, possibly led by ``\\n``) at ``size_before``."""
        if self.offset != size_before:
            # A torn fragment sat before our line: parse the whole tail, fragment included.
            self._ingest(_pread_all(fd, self.offset, size_before + len(data)), self.offset)
            return
        line_start = size_before + (1 if data.startswith(b"\n") else 0)
        self.add(job)
        self.sig_pos = line_start
        self.sig = data[line_start - size_before : line_start - size_before + _SIG_BYTES]
        self.offset = size_before + len(data)

    def load(self, ident: tuple[int, int], raws: Iterable[bytes], jobs: Iterable[dict[str, Any] | None]) -> None:
        """Rebuild from lines we have just written ourselves (after an atomic rewrite)."""
        self.reset(ident)
        pos = 0
        for raw, job in zip(raws, jobs, strict=True):
            if job is not None:
                self.add(job)
            if raw.strip():
                self.sig_pos, self.sig = pos, raw[:_SIG_BYTES]
            pos += len(raw) + 1
        self.offset = pos

    def note_tail_merge(self, ident: tuple[int, int], size: int, new_tail: dict[str, Any], last_raw: bytes) -> None:
        """Record an atomic rewrite that only replaced the tail job (same id, bank and position).

        Counts, heads and ids are unchanged by such a merge, so nothing needs re-parsing.
        """
        self.ident = ident
        self.offset = size
        self.sig_pos = size - len(last_raw) - 1
        self.sig = last_raw[:_SIG_BYTES]
        self.tail = new_tail

    def invalidate(self) -> None:
        """Forget everything; the next sync re-reads the file."""
        self.reset(None)

    # -- internals ----------------------------------------------------------------------------

    def _sig_matches(self, fd: int) -> bool:
        if self.offset == 0 or not self.sig:
            return True
        try:
            return os.pread(fd, len(self.sig), self.sig_pos) == self.sig
        except OSError:
            return False

    def _ingest(self, data: bytes, base: int) -> None:
        end = data.rfind(b"\n")
        if end < 0:
            return
        pos = base
        for raw in data[: end + 1].split(b"\n")[:-1]:
            if raw.strip():
                job = loads_line(raw)
                if job is not None:
                    self.add(job)
                self.sig_pos, self.sig = pos, raw[:_SIG_BYTES]
            pos += len(raw) + 1
        self.offset = base + end + 1


def _pread_all(fd: int, start: int, end: int) -> bytes:
    chunks: list[bytes] = []
    pos = start
    while pos < end:
        chunk = os.pread(fd, min(end - pos, 1 << 24), pos)
        if not chunk:
            break
        chunks.append(chunk)
        pos += len(chunk)
    return b"".join(chunks)
