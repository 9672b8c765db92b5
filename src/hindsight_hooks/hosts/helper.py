"""The warm helper: one local process that answers hook events, so a hook costs a tiny client.

A command hook is a fresh process per event, and importing the plugin (pydantic config models,
SQLite, pluggy entry points) costs 150–400 ms before any work, on every prompt (ADR-080). The
helper pays that once: it keeps the plugin loaded, and a ``Host`` per agent session warm, and
answers the events that :mod:`.hookclient` forwards over a Unix socket. The answers are exactly
those of a fresh hook process: both run :func:`.hookcmd.answer_event` with the same adapters.

- **One helper per environment.** The socket's name is a hash of the client's environment
  (minus variables the plugin never reads, such as ``CLAUDE_*``, ``PWD`` or terminal settings),
  the interpreter and the installed code (see :func:`.hookclient.socket_path`). The client starts
  the helper with its own environment, so config read from the environment (``HINDSIGHT_*``,
  ``HOME``, ``XDG_*``, a key named by ``api_key_ref``, proxies) is always what the client has.
  Code that changed on disk gets a new helper; the old one idles out.
- **Bounded and fail-open, like the process.** Each request has the adapter's deadline: when it
  fires, the empty answer (plus a once-per-session notice) is sent, the session's in-flight work
  is aborted (``Host.abort``), the connection is closed, and recall cools down. The client has a
  deadline of its own on top, and falls back to running the hook in-process when there is no
  helper (starting one for next time).
- **Sessions.** Requests of one session run one at a time on its cached short-lived ``Host``;
  a session idle for :data:`SESSION_IDLE_S` is shut down (the plugin's bounded flush). Delivery
  (``deliver_later``) runs on a thread through :func:`.worker.run` with a cached delivery ``Host``
  per session, single-flight per project across processes by the worker's file lock.
- **Lifetime.** The helper exits after :data:`IDLE_S` without a request (shutting every session
  down), when its socket file is removed or replaced, or on SIGTERM. A lock next to the socket
  makes sure only one helper serves it; a stale socket file is replaced.
- **Privacy.** The socket lives in a 0700 folder of the user's (``$XDG_RUNTIME_DIR`` or
  ``/tmp/hindsight-hooks-<uid>``) and is 0600; nothing is logged.

Run as ``python -m hindsight_hooks.hosts.helper --socket PATH`` (the client does that).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import signal
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .hookcmd import Answer, Holder, HookEvent, answer_event, deadline_answer, deadline_of, load_adapter

if TYPE_CHECKING:
    from ..hooks import UI, Host
    from ..hooks.context import NotifyLevel

IDLE_S = 900.0
SESSION_IDLE_S = 600.0
READ_TIMEOUT_S = 5.0
MAX_REQUEST_BYTES = 64 * 1024 * 1024
SHUTDOWN_BUDGET_S = 10.0


class SwitchUI:
    """The UI of a cached ``Host``: forwards to the current request's UI; between requests,
    a late notice from a plugin's background thread has no one to go to and is dropped."""

    def __init__(self) -> None:
        self.target: UI | None = None

    def notify(self, text: str, level: NotifyLevel = "info") -> None:
        target = self.target
        if target is not None:
            target.notify(text, level)

    def set_status(self, key: str, text: str | None) -> None:
        target = self.target
        if target is not None:
            target.set_status(key, text)

    def select(self, title: str, options: list[str]) -> str | None:
        target = self.target
        return target.select(title, options) if target is not None else None


@dataclass
class _Session:
    hook_host: Host
    ui: SwitchUI
    lock: threading.Lock = field(default_factory=threading.Lock)
    delivery_host: Host | None = None
    delivery_lock: threading.Lock = field(default_factory=threading.Lock)
    last_used: float = field(default_factory=time.monotonic)


