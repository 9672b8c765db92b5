"""LangChain v1 agents (``create_agent``, on LangGraph) as a host: memory as one middleware.

Installed with ``pip install 'hindsight-hooks[langchain]'``; only this module imports LangChain, and only
when the user imports it::

    agent = create_agent(model, tools=[...], middleware=[HindsightMemory()])

Why these hooks: a ``before_model`` hook returns *state updates*, so a block added there would be saved in
the agent's messages (and its checkpointer). ``wrap_model_call`` changes the one request it wraps
(``request.override(messages=...)``) and nothing else, so recall lives there; ``after_agent`` sees the
final state once per invocation, so retain lives there. What the middleware does:

- ``wrap_model_call`` / ``awrap_model_call``: the request's messages, as Pi-shaped messages, go to
  ``Host.context`` / ``Host.acontext``; the block it returns becomes a ``HumanMessage`` where the plugin put
  it, for this model call only (and again for the run's later calls after tool calls). Our tools the
  session does not offer (``Host.session_tools``) are taken out of the request.
- ``after_agent`` / ``aafter_agent``: ``state["messages"]`` goes to ``Host.agent_end``, which durably queues
  the part not yet retained.
- ``tools``: our tools as LangChain tools (``middleware.tools``, which ``create_agent`` adds to the
  agent); a tool error is an error ``ToolMessage`` the model reads, never an exception in the run.

Session: the LangGraph thread (``config={"configurable": {"thread_id": ...}}``), else one per middleware
object, unless ``session_id=`` fixes one. ``cwd`` defaults to the current folder, the host name to
``langchain``. ``invoke`` runs the synchronous hooks, ``ainvoke``/``astream`` the async twins.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

try:
    from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, convert_to_openai_messages
    from langchain_core.runnables.config import ensure_config
    from langchain_core.tools import BaseTool, ToolException
    from langgraph.runtime import Runtime
    from pydantic import BaseModel, ConfigDict
except ImportError as exc:  # tests/hosts/test_inprocess.py imports it without the framework
    raise ImportError(
        "hindsight_hooks.hosts.langchain needs LangChain: pip install 'hindsight-hooks[langchain]'"
    ) from exc

from ..hooks import UI, Message, Tool
from .inprocess import ClosesSessions, Insertion, MemorySession, MemorySessions, insert_blocks, tool_text
from .openai_messages import for_recall, for_retain

HOST_NAME = "langchain"
ModelCallResult = ModelResponse[Any] | AIMessage | Any


# --------------------------------------------------------------------------- messages


def to_chat(messages: Sequence[Any]) -> tuple[list[dict[str, Any]], list[int]]:
    """LangChain messages as OpenAI chat messages, each with the index of the message it came from."""
    chat: list[dict[str, Any]] = []
    origins: list[int] = []
    for i, message in enumerate(messages):
        if not isinstance(message, BaseMessage):
            continue
        try:
            converted = convert_to_openai_messages(message)
        except Exception:  # a message LangChain itself cannot spell: not conversation text for us
            continue
        if isinstance(converted, dict):
            chat.append(converted)
            origins.append(i)
    return chat, origins


def conversation(messages: Sequence[Any]) -> tuple[list[Message], list[int]]:
    """What recall reads (Pi-shaped, no system messages) and the message each came from."""
    return for_recall(*to_chat(messages))


def with_block(messages: Sequence[Any], origins: list[int], found: list[Insertion]) -> list[Any]:
    """A new message list with each block as a ``HumanMessage`` before the message it was put before."""
    return insert_blocks(messages, origins, found, lambda text: HumanMessage(content=text))


def for_memory(messages: Sequence[Any]) -> list[Message]:
    """The agent's messages as ``agent_end`` takes them: no system messages, no block."""
    chat, _ = to_chat(messages)
    return for_retain(chat)


def _thread_id(runtime: Any) -> str | None:
    info = getattr(runtime, "execution_info", None)
    tid = getattr(info, "thread_id", None)
    return str(tid) if tid else None


def _config_thread_id() -> str | None:
    try:
        configurable = ensure_config().get("configurable") or {}
    except Exception:
        return None
    tid = configurable.get("thread_id")
    return str(tid) if tid else None


