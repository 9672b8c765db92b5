"""A tmp machine for the real Hermes Agent 0.19.0: its own venv (with this checkout), HERMES_HOME, a project.

Hermes pins exact versions of openai, pydantic and httpx, so it cannot share the test venv:
``scripts/install-hosts`` puts it in ``<cache>/hosts/hermes-0.19.0/venv``. :func:`hermes_executable`
also installs this checkout into that venv (editable, with our dependencies), again only when the
checkout or its ``pyproject.toml`` changed, under a lock, so Hermes imports the code under test; and the
client library of Hermes' bundled ``hindsight`` provider, which one test compares with ours.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from .conftest import ROOT, host_binary

WAIT_S = 240
CHECKOUT_MARKER = ".hh-checkout.json"
BUNDLED_CLIENT = "hindsight-client==0.6.1"
"""What Hermes' own ``hindsight`` provider needs (its ``[hindsight]`` extra pins it): the comparison test runs it."""


def _checkout_stamp() -> dict[str, str]:
    pyproject = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    return {"root": str(ROOT), "pyproject": pyproject, "extra": BUNDLED_CLIENT}


def ensure_checkout(python: Path) -> None:
    """This checkout, installed editable into the Hermes venv of ``python`` (once per change)."""
    venv = python.parent.parent
    marker = venv / CHECKOUT_MARKER
    want = _checkout_stamp()
    with open(venv / ".hh-checkout.lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if json.loads(marker.read_text(encoding="utf-8")) == want:
                return
        except (OSError, ValueError):
            pass
        done = subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-e", str(ROOT), BUNDLED_CLIENT],
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        if done.returncode != 0:
            pytest.fail(f"could not install this checkout into Hermes' venv:\n{done.stderr[-3000:]}", pytrace=False)
        marker.write_text(json.dumps(want), encoding="utf-8")


def hermes_executable() -> Path:
    exe = host_binary("hermes")
    ensure_checkout(exe.parent / "python")
    return exe


class HermesWorld:
    """HOME, HERMES_HOME, XDG folders and a project in tmp; Hermes talks to the scripted model at ``model_url``."""

    def __init__(
        self, tmp: Path, hermes: Path, model_url: str, config: str, *, install: bool = True, provider: str = ""
    ) -> None:
        self.tmp = tmp
        self.hermes = hermes
        self.bin = hermes.parent
        self.home = tmp / "hermes-home"
        self.project = tmp / "proj"
        (self.project / ".hindsight").mkdir(parents=True)
        self.write_config(config)
        self.home.mkdir(parents=True)
        lines = [
            "model:",
            "  provider: custom",
            "  default: scripted",
            f"  base_url: {model_url}/v1",
            "  api_key: test",
            "  api_mode: chat_completions",
        ]
        if provider:
            lines += ["memory:", f"  provider: {provider}"]
        (self.home / "config.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
        self.env = {
            "PATH": f"{self.bin}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HOME": str(tmp / "home"),
            "HERMES_HOME": str(self.home),
            "XDG_CONFIG_HOME": str(tmp / "xdg-config"),
            "XDG_DATA_HOME": str(tmp / "xdg-data"),
            "TMPDIR": str(tmp),
            "LANG": "C.UTF-8",
            "NO_COLOR": "1",
        }
        if install:
            done = self.cli("install", "hermes")
            assert done.returncode == 0, done.stdout + done.stderr

    def write_config(self, text: str) -> None:
        (self.project / ".hindsight" / "config.toml").write_text(text, encoding="utf-8")

    @property
    def python(self) -> Path:
        return self.bin / "python"

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``hindsight-hooks`` as installed in Hermes' environment."""
        return subprocess.run(
            [str(self.bin / "hindsight-hooks"), *args],
            cwd=self.project,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=WAIT_S,
        )

    def chat(self, prompt: str, timeout: float = WAIT_S) -> subprocess.CompletedProcess[str]:
        """One non-interactive Hermes session: ``hermes chat -Q -q PROMPT`` in the project."""
        return subprocess.run(
            [str(self.hermes), "chat", "-Q", "-q", prompt],
            cwd=self.project,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def run_bash(self, line: str) -> subprocess.CompletedProcess[str]:
        """A README line, as a person types it (Hermes' environment first on PATH)."""
        return subprocess.run(
            ["bash", "-c", line], cwd=self.project, env=self.env, capture_output=True, text=True, timeout=WAIT_S
        )

    def hermes_cmd(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.hermes), *args], cwd=self.project, env=self.env, capture_output=True, text=True, timeout=WAIT_S
        )

    def chat_killed_after_answer(self, prompt: str) -> tuple[str, float]:
        """Run a session and SIGKILL it the moment Hermes has printed the turn's answer (before any exit work)."""
        proc = subprocess.Popen(
            [str(self.hermes), "chat", "-Q", "-q", prompt],
            cwd=self.project,
            env={**self.env, "PYTHONUNBUFFERED": "1"},  # as on a terminal: the answer is out when printed
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        assert proc.stderr is not None and proc.stdout is not None
        started = time.monotonic()
        seen = ""
        try:
            while "session_id:" not in seen:  # printed right after the answer, before sys.exit
                line = proc.stderr.readline()
                if not line:
                    break
                seen += line
            os.killpg(proc.pid, signal.SIGKILL)
        finally:
            proc.wait(timeout=60)
        out = proc.stdout.read()
        assert "session_id:" in seen, (out, seen[-3000:])
        return out, time.monotonic() - started

    # -- what Hermes and memory kept ----------------------------------------------------------
    def stored_messages(self) -> list[dict[str, Any]]:
        """Every message row of Hermes' session store (``state.db``)."""
        with sqlite3.connect(self.home / "state.db") as conn:
            conn.row_factory = sqlite3.Row
            return [dict(r) for r in conn.execute("select session_id, role, content, api_content from messages")]

    def queue_lines(self) -> list[str]:
        path = self.project / ".hindsight" / "retain-queue.jsonl"
        if not path.exists():
            return []
        return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]

    def stored_texts(self) -> list[str]:
        """Every string in the embedded store's tables (what memory kept)."""
        db = Path(self.env["XDG_DATA_HOME"]) / "hindsight-hooks" / "memory.db"
        texts: list[str] = []
        with sqlite3.connect(db) as conn:
            tables = [row[0] for row in conn.execute("select name from sqlite_master where type = 'table'")]
            for table in tables:
                try:
                    rows = conn.execute(f'select * from "{table}"').fetchall()
                except sqlite3.Error:
                    continue
                texts.extend(value for row in rows for value in row if isinstance(value, str))
        return texts

    def run_python(self, code: str, timeout: float = WAIT_S) -> subprocess.CompletedProcess[str]:
        """``code`` in Hermes' own Python, in the project, with this world's environment."""
        return subprocess.run(
            [str(self.python), "-c", code],
            cwd=self.project,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )


__all__ = ["HermesWorld", "ensure_checkout", "hermes_executable"]
