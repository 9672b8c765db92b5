"""The detached worker that delivers what short-lived hooks queued: ``start()`` then ``shutdown()``.

A hook process must answer at once, so it only queues (``HostContext.short_lived``); delivery to
the memory store happens here, in a child the hook starts and never waits for. The child is
detached (its own session, every standard stream on ``/dev/null``): the agent does not wait for
it, and it survives the hook and even the agent's exit. It runs the public ``Host`` the way a
long-lived host would for a whole session: ``start()`` (connect, ensure the banks, deliver due
leftovers), ``/hindsight:flush --due`` (what is due, after waiting for a flush another process is
running: :func:`deliver_due`) and ``shutdown()`` (the plugin's bounded flush, then close).
Everything it cannot send stays queued on disk for the next worker.

One worker per project at a time: a second one that finds the lock taken leaves an ``again``
mark and exits, and the running worker goes round once more for it, so a burst of hook events
costs one process, and nothing queued after the running worker looked is left behind.

Problems the worker meets (a server that is down, say) cannot reach the user from here; they are
saved as *pending* in the host session's hook state, and the next hook shows them once.

Run as ``python -m hindsight_hooks.hosts.worker --cwd DIR --host-name NAME [--session-file F]
[--session-key K]``; :func:`spawn` builds that command line. ``HINDSIGHT_WORKER_LIMIT_S`` bounds
the whole run (default :data:`LIMIT_S`).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..hooks import Host

LIMIT_S = 120.0
ROUNDS = 3
LOCK_NAME = "worker.lock"
AGAIN_NAME = "worker.again"


def spawn(cwd: Path, host: str, session_file: Path | None, session_key: str | None) -> bool:
    """Start a detached worker for this project; True if it was started."""
    argv = [sys.executable, "-m", "hindsight_hooks.hosts.worker", "--cwd", str(cwd), "--host-name", host]
    if session_file is not None:
        argv += ["--session-file", str(session_file)]
    if session_key:
        argv += ["--session-key", session_key]
    try:
        subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
            cwd=str(cwd),
        )
    except OSError:
        return False
    return True


def _state_dir(cwd: Path) -> Path:
    from .hookstate import STATE_DIR, SUBDIR

    return cwd / STATE_DIR / SUBDIR


def deliver(cwd: Path, host: str, session_file: Path | None) -> list[str]:
    """One ``start()`` + ``shutdown()`` of a long-lived public Host; returns its problems."""
    from ..hooks import Host, RecordingUI

    ui = RecordingUI()
    # A process of its own that runs no turn: short-lived, so the session start does not load the
    # model and vectors for a first turn that never comes (ADR 175).
    host_obj = Host(cwd, session_file=session_file, host_name=host, ui=ui, short_lived=True)
    host_obj.start()
    deliver_due(host_obj)
    host_obj.shutdown()
    return [text for level, text in ui.notices if level in ("warning", "error")]


def deliver_due(host: Host) -> None:
    """Deliver what is due, waiting (bounded) for a flush another process is running.

    Why wait: that flush may be cut off. An agent stops its MCP server with SIGTERM and kills it
    a moment later, and the server's bounded flush is then killed holding its claim. The claim
    names its process, so once that process is gone the jobs are free, and this flush, still
    waiting, sends them (ADR 178). ``start()`` alone would see them claimed and leave them until
    the next session. The command's result is not a problem to report: what it could not
    deliver, the shutdown flush reports. ``Host.command`` turns a failure into its result.
    """
    host.command("/hindsight:flush --due")


def run(
    cwd: Path,
    host: str,
    session_file: Path | None,
    session_key: str | None,
    deliver_once: Callable[[Path, str, Path | None], list[str]] = deliver,
) -> int:
    """Deliver for one project, single-flight across processes and threads (a file lock); the
    warm helper passes its own ``deliver_once`` (a cached Host per session), the process its own."""
    from ..fsutil import ensure_private_dir

    folder = _state_dir(cwd)
    try:
        ensure_private_dir(folder.parent, gitignore=True)
        ensure_private_dir(folder)
        lock_fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return 1
    again = folder / AGAIN_NAME
    problems: list[str] = []
    try:
        for _ in range(ROUNDS):
            try:
                fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # another worker is delivering: ask it to go round once more
                with contextlib.suppress(OSError):
                    again.touch(mode=0o600)
                break
            try:
                with contextlib.suppress(OSError):
                    again.unlink()
                problems.extend(deliver_once(cwd, host, session_file))
            finally:
                fcntl.flock(lock_fd, fcntl.LOCK_UN)
            # checked after unlocking: a worker that found the lock taken just before has left
            # its mark by now, and one that comes later takes the lock itself
            if not again.exists():
                break
    finally:
        os.close(lock_fd)
    if problems and session_key:
        from .hookstate import HookSessionState, state_file

        HookSessionState(state_file(cwd, host, session_key)).add_pending(problems)
    return 0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m hindsight_hooks.hosts.worker")
    parser.add_argument("--cwd", type=Path, required=True)
    parser.add_argument("--host-name", required=True)
    parser.add_argument("--session-file", type=Path, default=None)
    parser.add_argument("--session-key", default=None)
    ns = parser.parse_args(argv)
    try:
        limit = float(os.environ.get("HINDSIGHT_WORKER_LIMIT_S", "") or LIMIT_S)
    except ValueError:
        limit = LIMIT_S
    timer = threading.Timer(limit, lambda: os._exit(0))  # a stuck delivery never lingers
    timer.daemon = True
    timer.start()
    try:
        code = run(ns.cwd.absolute(), ns.host_name, ns.session_file, ns.session_key)
    except BaseException:
        code = 1
    os._exit(code)


if __name__ == "__main__":
    main()