# --------------------------------------------------------------------------- tools


class HindsightTool(BaseTool):
    """One of our tools as a LangChain tool, run through the session of the thread that calls it."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    sessions: Any = None
    handle_tool_error: bool = True

    def _session(self) -> MemorySession:
        sessions: MemorySessions = self.sessions
        return sessions.session(_config_thread_id())

    def _answer(self, result: Any) -> str:
        if result.is_error:
            raise ToolException(tool_text(result))
        return tool_text(result)

    def _run(self, *args: Any, **kwargs: Any) -> str:
        kwargs.pop("run_manager", None)
        return self._answer(self._session().call_tool(self.name, kwargs))

    async def _arun(self, *args: Any, **kwargs: Any) -> str:
        kwargs.pop("run_manager", None)
        sessions: MemorySessions = self.sessions
        session = await sessions.asession(_config_thread_id())
        return self._answer(await session.acall_tool(self.name, kwargs))


def langchain_tool(tool: Tool, sessions: MemorySessions) -> HindsightTool:
    schema: type[BaseModel] = tool.parameters
    return HindsightTool(name=tool.name, description=tool.description, args_schema=schema, sessions=sessions)


# --------------------------------------------------------------------------- middleware


class HindsightMemory(ClosesSessions, AgentMiddleware[AgentState[Any], Any, Any]):
    """Long-term memory for a LangChain agent: recall around each model call, retain after each run."""

    def __init__(
        self,
        *,
        cwd: str | os.PathLike[str] | None = None,
        session_id: str | None = None,
        host_name: str = HOST_NAME,
        ui: UI | None = None,
        tools: bool = True,
        plugins: list[object] | None = None,
    ) -> None:
        super().__init__()
        self.sessions = MemorySessions(host_name=host_name, cwd=cwd, session_id=session_id, ui=ui, plugins=plugins)
        registered = self.sessions.session(None).host.tools().values() if tools else []
        self.tools = [langchain_tool(t, self.sessions) for t in registered]
        self._ours = {t.name for t in self.tools}

    @property
    def name(self) -> str:
        return "HindsightMemory"

    # -- the request for one model call ------------------------------------------------------------
    def _request(
        self, request: ModelRequest[Any], found: list[Insertion], origins: list[int], offered: set[str]
    ) -> ModelRequest[Any]:
        changes: dict[str, Any] = {}
        if found:
            changes["messages"] = with_block(request.messages, origins, found)
        kept = [t for t in request.tools if not isinstance(t, HindsightTool) or t.name in offered]
        if len(kept) != len(request.tools):
            changes["tools"] = kept
        return request.override(**changes) if changes else request

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> ModelCallResult:
        try:
            session = self.sessions.session(_thread_id(request.runtime))
            messages, origins = conversation(request.messages)
            found = session.recall(messages) if messages else []
            offered = {t.name for t in session.tools()} if self._ours else set()
            request = self._request(request, found, origins, offered)
        except Exception as exc:  # memory never breaks the run
            self.sessions.skipped("recall", exc)
        return handler(request)

    async def awrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]
    ) -> ModelCallResult:
        try:
            session = await self.sessions.asession(_thread_id(request.runtime))
            messages, origins = conversation(request.messages)
            found = await session.arecall(messages) if messages else []
            offered = {t.name for t in await session.atools()} if self._ours else set()
            request = self._request(request, found, origins, offered)
        except Exception as exc:
            self.sessions.skipped("recall", exc)
        return await handler(request)

    # -- the end of a run --------------------------------------------------------------------------
    def after_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        try:
            self.sessions.session(_thread_id(runtime)).retain(for_memory(state.get("messages") or []))
        except Exception as exc:
            self.sessions.skipped("retain", exc)
        return None

    async def aafter_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        try:
            session = await self.sessions.asession(_thread_id(runtime))
            await session.aretain(for_memory(state.get("messages") or []))
        except Exception as exc:
            self.sessions.skipped("retain", exc)
        return None


__all__ = ["HOST_NAME", "HindsightMemory", "HindsightTool", "conversation", "for_memory", "to_chat", "with_block"]