class SessionHosts:
    """The helper's :class:`~.hookcmd.HostSource`: one warm short-lived ``Host`` per session."""

    def __init__(self) -> None:
        self._sessions: dict[tuple[str, str, str], _Session] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _key(hook: HookEvent) -> tuple[str, str, str]:
        return (hook.host, str(hook.cwd), str(hook.session_file or hook.session_key or ""))

    def _session(self, host: str, cwd: Path, session_file: Path | None, key: tuple[str, str, str]) -> _Session:
        with self._lock:
            entry = self._sessions.get(key)
            if entry is None:
                from ..hooks import Host

                ui = SwitchUI()
                entry = _Session(Host(cwd, session_file=session_file, host_name=host, ui=ui, short_lived=True), ui)
                self._sessions[key] = entry
            entry.last_used = time.monotonic()
            return entry

    def acquire(self, hook: HookEvent, ui: UI) -> Host:
        entry = self._session(hook.host, hook.cwd, hook.session_file, self._key(hook))
        entry.lock.acquire()
        entry.ui.target = ui
        return entry.hook_host

    def release(self, hook: HookEvent) -> None:
        with self._lock:
            entry = self._sessions.get(self._key(hook))
        if entry is not None:
            entry.ui.target = None
            entry.last_used = time.monotonic()
            entry.lock.release()

    def deliver_once(self, hook: HookEvent) -> list[str]:
        """``start()``, the worker's due flush and ``shutdown()`` on the session's own delivery Host
        (reused, so the plugin keeps one runtime per session however often it delivers)."""
        from ..hooks import Host, RecordingUI
        from .worker import deliver_due

        entry = self._session(hook.host, hook.cwd, hook.session_file, self._key(hook))
        with entry.delivery_lock:
            ui = RecordingUI()
            if entry.delivery_host is None:
                entry.delivery_host = Host(hook.cwd, session_file=hook.session_file, host_name=hook.host, ui=ui)
            entry.delivery_host.ctx.ui = ui
            entry.delivery_host.start()
            deliver_due(entry.delivery_host)
            entry.delivery_host.shutdown()
            return [text for level, text in ui.notices if level in ("warning", "error")]

    def idle(self, older_than_s: float) -> list[_Session]:
        """Remove and return the sessions unused for ``older_than_s`` and not busy."""
        now = time.monotonic()
        gone: list[_Session] = []
        with self._lock:
            for key, entry in list(self._sessions.items()):
                if now - entry.last_used >= older_than_s and not entry.lock.locked():
                    gone.append(self._sessions.pop(key))
        return gone

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)


def _shutdown_sessions(sessions: list[_Session]) -> None:
    for entry in sessions:
        with contextlib.suppress(Exception):
            entry.hook_host.shutdown()  # the plugin's bounded flush, then close


