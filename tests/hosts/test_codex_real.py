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
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..plugin.hostkit import LOCAL_CONFIG, HangingServer, Project
from .conftest import host_binary
from .model_server import ModelServer, RecordedRequest, Reply
from .model_server_openai import RESPONSES_ROUTE, OpenAIResponses, function_outputs, input_texts
from .real_agents import (
    DECISION,
    QUESTION,
    SCRIPT,
    assert_only_the_turn_was_retained,
    await_retained,
    block_in,
    install_by_readme,
    item_lines,
    runtime,
)

__all__ = ["runtime"]  # fixture
RUN_TIMEOUT_S = 240
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
        install_by_readme("Codex CLI", project, codex.env)
        yield codex, project, server


def _turns(server: ModelServer) -> list[RecordedRequest]:
    return [r for r in server.requests_to(RESPONSES_ROUTE) if isinstance(r.body, dict)]


def test_session_two_gets_session_ones_decision_and_nothing_of_the_block_is_retained(
    setup: tuple[Codex, Project, ModelServer],
) -> None:
    codex, project, server = setup
    one = codex.run(DECISION)
    await_retained(project, "Postgres 16", "session 1's decision was not retained")
    assert all(block_in(r) == "" for r in _turns(server))  # nothing to recall yet

    server.clear()
    two = codex.run(QUESTION)
    assert two != one
    turns = _turns(server)
    assert turns, "session 2 sent no model request"
    block = block_in(turns[-1])
    assert block.startswith("<hindsight-memory>") and "Postgres 16" in block
    assert block in input_texts(turns[-1], "developer")  # Codex's channel for hook context

    assert "<hindsight-memory>" in codex.rollout(two).read_text(encoding="utf-8")  # Codex's record of it

    assert_only_the_turn_was_retained(project, block, ("hindsight-memory",))


PREFERENCE = "I prefer small commits with conventional commit messages."


def test_what_do_you_remember_gets_what_the_user_said_to_keep(setup: tuple[Codex, Project, ModelServer]) -> None:
    """ADR 223 through the real host: a session states a preference among its requests; a new
    session's "What do you remember?" (no word of it) sends a request whose block opens with it."""
    codex, project, server = setup
    one = codex.run("Add a health check endpoint to the API.")
    await_retained(project, "health check", "the session's request was not retained")
    codex.run(PREFERENCE, resume=one)
    await_retained(project, "conventional commit", "the preference was not retained")
    server.clear()
    codex.run("What do you remember?")
    block = block_in(_turns(server)[-1])
    items = item_lines(block)
    assert items and PREFERENCE in items[0], block
    assert any("Add a health check endpoint to the API." in line for line in items[1:]), block
    # "What are my preferences?" (ADR 228): the preference, and not the request worked on.
    server.clear()
    codex.run("What are my preferences?")
    block = block_in(_turns(server)[-1])
    items = item_lines(block)
    assert items and PREFERENCE in items[0], block
    assert not any("Add a health check endpoint to the API." in line for line in items), block


def test_the_models_call_of_our_recall_tool_returns_the_decision(setup: tuple[Codex, Project, ModelServer]) -> None:
    codex, project, server = setup
    codex.run(DECISION)
    await_retained(project, "Postgres 16")
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
    await_retained(project, "document the billing")


def test_a_hanging_memory_server_never_stops_codex(setup: tuple[Codex, Project, ModelServer]) -> None:
    codex, project, server = setup
    project.configure({"backend": "hindsight", "notifications": {"startup": False}})
    hanging = HangingServer()
    try:
        start = time.monotonic()
        codex.run(QUESTION, env={"HINDSIGHT_BASE_URL": hanging.url, "HINDSIGHT_HOOK_DEADLINE_MS": "3000"})
        assert time.monotonic() - start < RUN_TIMEOUT_S / 2
        assert _turns(server) and block_in(_turns(server)[-1]) == ""
        assert hanging.accepted > 0  # the hook did try the server, and gave up on its own
    finally:
        hanging.close()
