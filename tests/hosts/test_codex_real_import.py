"""The real Codex CLI 0.169: a session from before the install is imported from
``$CODEX_HOME/sessions``, and resuming it with our hooks retains only the new turn
(issue 10 item 7, ADR-110).

``codex exec`` runs offline against the scripted model server (OpenAI Responses), with
``HOME`` and ``CODEX_HOME`` in tmp. Hooks are installed by the README's line for Codex CLI,
run exactly as written; ``--dangerously-bypass-hook-trust`` stands in for reviewing them.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..plugin.hostkit import LOCAL_CONFIG, Project, wait_until
from .conftest import host_binary
from .model_server import ModelServer
from .model_server_openai import OpenAIResponses
from .readme_lines import install_line
from .real_agents import SCRIPT, drained, import_project_sessions, runtime
from .test_codex_real import Codex as CodexRun

__all__ = ["runtime"]  # fixture


class Codex(CodexRun):
    """``test_codex_real``'s runner, with our console script on PATH for the shell commands run here."""

    def __init__(self, binary: Path, project: Path, home: Path, server: ModelServer, runtime: Path) -> None:
        super().__init__(binary, project, home, server, runtime)
        self.env["PATH"] = f"{SCRIPT.parent}{os.pathsep}{self.env['PATH']}"

    def hindsight(self, argv: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            argv, cwd=self.project, env=self.env, capture_output=True, text=True, timeout=180, check=False
        )


@pytest.fixture
def bare(tmp_path: Path, runtime: Path) -> Iterator[tuple[Codex, Project]]:
    """Codex in a project, with no hooks installed yet."""
    home = tmp_path / "home"
    project = Project(tmp_path / "repo", LOCAL_CONFIG)
    with ModelServer(default_text="Noted.", dialects=(OpenAIResponses(),)) as server:
        yield Codex(host_binary("codex"), project.root, home, server, runtime), project


def test_a_codex_session_from_before_the_install_is_imported_and_its_resume_retains_only_what_is_new(
    bare: tuple[Codex, Project],
) -> None:
    codex, project = bare
    session = codex.run("We decided to use Postgres 16 for the cache")
    assert project.units() == []  # no hooks yet

    imported = import_project_sessions(codex.hindsight)
    assert imported["counts"] == {"completed": 1, "queued": 0, "skipped": 0, "failed": 0}, imported
    assert imported["scope"].endswith(f"1 Codex session(s) in {codex.codex_home / 'sessions'}")
    assert project.unit_count("Postgres 16") == 1 and project.unit_count("Noted.") == 1
    assert project.unit_count("environment_context") == 0  # Codex's own framing is not memory

    install = codex.hindsight(["bash", "-c", install_line("Codex CLI")])  # the README's line, exactly
    assert install.returncode == 0, install.stdout + install.stderr
    assert codex.run("Also: the cache TTL is 30 minutes", resume=session) == session
    assert wait_until(lambda: project.unit_count("TTL is 30") == 1 and drained(project), 90)
    time.sleep(1.0)  # a late worker would still be delivering now; then nothing may have changed
    assert project.unit_count("Postgres 16") == 1  # the imported turn was not retained again
    assert len(project.units()) == 4

    again = import_project_sessions(codex.hindsight)
    assert again["summary"]["documents"] == 0 and "already taken care of" in " ".join(again.get("notes", []))
