"""The queue lock (docs/queue.md#locking; design in adr/002-queue-lock.md).

Two layers, always taken in this order and released in reverse:

1. an in-process mutex per resolved queue path, so threads of one process queue up cheaply and
   never contend on the OS lock with each other;
2. filelock's native OS lock (``flock`` on POSIX) on ``Q.lock``, for other processes. We open the
   lock file ourselves and take the lock with ``filelock.lock_descriptor``: the very lock a
   ``filelock.FileLock`` on the same path takes, without its per-acquire bookkeeping, which costs
   more than the fsync we protect. Older filelock releases without it use ``FileLock`` itself.
   Where the filesystem has no native lock, we fall back to filelock's soft (existence) lock and
   apply the docs/queue.md#locking stale rule on top.

While held, ``Q.lock.owner.json`` says who holds it, for diagnostics and for the timeout message.
Waiting is bounded by ``lock_timeout_ms`` and polls every ``lock_retry_ms``; every waiter times
out on its own. The lock never covers network I/O (the flush releases it while delivering).
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import stat
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import filelock
import orjson

from ..fsutil import FILE_MODE, ensure_private_dir
from ..timefmt import iso_ms, parse_iso
from .errors import LockTimeoutError, QueueError
from .store import describe_os_error

# Errors that mean "someone else is there": retry, never start stale cleanup (docs/queue.md#locking).
CONTENTION_ERRNOS: frozenset[int] = frozenset(
    e for e in (errno.EEXIST, errno.EPERM, errno.EACCES, errno.EBUSY, errno.ENOTEMPTY, errno.EAGAIN) if e
)
# Opening ``Q.lock`` never contends with a holder (the OS lock is taken on the open descriptor),
# so a failed open is retried only for errnos that can pass; EACCES/EPERM (a file we may not
# open, e.g. mode 000 or someone else's) would fail for the whole wait: fail at once (ADR 070).
_OPEN_RETRY_ERRNOS: frozenset[int] = frozenset(e for e in (errno.EBUSY, errno.EAGAIN, errno.EINTR) if e)
_OPEN_FLAGS = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)

_OWNER_SIZE = 256  # the owner record is padded to this size and rewritten in place
_OWNER_REFRESH_S = 1.0  # a holder's own record younger than this is not rewritten (adr/002)
_lock_descriptor = getattr(filelock, "lock_descriptor", None)
_unlock_descriptor = getattr(filelock, "unlock_descriptor", None)

_registry_guard = threading.Lock()
_registry: dict[str, threading.Lock] = {}
_registry_pid = os.getpid()
_hostname: str | None = None


def hostname() -> str:
    global _hostname
    if _hostname is None:
        try:
            _hostname = socket.gethostname()
        except OSError:
            _hostname = ""
    return _hostname


def _mutex_for(resolved: str) -> threading.Lock:
    """The process-wide mutex of one queue path (fresh in a forked child: the parent's may be held)."""
    global _registry_pid
    with _registry_guard:
        if os.getpid() != _registry_pid:
            _registry.clear()
            _registry_pid = os.getpid()
        mutex = _registry.get(resolved)
        if mutex is None:
            mutex = _registry[resolved] = threading.Lock()
        return mutex


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists on this host (EPERM means it does)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def read_owner(owner_path: Path) -> dict[str, Any] | None:
    """The owner record if it parses as ``{pid:int, hostname, acquired_at, token}``; never raises."""
    try:
        with open(owner_path, "rb") as fh:
            value = orjson.loads(fh.read(4096))
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(value, dict) or not isinstance(value.get("pid"), int):
        return None
    return value


def unopenable_message(lock_path: Path, exc: OSError) -> str:
    """Why ``Q.lock`` cannot be opened, and what to do: it holds no data, so fixing its mode or
    owner, or removing it, is always safe (the next writer recreates it)."""
    what = describe_os_error(exc)
    if exc.errno == errno.EISDIR:
        todo = "it is a directory: remove it (the lock file holds no data)"
    elif exc.errno in (errno.EACCES, errno.EPERM):
        todo = f"fix its mode or owner (chmod 600 {lock_path}, owned by this user) or remove it (it holds no data)"
    elif exc.errno == errno.ELOOP:
        todo = "it is a symbolic link: remove it (the lock file holds no data)"
    else:
        todo = "check the state folder and its permissions"
    return f"cannot open lock file {lock_path} ({what}): {todo}"


class Hold:
    """One acquisition: what ``QueueLock.release`` must undo."""

    __slots__ = ("mutex", "release_os", "token")

    def __init__(self, mutex: threading.Lock, release_os: Callable[[], None], token: str) -> None:
        self.mutex = mutex
        self.release_os = release_os
        self.token = token


class QueueLock:
    """The two-layer lock of one queue file; use ``with lock.hold(): ...``."""

    def __init__(
        self,
        queue_path: Path,
        *,
        timeout_ms: int = 5000,
        retry_ms: int = 25,
        stale_ms: int = 30000,
        force_soft: bool = False,
    ) -> None:
        self.queue_path = Path(queue_path)
        self.lock_path = self.queue_path.with_name(self.queue_path.name + ".lock")
        self.owner_path = self.queue_path.with_name(self.queue_path.name + ".lock.owner.json")
        self.stale_claim_path = self.queue_path.with_name(self.queue_path.name + ".lock.stale-claim")
        self._owner_str = str(self.owner_path)
        self.timeout_s = max(0.0, timeout_ms / 1000.0)
        self.retry_s = max(0.001, retry_ms / 1000.0)
        self.stale_s = max(0.0, stale_ms / 1000.0)
        self._resolved = os.path.realpath(self.queue_path)
        self._soft = force_soft
        self._filelock: filelock.BaseFileLock | None = None
        self._dir_ready = False
        self.stale_breaks = 0  # how many stale soft locks this instance removed (diagnostics/tests)
        self._mutex_cache: tuple[int, threading.Lock] | None = None
        self._owner_prefix: tuple[int, bytes] | None = None
        self._last_owner: tuple[int, float, bytes] | None = None  # (pid, written at, bytes written)

    @property
    def soft(self) -> bool:
        """True when the soft (existence) lock is in use instead of the native OS lock."""
        return self._soft

    def acquire(self) -> Hold:
        """Take both layers; raises ``LockTimeoutError`` after ``lock_timeout_ms``. Pair with ``release``."""
        deadline = time.monotonic() + self.timeout_s
        mutex = self._mutex()
        if not mutex.acquire(timeout=self.timeout_s):
            raise LockTimeoutError(self._timeout_message())
        try:
            release_os = self._acquire_os(deadline)
        except BaseException:
            mutex.release()
            raise
        token = os.urandom(8).hex()
        self._write_owner(token)
        return Hold(mutex, release_os, token)

    def release(self, held: Hold) -> None:
        """Undo ``acquire``: clear the owner record if it is still ours (soft mode), then unlock both."""
        try:
            try:
                if self._soft:
                    self._remove_owner(held.token)
            finally:
                held.release_os()
        finally:
            held.mutex.release()

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """``with lock.hold(): ...`` — both layers held for the block."""
        held = self.acquire()
        try:
            yield
        finally:
            self.release(held)

    def _mutex(self) -> threading.Lock:
        pid = os.getpid()
        if self._mutex_cache is None or self._mutex_cache[0] != pid:
            self._mutex_cache = (pid, _mutex_for(self._resolved))
        return self._mutex_cache[1]

    # -- OS layer -----------------------------------------------------------------------------

    def _ensure_dir(self) -> None:
        if not self._dir_ready:
            try:
                ensure_private_dir(self.lock_path.parent)
            except OSError as exc:
                raise QueueError(f"cannot create the folder of {self.lock_path}: {describe_os_error(exc)}") from None
            self._dir_ready = True

    def _acquire_os(self, deadline: float) -> Callable[[], None]:
        self._ensure_dir()
        if not self._soft and _lock_descriptor is not None:
            fd = self._acquire_descriptor(deadline)
            if fd is not None:
                return lambda: self._release_descriptor(fd)
            self._soft = True  # the filesystem has no native lock (ENOSYS): fall back, see below
        return self._acquire_filelock(deadline)

    def _acquire_descriptor(self, deadline: float) -> int | None:
        """Poll the native lock on ``Q.lock``; ``None`` when the filesystem cannot lock at all."""
        assert _lock_descriptor is not None
        recreated = False
        while True:
            try:
                fd = os.open(self.lock_path, _OPEN_FLAGS, FILE_MODE)
            except FileNotFoundError:
                # The state folder was removed since we last made it: make it again, once per wait.
                if recreated:
                    raise QueueError(f"cannot open lock file {self.lock_path}: its folder keeps vanishing") from None
                recreated = True
                self._dir_ready = False
                self._ensure_dir()
                continue
            except OSError as exc:
                if exc.errno not in _OPEN_RETRY_ERRNOS:
                    raise QueueError(unopenable_message(self.lock_path, exc)) from None
            else:
                try:
                    locked = bool(_lock_descriptor(fd, blocking=False))
                except OSError as exc:
                    os.close(fd)
                    if exc.errno == errno.ENOSYS:
                        return None
                    if exc.errno not in CONTENTION_ERRNOS:
                        raise QueueError(f"cannot lock {self.lock_path}: {describe_os_error(exc)}") from None
                    locked = False
                else:
                    if locked:
                        # A lock on a file someone unlinked guards nothing: start over on the new one.
                        st = os.fstat(fd)
                        if st.st_nlink > 0 and stat.S_ISREG(st.st_mode):
                            return fd
                        self._release_descriptor(fd)
                        if not stat.S_ISREG(st.st_mode):
                            raise QueueError(f"cannot lock {self.lock_path}: not a regular file")
                        continue
                    os.close(fd)
            self._wait_or_fail(deadline)

    @staticmethod
    def _release_descriptor(fd: int) -> None:
        try:
            if _unlock_descriptor is not None:
                with contextlib.suppress(OSError):
                    _unlock_descriptor(fd)
        finally:
            os.close(fd)  # closing drops the lock even if the unlock failed

    def _acquire_filelock(self, deadline: float) -> Callable[[], None]:
        """filelock's own lock: ``FileLock`` (old filelock) or ``SoftFileLock`` (no native lock)."""
        if self._filelock is None:
            cls: type[filelock.BaseFileLock] = filelock.SoftFileLock if self._soft else filelock.FileLock
            self._filelock = cls(str(self.lock_path), mode=FILE_MODE, thread_local=False)
        lock = self._filelock
        while True:
            contended = False
            try:
                lock.acquire(timeout=0)
                return lock.release
            except filelock.Timeout:
                pass
            except OSError as exc:
                if exc.errno not in CONTENTION_ERRNOS:
                    raise QueueError(f"cannot lock {self.lock_path}: {describe_os_error(exc)}") from None
                contended = True
            if self._soft and not contended and self._break_if_stale():
                continue
            self._wait_or_fail(deadline)

    def _wait_or_fail(self, deadline: float) -> None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise LockTimeoutError(self._timeout_message())
        time.sleep(min(self.retry_s, left))

    # -- soft-lock stale rule (docs/queue.md#locking) ----------------------------------------------------------

    def soft_lock_is_stale(self, now: float | None = None) -> bool:
        """docs/queue.md#locking: no parsable owner and an old marker, or an old owner whose pid on this host is
        dead."""
        now = time.time() if now is None else now
        try:
            st = os.stat(self.lock_path)
        except OSError:
            return False
        owner = read_owner(self.owner_path)
        if owner is None:
            return now - st.st_mtime > self.stale_s
        acquired = parse_iso(owner.get("acquired_at"))
        if acquired is None or now - acquired <= self.stale_s:
            return False
        if owner.get("hostname") != hostname():
            return False
        return not pid_alive(int(owner["pid"]))

    def _break_if_stale(self) -> bool:
        """Remove a stale soft lock, guarded by an O_EXCL stale-claim file; True when removed."""
        if not self.soft_lock_is_stale():
            return False
        try:
            fd = os.open(self.stale_claim_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        except FileExistsError:
            # Another cleaner is at work; its claim is abandoned after lock_stale_ms.
            with contextlib.suppress(OSError):
                if time.time() - os.stat(self.stale_claim_path).st_mtime > self.stale_s:
                    os.unlink(self.stale_claim_path)
            return False
        except OSError:
            return False
        try:
            os.close(fd)
            if not self.soft_lock_is_stale():  # re-check under the claim: a fresh lock is never removed
                return False
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.lock_path)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.owner_path)
            self.stale_breaks += 1
            return True
        finally:
            with contextlib.suppress(OSError):
                os.unlink(self.stale_claim_path)

    # -- owner record ---------------------------------------------------------------------------

    def _write_owner(self, token: str) -> None:
        """Publish ``{pid, hostname, acquired_at, token}`` for diagnostics (adr/002).

        One ``pwrite`` of a space-padded record over the same file, not a temp file + rename:
        only the lock holder ever writes it, so there is no competing writer, and it adds no
        directory operation to the journal commit that the enqueue's fsync pays for. Not
        fsynced: after a crash the OS lock is gone anyway. A failure never fails the lock.
        With the native lock the record is not cleared on release: readers first probe whether
        the lock is held (``held_by_someone``), so a leftover record is never shown as a holder.
        A process that re-takes the native lock within ``_OWNER_REFRESH_S`` while the file still
        holds its own last record leaves it as it is (one read, no write), so ``acquired_at`` is
        then up to that much older than the current hold: ages are upper bounds.
        """
        now = time.time()
        pid = os.getpid()
        last = self._last_owner
        if (
            not self._soft
            and last is not None
            and last[0] == pid
            and now - last[1] < _OWNER_REFRESH_S
            and self._owner_file_is(last[2])
        ):
            return
        if self._owner_prefix is None or self._owner_prefix[0] != pid:
            self._owner_prefix = (pid, b'{"pid":%d,"hostname":%s,"acquired_at":"' % (pid, orjson.dumps(hostname())))
        record = self._owner_prefix[1] + b'%s","token":"%s"}' % (iso_ms(now).encode(), token.encode())
        written = self._overwrite_owner(record)
        self._last_owner = None if written is None else (pid, now, written)

    def _owner_file_is(self, expected: bytes) -> bool:
        try:
            fd = os.open(self._owner_str, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            return False
        try:
            return os.pread(fd, len(expected) + 1, 0) == expected
        except OSError:
            return False
        finally:
            os.close(fd)

    def _overwrite_owner(self, record: bytes) -> bytes | None:
        """Write ``record`` padded over the file's current length; returns the bytes written."""
        try:
            fd = os.open(self._owner_str, os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), FILE_MODE)
        except OSError:
            return None
        try:
            padded = record.ljust(max(_OWNER_SIZE, os.fstat(fd).st_size), b" ")
            os.pwrite(fd, padded, 0)
            return padded
        except OSError:
            return None
        finally:
            os.close(fd)

    def _remove_owner(self, token: str) -> None:
        """Clear the record on release, but only if it is still ours (a broken soft lock may not be)."""
        owner = read_owner(self.owner_path)
        if owner is not None and owner.get("token") == token:
            self._overwrite_owner(b"{}")
            self._last_owner = None

    def held_by_someone(self) -> bool:
        """Probe the native lock without waiting (diagnostics: is the owner record current?)."""
        return self.probe()[0]

    def probe(self) -> tuple[bool, str | None]:
        """``(held, error)`` without waiting: ``error`` says why the lock file cannot be used at
        all (it cannot be opened, or is not a regular file), in which case nobody holds it and
        every queue operation fails; a missing file is simply free."""
        if self._soft or _lock_descriptor is None:
            return self.lock_path.exists(), None
        try:
            fd = os.open(self.lock_path, os.O_RDWR | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            return False, None
        except OSError as exc:
            return False, unopenable_message(self.lock_path, exc)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return False, f"cannot lock {self.lock_path}: not a regular file; remove it (it holds no data)"
            if _lock_descriptor(fd, blocking=False):
                if _unlock_descriptor is not None:
                    _unlock_descriptor(fd)
                return False, None
            return True, None
        except OSError as exc:
            if exc.errno in CONTENTION_ERRNOS:
                return True, None
            return False, f"cannot lock {self.lock_path}: {describe_os_error(exc)}"
        finally:
            os.close(fd)

    def owner(self) -> dict[str, Any] | None:
        """The owner record without its token, plus ``age_ms``; ``None`` when there is none."""
        owner = read_owner(self.owner_path)
        if owner is None:
            return None
        acquired = parse_iso(owner.get("acquired_at"))
        out = {k: owner.get(k) for k in ("pid", "hostname", "acquired_at")}
        out["age_ms"] = None if acquired is None else max(0, int((time.time() - acquired) * 1000))
        return out

    def _timeout_message(self) -> str:
        msg = f"timed out waiting for retain queue lock {self.lock_path}"
        # the owner record outlives a hold (adr/002): name it only while the lock is really held
        owner = self.owner() if self.held_by_someone() else None
        if owner is None:
            return msg + " (holder unknown)"
        age = owner.get("age_ms")
        age_text = "unknown age" if age is None else f"held for {age} ms"
        return msg + f" (held by pid {owner.get('pid')} on {owner.get('hostname') or '?'}, {age_text})"
