"""pydantic-ai as a host: memory as one capability, ``Agent(model, capabilities=[HindsightMemory()])``.

Installed with ``pip install 'hindsight-hooks[pydantic-ai]'``; this module is the only one that imports
pydantic-ai, and only when the user imports it.

Why a capability and not a history processor: pydantic-ai's capability docs name
``before_model_request`` as the place to change what one model request is sent, and changes to
``request_context.messages`` there are request-only, while a history processor writes its result back
into the run's persistent history. Our block is ephemeral, so it must never enter
``result.all_messages()`` (and from there a saved conversation): the capability inserts it into a
replacement of the last user request for this request only. What the capability does:

- ``before_model_request``: the request's messages, as Pi-shaped messages, go to ``Host.acontext``; the
  block it returns is inserted as a ``UserPromptPart`` just where the plugin put it (before the user's
  prompt, by default). The run's later requests (after tool calls) get the same block again.
- ``after_run``: the run's whole history (``result.all_messages()``) goes to ``Host.aagent_end``, which
  durably queues the part not yet retained.
- ``get_toolset``: our tools (``Host.session_tools``) as a pydantic-ai toolset; a tool's error reaches the
  model as a failed tool result (``ToolFailed``), never as an exception in the run.

Session: pydantic-ai's own ``conversation_id`` of the run (kept across runs that pass
``message_history``), unless ``session_id=`` fixes one. ``cwd`` defaults to the current folder, the
host name to ``pydantic-ai``. Call ``await memory.aclose()`` (or ``memory.close()``) when the
application ends for the bounded flush; anything undelivered stays queued on disk and goes at the next
start, and an interpreter exit closes what is still open.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from typing import Any

try:
    from pydantic_ai import messages as pm
    from pydantic_ai.capabilities import AbstractCapability
    from pydantic_ai.exceptions import ToolFailed
    from pydantic_ai.models import ModelRequestContext
    from pydantic_ai.run import AgentRunResult
    from pydantic_ai.tools import RunContext, ToolDefinition
    from pydantic_ai.toolsets import AbstractToolset
    from pydantic_ai.toolsets.abstract import ToolsetTool
    from pydantic_core import SchemaValidator, core_schema
except ImportError as exc:  # tests/hosts/test_inprocess.py imports it without the framework
    raise ImportError(
        "hindsight_hooks.hosts.pydanticai needs pydantic-ai: pip install 'hindsight-hooks[pydantic-ai]'"
    ) from exc

from ..hooks import UI, Message
from .inprocess import ClosesSessions, Insertion, MemorySession, MemorySessions, tool_schema, tool_text
from .openai_messages import for_recall, for_retain

HOST_NAME = "pydantic-ai"
_ANY_ARGS = SchemaValidator(core_schema.any_schema())

Origin = tuple[int, int | None]
"""Where a chat message came from: (index in the pydantic-ai history, index of the part or ``None``)."""


# --------------------------------------------------------------------------- messages


def _user_content(content: Any) -> Any:
    """A user prompt's content for memory: its text; files and media are named, not copied."""
    if isinstance(content, str):
        return content
    parts: list[dict[str, Any]] = []
    for item in content or ():
        if isinstance(item, str):
            parts.append({"type": "text", "text": item})
        else:
            parts.append({"type": "text", "text": f"[{type(item).__name__}]"})
    return parts


def _request_part(part: Any) -> dict[str, Any] | None:
    if isinstance(part, pm.SystemPromptPart):
        return {"role": "system", "content": part.content}
    if isinstance(part, pm.UserPromptPart):
        return {"role": "user", "content": _user_content(part.content)}
    if isinstance(part, pm.ToolReturnPart):
        return {
            "role": "tool",
            "tool_call_id": part.tool_call_id,
            "name": part.tool_name,
            "content": part.model_response_str(),
        }
    if isinstance(part, pm.RetryPromptPart):
        if part.tool_name:
            return {
                "role": "tool",
                "tool_call_id": part.tool_call_id,
                "name": part.tool_name,
                "content": part.model_response(),
            }
        return {"role": "user", "content": part.model_response()}
    return None


def _response(message: pm.ModelResponse) -> dict[str, Any] | None:
    texts = [p.content for p in message.parts if isinstance(p, pm.TextPart) and p.content]
    calls = [
        {
            "id": p.tool_call_id,
            "type": "function",
            "function": {"name": p.tool_name, "arguments": p.args_as_json_str()},
        }
        for p in message.parts
        if type(p) is pm.ToolCallPart
    ]
    if not texts and not calls:
        return None
    out: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(texts) if texts else None}
    if calls:
        out["tool_calls"] = calls
    return out


