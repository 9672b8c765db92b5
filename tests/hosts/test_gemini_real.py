"""The real Gemini CLI (0.61.0, installed by ``scripts/install-hosts``) with our hooks, MCP server,
slash commands and policy installed, run with ``gemini -p`` against the scripted model server.

HOME and every config folder are in tmp; everything is installed by the README's own line for
Gemini CLI, run exactly as written (it merges into the tmp HOME's ``~/.gemini/settings.json``,
which already selects API-key auth and turns usage statistics off); the workspace is trusted
through ``GEMINI_CLI_TRUST_WORKSPACE``. The scripted server answers Gemini's structured routing
questions with objects that fit their schema, so no request waits on a retry.

Session 1 states a decision. Session 2's request to the model carries our block with it, as
Gemini 0.61 delivers hook context: inside ``<hook_context>``, ``<`` and ``>`` escaped (ADR-088).
Gemini's session file of session 2 records that part, and after session 2's hooks the store
holds no line of it. The model's call of our MCP recall tool returns the decision; the installed
``/hindsight:mode read-only`` switches exactly the session it is typed in.
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

from ..plugin.hostkit import LOCAL_CONFIG, HangingServer, Project
from .conftest import host_binary
from .model_server import ModelServer, RecordedRequest, Reply
from .model_server_gemini import GeminiAPI, content_text, contents, function_responses, is_turn
from .real_agents import (
    DECISION,
    QUESTION,
    assert_answer_follows,
    assert_only_the_turn_was_retained,
    await_retained,
    install_by_readme,
    item_lines,
    runtime,
    said_in_two_turns,
    session_report,
)

__all__ = ["runtime"]  # fixture
RUN_TIMEOUT_S = 240
OPEN, CLOSE = "&lt;hindsight-memory&gt;", "&lt;/hindsight-memory&gt;"
"""Our block's tags as Gemini CLI 0.61 hands hook context to the model."""


@pytest.fixture(scope="session")
def gemini_bin() -> Path:
    return host_binary("gemini")


