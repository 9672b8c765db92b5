"""The hook command's client side: forward the event to the warm helper, or answer in-process.

This is what ``python -m hindsight_hooks.hosts hook <host> <event>`` runs, on every prompt, so it
imports only a few stdlib modules (the plugin stays in the helper; see ADR-080):

1. Read the event from stdin (under an interval timer: whatever happens, ``{}`` is printed and
   the process exits 0 at :func:`ceiling_s`).
2. Connect to the helper's Unix socket (:func:`socket_path`), send ``{"host","event"}`` + newline
   + the raw event, and copy the answer to stdout.
3. No helper (no socket, a stale one, a refused connection, an empty answer): start one, detached,
   for the next event, and answer this one in-process with :func:`.hookcmd.run_process`, which
   is bounded and fail-open on its own.

``HINDSIGHT_HOOK_HELPER=off`` always answers in-process (and starts no helper).
``HINDSIGHT_HOOK_RUNTIME_DIR`` moves the sockets (tests give each run its own).
"""

from __future__ import annotations

import os
import signal
import socket
import sys

HELPER_ENV = "HINDSIGHT_HOOK_HELPER"
HELPER_MODULE = "hindsight_hooks.hosts.helper"  # what a helper's command line runs (``repair`` looks for it)
RUNTIME_DIR_ENV = "HINDSIGHT_HOOK_RUNTIME_DIR"
CEILING_S = 15.0
"""The client's own last-resort limit (every adapter deadline is well below it)."""
CONNECT_TIMEOUT_S = 0.5
MAX_SOCKET_PATH = 100

IGNORED_PREFIXES = (
    "CLAUDE",
    "CODEX_",
    "GEMINI_CLI",
    "TERM",
    "SSH_",
    "TMUX",
    "DBUS_",
    "XDG_SESSION_",
    "XDG_SEAT",
    "XDG_VTNR",
    "WAYLAND_",
    "OTEL_",
    "VSCODE_",
    "WINDOWID",
    "ITERM",
    "COLORTERM",
    "KITTY_",
    "LC_TERMINAL",
)
"""Variables the plugin never reads, and which differ from one agent session or terminal to the
next: they do not pick the helper (one helper can then serve every session)."""
IGNORED_NAMES = frozenset({"PWD", "OLDPWD", "SHLVL", "_", "COLUMNS", "LINES", "DISPLAY", "STY", "WINDOW", "PS1"})


def runtime_dir(env: dict[str, str] | os._Environ[str]) -> str:
    chosen = env.get(RUNTIME_DIR_ENV)
    if chosen:
        return chosen
    base = env.get("XDG_RUNTIME_DIR")
    if base and os.path.isdir(base):
        return os.path.join(base, "hindsight-hooks")
    return os.path.join("/tmp", f"hindsight-hooks-{os.getuid()}")


def code_stamp() -> str:
    """The newest modification time of our code: changed code means a new helper."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    newest = 0
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.name.endswith(".py"):
                try:
                    newest = max(newest, entry.stat().st_mtime_ns)
                except OSError:
                    pass
            elif entry.is_dir() and not entry.name.startswith(("__pycache__", ".")):
                stack.append(entry.path)
    return str(newest)


def socket_path(env: dict[str, str] | os._Environ[str]) -> str:
    """The helper socket for this environment, interpreter and code."""
    import hashlib

    digest = hashlib.sha256()
    for key in sorted(env):
        if key in IGNORED_NAMES or key.startswith(IGNORED_PREFIXES):
            continue
        item = f"{key}={env[key]}\0"
        digest.update(item.encode("utf-8", "surrogateescape"))
    digest.update(sys.executable.encode("utf-8", "surrogateescape") + b"\0" + code_stamp().encode())
    name = f"h-{digest.hexdigest()[:24]}.sock"
    path = os.path.join(runtime_dir(env), name)
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:  # a Unix socket's path is limited to ~107 bytes
        path = os.path.join("/tmp", f"hindsight-hooks-{os.getuid()}", name)
    return path


def ceiling_s(env: dict[str, str] | os._Environ[str]) -> float:
    try:
        ms = float(env.get("HINDSIGHT_HOOK_DEADLINE_MS", ""))
        if ms > 0:
            return ms / 1000.0 + 2.0
    except ValueError:
        pass
    return CEILING_S


def _write_out(data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(1, view) :]


def _read_stdin() -> bytes:
    chunks: list[bytes] = []
    while True:
        chunk = os.read(0, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def ask_helper(path: str, host: str, event: str, raw: bytes, timeout_s: float) -> bytes | None:
    """The helper's answer, or ``None`` when there is no helper to answer."""
    import json

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(CONNECT_TIMEOUT_S)
        sock.connect(path)
        sock.settimeout(timeout_s)
        sock.sendall(json.dumps({"host": host, "event": event}).encode() + b"\n" + raw)
        sock.shutdown(socket.SHUT_WR)
        chunks: list[bytes] = []
        while True:
            chunk = sock.recv(1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        sock.close()
    data = b"".join(chunks)
    return data if data.strip() else None


def private_folder(path: str) -> bool:
    """The socket's folder exists, is ours and nobody else's: only then is the socket trusted
    (a folder in /tmp made by someone else could hold a socket that reads our prompts)."""
    try:
        info = os.lstat(os.path.dirname(path))
    except OSError:
        return False
    import stat

    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077


def start_helper(path: str) -> None:
    """Start the helper for ``path``, detached, with our environment; never waits for it."""
    import subprocess  # only here: most hooks find the helper and never need it

    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        if not private_folder(path):
            return  # not a private folder of ours: no helper (in-process answers still work)
        subprocess.Popen(
            [sys.executable, "-m", HELPER_MODULE, "--socket", path],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        pass


def main(host: str, event: str) -> None:
    """Be the hook process (never returns: exits 0 with one answer on stdout)."""
    env = os.environ
    limit = ceiling_s(env)

    def give_up(*_: object) -> None:
        _write_out(b"{}\n")
        os._exit(0)

    signal.signal(signal.SIGALRM, give_up)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        raw = _read_stdin()
    except OSError:
        raw = b""
    if env.get(HELPER_ENV, "").lower() not in ("0", "off", "no", "false"):
        path = socket_path(env)
        answer = ask_helper(path, host, event, raw, limit) if private_folder(path) else None
        if answer is not None:
            signal.setitimer(signal.ITIMER_REAL, 0)
            _write_out(answer)
            os._exit(0)
        start_helper(path)
    signal.setitimer(signal.ITIMER_REAL, 0)  # run_process keeps its own (shorter) deadline
    from .hookcmd import run_process

    run_process(host, event, raw=raw)
