"""LangChain v1 ``create_agent`` (installed from PyPI) with the ``HindsightMemory`` middleware, against a
scripted model server.

LangChain's own ``ChatOpenAI`` talks HTTP to a loopback Chat Completions server that records every request
and answers from a script; LangGraph's ``InMemorySaver`` keeps each thread's messages. Memory is the
embedded store of a tmp project. Both entry points run: ``invoke`` (the middleware's synchronous hooks)
and ``ainvoke`` (the async twins).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import ToolMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver

from hindsight_hooks.hosts.langchain import HindsightMemory

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
    command_in_session,
    has_block,
    isolated,
    isolated_home,
    project,
    server,
    stored_text,
    trouble,
)
from .model_server import ModelServer, Reply

__all__ = ["isolated", "isolated_home", "project", "server", "trouble"]  # fixtures used by name below
pytestmark = pytest.mark.anyio
HEADING = "LangChain / LangGraph"  # the README section whose snippet runs as written


def agent_for(server: ModelServer, memory: HindsightMemory, saver: InMemorySaver | None = None) -> Any:
    model = ChatOpenAI(model="scripted", base_url=server.url + "/v1", api_key="test-key", max_retries=0, timeout=60)
    return create_agent(model, tools=[], middleware=[memory], checkpointer=saver, system_prompt="Be brief.")


def thread(tid: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": tid}}


def ask(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


@pytest.mark.parametrize("entry", ["invoke", "ainvoke"])
async def test_session_two_is_shown_session_ones_decision_and_the_thread_keeps_no_block(
    project: Project, server: ModelServer, entry: str
) -> None:
    saver = InMemorySaver()
    server.add_replies(Reply.say("Noted."))
    memory = HindsightMemory(cwd=project.root)
    agent_for(server, memory, saver).invoke(ask(DECISION), thread("t1"))
    memory.close()
    server.clear()

    server.add_replies(Reply.tool("hindsight_recall", {"query": "session cache"}), Reply.say("Redis 7, 15 minutes."))
    memory = HindsightMemory(cwd=project.root)
    agent = agent_for(server, memory, saver)
    if entry == "invoke":
        state = agent.invoke(ask(QUESTION), thread("t2"))
        memory.close()
    else:
        state = await agent.ainvoke(ask(QUESTION), thread("t2"))
        await memory.aclose()

    assert state["messages"][-1].content == "Redis 7, 15 minutes."
    assert_block_before_the_question_in_both_calls(server)
    # Neither the result nor the thread LangGraph saved holds the block.
    assert not any(has_block(str(m.content)) for m in state["messages"])
    saved = agent.get_state(thread("t2")).values["messages"]
    assert len(saved) == 4 and not any(has_block(str(m.content)) for m in saved)
    assert_stored_without_block(project, "Redis 7, 15 minutes.")


def test_a_thread_is_a_session_and_each_message_is_retained_once(project: Project, server: ModelServer) -> None:
    saver = InMemorySaver()
    server.add_replies(Reply.say("Noted."), Reply.say("Fifteen minutes."))
    memory = HindsightMemory(cwd=project.root)
    agent = agent_for(server, memory, saver)
    agent.invoke(ask(DECISION), thread("support-7"))
    agent.invoke(ask("And the TTL?"), thread("support-7"))  # the checkpointer hands back the whole thread
    memory.close()
    assert project.unit_count(DECISION_MARK) == 1
    assert project.unit_count("And the TTL?") == 1
    # The thread id is the session id: a shell command reaches it.
    assert "read-only" in command_in_session(project, "support-7", "mode", "read-only")
    server.add_replies(Reply.say("Noted again."))
    memory = HindsightMemory(cwd=project.root)
    agent_for(server, memory, saver).invoke(ask("We also decided on Valkey as a fallback."), thread("support-7"))
    memory.close()
    assert "Valkey" not in stored_text(project)


def test_a_fixed_session_id_wins_over_the_thread(project: Project, server: ModelServer) -> None:
    assert "read-only" in command_in_session(project, "fixed", "mode", "read-only")
    server.add_replies(Reply.say("Noted."))
    memory = HindsightMemory(cwd=project.root, session_id="fixed")
    agent_for(server, memory, InMemorySaver()).invoke(ask(DECISION), thread("any-thread"))
    memory.close()
    assert DECISION_MARK not in stored_text(project)


def test_a_tool_error_is_an_error_tool_message(project: Project, server: ModelServer) -> None:
    server.add_replies(Reply.tool("hindsight_recall", {"query": ""}), Reply.say("Sorry."))
    memory = HindsightMemory(cwd=project.root)
    state = agent_for(server, memory).invoke(ask("Look it up."))
    memory.close()
    assert state["messages"][-1].content == "Sorry."
    (tool_message,) = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert tool_message.status == "error" and "query" in str(tool_message.content)


@pytest.mark.parametrize("entry", ["invoke", "ainvoke"])
async def test_trouble_never_reaches_the_run_and_costs_at_most_the_bound(
    trouble: Trouble, server: ModelServer, entry: str
) -> None:
    server.add_replies(Reply.say("Noted."), Reply.tool("hindsight_recall", {"query": "session cache"}))
    server.add_replies(Reply.say("Done."))
    memory = HindsightMemory(cwd=trouble.project.root)
    agent = agent_for(server, memory, InMemorySaver())
    began = time.monotonic()
    if entry == "invoke":
        first = agent.invoke(ask(DECISION), thread("t"))
        second = agent.invoke(ask(QUESTION), thread("t"))
    else:
        first = await agent.ainvoke(ask(DECISION), thread("t"))
        second = await agent.ainvoke(ask(QUESTION), thread("t"))
    took = time.monotonic() - began
    await memory.aclose()

    assert (first["messages"][-1].content, second["messages"][-1].content) == ("Noted.", "Done.")
    assert_trouble_cost_at_most_the_bound(trouble, took, server)


def test_the_readme_snippet_runs_as_written(project: Project, isolated_home: Path) -> None:
    assert_readme_snippet_runs(HEADING, project, isolated_home)
