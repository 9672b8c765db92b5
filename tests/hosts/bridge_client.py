"""A small JSON-RPC client for ``hindsight-hooks serve --stdio``, run as a real child process.

Used by the protocol tests and the bridge bench: it plays the Pi extension's part (start,
context, agentEnd, ..., cancellation, answering ``ui/select``) over real pipes, so every test
sees exactly the bytes a host would. A reader thread sorts what arrives into responses (by id)
and notifications; every wait has a timeout, so a server that hangs fails the test instead of
hanging it.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .stdio_child import close_stdin_and_wait

WAIT_S = 60.0  # generous: a loaded 2-core machine runs several suites at once

LOCAL_CONFIG = """\
backend = "local"

[notifications]
startup = false
"""


def clean_env(tmp: Path, **extra: str) -> dict[str, str]:
    """A tmp home and tmp XDG folders (the embedded store lives in XDG_DATA_HOME); no HINDSIGHT_*."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp / "home"),
        "XDG_CONFIG_HOME": str(tmp / "xdg-config"),
        "XDG_DATA_HOME": str(tmp / "xdg-data"),
        "TMPDIR": str(tmp),
        "LANG": "C.UTF-8",
    }
    env.update(extra)
    return env


def make_project(tmp: Path, config: str = LOCAL_CONFIG) -> Path:
    root = tmp / "proj"
    (root / ".hindsight").mkdir(parents=True, exist_ok=True)
    (root / ".hindsight" / "config.toml").write_text(config, encoding="utf-8")
    return root


class ServeProcess:
    """``python -m hindsight_hooks.hosts.serve_stdio --stdio`` with a line-oriented JSON-RPC client."""

    def __init__(
        self,
        cwd: Path,
        env: dict[str, str],
        *,
        extra_args: tuple[str, ...] = (),
        on_select: Callable[[dict[str, Any]], Any] | None = None,
    ) -> None:
        self.cwd = cwd
        self.stderr_path = cwd.parent / f"serve-stderr-{id(self)}.txt"
        self._stderr = self.stderr_path.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "hindsight_hooks.hosts.serve_stdio", "--stdio", "--cwd", str(cwd), *extra_args],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        self._ids = itertools.count(1)
        self._responses: dict[Any, dict[str, Any]] = {}
        self._anonymous: list[dict[str, Any]] = []  # answers with "id": null, in arrival order
        self._cond = threading.Condition()
        self.notifications: queue.Queue[dict[str, Any]] = queue.Queue()
        self.selects: list[dict[str, Any]] = []
        self.raw_lines: list[bytes] = []
        self._on_select = on_select
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    # -- reading ----------------------------------------------------------------------------
    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.raw_lines.append(line)
            message = json.loads(line)  # the test fails loudly on a non-JSON line
            if "method" in message and "id" in message:
                self.selects.append(message)
                answer = self._on_select(message) if self._on_select else None
                if answer is not None:
                    self.send_json({"jsonrpc": "2.0", "id": message["id"], "result": {"value": answer}})
            elif "method" in message:
                self.notifications.put(message)
            else:
                with self._cond:
                    if message.get("id") is None:
                        self._anonymous.append(message)
                    else:
                        self._responses[message.get("id")] = message
                    self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    # -- writing ----------------------------------------------------------------------------
    def send_bytes(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send_json(self, message: Any) -> None:
        self.send_bytes(json.dumps(message).encode() + b"\n")

    def request_async(self, method: str, params: dict[str, Any] | None = None) -> int:
        msg_id = next(self._ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send_json(message)
        return msg_id

    def wait(self, msg_id: Any, timeout: float = WAIT_S) -> dict[str, Any]:
        """The answer to ``msg_id``; ``None`` waits for the next answer with a null id."""
        deadline = time.monotonic() + timeout
        box = self._anonymous if msg_id is None else None
        with self._cond:
            while (not box) if box is not None else (msg_id not in self._responses):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no answer to {msg_id!r} in {timeout} s; stderr: {self.stderr_text()[-2000:]}")
                if self.proc.poll() is not None and not self._reader.is_alive():
                    raise RuntimeError(f"serve exited {self.proc.returncode}; stderr: {self.stderr_text()[-2000:]}")
                self._cond.wait(min(left, 0.2))
            return box.pop(0) if box is not None else self._responses.pop(msg_id)

    def request(self, method: str, params: dict[str, Any] | None = None, timeout: float = WAIT_S) -> dict[str, Any]:
        return self.wait(self.request_async(method, params), timeout)

    def result(self, method: str, params: dict[str, Any] | None = None) -> Any:
        answer = self.request(method, params)
        assert "result" in answer, answer
        return answer["result"]

    def start(self, **params: Any) -> dict[str, Any]:
        return dict(self.result("start", {"protocolVersion": 1, "sessionId": "test", **params}))

    def cancel(self, msg_id: int) -> None:
        self.send_json({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": msg_id}})

    # -- ending -----------------------------------------------------------------------------
    def close(self, timeout: float = WAIT_S) -> int:
        """Close stdin and wait for the exit code."""
        return close_stdin_and_wait(self.proc, self._stderr, timeout)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(WAIT_S)
        self._stderr.close()

    def stderr_text(self) -> str:
        try:
            return self.stderr_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def drain_notifications(self) -> list[dict[str, Any]]:
        found = []
        while True:
            try:
                found.append(self.notifications.get_nowait())
            except queue.Empty:
                return found