class Helper:
    """Serves one socket until idle; see the module docstring."""

    def __init__(self, socket_path: Path, idle_s: float = IDLE_S) -> None:
        self.socket_path = socket_path
        self.idle_s = idle_s
        self.sessions = SessionHosts()
        self._last_request = time.monotonic()
        self._stop = threading.Event()
        self._work: list[threading.Thread] = []
        self._work_lock = threading.Lock()
        self._inode: int | None = None

    # -- delivery -----------------------------------------------------------------------------
    def deliver(self, hook: HookEvent) -> bool:
        from .worker import run

        def once(*_: object) -> list[str]:
            return self.sessions.deliver_once(hook)

        def work() -> None:
            with contextlib.suppress(Exception):
                run(hook.cwd, hook.host, hook.session_file, hook.session_key, once)

        thread = threading.Thread(target=work, name="hindsight-deliver", daemon=True)
        with self._work_lock:
            self._work = [t for t in self._work if t.is_alive()]
            self._work.append(thread)
        thread.start()
        return True

    # -- requests -----------------------------------------------------------------------------
    def handle(self, conn: socket.socket) -> None:
        self._last_request = time.monotonic()
        try:
            conn.settimeout(READ_TIMEOUT_S)
            data = _read_request(conn)
            head, _, raw = data.partition(b"\n")
            header = json.loads(head)
            host, event = str(header["host"]), str(header["event"])
        except Exception:
            with contextlib.suppress(OSError):
                conn.close()
            return
        conn.settimeout(None)

        def write(payload: bytes) -> None:
            try:
                conn.sendall(payload)
            finally:
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)

        answer = Answer(write)
        try:
            adapter = load_adapter(host)
        except Exception:
            adapter = None
        if adapter is None:
            answer.give({})
            conn.close()
            return
        holder = Holder()
        deadline_s = deadline_of(adapter, event)  # our environment is the client's (same socket name)

        def on_deadline() -> None:
            answer.give_from(lambda: deadline_answer(adapter, event, holder, deadline_s))

        timer = threading.Timer(deadline_s, on_deadline)
        timer.daemon = True
        timer.start()
        try:
            result = answer_event(adapter, event, raw, holder, hosts=self.sessions, deliver=self.deliver)
            answer.give(result)
        except Exception:
            answer.give(adapter.empty_answer(event))
        finally:
            timer.cancel()
            with contextlib.suppress(OSError):
                conn.close()
            self._last_request = time.monotonic()

    # -- the loop -----------------------------------------------------------------------------
    def _socket_is_ours(self) -> bool:
        try:
            return os.stat(self.socket_path).st_ino == self._inode
        except OSError:
            return False

    def serve(self) -> int:
        lock_fd = os.open(str(self.socket_path) + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return 0  # another helper serves this socket
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.socket_path)  # stale: its helper is gone (we hold the lock)
            old = os.umask(0o177)
            try:
                server.bind(str(self.socket_path))
            finally:
                os.umask(old)
            os.chmod(self.socket_path, 0o600)
            self._inode = os.stat(self.socket_path).st_ino
            server.listen(64)
            server.settimeout(1.0)
            signal.signal(signal.SIGTERM, lambda *_: self._stop.set())
            while not self._stop.is_set():
                try:
                    conn, _ = server.accept()
                except TimeoutError:
                    self._housekeeping()
                    continue
                threading.Thread(target=self.handle, args=(conn,), name="hindsight-hook", daemon=True).start()
        finally:
            if self._socket_is_ours():
                with contextlib.suppress(OSError):
                    os.unlink(self.socket_path)
            server.close()
            self._finish()
            fcntl.flock(lock_fd, fcntl.LOCK_UN)
            os.close(lock_fd)
        return 0

    def _housekeeping(self) -> None:
        if not self._socket_is_ours():
            self._stop.set()
            return
        stale = self.sessions.idle(SESSION_IDLE_S)
        if stale:
            threading.Thread(target=_shutdown_sessions, args=(stale,), daemon=True).start()
        with self._work_lock:
            busy = any(t.is_alive() for t in self._work)
        if not busy and time.monotonic() - self._last_request >= self.idle_s:
            self._stop.set()

    def _finish(self) -> None:
        """Shut every session down and let delivery finish, within a bound."""
        end = time.monotonic() + SHUTDOWN_BUDGET_S
        closing = threading.Thread(target=_shutdown_sessions, args=(self.sessions.idle(0.0),), daemon=True)
        closing.start()
        with self._work_lock:
            work = list(self._work)
        for thread in [*work, closing]:
            thread.join(max(0.0, end - time.monotonic()))


def _read_request(conn: socket.socket) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = conn.recv(1 << 16)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_REQUEST_BYTES:
            raise ValueError("request too large")
        chunks.append(chunk)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m hindsight_hooks.hosts.helper")
    parser.add_argument("--socket", type=Path, required=True)
    parser.add_argument("--idle-s", type=float, default=IDLE_S)
    ns = parser.parse_args(argv)
    try:
        code = Helper(ns.socket, ns.idle_s).serve()
    except BaseException:
        code = 1
    os._exit(code)


if __name__ == "__main__":
    main()
