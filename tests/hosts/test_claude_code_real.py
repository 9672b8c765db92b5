"""The real Claude Code (2.1.197, installed by ``scripts/install-hosts``) with our hooks installed,
run non-interactively against the scripted model server on loopback.

HOME and every config folder are in tmp; the hooks are installed by the README's own line for
Claude Code, run exactly as written (it writes the tmp HOME's ``~/.claude/settings.json``);
Claude Code's non-essential traffic is off.
When our MCP server is still connecting as Claude Code sends its first request, Claude Code
offers the model its own ``WaitForMcpServers`` tool; the scripted model calls it, as a real one
would, before it calls our recall tool.
Session 1 states a decision. Session 2's request to the model carries our ``<hindsight-memory>``
block with it, Claude Code's transcript of session 2 records that block, and after session 2's
Stop and SessionEnd hooks the store still holds no line of the block: what we retained of
session 2 is its prompt and reply only.
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

from ..plugin.hostkit import LOCAL_CONFIG, Project, wait_until
from .model_server import ModelServer, RecordedRequest, Reply, iter_texts
from .real_agents import (
    DECISION,
    QUESTION,
    assert_answer_follows,
    await_retained,
    block_in,
    drained,
    install_by_readme,
    item_lines,
    runtime,
    said_in_two_turns,
    session_report,
)

__all__ = ["runtime"]  # fixture
RUN_TIMEOUT_S = 180
FACT = "We run Postgres 16."
CACHE_TTL = "Entries in the cache expire after 15 minutes."
BY_MEANING = "What database do we use?"  # no word of FACT: found by meaning or not at all
LINT_ASK = "Can we lint faster?"
LINT_PROPOSAL = "We could replace eslint with biome. Shall I switch?"  # the scripted model's reply to LINT_ASK
LINT_ANSWER = "no, keep eslint for now"
CHOICE_ASK = "Should we lint with biome or eslint?"
CHOICE_LOOK = "Let me check the repo's lint config first."  # the scripted model's reply, with a Glob call
CHOICE_REPORT = "There's an old .eslintrc but nothing in package.json runs it."  # its report on the result
CHOICE_MADE = "ok, go with biome then"
LOOK_TOOL = "Glob"  # one of Claude Code's own read-only tools
LIMITS_ASK = "Add rate limiting to the public API."
LIMITS_LATER = "ok, we'll pick up the burst tests tomorrow"


class Claude:
    """Runs ``claude -p`` in the project with an isolated HOME and the model server's URL."""

    def __init__(self, binary: Path, project: Path, home: Path, server: ModelServer, runtime: Path) -> None:
        self.binary = binary
        self.project = project
        self.home = home
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "ANTHROPIC_BASE_URL": server.url,
            "ANTHROPIC_API_KEY": "test-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "HINDSIGHT_HOOK_RUNTIME_DIR": str(runtime),
            # `claude -p` waits 5 s for MCP servers before its first request; on a loaded CI
            # machine our server may need longer to start, and a test must not race it
            "MCP_CONNECT_TIMEOUT_MS": "60000",
            "MCP_TIMEOUT": "60000",
        }

    def run(self, prompt: str, *extra: str) -> dict[str, Any]:
        proc = subprocess.run(
            [str(self.binary), "-p", prompt, "--output-format", "json", *extra],
            cwd=self.project,
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )
        assert proc.returncode == 0, f"claude exited {proc.returncode}: {proc.stderr[-2000:]}"
        result = json.loads(proc.stdout)
        assert isinstance(result, dict) and not result.get("is_error"), result
        return result

    def transcript(self, session_id: str) -> Path:
        found = list((self.home / ".claude" / "projects").glob(f"*/{session_id}.jsonl"))
        assert len(found) == 1, f"no transcript for {session_id}"
        return found[0]


@pytest.fixture
def setup(tmp_path: Path, claude_bin: Path, runtime: Path) -> Iterator[tuple[Claude, Project, ModelServer]]:
    home = tmp_path / "home"
    home.mkdir()
    project = Project(tmp_path / "repo", LOCAL_CONFIG)
    with ModelServer(_RecallScript()) as server:
        claude = Claude(claude_bin, project.root, home, server, runtime)
        install_by_readme("Claude Code", project, claude.env)
        yield claude, project, server


