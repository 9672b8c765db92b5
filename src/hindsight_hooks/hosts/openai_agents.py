"""The OpenAI Agents SDK as a host: recall in the model-input filter, retain in run hooks, our tools as
function tools.

Installed with ``pip install 'hindsight-hooks[openai-agents]'``; only this module imports the SDK
(``agents``), and only when the user imports it::

    memory = HindsightMemory()
    agent = Agent(name="assistant", instructions="...", tools=memory.tools())
    result = await Runner.run(agent, "...", run_config=memory.run_config(), hooks=memory.hooks())

Why these three pieces: the SDK's one place to change what a model call is sent, without changing the
run's own items, is ``RunConfig.call_model_input_filter``; it sees no answers, so the transcript for
retain is collected by ``RunHooks`` (the input of the run's last model call and that call's output, at
``on_agent_end``). What each does:

- :class:`RecallFilter` (the ``call_model_input_filter``): the input items, as Pi-shaped messages, go to
  ``Host.acontext``; the block it returns becomes a ``user`` input item where the plugin put it. The
  items the SDK keeps (its ``Session``, ``result.to_input_list()``) are not touched, so the block is
  never stored. Later model calls of the same run (after tool calls) get the same block.
- :class:`RetainHooks` (``hooks=``): at ``on_agent_end``, the conversation goes to ``Host.aagent_end``,
  which durably queues the part not retained yet. Our block items are recognised by identity and text
  and never retained.
- :meth:`HindsightMemory.tools`: our tools as ``FunctionTool`` objects (offered when the session offers
  them); a tool error is the text the model reads, never an exception in the run.

Session: one per :class:`HindsightMemory` (a fresh id), or ``session_id=`` (pass your SDK ``Session``'s
id to share it); ``run_config(session_id=...)`` and ``hooks(session_id=...)`` pick another for one run.
``cwd`` defaults to the current folder, the host name to ``openai-agents``. With server-managed
conversations (``conversation_id`` / ``previous_response_id``) the SDK sends only new items, so an
injected block would be stored by the server: use local history (the default, or an SDK ``Session``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

try:
    from agents import Agent, FunctionTool, RunConfig, RunContextWrapper, RunHooks
    from agents.items import ModelResponse, TResponseInputItem
    from agents.run_config import CallModelData, ModelInputData
    from agents.tool_context import ToolContext
except ImportError as exc:  # tests/hosts/test_inprocess.py imports it without the framework
    raise ImportError(
        "hindsight_hooks.hosts.openai_agents needs the OpenAI Agents SDK: pip install 'hindsight-hooks[openai-agents]'"
    ) from exc

from ..hooks import UI, Message, Tool
from .inprocess import (
    ClosesSessions,
    Insertion,
    MemorySession,
    MemorySessions,
    insert_blocks,
    tool_schema,
    tool_text,
)
from .openai_messages import for_recall, for_retain

HOST_NAME = "openai-agents"
_MAX_KEPT_BLOCKS = 256


# --------------------------------------------------------------------------- items


def _plain(item: Any) -> dict[str, Any] | None:
    if isinstance(item, dict):
        return item
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        value = dump(exclude_unset=True)
        return value if isinstance(value, dict) else None
    return None


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    out: list[str] = []
    for part in content if isinstance(content, list) else ():
        part = _plain(part) or {}
        kind = part.get("type")
        if kind in ("input_text", "output_text", "text") and isinstance(part.get("text"), str):
            out.append(part["text"])
        elif kind == "refusal" and isinstance(part.get("refusal"), str):
            out.append(part["refusal"])
        elif isinstance(kind, str):
            out.append(f"[{kind}]")
    return out


def _output_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    texts = _texts(output)
    if texts:
        return "\n".join(texts)
    try:
        return json.dumps(output, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(output)


def _item_to_chat(raw: Any) -> dict[str, Any] | None:
    item = _plain(raw)
    if item is None:
        return None
    kind = item.get("type")
    role = item.get("role")
    if role in ("user", "system", "developer", "assistant") and kind in (None, "message"):
        content = item.get("content")
        if role == "user" and isinstance(content, list):
            return {"role": "user", "content": [{"type": "text", "text": t} for t in _texts(content)]}
        text = content if isinstance(content, str) else "\n".join(_texts(content))
        return {"role": role, "content": text}
    if kind == "function_call":
        call = {"name": str(item.get("name", "")), "arguments": str(item.get("arguments") or "{}")}
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": str(item.get("call_id", "")), "type": "function", "function": call}],
        }
    if kind == "function_call_output":
        call_id = str(item.get("call_id", ""))
        return {"role": "tool", "tool_call_id": call_id, "content": _output_text(item.get("output"))}
    return None  # reasoning, hosted tool calls, item references: not conversation text


def to_chat(items: Sequence[Any]) -> tuple[list[dict[str, Any]], list[int]]:
    """Responses input items as OpenAI chat messages, each with the index of the item it came from."""
    chat: list[dict[str, Any]] = []
    origins: list[int] = []
    for i, item in enumerate(items):
        converted = _item_to_chat(item)
        if converted is not None:
            chat.append(converted)
            origins.append(i)
    return chat, origins


def conversation(items: Sequence[Any]) -> tuple[list[Message], list[int]]:
    """What recall reads (Pi-shaped, no instructions) and the input item each message came from."""
    return for_recall(*to_chat(items))


def with_block(items: Sequence[Any], origins: list[int], found: list[Insertion]) -> tuple[list[Any], list[Any]]:
    """A new input list with each block as a ``user`` item before the item it was put before (and the
    block items, so the hooks can tell them apart by identity)."""
    blocks: list[Any] = []

    def block(text: str) -> dict[str, Any]:
        item: dict[str, Any] = {"role": "user", "content": text}
        blocks.append(item)
        return item

    return insert_blocks(items, origins, found, block), blocks


# --------------------------------------------------------------------------- the pieces


class RecallFilter:
    """``RunConfig.call_model_input_filter``: our block into the input of each model call of one session."""

    def __init__(self, memory: HindsightMemory, session_id: str | None) -> None:
        self.memory = memory
        self.session_id = memory.sessions.session_id_for(session_id)

    async def session(self) -> MemorySession:
        return await self.memory.sessions.asession(self.session_id)

    async def __call__(self, data: CallModelData[Any]) -> ModelInputData:
        model_data = data.model_data
        try:
            messages, origins = conversation(model_data.input)
            if not messages:
                return model_data
            found = await (await self.session()).arecall(messages)
            if found:
                items, blocks = with_block(model_data.input, origins, found)
                self.memory.note_blocks(blocks)
                return ModelInputData(input=items, instructions=model_data.instructions)
        except Exception as exc:  # memory never breaks the run
            self.memory.sessions.skipped("recall", exc)
        return model_data


class RetainHooks(RunHooks[Any]):
    """``RunHooks`` that retain the run's conversation when its agent produces the final output."""

    def __init__(self, memory: HindsightMemory, session_id: str | None) -> None:
        self.memory = memory
        self.session_id = memory.sessions.session_id_for(session_id)
        self._runs: dict[int, tuple[list[Any], list[Any]]] = {}

    @staticmethod
    def _key(context: RunContextWrapper[Any]) -> int:
        # on_agent_end gets a new context object sharing the run's usage: the run's identity here.
        return id(context.usage)

    async def on_llm_start(
        self,
        context: RunContextWrapper[Any],
        agent: Agent[Any],
        system_prompt: str | None,
        input_items: list[TResponseInputItem],
    ) -> None:
        self._runs[self._key(context)] = ([i for i in input_items if not self.memory.take_block(i)], [])

    async def on_llm_end(self, context: RunContextWrapper[Any], agent: Agent[Any], response: ModelResponse) -> None:
        sent, _ = self._runs.get(self._key(context), ([], []))
        output: list[Any]
        try:
            output = list(response.to_input_items())
        except Exception:
            output = list(response.output)
        self._runs[self._key(context)] = (sent, output)

    async def on_agent_end(self, context: RunContextWrapper[Any], agent: Any, output: Any) -> None:
        sent, answered = self._runs.pop(self._key(context), ([], []))
        try:
            chat, _ = to_chat(sent + answered)
            session = await self.memory.sessions.asession(self.session_id)
            await session.aretain(for_retain(chat))
        except Exception as exc:
            self.memory.sessions.skipped("retain", exc)


