"""The OpenAI Agents SDK (installed from PyPI) with ``HindsightMemory``, against a scripted model server.

The SDK's own ``OpenAIChatCompletionsModel`` and ``AsyncOpenAI`` client talk HTTP to a loopback Chat
Completions server that records every request and answers from a script; the SDK keeps history in its own
``SQLiteSession``. Memory is the embedded store of a tmp project.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, OpenAIChatCompletionsModel, Runner, SQLiteSession
from openai import AsyncOpenAI

from hindsight_hooks.hosts.openai_agents import HindsightMemory

from ..plugin.hostkit import Project
from .framework_kit import (
    DECISION,
    DECISION_MARK,
    QUESTION,
    Trouble,
    assert_block_before_the_question_in_both_calls,
    assert_readme_snippet_runs,
    assert_stored_without_block,
    assert_trouble_cost_at_most_the_bound,
    chat_requests,
    command_in_session,
    has_block,
    isolated,
    isolated_home,
    project,
    role_texts,
    server,
    stored_text,
    trouble,
)
from .model_server import ModelServer, Reply

__all__ = ["isolated", "isolated_home", "project", "server", "trouble"]  # fixtures used by name below
pytestmark = pytest.mark.anyio
HEADING = "OpenAI Agents SDK"  # the README section whose snippet runs as written


@pytest.fixture
async def model(server: ModelServer) -> AsyncIterator[OpenAIChatCompletionsModel]:
    """The SDK's Chat Completions model on the scripted server (its client closed inside the test's loop)."""
    client = AsyncOpenAI(base_url=server.url + "/v1", api_key="test-key", max_retries=0, timeout=60)
    yield OpenAIChatCompletionsModel(model="scripted", openai_client=client)
    await client.close()


def agent_for(model: OpenAIChatCompletionsModel, memory: HindsightMemory) -> Agent[Any]:
    return Agent(name="assistant", instructions="Be brief.", model=model, tools=memory.tools())


async def test_session_two_is_shown_session_ones_decision_and_the_sdk_history_keeps_no_block(
    project: Project, server: ModelServer, model: OpenAIChatCompletionsModel
) -> None:
    server.add_replies(Reply.say("Noted."))
    memory = HindsightMemory(cwd=project.root)
    streamed = Runner.run_streamed(
        agent_for(model, memory),
        DECISION,
        run_config=memory.run_config(),
        hooks=memory.hooks(),
        session=SQLiteSession("one"),
    )
    async for _ in streamed.stream_events():  # session 1 streams: the hooks run there too
        pass
    await memory.aclose()
    server.clear()

    server.add_replies(Reply.tool("hindsight_recall", {"query": "session cache"}), Reply.say("Redis 7, 15 minutes."))
    memory = HindsightMemory(cwd=project.root)
    history = SQLiteSession("two")
    result = await Runner.run(
        agent_for(model, memory), QUESTION, run_config=memory.run_config(), hooks=memory.hooks(), session=history
    )
    await memory.aclose()

    assert result.final_output == "Redis 7, 15 minutes."
    assert_block_before_the_question_in_both_calls(server)
    # The SDK's stored history and the run's input list never hold the block.
    assert not has_block(repr(await history.get_items()))
    assert not has_block(repr(result.to_input_list()))
    assert_stored_without_block(project, "Redis 7, 15 minutes.")


async def test_a_session_id_is_the_session_a_shell_command_reaches(
    project: Project, server: ModelServer, model: OpenAIChatCompletionsModel
) -> None:
    assert "read-only" in command_in_session(project, "support-42", "mode", "read-only")
    server.add_replies(Reply.say("Noted."), Reply.say("Noted."))
    memory = HindsightMemory(cwd=project.root, session_id="support-42")
    agent = agent_for(model, memory)
    await Runner.run(agent, DECISION, run_config=memory.run_config(), hooks=memory.hooks())
    assert DECISION_MARK not in stored_text(project)  # read-only: nothing retained
    # Another session for one run, through the run's own config and hooks.
    await Runner.run(
        agent, DECISION, run_config=memory.run_config(session_id="other"), hooks=memory.hooks(session_id="other")
    )
    await memory.aclose()
    assert DECISION_MARK in stored_text(project)


async def test_a_tool_error_is_text_the_model_reads(
    project: Project, server: ModelServer, model: OpenAIChatCompletionsModel
) -> None:
    server.add_replies(Reply.tool("hindsight_recall", {"query": ""}), Reply.say("Sorry."))
    memory = HindsightMemory(cwd=project.root)
    result = await Runner.run(
        agent_for(model, memory), "Look it up.", run_config=memory.run_config(), hooks=memory.hooks()
    )
    await memory.aclose()
    assert result.final_output == "Sorry."
    (tool_answer,) = role_texts(chat_requests(server)[1], "tool")
    assert tool_answer.startswith("Error:") and "query" in tool_answer


async def test_trouble_never_reaches_the_run_and_costs_at_most_the_bound(
    trouble: Trouble, server: ModelServer, model: OpenAIChatCompletionsModel
) -> None:
    server.add_replies(Reply.say("Noted."), Reply.tool("hindsight_recall", {"query": "session cache"}))
    server.add_replies(Reply.say("Done."))
    memory = HindsightMemory(cwd=trouble.project.root)
    agent = agent_for(model, memory)
    history = SQLiteSession("t")
    began = time.monotonic()
    first = await Runner.run(agent, DECISION, run_config=memory.run_config(), hooks=memory.hooks(), session=history)
    second = await Runner.run(agent, QUESTION, run_config=memory.run_config(), hooks=memory.hooks(), session=history)
    took = time.monotonic() - began
    await memory.aclose()

    assert (first.final_output, second.final_output) == ("Noted.", "Done.")
    assert_trouble_cost_at_most_the_bound(trouble, took, server)


def test_the_readme_snippet_runs_as_written(project: Project, isolated_home: Path) -> None:
    assert_readme_snippet_runs(HEADING, project, isolated_home)
