"""What the host-session import tests share: a tmp project and ``$HOME``, the real hook command,
and ways to read what the store holds (ADR-110)."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hindsight_hooks.hooks import Host, RecordingUI

from ..hosts.hookproc import HookRunner
from ..plugin.hostkit import LOCAL_CONFIG, Project

BLOCK = "<hindsight-memory>\nRelevant prior memory.\n1. user: recalled line kept out of memory\n</hindsight-memory>"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    """A git project on the embedded store; ``$HOME`` (where Claude Code and Codex keep sessions) is in tmp."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "HINDSIGHT_BASE_URL", "HINDSIGHT_API_KEY", "HINDSIGHT_API_KEY_REF"):
        monkeypatch.delenv(var, raising=False)
    project = Project(tmp_path / "repo", LOCAL_CONFIG)
    subprocess.run(["git", "init", "-q", str(project.root)], check=True)
    return project


@pytest.fixture
def hooks(tmp_path: Path) -> Iterator[HookRunner]:
    runner = HookRunner(tmp_path / "home", helper=False)
    yield runner
    runner.close()


def hooks_sid(cwd: Path, session_id: str) -> str:
    """The sid the hooks give a host session: sha256 of its never-written session file's path, 16 hex."""
    path = os.path.abspath(os.path.join(str(cwd), ".hindsight", "sessions", f"{session_id}.jsonl"))
    return hashlib.sha256(path.encode("utf-8")).hexdigest()[:16]


def import_cmd(repo: Project, argv: str, answers: list[str | None] | None = None) -> Any:
    with Host(repo.root, session_file=None, host_name="agent", ui=RecordingUI(answers=answers)) as host:
        return host.command(f"/hindsight:{argv}")


def texts(repo: Project) -> list[str]:
    return [content for _, content in repo.units()]


def count_when_ready(repo: Project, text: str) -> int:
    """``unit_count``, or -1 while a hook's worker is still creating the store's tables."""
    try:
        return repo.unit_count(text)
    except sqlite3.OperationalError:
        return -1


def delivered(repo: Project, text: str, count: int) -> bool:
    return count_when_ready(repo, text) == count and repo.queue_jobs() == []


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    """A minimal environment for the ``hindsight-hooks`` console script, ``$HOME`` in tmp."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "LANG": "C.UTF-8",
        **extra,
    }
