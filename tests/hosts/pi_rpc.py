"""Driving the real ``pi`` 0.73.1 in RPC mode for the host tests, with our extension installed.

A :class:`PiWorld` is one tmp machine: ``HOME``, ``PI_CODING_AGENT_DIR`` and the XDG folders in
tmp, a project folder with its ``.hindsight/config.toml``, a ``models.json`` whose only provider
is the scripted Chat Completions server on loopback, and the extension installed by the real
``hindsight-hooks install pi``. :class:`PiRpc` runs ``pi --mode rpc`` there: ``prompt`` sends a
line on stdin and waits for Pi's ``agent_end`` event (or a command's response); everything Pi
prints is kept, so a test can read its ``extension_ui_request`` notices.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from .stdio_child import close_stdin_and_wait

REPO = Path(__file__).resolve().parents[2]
CLI = Path(sys.executable).parent / "hindsight-hooks"
WAIT_S = 120.0


def pi_executable() -> Path:
    """The pinned ``pi`` from the test cache (installed on first use by scripts/install-hosts)."""
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "install-hosts"), "--bin", "pi"],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"scripts/install-hosts could not provide pi: {done.stderr[-2000:]}")
    return Path(done.stdout.strip().splitlines()[-1])


class PiWorld:
    def __init__(self, tmp: Path, model_url: str, config: str, *, install: bool = True) -> None:
        self.tmp = tmp
        self.agent_dir = tmp / "pi-agent"
        self.project = tmp / "proj"
        (self.project / ".hindsight").mkdir(parents=True)
        (self.project / ".hindsight" / "config.toml").write_text(config, encoding="utf-8")
        self.agent_dir.mkdir(parents=True)
        models = {
            "providers": {
                "scripted": {
                    "baseUrl": f"{model_url}/v1",
                    "api": "openai-completions",
                    "apiKey": "test",
                    "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
                    "models": [{"id": "scripted", "reasoning": False}],
                }
            }
        }
        (self.agent_dir / "models.json").write_text(json.dumps(models), encoding="utf-8")
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(tmp / "home"),
            "PI_CODING_AGENT_DIR": str(self.agent_dir),
            "PI_OFFLINE": "1",
            "XDG_CONFIG_HOME": str(tmp / "xdg-config"),
            "XDG_DATA_HOME": str(tmp / "xdg-data"),
            "TMPDIR": str(tmp),
            "LANG": "C.UTF-8",
        }
        if install:
            done = self.cli("install", "pi")
            assert done.returncode == 0, done.stdout + done.stderr

    @property
    def extension_dir(self) -> Path:
        return self.agent_dir / "extensions" / "hindsight"

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        command = [str(CLI), *args]
        return subprocess.run(command, cwd=self.project, env=self.env, capture_output=True, text=True, timeout=WAIT_S)

    def session_files(self) -> list[Path]:
        return sorted((self.agent_dir / "sessions").rglob("*.jsonl"), key=lambda p: p.stat().st_mtime_ns)

    def queue_lines(self) -> list[str]:
        path = self.project / ".hindsight" / "retain-queue.jsonl"
        if not path.exists():
            return []
        return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


class PiRpc:
    """``pi --mode rpc`` in the world's project; use as a context manager (stdin closes at exit)."""

    def __init__(self, world: PiWorld, pi: Path, *extra: str) -> None:
        self.world = world
        self.stderr_path = world.tmp / f"pi-stderr-{time.monotonic_ns()}.txt"
        self._stderr = self.stderr_path.open("wb")
        self.proc = subprocess.Popen(
            [str(pi), "--mode", "rpc", "--provider", "scripted", "--model", "scripted", *extra],
            cwd=world.project,
            env=world.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        self.events: list[dict[str, Any]] = []
        self._cond = threading.Condition()
        self._ids = itertools.count(1)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("type") == "extension_ui_request" and event.get("method") in ("select", "confirm", "input"):
                self.send({"type": "extension_ui_response", "id": event.get("id"), "cancelled": True})
            with self._cond:
                self.events.append(event)
                self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def wait_for(self, match: Any, *, after: int = 0, timeout: float = WAIT_S) -> dict[str, Any]:
        """The first event from index ``after`` on for which ``match(event)`` is true."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for event in self.events[after:]:
                    if match(event):
                        return event
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    tail = self.stderr_path.read_text(errors="replace")[-3000:]
                    raise TimeoutError(f"no matching pi event (exit {self.proc.poll()}); stderr: {tail}")
                self._cond.wait(min(left, 0.2))

    def prompt(self, text: str, timeout: float = WAIT_S) -> dict[str, Any]:
        """Send a prompt and wait for its run to end (``agent_end``); returns that event."""
        mark = len(self.events)
        msg_id = f"p{next(self._ids)}"
        self.send({"id": msg_id, "type": "prompt", "message": text})
        answer = self.wait_for(lambda e: e.get("type") == "response" and e.get("id") == msg_id, after=mark)
        assert answer.get("success") is True, answer
        return self.wait_for(lambda e: e.get("type") == "agent_end", after=mark, timeout=timeout)

    def command(self, line: str) -> dict[str, Any]:
        """Run an extension command and return the notice it showed (``ctx.ui.notify``)."""
        mark = len(self.events)
        msg_id = f"c{next(self._ids)}"
        self.send({"id": msg_id, "type": "prompt", "message": line})
        answer = self.wait_for(lambda e: e.get("type") == "response" and e.get("id") == msg_id, after=mark)
        assert answer.get("success") is True, answer
        return self.wait_for(is_notice, after=mark)

    def notices(self) -> list[dict[str, Any]]:
        with self._cond:
            return [e for e in self.events if is_notice(e)]

    def close(self) -> int:
        return close_stdin_and_wait(self.proc, self._stderr, WAIT_S)

    def __enter__(self) -> PiRpc:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            try:
                self.close()
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(WAIT_S)


def is_notice(event: dict[str, Any]) -> bool:
    return event.get("type") == "extension_ui_request" and event.get("method") == "notify"


def serve_pids(pi_pid: int) -> list[int]:
    """The ``serve --stdio`` processes that are children of ``pi_pid`` (read from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == pi_pid and b"hindsight_hooks.hosts.serve_stdio" in cmdline:
            found.append(int(entry.name))
    return found