class HindsightMemory(ClosesSessions):
    """Long-term memory for Agents SDK runs: ``tools()``, ``run_config()`` and ``hooks()`` of one project."""

    def __init__(
        self,
        *,
        cwd: str | os.PathLike[str] | None = None,
        session_id: str | None = None,
        host_name: str = HOST_NAME,
        ui: UI | None = None,
        plugins: list[object] | None = None,
    ) -> None:
        self.sessions = MemorySessions(host_name=host_name, cwd=cwd, session_id=None, ui=ui, plugins=plugins)
        self.session_id = self.sessions.session_id_for(session_id)
        self._blocks: dict[int, Any] = {}

    # -- the three things a run takes ------------------------------------------------------------
    def run_config(self, *, session_id: str | None = None, **options: Any) -> RunConfig:
        """A ``RunConfig`` whose model-input filter injects our block (other ``RunConfig`` options pass through)."""
        return RunConfig(call_model_input_filter=RecallFilter(self, session_id or self.session_id), **options)

    def hooks(self, *, session_id: str | None = None) -> RetainHooks:
        """``RunHooks`` that retain each run (use the same ``session_id`` as the run config)."""
        return RetainHooks(self, session_id or self.session_id)

    def tools(self) -> list[FunctionTool]:
        """Our tools as function tools; each is enabled when the session offers it (``Host.session_tools``)."""
        return [self._function_tool(t) for t in self.sessions.session(self.session_id).host.tools().values()]

    # -- tools -------------------------------------------------------------------------------------
    async def _session_of(self, ctx: Any) -> MemorySession:
        config = getattr(ctx, "run_config", None)
        flt = getattr(config, "call_model_input_filter", None)
        sid = flt.session_id if isinstance(flt, RecallFilter) and flt.memory is self else self.session_id
        return await self.sessions.asession(sid)

    def _function_tool(self, tool: Tool) -> FunctionTool:
        name = tool.name

        async def invoke(ctx: ToolContext[Any], raw: str) -> str:
            try:
                arguments = json.loads(raw) if raw and raw.strip() else {}
            except ValueError:
                return f"Error: the arguments of {name} are not JSON"
            if not isinstance(arguments, dict):
                return f"Error: the arguments of {name} must be a JSON object"
            return tool_text(await (await self._session_of(ctx)).acall_tool(name, arguments))

        async def enabled(ctx: RunContextWrapper[Any], agent: Any) -> bool:
            offered = await (await self.sessions.asession(self.session_id)).atools()
            return any(t.name == name for t in offered)

        return FunctionTool(
            name=name,
            description=tool.description,
            params_json_schema=tool_schema(tool),
            on_invoke_tool=invoke,
            strict_json_schema=False,
            is_enabled=enabled,
        )

    # -- our block items, told apart by identity -------------------------------------------------
    def note_blocks(self, blocks: list[Any]) -> None:
        """Remember the block items of one model call until its ``on_llm_start`` takes them out."""
        for block in blocks:
            self._blocks[id(block)] = block
        while len(self._blocks) > _MAX_KEPT_BLOCKS:  # a call whose hooks never ran (no hooks passed)
            self._blocks.pop(next(iter(self._blocks)))

    def take_block(self, item: Any) -> bool:
        """True (once) for an input item that is one of our block items."""
        if self._blocks.get(id(item)) is item:
            del self._blocks[id(item)]
            return True
        return False


__all__ = ["HOST_NAME", "HindsightMemory", "RecallFilter", "RetainHooks", "conversation", "to_chat", "with_block"]
