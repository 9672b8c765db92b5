"""Runs ``hindsight-hooks hook <host> <event>`` as the real child process an agent would start.

``HookRunner`` spawns exactly the command line ``hindsight-hooks install`` writes into an agent's
settings (``python -m hindsight_hooks.hosts hook ...``), with HOME, XDG folders and the helper's
socket folder inside the test's tmp dir, and either with the warm helper (``helper=True``: the
first call starts it, later calls go through it) or without (every call answers in-process).
``close()`` removes the helper's socket files, which makes a helper exit on its own within a
second or two (it watches its socket), and waits until it has.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .real_agents import free_runtime, short_runtime_dir

HOOK_ARGV = [sys.executable, "-m", "hindsight_hooks.hosts", "hook"]
RUN_TIMEOUT_S = 60  # a loaded 2-core machine; every hook limit is far below it


@dataclass
class HookResult:
    returncode: int
    stdout: bytes
    stderr: bytes
    elapsed_s: float

    @property
    def answer(self) -> dict[str, Any]:
        """The one JSON object on stdout (asserts there is exactly that)."""
        text = self.stdout.decode("utf-8")
        lines = [ln for ln in text.splitlines() if ln.strip()]
        assert len(lines) == 1, f"stdout must be one JSON answer, got {text!r}"
        value = json.loads(lines[0])
        assert isinstance(value, dict), f"the answer must be a JSON object, got {value!r}"
        return value

    @property
    def context(self) -> str:
        out = self.answer.get("hookSpecificOutput")
        return str(out.get("additionalContext", "")) if isinstance(out, dict) else ""

    @property
    def notice(self) -> str:
        return str(self.answer.get("systemMessage", ""))


class HookRunner:
    def __init__(self, home: Path, *, helper: bool, env: dict[str, str] | None = None) -> None:
        self.home = home
        self.helper = helper
        self.runtime = short_runtime_dir()
        base = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("HINDSIGHT", "CLAUDE", "XDG_")) and k not in ("HOME", "PYTEST_CURRENT_TEST")
        }
        base.update(
            {
                "HOME": str(home),
                "XDG_CONFIG_HOME": str(home / ".config"),
                "XDG_DATA_HOME": str(home / ".local" / "share"),
                "HINDSIGHT_HOOK_RUNTIME_DIR": str(self.runtime),
                "HINDSIGHT_HOOK_HELPER": "on" if helper else "off",
            }
        )
        base.update(env or {})
        self.env = base

    def run(
        self, event: str, payload: dict[str, Any] | bytes, *, host: str = "claude-code", cwd: Path | None = None
    ) -> HookResult:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
        start = time.monotonic()
        proc = subprocess.run(
            [*HOOK_ARGV, host, event],
            input=data,
            capture_output=True,
            env=self.env,
            cwd=str(cwd) if cwd is not None else None,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )
        return HookResult(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - start)

    def sockets(self) -> list[Path]:
        return sorted(self.runtime.glob("*.sock"))

    def wait_for_helper(self, timeout_s: float = 30.0) -> bool:
        """True once a helper listens (the first call only starts it)."""
        import socket as sk

        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            for path in self.sockets():
                s = sk.socket(sk.AF_UNIX, sk.SOCK_STREAM)
                try:
                    s.connect(str(path))
                    return True
                except OSError:
                    pass
                finally:
                    s.close()
            time.sleep(0.05)
        return False

    def close(self, timeout_s: float = 15.0) -> None:
        """Remove the sockets (each helper then exits by itself) and wait for their locks to free."""
        free_runtime(self.runtime, timeout_s)
