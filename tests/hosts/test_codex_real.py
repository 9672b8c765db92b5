"""The real Codex CLI (0.169.0, installed by ``scripts/install-hosts``) with our hooks and MCP
server installed, run with ``codex exec`` against the scripted model server on loopback.

HOME, ``CODEX_HOME`` and every config folder are in tmp; the hooks and MCP server are installed
by the README's own line for Codex CLI, run exactly as written. ``exec`` runs only reviewed
hooks unless told otherwise, and a test cannot review them in the TUI, so every run passes
``--dangerously-bypass-hook-trust`` (ADR-089); plugins and the update check are off so nothing
but the loopback model server is contacted.

Session 1 states a decision. Session 2's request to the model carries our ``<hindsight-memory>``
block with it (as the developer message Codex makes of hook context), Codex's rollout of session
2 records that block, and after session 2's hooks the store holds no line of it. The model's call
of our MCP recall tool returns the decision; ``/hindsight:mode`` is not a Codex command (Codex
sends it to the model as text), while the shell command on the session's file switches it.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..plugin.hostkit import LOCAL_CONFIG, HangingServer, Project, wait_until
from .conftest import host_binary
from .model_server import ModelServer, RecordedRequest, Reply, iter_texts
from .model_server_openai import RESPONSES_ROUTE, OpenAIResponses, function_outputs, input_texts
from .readme_lines import install_line

SCRIPT = Path(sys.executable).parent / "hindsight-hooks"
RUN_TIMEOUT_S = 240
DECISION = "We decided to use Postgres 16 for the cache"
QUESTION = "Which database do we use for the cache?"
RECALL_TOOL = "mcp__hindsight.hindsight_recall"
MAX_WAIT_TURNS = 40
"""How many ``get_goal`` calls the script may spend waiting for Codex to list our MCP tools."""


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    return host_binary("codex")


class Codex:
    """Runs ``codex exec`` in the project with an isolated HOME/CODEX_HOME and the model server."""

    def __init__(self, binary: Path, project: Path, home: Path, server: ModelServer, runtime: Path) -> None:
        self.binary = binary
        self.project = project
        self.home = home
        self.codex_home = home / ".codex"
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "CODEX_HOME": str(self.codex_home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "SCRIPTED_KEY": "test-key",
            "HINDSIGHT_HOOK_RUNTIME_DIR": str(runtime),
        }
        self.codex_home.mkdir(parents=True)
        (self.codex_home / "config.toml").write_text(
            "\n".join(
                [
                    'model = "scripted"',
                    'model_provider = "scripted"',
                    "check_for_update_on_startup = false",
                    "",
                    "[model_providers.scripted]",
                    'name = "scripted"',
                    f'base_url = "{server.url}/v1"',
                    'env_key = "SCRIPTED_KEY"',
                    'wire_api = "responses"',
                    "",
                ]
            ),
            encoding="utf-8",
        )

    def run(self, prompt: str, *, resume: str | None = None, env: dict[str, str] | None = None) -> str:
        """Run one ``codex exec``; returns its session id."""
        argv = [str(self.binary), "exec"]
        if resume is not None:
            argv += ["resume", resume]
        argv += ["--skip-git-repo-check", "--dangerously-bypass-hook-trust", "--disable", "plugins", prompt]
        proc = subprocess.run(
            argv,
            cwd=self.project,
            env={**self.env, **(env or {})},
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

    def rollout(self, session_id: str) -> Path:
        found = list((self.codex_home / "sessions").rglob(f"rollout-*{session_id}.jsonl"))
        assert len(found) == 1, f"no rollout for {session_id}"
        return found[0]


@pytest.fixture
def runtime() -> Iterator[Path]:
    """A short folder for the hook helper's socket; the helper exits once its socket is gone."""
    folder = Path(tempfile.mkdtemp(prefix="hh-rt-", dir="/tmp"))
    yield folder
    for sock in folder.glob("*.sock"):
        sock.unlink()
    time.sleep(1.5)  # the helper notices its socket is gone and exits
    shutil.rmtree(folder, ignore_errors=True)


class Script:
    """The model: plain text, except for prompts that ask it to use our recall tool."""

    def __init__(self) -> None:
        self.waits = 0

    def __call__(self, request: RecordedRequest) -> Reply:
        users = input_texts(request, "user")
        last = users[-1] if users else ""
        if "use the memory tool" not in last:
            return Reply.say("Noted.")
        outputs = function_outputs(request)
        if any("Postgres" in text or "memor" in text.lower() for text in outputs.values()):
            return Reply.say("Memory says: " + " | ".join(outputs.values()))
        if "mcp__hindsight" not in request.text() and self.waits < MAX_WAIT_TURNS:
            self.waits += 1  # Codex lists MCP tools once the server is up: wait a step
            time.sleep(0.25)
            return Reply.tool("get_goal", {})
        return Reply.tool(RECALL_TOOL, {"query": "database for the cache"})