def _model_turns(server: ModelServer) -> list[RecordedRequest]:
    return [r for r in server.requests_to("/v1/messages") if isinstance(r.body, dict) and r.body.get("messages")]


def test_session_two_gets_session_ones_decision_and_nothing_of_the_block_is_retained(
    setup: tuple[Claude, Project, ModelServer],
) -> None:
    claude, project, server = setup

    one = claude.run(DECISION)
    await_retained(project, "Postgres 16", "session 1's decision was not retained")
    assert all(block_in(r) == "" for r in _model_turns(server))  # nothing to recall yet

    server.clear()
    two = claude.run(QUESTION)
    assert two["session_id"] != one["session_id"]
    turns = _model_turns(server)
    assert turns, "session 2 sent no model request"
    block = block_in(turns[-1])
    assert block.startswith("<hindsight-memory>")
    assert "Postgres 16" in block
    assert "UserPromptSubmit hook additional context: <hindsight-memory>" in turns[-1].text()

    transcript = claude.transcript(two["session_id"]).read_text(encoding="utf-8")
    assert "<hindsight-memory>" in transcript  # Claude Code's own record of what we injected

    await_retained(project, QUESTION, "session 2's prompt was not retained")
    time.sleep(1.0)  # a late worker would still be delivering now; then nothing may have changed
    assert drained(project)
    units = [content for _, content in project.units()]
    assert not any("<hindsight-memory" in u or "hindsight-memory>" in u for u in units)
    block_lines = [ln.strip() for ln in block.splitlines()[1:-1] if ln.strip() and not ln.strip()[0].isdigit()]
    assert block_lines
    for line in block_lines:
        assert not any(line in u for u in units), f"a line of our block was retained: {line!r}"
    assert project.unit_count("Postgres 16") == 1  # the recalled fact was not retained again


def test_a_user_west_of_utc_is_shown_times_on_their_own_clock(setup: tuple[Claude, Project, ModelServer]) -> None:
    """ADR 212 through the real host: Claude Code runs our hooks (and the warm helper they start)
    with the user's ``TZ``; two sessions of one day state two things about the cache, so the block
    shows their times, on the user's clock (``EST5``: UTC-05:00, no tz database needed). (The
    model's "Noted." takes no place of its own, ADR 215: it is not a second memory of the day.)"""
    claude, project, server = setup
    claude.env["TZ"] = "EST5"
    claude.run(DECISION)
    claude.run(CACHE_TTL)
    await_retained(project, "Postgres 16", "session 1's decision was not retained")
    await_retained(project, "15 minutes", "session 2's note was not retained")
    server.clear()
    claude.run(QUESTION)
    block = block_in(_model_turns(server)[-1])
    assert "Postgres 16" in block and "15 minutes" in block
    assert "UTC-05:00)" in block and " UTC)" not in block


def test_session_two_finds_session_ones_fact_by_meaning_on_its_first_prompt(
    setup: tuple[Claude, Project, ModelServer],
) -> None:
    """Issue 13 inside the agent: the question shares no word with the fact, only its meaning.

    Each ``claude -p`` is a new session; its hooks reach the same warm helper, which keeps the
    store's vectors in memory for every session it serves (ADR 175): the first prompt of session 2
    is searched by meaning, not only its later ones.
    """
    claude, project, server = setup
    claude.run(FACT)
    await_retained(project, "Postgres 16")
    assert wait_until(lambda: project.units_without_vector() == 0, 90), "session 1 got no vectors"

    server.clear()
    claude.run(BY_MEANING)
    turns = _model_turns(server)
    assert turns, "session 2 sent no model request"
    assert "Postgres 16" in block_in(turns[0]), turns[0].text()[-2000:]


def test_a_resumed_session_retains_only_its_new_turn(setup: tuple[Claude, Project, ModelServer]) -> None:
    claude, project, _server = setup
    first = claude.run("Remember: the deploy window is Tuesday 14:00")
    await_retained(project, "deploy window")
    again = claude.run("Also: freeze the main branch on Fridays", "--resume", first["session_id"])
    await_retained(project, "freeze the main branch")
    time.sleep(1.0)
    assert drained(project)
    assert project.unit_count("deploy window") == 1
    assert again["session_id"]


