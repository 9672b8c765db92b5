"""Fixtures for the chat host: a tmp project on the embedded store, and an env that never
touches the real home (``XDG_*`` and ``HOME`` point into ``tmp_path``)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

PROJECT_CONFIG = """\
backend = "local"

[local]
path = ".hindsight/memory.db"

[notifications]
startup = false
"""

SCRIPT = Path(sys.executable).parent / "hindsight-hooks"


def write_project(root: Path) -> Path:
    (root / ".hindsight").mkdir(parents=True, exist_ok=True)
    (root / ".hindsight" / "config.toml").write_text(PROJECT_CONFIG, encoding="utf-8")
    return root


def clean_env(tmp: Path) -> dict[str, str]:
    """A minimal env: no HINDSIGHT_* or OPENAI_* from the caller can leak into a test."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp / "home"),
        "XDG_CONFIG_HOME": str(tmp / "xdg-config"),
        "XDG_DATA_HOME": str(tmp / "xdg-data"),
        "TMPDIR": str(tmp),
        "TERM": "xterm",
        "LANG": "C.UTF-8",
        "PYTHONUTF8": "1",
    }
    # A git worktree runs its own code through PYTHONPATH (the venv's editable install points at
    # another checkout): without it every child CLI here would test that other checkout instead.
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "proj")


@pytest.fixture
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """In-process tests: the same isolation, applied to ``os.environ``."""
    env = clean_env(tmp_path)
    for key in list(os.environ):
        if key.startswith(("HINDSIGHT", "OPENAI_")):
            monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        if key != "PATH":
            monkeypatch.setenv(key, value)
    yield env