@pytest.fixture
def setup(tmp_path: Path, codex_bin: Path, runtime: Path) -> Iterator[tuple[Codex, Project, ModelServer]]:
    home = tmp_path / "home"
    home.mkdir()
    project = Project(tmp_path / "repo", LOCAL_CONFIG)
    with ModelServer(Script(), dialects=(OpenAIResponses(),)) as server:
        codex = Codex(codex_bin, project.root, home, server, runtime)
        install = subprocess.run(  # the README's line, exactly, with our console script on PATH
            ["bash", "-c", install_line("Codex CLI")],
            cwd=project.root,
            env={**codex.env, "PATH": f"{SCRIPT.parent}{os.pathsep}{os.environ.get('PATH', '')}"},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert install.returncode == 0, install.stdout + install.stderr
        yield codex, project, server


def _turns(server: ModelServer) -> list[RecordedRequest]:
    return [r for r in server.requests_to(RESPONSES_ROUTE) if isinstance(r.body, dict)]


def _block_in(request: RecordedRequest) -> str:
    """Our block as the model received it ('' when absent)."""
    for text in iter_texts(request.body):
        start = text.find("<hindsight-memory>")
        if start >= 0:
            end = text.find("</hindsight-memory>", start)
            assert end > start, "the block reached the model cut short"
            return text[start : end + len("</hindsight-memory>")]
    return ""


def _drained(project: Project) -> bool:
    return project.queue_path.exists() and project.queue_jobs() == []


def _count(project: Project, text: str) -> int:
    """``project.unit_count``, or 0 while a worker is still creating the store's tables."""
    try:
        return project.unit_count(text)
    except sqlite3.OperationalError:
        return 0


def test_session_two_gets_session_ones_decision_and_nothing_of_the_block_is_retained(
    setup: tuple[Codex, Project, ModelServer],
) -> None:
    codex, project, server = setup
    one = codex.run(DECISION)
    assert wait_until(lambda: _count(project, "Postgres 16") == 1 and _drained(project), 90), (
        "session 1's decision was not retained"
    )
    assert all(_block_in(r) == "" for r in _turns(server))  # nothing to recall yet

    server.clear()
    two = codex.run(QUESTION)
    assert two != one
    turns = _turns(server)
    assert turns, "session 2 sent no model request"
    block = _block_in(turns[-1])
    assert block.startswith("<hindsight-memory>") and "Postgres 16" in block
    assert block in input_texts(turns[-1], "developer")  # Codex's channel for hook context

    assert "<hindsight-memory>" in codex.rollout(two).read_text(encoding="utf-8")  # Codex's record of it

    assert wait_until(lambda: _count(project, QUESTION) == 1 and _drained(project), 90), (
        "session 2's prompt was not retained"
    )
    time.sleep(1.0)  # a late worker would still be delivering now; then nothing may have changed
    assert _drained(project)
    units = [content for _, content in project.units()]
    assert not any("hindsight-memory" in u for u in units)
    block_lines = [ln.strip() for ln in block.splitlines()[1:-1] if ln.strip() and not ln.strip()[0].isdigit()]
    assert block_lines
    for line in block_lines:
        assert not any(line in u for u in units), f"a line of our block was retained: {line!r}"
    assert project.unit_count("Postgres 16") == 1  # the recalled fact was not retained again


def test_the_models_call_of_our_recall_tool_returns_the_decision(setup: tuple[Codex, Project, ModelServer]) -> None:
    codex, project, server = setup
    codex.run(DECISION)
    assert wait_until(lambda: _count(project, "Postgres 16") == 1 and _drained(project), 90)
    server.clear()
    codex.run("Which database for the cache? use the memory tool")
    answered = [r for r in _turns(server) if any("Postgres 16" in out for out in function_outputs(r).values())]
    assert answered, "the recall tool's result never reached the model"


def test_slash_commands_are_not_codex_commands_but_the_shell_command_switches_the_session(
    setup: tuple[Codex, Project, ModelServer],
) -> None:
    codex, project, server = setup
    sid = codex.run("/hindsight:mode read-only")
    assert any("/hindsight:mode read-only" in t for t in input_texts(_turns(server)[-1], "user"))  # sent as text

    switched = subprocess.run(
        [str(SCRIPT), "mode", "read-only", "--session-file", f".hindsight/sessions/{sid}.jsonl"],
        cwd=project.root,
        env={k: v for k, v in codex.env.items() if not k.startswith("HINDSIGHT")},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert switched.returncode == 0, switched.stdout + switched.stderr
    codex.run("Secret plan: migrate the billing service on Monday", resume=sid)
    time.sleep(3.0)  # the Stop and SessionEnd hooks ran; a retain would have been queued by now
    assert project.unit_count("billing service") == 0
    assert "billing service" not in project.state_text()

    codex.run("Public plan: document the billing service")  # a new session: normal mode
    assert wait_until(lambda: _count(project, "document the billing") == 1 and _drained(project), 90)


def test_a_hanging_memory_server_never_stops_codex(setup: tuple[Codex, Project, ModelServer]) -> None:
    codex, project, server = setup
    project.configure({"backend": "hindsight", "notifications": {"startup": False}})
    hanging = HangingServer()
    try:
        start = time.monotonic()
        codex.run(QUESTION, env={"HINDSIGHT_BASE_URL": hanging.url, "HINDSIGHT_HOOK_DEADLINE_MS": "3000"})
        assert time.monotonic() - start < RUN_TIMEOUT_S / 2
        assert _turns(server) and _block_in(_turns(server)[-1]) == ""
        assert hanging.accepted > 0  # the hook did try the server, and gave up on its own
    finally:
        hanging.close()
