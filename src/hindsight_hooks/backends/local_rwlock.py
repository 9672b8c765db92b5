"""A lock that many readers share and one writer holds alone, with a bounded wait for each.

Why: the in-memory vector index of a store file is searched by every session of the process and
changed only when new vectors are read in. Searches only read the matrix, so they need not wait
for one another; a read of new vectors must have it to itself (ADR 177). A writer that is waiting
holds back readers that come after it, so a stream of searches cannot starve a refresh.

Not re-entrant, and a reader must not ask to write: it would wait for itself until its timeout.
"""

from __future__ import annotations

import threading


class ReadWriteLock:
    """Shared reads, exclusive writes; ``timeout`` None waits as long as it takes."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0
        self._writing = False
        self._writers_waiting = 0

    def acquire_read(self, timeout: float | None = None) -> bool:
        with self._cond:
            if not self._cond.wait_for(lambda: not self._writing and not self._writers_waiting, timeout):
                return False
            self._readers += 1
            return True

    def release_read(self) -> None:
        with self._cond:
            self._readers -= 1
            if self._readers == 0:
                self._cond.notify_all()

    def acquire_write(self, timeout: float | None = None) -> bool:
        with self._cond:
            self._writers_waiting += 1
            try:
                got = self._cond.wait_for(lambda: not self._writing and self._readers == 0, timeout)
                if got:
                    self._writing = True
                return got
            finally:
                self._writers_waiting -= 1
                if not self._writing:  # gave up: readers held back by this writer may go on
                    self._cond.notify_all()

    def release_write(self) -> None:
        with self._cond:
            self._writing = False
            self._cond.notify_all()