def test_a_proposal_is_recalled_with_the_users_answer(setup: tuple[Claude, Project, ModelServer]) -> None:
    """ADR 219 through the real host: the model proposes, the user turns it down in the resumed
    session; a later session asking about it gets the proposal and, right after it, the answer that
    says none of the question's words."""
    claude, project, server = setup
    said_in_two_turns(claude.run, project, (LINT_ASK, "biome"), (LINT_ANSWER, "keep eslint"))
    server.clear()
    claude.run("What did we decide about biome?")
    block = block_in(_model_turns(server)[-1])
    assert_answer_follows(item_lines(block), LINT_PROPOSAL, LINT_ANSWER, block)


def test_a_choice_made_once_the_model_had_looked_is_recalled_with_the_question(
    setup: tuple[Claude, Project, ModelServer],
) -> None:
    """ADR 235 through the real host: the user asks, the model looks with one of Claude Code's own
    tools and reports, and the user chooses in the resumed session; a new session's "What linter do
    we use?" (no word of the choice) sends a request whose block holds the question with the choice
    right after it, though the model's message, its tool call, the tool's output and its report
    came between them."""
    claude, project, server = setup
    (project.root / ".eslintrc.json").write_text("{}\n", encoding="utf-8")
    said_in_two_turns(claude.run, project, (CHOICE_ASK, "nothing in package.json"), (CHOICE_MADE, "go with biome"))
    server.clear()
    claude.run("What linter do we use?")
    block = block_in(_model_turns(server)[-1])
    assert_answer_follows(item_lines(block), CHOICE_ASK, CHOICE_MADE, block)


@pytest.mark.parametrize("asked", ["Where did we leave off?", "What's next?", "What's the status?"])
def test_a_new_session_is_told_where_the_last_one_stopped(
    setup: tuple[Claude, Project, ModelServer], asked: str
) -> None:
    """ADR 222 through the real host: a session's request and, in the resumed session, how it was
    left; a new session's "Where did we leave off?" (no word of either), or "What's next?" and
    "What's the status?" (ADR 229) as its first prompt (what the hook hands us holds no earlier
    turn), gets both, in that order, at the head of our block."""
    claude, project, server = setup
    said_in_two_turns(claude.run, project, (LIMITS_ASK, "rate limiting"), (LIMITS_LATER, "burst tests"))
    server.clear()
    claude.run(asked)
    block = block_in(_model_turns(server)[-1])
    items = item_lines(block)
    assert items and LIMITS_ASK in items[0], block
    assert any(LIMITS_LATER in line for line in items[1:4]), block


def test_the_installed_slash_command_switches_that_session_to_read_only(
    setup: tuple[Claude, Project, ModelServer],
) -> None:
    claude, project, server = setup
    switched = claude.run("/hindsight:mode read-only")
    sid = switched["session_id"]
    assert "Unknown command" not in str(switched.get("result"))
    assert session_report(project, sid)["mode"] == "read-only"
    command_turn = _model_turns(server)[-1].text()
    assert "read-only" in command_turn  # the command's output went to the model to show

    claude.run("Secret plan: migrate the billing service on Monday", "--resume", sid)
    time.sleep(3.0)  # the Stop and SessionEnd hooks ran; a retain would have been queued by now
    assert project.unit_count("billing service") == 0
    assert "billing service" not in project.state_text()

    other = claude.run("Public plan: document the billing service")  # a new session: normal mode
    assert other["session_id"] != sid
    await_retained(project, "document the billing")


RECALL_TOOL = "mcp__hindsight__hindsight_recall"
ASK_TOOL = "use the memory tool"


def _last_user_blocks(request: RecordedRequest) -> list[dict[str, Any]]:
    """The content blocks of the request's last user message (a string content is one text block)."""
    messages = request.body.get("messages") if isinstance(request.body, dict) else None
    users = [m for m in messages or [] if isinstance(m, dict) and m.get("role") == "user"]
    if not users:
        return []
    content = users[-1].get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content or [] if isinstance(block, dict)]


def _tool_names(request: RecordedRequest) -> dict[str, str]:
    """The name of every tool call in the request's messages, by its ``tool_use`` id."""
    messages = request.body.get("messages") if isinstance(request.body, dict) else None
    names: dict[str, str] = {}
    for message in messages or []:
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                names[str(block.get("id"))] = str(block.get("name"))
    return names