class Gemini:
    """Runs ``gemini -p`` in the project with an isolated HOME and the model server's URL."""

    def __init__(self, binary: Path, project: Path, home: Path, server: ModelServer, runtime: Path) -> None:
        self.binary = binary
        self.project = project
        self.home = home
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
            "GOOGLE_GEMINI_BASE_URL": server.url,
            "GEMINI_API_KEY": "test-key",
            "HINDSIGHT_HOOK_RUNTIME_DIR": str(runtime),
        }
        (home / ".gemini").mkdir(parents=True)
        settings = {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": False},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        }
        (home / ".gemini" / "settings.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")

    def run(self, prompt: str, *extra: str, env: dict[str, str] | None = None) -> dict[str, Any]:
        proc = subprocess.run(
            [str(self.binary), "-p", prompt, "--output-format", "json", *extra],
            cwd=self.project,
            env={**self.env, **(env or {})},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )
        assert proc.returncode == 0, f"gemini exited {proc.returncode}: {proc.stderr[-3000:]}"
        result = json.loads(proc.stdout[proc.stdout.index("{") :])
        assert isinstance(result, dict) and result.get("session_id"), result
        return result

    def transcript(self, session_id: str) -> Path:
        found = list((self.home / ".gemini" / "tmp").rglob(f"session-*-{session_id[:8]}.jsonl"))
        assert len(found) == 1, f"no session file for {session_id}"
        return found[0]


def _prompt_text(request: RecordedRequest) -> str:
    turns = contents(request)
    return content_text(turns[-1]) if turns else ""


LINT_ASK = "Can we lint faster?"
LINT_PROPOSAL = "We could replace eslint with biome. Shall I switch?"  # the scripted reply to LINT_ASK
LINT_ANSWER = "no, keep eslint for now"


def script(request: RecordedRequest) -> Reply:
    """Plain text, a proposal for ``LINT_ASK``, and a recall-tool call for prompts that ask for one."""
    if LINT_ASK in _prompt_text(request):
        return Reply.say(LINT_PROPOSAL)
    if "use the memory tool" not in request.text():
        return Reply.say("Noted.")
    answers = function_responses(request)
    if answers:
        return Reply.say("Memory says: " + json.dumps(answers))
    return Reply.tool("mcp_hindsight_hindsight_recall", {"query": "database for the cache"})


@pytest.fixture
def setup(tmp_path: Path, gemini_bin: Path, runtime: Path) -> Iterator[tuple[Gemini, Project, ModelServer]]:
    home = tmp_path / "home"
    home.mkdir()
    project = Project(tmp_path / "repo", LOCAL_CONFIG)
    with ModelServer(script, dialects=(GeminiAPI(),)) as server:
        gemini = Gemini(gemini_bin, project.root, home, server, runtime)
        install_by_readme("Gemini CLI", project, gemini.env)
        yield gemini, project, server


def _turns(server: ModelServer) -> list[RecordedRequest]:
    return [r for r in server.requests if is_turn(r)]


def _block_in(request: RecordedRequest) -> str:
    """Our block as the model received it, escaped by Gemini ('' when absent)."""
    text = request.text()
    body = json.loads(text)
    for turn in body.get("contents", []):
        for part in turn.get("parts", []):
            value = part.get("text", "") if isinstance(part, dict) else ""
            start = value.find(OPEN)
            if start >= 0:
                end = value.find(CLOSE, start)
                assert end > start, "the block reached the model cut short"
                return str(value[start : end + len(CLOSE)])
    return ""


def test_session_two_gets_session_ones_decision_and_nothing_of_the_block_is_retained(
    setup: tuple[Gemini, Project, ModelServer],
) -> None:
    gemini, project, server = setup
    one = gemini.run(DECISION)
    await_retained(project, "Postgres 16", "session 1's decision was not retained")
    assert all(_block_in(r) == "" for r in _turns(server))  # nothing to recall yet

    server.clear()
    two = gemini.run(QUESTION)
    assert two["session_id"] != one["session_id"]
    turns = _turns(server)
    assert turns, "session 2 sent no model request"
    block = _block_in(turns[-1])
    assert block.startswith(OPEN) and "Postgres 16" in block
    assert f"<hook_context>{OPEN}" in _prompt_text(turns[-1])  # appended to the prompt as hook context
    assert "<hindsight-memory>" not in turns[-1].text()  # Gemini escaped our tags

    assert OPEN in gemini.transcript(two["session_id"]).read_text(encoding="utf-8")  # Gemini's record of it

    assert_only_the_turn_was_retained(project, block, ("hindsight-memory", "hook_context"))


def test_the_models_call_of_our_recall_tool_returns_the_decision(setup: tuple[Gemini, Project, ModelServer]) -> None:
    gemini, project, server = setup
    gemini.run(DECISION)
    await_retained(project, "Postgres 16")
    server.clear()
    gemini.run("Which database for the cache? use the memory tool")
    answered = [r for r in _turns(server) if "Postgres 16" in json.dumps(function_responses(r))]
    assert answered, "the recall tool's result never reached the model"


def test_a_proposal_the_user_answered_is_recalled_as_a_decision(setup: tuple[Gemini, Project, ModelServer]) -> None:
    """ADR 224 through the real host: the model proposes, the user turns it down in the resumed
    session; a new session's "What decisions did we make?" (no word of either) sends a request whose
    block holds the proposal with the answer right after it."""
    gemini, project, server = setup
    said_in_two_turns(gemini.run, project, (LINT_ASK, "biome"), (LINT_ANSWER, "keep eslint"))
    server.clear()
    gemini.run("What decisions did we make?")
    block = _block_in(_turns(server)[-1])
    assert_answer_follows(item_lines(block), LINT_PROPOSAL, LINT_ANSWER, block)


def test_the_installed_slash_command_switches_that_session_to_read_only(
    setup: tuple[Gemini, Project, ModelServer],
) -> None:
    gemini, project, server = setup
    switched = gemini.run("/hindsight:mode read-only")
    sid = switched["session_id"]
    assert session_report(project, sid)["mode"] == "read-only"
    shown = _prompt_text(_turns(server)[-1])
    assert "read-only" in shown  # the command's output went to the model to show

    gemini.run("Secret plan: migrate the billing service on Monday", "--resume", sid)
    time.sleep(3.0)  # the AfterAgent and SessionEnd hooks ran; a retain would have been queued by now
    assert project.unit_count("billing service") == 0
    assert "billing service" not in project.state_text()
    assert project.unit_count("read-only") == 0  # the command's output is not memory either

    other = gemini.run("Public plan: document the billing service")  # a new session: normal mode
    assert other["session_id"] != sid
    await_retained(project, "document the billing")


def test_a_hanging_memory_server_never_stops_gemini(setup: tuple[Gemini, Project, ModelServer]) -> None:
    gemini, project, server = setup
    project.configure({"backend": "hindsight", "notifications": {"startup": False}})
    hanging = HangingServer()
    try:
        start = time.monotonic()
        gemini.run(QUESTION, env={"HINDSIGHT_BASE_URL": hanging.url, "HINDSIGHT_HOOK_DEADLINE_MS": "3000"})
        assert time.monotonic() - start < RUN_TIMEOUT_S / 2
        assert _turns(server) and _block_in(_turns(server)[-1]) == ""
        assert hanging.accepted > 0  # the hook did try the server, and gave up on its own
    finally:
        hanging.close()


def test_a_question_for_a_kind_of_tool_gets_the_tool_named(setup: tuple[Gemini, Project, ModelServer]) -> None:
    """ADR 232 through the real host: session 1 says which UI framework the dashboard is in; session
    2's "What UI framework do we use?" (no word of it: not "Svelte", not "frontend") sends a request
    whose block holds that statement."""
    gemini, project, server = setup
    gemini.run("The dashboard frontend is written in Svelte.")
    await_retained(project, "written in Svelte", "session 1's statement was not retained")
    server.clear()
    gemini.run("What UI framework do we use?")
    block = _block_in(_turns(server)[-1])
    assert "The dashboard frontend is written in Svelte." in block, block
