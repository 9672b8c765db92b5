"""The Host harness: plugin loading, chaining, fail-open, commands, tools, abort."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from pydantic import BaseModel, Field

from hindsight_hooks.hooks import (
    Command,
    CommandResult,
    Host,
    HostContext,
    Message,
    RecordingUI,
    Tool,
    ToolResult,
    hookimpl,
    user_message,
)


class Tagger:
    """Appends a marker message in context; records every hook it sees."""

    def __init__(self, marker: str) -> None:
        self.marker = marker
        self.seen: list[str] = []

    @hookimpl
    def session_start(self, ctx: HostContext) -> None:
        self.seen.append("start")

    @hookimpl
    def context(self, messages: list[Message], ctx: HostContext) -> list[Message] | None:
        messages.append({"role": "user", "content": self.marker})
        return messages

    @hookimpl
    def agent_end(self, messages: list[Message], ctx: HostContext) -> None:
        messages.clear()  # a plugin mutating its copy must not affect the host's list
        self.seen.append("end")


class Broken:
    @hookimpl
    def session_start(self, ctx: HostContext) -> None:
        raise RuntimeError("boom with secret sk-abcdefghijklmnop")

    @hookimpl
    def context(self, messages: list[Message], ctx: HostContext) -> list[Message] | None:
        raise ValueError("nope")


MODES = ["normal", "read-only"]


class EchoParams(BaseModel):
    text: str = Field(min_length=1)
    times: int = 1


class Commander:
    @hookimpl
    def register_commands(self) -> list[Command]:
        def mode(args: str, ctx: HostContext) -> CommandResult:
            return CommandResult(f"mode={args}", data={"mode": args})

        def explode(args: str, ctx: HostContext) -> CommandResult:
            raise RuntimeError("explode")

        return [
            Command("demo:mode", "set mode", mode, lambda p: [o for o in MODES if o.startswith(p)]),
            Command("demo:explode", "raises", explode),
        ]

    @hookimpl
    def register_tools(self) -> list[Tool]:
        def run(params: EchoParams, ctx: HostContext) -> ToolResult:
            return ToolResult.of_text(params.text * params.times, aborted=ctx.signal.is_set())

        return [Tool("echo", "echo text", EchoParams, run)]


def test_context_chains_in_registration_order_and_isolates_failures(tmp_path: Path) -> None:
    ui = RecordingUI()
    a, b = Tagger("A"), Tagger("B")
    host = Host(tmp_path, ui=ui, plugins=[a, Broken(), b])
    host.start()
    original = [user_message("hi")]
    out = host.context(original)
    assert [m["content"] for m in out] == ["hi", "A", "B"]
    assert original == [user_message("hi", timestamp=original[0]["timestamp"])]
    errors = ui.texts("error")
    assert len(errors) == 2  # session_start and context of Broken
    assert all("sk-abc" not in e for e in errors)
    assert a.seen == ["start"] and b.seen == ["start"]


def test_agent_end_gets_a_copy(tmp_path: Path) -> None:
    a = Tagger("A")
    host = Host(tmp_path, plugins=[a])
    msgs = [user_message("keep me")]
    host.agent_end(msgs)
    assert len(msgs) == 1 and a.seen == ["end"]


def test_commands_completion_and_errors(tmp_path: Path) -> None:
    host = Host(tmp_path, plugins=[Commander()])
    res = host.command("/demo:mode read-only")
    assert res.text == "mode=read-only" and res.data == {"mode": "read-only"}
    assert host.command("/nope").level == "error"
    exploded = host.command("/demo:explode")
    assert exploded.level == "error" and "explode" in exploded.text
    assert host.complete("/demo:") == ["/demo:explode", "/demo:mode"]
    assert host.complete("/demo:mode re") == ["/demo:mode read-only"]
    assert host.complete("/unknown x") == []


def test_tools_validate_and_never_raise(tmp_path: Path) -> None:
    host = Host(tmp_path, plugins=[Commander()])
    assert host.call_tool("echo", {"text": "ab", "times": 2}).text == "abab"
    bad = host.call_tool("echo", {"text": ""})
    assert bad.is_error and "text" in bad.details["error"]["message"]
    assert host.call_tool("missing", {}).is_error
    schema = host.tools()["echo"].json_schema()
    assert schema["function"]["name"] == "echo"
    assert "text" in schema["function"]["parameters"]["properties"]


def test_abort_sets_signal_until_next_hook(tmp_path: Path) -> None:
    host = Host(tmp_path, plugins=[Commander()])
    host.abort()
    assert host.ctx.signal.is_set()
    res = host.call_tool("echo", {"text": "x"})
    assert res.details["aborted"] is False  # cleared when the next hook starts
    assert not host.ctx.signal.is_set()


def test_async_twins(tmp_path: Path) -> None:
    a = Tagger("A")
    host = Host(tmp_path, plugins=[a, Commander()])

    async def go() -> list[Message]:
        await host.astart()
        out = await host.acontext([user_message("q")])
        await host.aagent_end(out)
        res = await host.acall_tool("echo", {"text": "z"})
        assert res.text == "z"
        await host.ashutdown()
        return out

    out = asyncio.run(go())
    assert out[-1]["content"] == "A" and a.seen == ["start", "end"]
    assert threading.active_count() >= 1


def test_entry_point_plugin_loads(tmp_path: Path) -> None:
    host = Host(tmp_path)
    names = {name for name, _ in host.pm.list_name_plugin()}
    assert "hindsight" in names
