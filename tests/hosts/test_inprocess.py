"""The in-process session layer the framework adapters share (``hindsight_hooks.hosts.inprocess``).

Driven through the public ``Host`` with real pluggy plugins: a small plugin of the test's own that
injects a block the way ours does (so where the block goes can be asserted exactly), one that never
returns (so the adapter's own bound is what ends the wait), and our real plugin for the session id.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from hindsight_hooks.hooks import HostContext, Message, hookimpl
from hindsight_hooks.hosts.inprocess import GRACE_S, MAX_OPEN_SESSIONS, Bounds, Insertion, MemorySessions, insertions

from ..plugin.hostkit import Project
from .framework_kit import TIGHT, isolated, isolated_home

__all__ = ["isolated", "isolated_home"]  # fixtures used by name below
pytestmark = pytest.mark.anyio

BLOCK = "<hindsight-memory>\nremembered\n</hindsight-memory>"


def user(text: str) -> Message:
    return {"role": "user", "content": text}


def answer(text: str) -> Message:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def called(name: str) -> Message:
    return {"role": "assistant", "content": [{"type": "toolCall", "id": "c1", "name": name, "arguments": {}}]}


def result(text: str) -> Message:
    return {"role": "toolResult", "toolCallId": "c1", "toolName": "t", "content": [{"type": "text", "text": text}]}


def block_message() -> Message:
    return {"role": "user", "content": BLOCK, "customType": "hindsight-recall"}


class Injecting:
    """Puts a block before the last message when that is a user message, as our plugin does."""

    def __init__(self) -> None:
        self.contexts = 0
        self.shutdowns = 0
        self.ended: list[list[Message]] = []

    @hookimpl
    def context(self, messages: list[Message], ctx: HostContext) -> list[Message] | None:
        self.contexts += 1
        if not messages or messages[-1].get("role") != "user":
            return None
        return [*messages[:-1], block_message(), messages[-1]]

    @hookimpl
    def agent_end(self, messages: list[Message], ctx: HostContext) -> None:
        self.ended.append(messages)

    @hookimpl
    def shutdown(self, ctx: HostContext) -> None:
        self.shutdowns += 1


class Hanging:
    """Never returns from context or agent_end until released (a plugin stuck past its own limit)."""

    def __init__(self) -> None:
        self.release = threading.Event()

    @hookimpl
    def context(self, messages: list[Message], ctx: HostContext) -> list[Message] | None:
        self.release.wait(60)
        return None

    @hookimpl
    def agent_end(self, messages: list[Message], ctx: HostContext) -> None:
        self.release.wait(60)


@pytest.fixture
def tight(tmp_path: Path, isolated_home: Path) -> Project:
    """A project whose recall and retain limits are small (the bounds follow the project's config)."""
    return Project(tmp_path / "repo", {**TIGHT, "backend": "off", "recall": {"timeout_ms": 300}})


def test_insertions_count_positions_in_the_given_list() -> None:
    given = [user("a"), answer("b"), user("c")]
    assert insertions(given, [given[0], given[1], block_message(), given[2]]) == [Insertion(2, BLOCK)]
    assert insertions(given, [block_message(), *given]) == [Insertion(0, BLOCK)]
    assert insertions(given, list(given)) == []


async def test_the_block_of_a_user_turn_is_kept_for_the_runs_later_requests(tmp_path: Path) -> None:
    plugin = Injecting()
    sessions = MemorySessions(host_name="test", cwd=tmp_path, session_id="s", plugins=[plugin])
    session = sessions.session(None)
    turn = [answer("hello"), user("what did we decide?")]
    assert await session.arecall(turn) == [Insertion(1, BLOCK)]
    # After a tool call the plugin adds nothing (its last message is not the user's), but the run's
    # next model request still gets the block, before the same user message.
    later = [*turn, called("hindsight_recall"), result("found it")]
    assert await session.arecall(later) == [Insertion(1, BLOCK)]
    assert plugin.contexts == 2
    # A new user turn without a block from the plugin does not get the old one.
    plugin_says_nothing = [*later, answer("Redis."), called("x"), result("y")]
    plugin_says_nothing[1] = user("a different question")
    assert await session.arecall(plugin_says_nothing) == []
    await sessions.aclose()
    assert plugin.shutdowns == 1


async def test_a_plugin_that_never_returns_costs_the_bound_and_no_more(tight: Project) -> None:
    stuck = Hanging()
    try:
        sessions = MemorySessions(host_name="test", cwd=tight.root, session_id="s", plugins=[stuck])
        bounds = Bounds.for_project(tight.root)
        assert bounds.recall_s == pytest.approx(0.3 + GRACE_S)
        session = sessions.session(None)
        began = time.monotonic()
        assert await session.arecall([user("what did we decide?")]) == []
        assert time.monotonic() - began < bounds.start_s + bounds.recall_s + 2.0
        began = time.monotonic()
        assert session.recall([user("and now?")]) == []  # the synchronous path has the same bound
        assert time.monotonic() - began < bounds.recall_s + 2.0
        began = time.monotonic()
        await session.aretain([user("x"), answer("y")])
        session.retain([user("x"), answer("y")])
        assert time.monotonic() - began < 2 * bounds.retain_s + 2.0
    finally:
        stuck.release.set()


def test_sessions_are_kept_by_id_and_the_oldest_beyond_the_cap_is_ended(tmp_path: Path) -> None:
    plugin = Injecting()
    sessions = MemorySessions(host_name="test", cwd=tmp_path, plugins=[plugin])
    first = sessions.session("thread-1")
    first.start()
    assert sessions.session("thread-1") is first
    assert sessions.session(None) is sessions.session("")  # no id: the object's own default session
    for n in range(MAX_OPEN_SESSIONS + 1):
        sessions.session(f"other-{n}")
    deadline = time.monotonic() + 10
    while plugin.shutdowns < 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert plugin.shutdowns == 1 and first.closed
    assert sessions.session("thread-1") is not first  # it opens again when the thread comes back
    sessions.close()


def test_a_session_id_names_the_same_session_file_as_the_cli(tmp_path: Path) -> None:
    from hindsight_hooks.hosts.hookcmd import session_file_for

    sessions = MemorySessions(host_name="test", cwd=tmp_path, plugins=[Injecting()])
    host = sessions.session("conv/42 x").host
    assert host.ctx.session_file == session_file_for(tmp_path, "conv/42 x")
    assert host.ctx.session_file is not None and host.ctx.session_file.parent == tmp_path / ".hindsight" / "sessions"
    assert host.ctx.host_name == "test"


@pytest.mark.parametrize(
    ("module", "framework", "extra"),
    [
        ("pydanticai", "pydantic_ai", "pydantic-ai"),
        ("openai_agents", "agents", "openai-agents"),
        ("langchain", "langchain", "langchain"),
    ],
)
def test_an_adapter_without_its_framework_names_the_extra_to_install(module: str, framework: str, extra: str) -> None:
    import subprocess
    import sys

    # A child Python in which the framework cannot be imported (``None`` in sys.modules blocks it).
    code = f"import sys; sys.modules[{framework!r}] = None; import hindsight_hooks.hosts.{module}"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 1
    assert f"pip install 'hindsight-hooks[{extra}]'" in proc.stderr.strip().splitlines()[-1]


class Slow(Injecting):
    """Every hook takes a while, as a plugin on a slow disk or network does."""

    PAUSE_S = 0.8

    @hookimpl
    def session_start(self, ctx: HostContext) -> None:
        time.sleep(self.PAUSE_S)

    @hookimpl
    def context(self, messages: list[Message], ctx: HostContext) -> list[Message] | None:
        time.sleep(self.PAUSE_S)
        return super().context(messages, ctx)

    @hookimpl
    def agent_end(self, messages: list[Message], ctx: HostContext) -> None:
        time.sleep(self.PAUSE_S)
        super().agent_end(messages, ctx)


async def test_a_slow_plugin_never_blocks_the_event_loop(tmp_path: Path) -> None:
    import asyncio

    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from hindsight_hooks.hosts.pydanticai import HindsightMemory

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("OK.")])

    plugin = Slow()
    memory = HindsightMemory(cwd=tmp_path, plugins=[plugin], tools=False)
    gaps: list[float] = []
    done = asyncio.Event()

    async def tick() -> None:
        last = time.monotonic()
        while not done.is_set():
            await asyncio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    ticker = asyncio.create_task(tick())
    result = await Agent(FunctionModel(model), capabilities=[memory]).run("hello")
    await memory.aclose()
    done.set()
    await ticker
    assert result.output == "OK."
    assert plugin.contexts == 1 and len(plugin.ended) == 1  # the hooks ran, each taking PAUSE_S ...
    assert max(gaps) < Slow.PAUSE_S * 0.75  # ... and the loop kept turning meanwhile
