"""A child process on a real pseudo-terminal (stdlib ``pty`` + ``select``; no pexpect here).

The child gets the pty as its controlling terminal (``pty.fork`` does ``setsid`` + ``TIOCSCTTY``),
so ``\\x03`` typed into it raises SIGINT in the child exactly like Ctrl-C in a real terminal,
and readline sees a tty and does tab completion.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import struct
import termios
import time
from pathlib import Path


class PtyProcess:
    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        pid, fd = pty.fork()
        if pid == 0:  # child: replace ourselves at once (nothing else runs after fork)
            try:
                os.chdir(cwd)
                os.execve(argv[0], argv, env)
            finally:
                os._exit(127)
        self.pid = pid
        self.fd = fd
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 200, 0, 0))
        self.buffer = ""
        self.log = ""
        """Everything the child wrote, for whole-session assertions (``buffer`` is consumed by ``expect``)."""
        self.status: int | None = None

    def _pump(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return True
        try:
            data = os.read(self.fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            return False
        if not data:
            return False
        text = data.decode("utf-8", "replace")
        self.buffer += text
        self.log += text
        return True

    def expect(self, pattern: str, timeout: float = 30.0) -> str:
        """Wait until ``pattern`` (a regex) appears after what earlier expects consumed."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while True:
            m = rx.search(self.buffer)
            if m:
                seen = self.buffer[: m.end()]
                self.buffer = self.buffer[m.end() :]
                return seen
            left = deadline - time.monotonic()
            if left <= 0 or not self._pump(min(left, 0.5)):
                if rx.search(self.buffer):
                    continue
                raise AssertionError(f"timed out waiting for {pattern!r}; output so far:\n{self.buffer[-3000:]}")

    def send(self, text: str) -> None:
        os.write(self.fd, text.encode("utf-8"))

    def interrupt(self, settle: float = 0.3) -> None:
        """Ctrl-C, typed the way a person does: not in the same microsecond as the last output.

        CPython's readline checks for signals only when its ``select`` is interrupted; a SIGINT
        that lands while readline is still redrawing (right after it echoed a key) is noticed
        at the next key instead. A person never types that fast; a test would, so it waits.
        """
        time.sleep(settle)
        self.send("\x03")

    def sendline(self, text: str) -> None:
        self.send(text + "\r")

    def wait(self, timeout: float = 30.0) -> int:
        """Drain output until the child exits; returns its exit code (negative = signal)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid == self.pid:
                while self._pump(0.05):
                    if not select.select([self.fd], [], [], 0)[0]:
                        break
                self.status = os.waitstatus_to_exitcode(status)
                return self.status
            self._pump(0.1)
        raise AssertionError(f"child did not exit; output so far:\n{self.buffer[-3000:]}")

    def close(self) -> None:
        if self.status is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        try:
            os.close(self.fd)
        except OSError:
            pass
