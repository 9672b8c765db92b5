"""pydantic-ai (installed from PyPI) with ``HindsightMemory`` as a capability, against ``FunctionModel``.

The model is pydantic-ai's own ``FunctionModel``: a function that records every request it is sent and
answers from a script (text, or a call of one of our tools). Memory is the embedded store of a tmp project.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from hindsight_hooks.hosts.pydanticai import HindsightMemory

from ..plugin.hostkit import Project
from .framework_kit import (
    DECISION,
    DECISION_MARK,
    QUESTION,
    Trouble,
    assert_readme_snippet_runs,
    assert_stored_without_block,
    command_in_session,
    has_block,
    isolated,
    isolated_home,
    project,
    recall_in_new_session,
    stored_text,
    trouble,
)

__all__ = ["isolated", "isolated_home", "project", "trouble"]  # fixtures used by name below
pytestmark = pytest.mark.anyio
HEADING = "pydantic-ai"  # the README section whose snippet runs as written


class ScriptedModel:
    """A ``FunctionModel`` function: records each request; answers with the next scripted response."""

    def __init__(self, *replies: ModelResponse) -> None:
        self.replies = list(replies)
        self.requests: list[list[ModelMessage]] = []
        self.tools: list[list[str]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.requests.append(list(messages))
        self.tools.append([t.name for t in info.function_tools])
        return self.replies.pop(0) if self.replies else ModelResponse(parts=[TextPart("OK.")])

    def agent(self, memory: HindsightMemory) -> Agent[None, str]:
        return Agent(FunctionModel(self), capabilities=[memory])


def say(text: str) -> ModelResponse:
    return ModelResponse(parts=[TextPart(text)])


def call(tool: str, arguments: dict[str, Any]) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart(tool, arguments)])


def user_texts(messages: Sequence[ModelMessage]) -> list[str]:
    return [
        p.content
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart) and isinstance(p.content, str)
    ]


def tool_returns(messages: Sequence[ModelMessage]) -> list[str]:
    requests = [m for m in messages if isinstance(m, ModelRequest)]
    return [str(p.content) for m in requests for p in m.parts if isinstance(p, ToolReturnPart)]


async def state_decision(root: Path, **options: Any) -> None:
    memory = HindsightMemory(cwd=root, **options)
    await ScriptedModel(say("Noted.")).agent(memory).run(DECISION)
    await memory.aclose()


async def test_session_two_is_shown_session_ones_decision_and_the_history_keeps_no_block(project: Project) -> None:
    await state_decision(project.root)

    model = ScriptedModel(call("hindsight_recall", {"query": "session cache"}), say("Redis 7, 15 minutes."))
    memory = HindsightMemory(cwd=project.root)
    result = await model.agent(memory).run(QUESTION)
    await memory.aclose()

    assert result.output == "Redis 7, 15 minutes."
    first, second = model.requests
    # Our block, with session 1's decision, just before the question: in the run's first request...
    texts = user_texts(first)
    assert has_block(texts[-2]) and DECISION_MARK in texts[-2]
    assert texts[-1] == QUESTION
    # ... and again in its next request, after the tool call, whose result reached the model.
    assert [t for t in user_texts(second) if has_block(t)] == [texts[-2]]
    assert "hindsight_recall" in model.tools[0]
    (answer,) = tool_returns(second)
    assert DECISION_MARK in answer
    # pydantic-ai's own history (what an app saves and passes back) never holds the block.
    assert not has_block(result.all_messages_json().decode())
    assert not any(has_block(t) for t in user_texts(result.all_messages()))
    # Memory now holds both sessions, and no block text was retained.
    assert_stored_without_block(project)


async def test_a_new_conversations_first_request_carries_a_fact_found_by_meaning(project: Project) -> None:
    """Each conversation is a session of its own in the same process: its first request is searched
    by meaning too, not only its later ones (ADR 175). The question shares no word with the fact."""
    memory = HindsightMemory(cwd=project.root)
    await ScriptedModel(say("Noted.")).agent(memory).run("We run Postgres 16.")
    deadline = time.monotonic() + 90
    while project.units_without_vector() and time.monotonic() < deadline:  # vectors come in the background
        time.sleep(0.1)
    assert project.unit_count("Postgres 16") == 1 and project.units_without_vector() == 0

    model = ScriptedModel(say("Postgres 16."))
    await model.agent(memory).run("What database do we use?")  # a new conversation
    await memory.aclose()
    (first,) = model.requests
    texts = user_texts(first)
    assert has_block(texts[-2]) and "Postgres 16" in texts[-2], texts


async def test_a_continued_conversation_is_one_session_and_each_message_is_retained_once(project: Project) -> None:
    memory = HindsightMemory(cwd=project.root)
    agent = ScriptedModel(say("Noted."), say("Fifteen minutes.")).agent(memory)
    first = await agent.run(DECISION)
    second = await agent.run("And the TTL?", message_history=first.all_messages())
    await memory.aclose()

    assert second.all_messages()[0] is not None
    conversation = {m.conversation_id for m in second.all_messages() if isinstance(m, ModelRequest | ModelResponse)}
    assert len(conversation) == 1  # pydantic-ai kept one conversation id: our session
    assert project.unit_count(DECISION_MARK) == 1
    assert project.unit_count("And the TTL?") == 1
    cursors = json.loads((project.state / "retain-cursors.json").read_text(encoding="utf-8"))
    assert len(cursors["sessions"]) == 1, cursors  # both runs moved one session's retain cursor


def test_a_fixed_session_id_is_the_session_a_shell_command_reaches(project: Project) -> None:
    assert "read-only" in command_in_session(project, "support-42", "mode", "read-only")
    memory = HindsightMemory(cwd=project.root, session_id="support-42")
    ScriptedModel(say("Noted.")).agent(memory).run_sync(DECISION)  # the synchronous entry point too
    memory.close()
    assert DECISION_MARK not in stored_text(project)  # that session is read-only: nothing retained

    other = HindsightMemory(cwd=project.root)
    ScriptedModel(say("Noted.")).agent(other).run_sync(DECISION)
    other.close()
    assert DECISION_MARK in stored_text(project)
    assert DECISION_MARK in recall_in_new_session(project, "session cache")


async def test_a_tool_error_reaches_the_model_as_a_failed_tool_result(project: Project) -> None:
    model = ScriptedModel(call("hindsight_recall", {"query": ""}), say("Sorry."))
    memory = HindsightMemory(cwd=project.root)
    result = await model.agent(memory).run("Look something up.")
    await memory.aclose()
    assert result.output == "Sorry."
    (answer,) = tool_returns(model.requests[1])
    assert "query" in answer  # the field the model got wrong, named


async def test_trouble_never_reaches_the_run_and_costs_at_most_the_bound(trouble: Trouble) -> None:
    model = ScriptedModel(say("Noted."), call("hindsight_recall", {"query": "session cache"}), say("Done."))
    memory = HindsightMemory(cwd=trouble.project.root)
    agent = model.agent(memory)
    began = time.monotonic()
    first = await agent.run(DECISION)
    second = await agent.run(QUESTION, message_history=first.all_messages())
    took = time.monotonic() - began
    await memory.aclose()

    assert (first.output, second.output) == ("Noted.", "Done.")
    assert trouble.was_met(), trouble.name
    assert took < trouble.bound_s(runs=2, model_calls=3, tool_calls=1), (trouble.name, took)
    assert len(tool_returns(model.requests[-1])) == 1  # the tool answered (with an error), the run went on
    assert not any(has_block(t) for r in model.requests for t in user_texts(r))


def test_import_needs_nothing_but_the_extra() -> None:
    import subprocess
    import sys

    code = "import sys, hindsight_hooks, hindsight_hooks.hosts; print(json.dumps(sorted(set(sys.modules) & {M})))"
    names = {"pydantic_ai", "agents", "langchain", "langgraph", "openai"}
    proc = subprocess.run(
        [sys.executable, "-c", "import json; " + code.replace("{M}", repr(names))],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(proc.stdout) == []


def test_the_readme_snippet_runs_as_written(project: Project, isolated_home: Path) -> None:
    assert_readme_snippet_runs(HEADING, project, isolated_home)
