"""CLI tests run the real console script in a tmp project; the real home is never touched."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from hindsight_hooks.chat.session_file import SessionFile
from hindsight_hooks.hooks import assistant_message, user_message

from ..chat.conftest import SCRIPT, clean_env, write_project


class Cli:
    """Runs ``hindsight-hooks`` as a child process with an isolated env, from ``cwd``."""

    def __init__(self, tmp: Path, cwd: Path) -> None:
        self.env = clean_env(tmp)
        self.cwd = cwd

    def __call__(
        self, *args: str, cwd: Path | None = None, stdin: str | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        assert SCRIPT.exists(), f"console script missing: {SCRIPT} (run .venv/bin/pip install -e .)"
        return subprocess.run(
            [str(SCRIPT), *args],
            cwd=cwd or self.cwd,
            env=self.env,
            input=stdin or "",
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


def write_chat_session(project: Path, said: str) -> Path:
    """A one-exchange chat session (a Pi v3 file) under the project's sessions folder."""
    session = SessionFile.create(project / ".hindsight" / "sessions" / "20250101T000000-abcdef.jsonl", project)
    session.append(user_message(said))
    session.append(assistant_message(f"Noted: {said}"))
    session.close()
    return session.path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "proj")


@pytest.fixture
def cli(tmp_path: Path, project: Path) -> Cli:
    return Cli(tmp_path, project)
