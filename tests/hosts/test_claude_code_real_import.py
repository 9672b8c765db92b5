"""The real Claude Code 2.1.197: sessions from before the install are imported, and the hooks
and the import never store a message twice (issue 10 item 7, ADR-110).

The journey of a user who ran Claude Code before installing us: one session without our hooks,
then ``hindsight-hooks import-project-sessions`` (which must find it where the real program put
it, under the tmp ``$HOME``), then the README's install line, then ``claude --resume`` of that
session: only the new turn may be retained. And the other way round: a session our hooks
retained is not imported again.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..plugin.hostkit import LOCAL_CONFIG, Project
from .model_server import ModelServer
from .readme_lines import install_line
from .real_agents import SCRIPT, await_retained, runtime
from .test_claude_code_real import Claude

__all__ = ["runtime"]  # fixture


@pytest.fixture
def bare(tmp_path: Path, claude_bin: Path, runtime: Path) -> Iterator[tuple[Claude, Project]]:
    """Claude Code in a project, with no hooks installed yet."""
    home = tmp_path / "home"
    home.mkdir()
    project = Project(tmp_path / "repo", LOCAL_CONFIG)
    with ModelServer(default_text="Noted.") as server:
        yield Claude(claude_bin, project.root, home, server, runtime), project


def _run(claude: Claude, argv: list[str]) -> subprocess.CompletedProcess[str]:
    """``argv`` in the project, in Claude Code's tmp environment, our console script on PATH."""
    env = {**claude.env, "PATH": f"{SCRIPT.parent}{os.pathsep}{claude.env['PATH']}"}
    return subprocess.run(argv, cwd=claude.project, env=env, capture_output=True, text=True, timeout=180, check=False)


def _install(claude: Claude) -> None:
    done = _run(claude, ["bash", "-c", install_line("Claude Code")])  # the README's line, exactly
    assert done.returncode == 0, done.stdout + done.stderr


def _import(claude: Claude) -> dict[str, Any]:
    done = _run(claude, [str(SCRIPT), "import-project-sessions", "--yes", "--json"])
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(done.stdout)
    assert isinstance(data, dict)
    return data


def test_a_session_from_before_the_install_is_imported_and_its_resume_retains_only_what_is_new(
    bare: tuple[Claude, Project],
) -> None:
    claude, project = bare
    first = claude.run("We decided to use Postgres 16 for the cache")
    transcript = claude.transcript(first["session_id"])
    assert project.units() == []  # no hooks yet: nothing retained

    imported = _import(claude)
    assert imported["counts"] == {"completed": 1, "queued": 0, "skipped": 0, "failed": 0}, imported
    assert str(transcript.parent) in imported["scope"]
    assert project.unit_count("Postgres 16") == 1 and project.unit_count("Noted.") == 1

    _install(claude)
    claude.run("Also: the cache TTL is 30 minutes", "--resume", first["session_id"])
    await_retained(project, "TTL is 30")
    time.sleep(1.0)  # a late worker would still be delivering now; then nothing may have changed
    assert project.unit_count("Postgres 16") == 1  # the imported turn was not retained again
    assert len(project.units()) == 4

    again = _import(claude)
    assert again["summary"]["documents"] == 0 and "already taken care of" in " ".join(again.get("notes", []))
    assert len(project.units()) == 4


def test_a_session_the_hooks_retained_is_not_imported_again(bare: tuple[Claude, Project]) -> None:
    claude, project = bare
    _install(claude)
    claude.run("Remember: the deploy window is Tuesday 14:00")
    await_retained(project, "deploy window")
    time.sleep(1.0)
    before = sorted(content for _, content in project.units())

    again = _import(claude)

    assert again["summary"]["documents"] == 0, again
    assert "2 of its 2 message(s) are already taken care of" in again["notes"][0]
    assert sorted(content for _, content in project.units()) == before