def to_chat(history: Sequence[pm.ModelMessage]) -> tuple[list[dict[str, Any]], list[Origin]]:
    """pydantic-ai messages as OpenAI chat messages, each with the message (and part) it came from."""
    chat: list[dict[str, Any]] = []
    origins: list[Origin] = []
    for i, message in enumerate(history):
        if isinstance(message, pm.ModelRequest):
            for j, part in enumerate(message.parts):
                converted = _request_part(part)
                if converted is not None:
                    chat.append(converted)
                    origins.append((i, j))
        elif isinstance(message, pm.ModelResponse):
            converted = _response(message)
            if converted is not None:
                chat.append(converted)
                origins.append((i, None))
    return chat, origins


def conversation(history: Sequence[pm.ModelMessage]) -> tuple[list[Message], list[Origin]]:
    """What recall reads (the Pi-shaped conversation, no system prompts) and where each message came from."""
    return for_recall(*to_chat(history))


def with_block(history: Sequence[pm.ModelMessage], origins: list[Origin], found: list[Insertion]) -> list[Any]:
    """A new request list with each block inserted as a user prompt part before the part it was put before.

    Messages that change are replaced by copies; the run's persistent history is never touched.
    """
    out: list[Any] = list(history)
    for ins in sorted(found, key=lambda x: x.before, reverse=True):
        block = pm.UserPromptPart(content=ins.text)
        if ins.before >= len(origins):
            out.append(pm.ModelRequest(parts=[block]))
            continue
        index, part = origins[ins.before]
        target = out[index]
        if part is None or not isinstance(target, pm.ModelRequest):
            out.insert(index, pm.ModelRequest(parts=[block]))
            continue
        parts = list(target.parts)
        parts.insert(part, block)
        out[index] = dataclasses.replace(target, parts=parts)
    # Several blocks before parts of one message: later insertions were applied first, so the
    # part indices of earlier ones still hold.
    return out


def for_memory(history: Sequence[pm.ModelMessage]) -> list[Message]:
    """The run's history as ``agent_end`` takes it: no instructions, no block."""
    chat, _ = to_chat(history)
    return for_retain(chat)


# --------------------------------------------------------------------------- toolset


class HindsightToolset(AbstractToolset[Any]):
    """Our tools, as offered in the run's session, called through the Host."""

    def __init__(self, sessions: MemorySessions) -> None:
        self._sessions = sessions

    @property
    def id(self) -> str | None:
        return "hindsight"

    async def _session(self, ctx: RunContext[Any]) -> MemorySession:
        return await self._sessions.asession(ctx.conversation_id)

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        tools = await (await self._session(ctx)).atools()
        return {
            t.name: ToolsetTool(
                toolset=self,
                tool_def=ToolDefinition(name=t.name, description=t.description, parameters_json_schema=tool_schema(t)),
                max_retries=1,
                args_validator=_ANY_ARGS,
            )
            for t in tools
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        result = await (await self._session(ctx)).acall_tool(name, dict(tool_args))
        if result.is_error:
            raise ToolFailed(tool_text(result))
        return tool_text(result)


# --------------------------------------------------------------------------- capability


class HindsightMemory(ClosesSessions, AbstractCapability[Any]):
    """Long-term memory for a pydantic-ai agent: recall before each model request, retain after each run."""

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
        self.id = "hindsight"
        self.description = None
        self.defer_loading = False
        self.sessions = MemorySessions(host_name=host_name, cwd=cwd, session_id=session_id, ui=ui, plugins=plugins)
        self._toolset = HindsightToolset(self.sessions) if tools else None

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # holds live sessions: not part of an agent spec

    def get_toolset(self) -> AbstractToolset[Any] | None:
        return self._toolset

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        try:
            messages, origins = conversation(request_context.messages)
            if not messages:
                return request_context
            session = await self.sessions.asession(ctx.conversation_id)
            found = await session.arecall(messages)
            if found:
                request_context.messages = with_block(request_context.messages, origins, found)
        except Exception as exc:  # memory never breaks the run
            self.sessions.skipped("recall", exc)
        return request_context

    async def after_run(self, ctx: RunContext[Any], *, result: AgentRunResult[Any]) -> AgentRunResult[Any]:
        try:
            session = await self.sessions.asession(ctx.conversation_id)
            await session.aretain(for_memory(result.all_messages()))
        except Exception as exc:
            self.sessions.skipped("retain", exc)
        return result


__all__ = ["HOST_NAME", "HindsightMemory", "HindsightToolset", "conversation", "for_memory", "to_chat", "with_block"]
