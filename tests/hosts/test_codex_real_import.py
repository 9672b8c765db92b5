"""The real Codex CLI 0.169: a session from before the install is imported from
``$CODEX_HOME/sessions``, and resuming it with our hooks retains only the new turn
(issue 10 item 7, ADR-110).

``codex exec`` runs offline against the scripted model server (OpenAI Responses), with
``HOME`` and ``CODEX_HOME`` in tmp. Hooks are installed by the README's line for Codex CLI,
run exactly as written; ``--dangerously-bypass-hook-trust`` stands in for reviewing them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..plugin.hostkit import LOCAL_CONFIG, Project
from .conftest import host_binary
from .model_server import ModelServer
from .model_server_openai import OpenAIResponses
from .readme_lines import install_line
from .real_agents import SCRIPT, await_retained, runtime

__all__ = ["runtime"]  # fixture
RUN_TIMEOUT_S = 180


class Codex:
    """``codex exec`` in the project, against the model server, with a tmp HOME and CODEX_HOME."""

    def __init__(self, binary: Path, project: Path, home: Path, server: ModelServer, runtime: Path) -> None:
        self.binary = binary
        self.project = project
        self.codex_home = home / ".codex"
        self.codex_home.mkdir(parents=True)
        self.env = {
            "PATH": f"{SCRIPT.parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HOME": str(home),
            "CODEX_HOME": str(self.codex_home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "SCRIPTED_KEY": "test-key",
            "HINDSIGHT_HOOK_RUNTIME_DIR": str(runtime),
        }
        provider = [
            'model = "scripted"',
            'model_provider = "scripted"',
            "check_for_update_on_startup = false",
            "",
            "[model_providers.scripted]",
            'name = "scripted"',
            f'base_url = "{server.url}/v1"',
            'env_key = "SCRIPTED_KEY"',
            'wire_api = "responses"',
        ]
        (self.codex_home / "config.toml").write_text("\n".join(provider) + "\n", encoding="utf-8")

    def run(self, prompt: str, resume: str | None = None) -> str:
        """One ``codex exec`` (or ``codex exec resume``); its session id."""
        argv = [str(self.binary), "exec", *(["resume", resume] if resume else [])]
        argv += ["--skip-git-repo-check", "--dangerously-bypass-hook-trust", "--disable", "plugins", prompt]
        proc = subprocess.run(
            argv,
            cwd=self.project,
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )
        assert proc.returncode == 0, f"codex exited {proc.returncode}: {proc.stderr[-3000:]}"
        found = re.search(r"session id: ([0-9a-f-]{36})", proc.stderr)
        assert found, proc.stderr[-3000:]
        return found.group(1)

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


def _import(codex: Codex) -> dict[str, Any]:
    done = codex.hindsight([str(SCRIPT), "import-project-sessions", "--yes", "--json"])
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(done.stdout)
    assert isinstance(data, dict)
    return data


def test_a_codex_session_from_before_the_install_is_imported_and_its_resume_retains_only_what_is_new(
    bare: tuple[Codex, Project],
) -> None:
    codex, project = bare
    session = codex.run("We decided to use Postgres 16 for the cache")
    assert project.units() == []  # no hooks yet

    imported = _import(codex)
    assert imported["counts"] == {"completed": 1, "queued": 0, "skipped": 0, "failed": 0}, imported
    assert imported["scope"].endswith(f"1 Codex session(s) in {codex.codex_home / 'sessions'}")
    assert project.unit_count("Postgres 16") == 1 and project.unit_count("Noted.") == 1
    assert project.unit_count("environment_context") == 0  # Codex's own framing is not memory

    install = codex.hindsight(["bash", "-c", install_line("Codex CLI")])  # the README's line, exactly
    assert install.returncode == 0, install.stdout + install.stderr
    assert codex.run("Also: the cache TTL is 30 minutes", resume=session) == session
    await_retained(project, "TTL is 30")
    time.sleep(1.0)  # a late worker would still be delivering now; then nothing may have changed
    assert project.unit_count("Postgres 16") == 1  # the imported turn was not retained again
    assert len(project.units()) == 4

    again = _import(codex)
    assert again["summary"]["documents"] == 0 and "already taken care of" in " ".join(again.get("notes", []))