def _tool_results(request: RecordedRequest) -> list[str]:
    """The text of every result of our recall tool in the request's last user message (Claude
    Code's own tools, such as its wait for MCP servers, are left out)."""
    names = _tool_names(request)
    out: list[str] = []
    for block in _last_user_blocks(request):
        if block.get("type") == "tool_result" and names.get(str(block.get("tool_use_id"))) == RECALL_TOOL:
            out.append("\n".join(iter_texts(block.get("content"))))
    return out


def _offered(request: RecordedRequest) -> list[str]:
    tools = request.body.get("tools") if isinstance(request.body, dict) else None
    return [str(t.get("name")) for t in tools or [] if isinstance(t, dict)]


# Claude Code 2.1.197 may send its first request while an MCP server is still connecting; it then
# offers this tool of its own (it waits up to 5 s per call), as a real model would call it.
WAIT_TOOL = "WaitForMcpServers"
MAX_WAIT_TURNS = 12


class _RecallScript:
    """The model: calls our recall tool when asked to use memory (first waiting, through Claude
    Code's own tool, for our MCP server to connect), then repeats what came back."""

    def __init__(self) -> None:
        self.waits = 0

    def __call__(self, request: RecordedRequest) -> Reply:
        blocks = _last_user_blocks(request)
        names = _tool_names(request)
        if any(b.get("type") == "tool_result" and names.get(str(b.get("tool_use_id"))) == LOOK_TOOL for b in blocks):
            return Reply.say(CHOICE_REPORT)
        results = _tool_results(request)
        if results:
            return Reply.say("Memory says: " + " | ".join(results))
        texts = "\n".join(t for b in blocks for t in iter_texts(b))
        if LINT_ASK in texts and "<hindsight-memory>" not in texts:
            return Reply.say(LINT_PROPOSAL)
        if CHOICE_ASK in texts and "<hindsight-memory>" not in texts:
            return Reply.tool(LOOK_TOOL, {"pattern": ".eslintrc*"}, text=CHOICE_LOOK)
        asked = ASK_TOOL in texts or ("tool_result" in {b.get("type") for b in blocks} and self.waits > 0)
        offered = _offered(request)
        if asked and RECALL_TOOL in offered:
            return Reply.tool(RECALL_TOOL, {"query": "database for the cache"})
        if asked and WAIT_TOOL in offered and self.waits < MAX_WAIT_TURNS:
            self.waits += 1
            return Reply.tool(WAIT_TOOL, {"servers": ["hindsight"]})
        return Reply.say("Noted.")


def test_the_models_call_of_our_mcp_recall_tool_returns_the_decision(
    setup: tuple[Claude, Project, ModelServer],
) -> None:
    claude, project, server = setup
    claude.run(DECISION)
    await_retained(project, "Postgres 16")

    server.clear()
    asked = claude.run(f"Which database for the cache? {ASK_TOOL}")
    turns = _model_turns(server)
    calls = [
        i for i, r in enumerate(turns) if RECALL_TOOL in _offered(r) and ASK_TOOL in r.text() and not _tool_results(r)
    ]
    assert calls, "Claude Code never offered our MCP recall tool to the model"
    following = turns[calls[-1] + 1 :]
    assert following, "no request followed the model's tool call"
    assert any("Postgres 16" in text for text in _tool_results(following[0])), (
        "the recall tool's result did not reach the model in the next request"
    )
    assert "Postgres 16" in str(asked.get("result"))


def test_our_mcp_tools_speak_for_the_claude_code_session_they_are_called_in(
    setup: tuple[Claude, Project, ModelServer],
) -> None:
    claude, project, server = setup
    claude.run(DECISION)
    await_retained(project, "Postgres 16")
    switched = claude.run("/hindsight:mode ignored")  # the slash command, for this session only
    sid = switched["session_id"]
    assert session_report(project, sid)["mode"] == "ignored"

    server.clear()
    claude.run(f"Which database for the cache? {ASK_TOOL}", "--resume", sid)
    results = [text for r in _model_turns(server) for text in _tool_results(r)]
    assert results, "the model's tool call got no result"
    assert all("recall disabled for this session" in text and "Postgres" not in text for text in results)
