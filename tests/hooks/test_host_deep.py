"""Nothing a host hands in escapes from ``Host`` as an exception (issue 9, item 7).

A transcript nested 5,000 levels deep used to raise ``RecursionError`` out of ``Host.context``
and ``Host.agent_end`` (``copy.deepcopy``). The copies are now iterative; what still cannot be
copied (an object whose own copy fails) is told once through ``ui.notify`` and the hook goes on.
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Any

from pydantic import BaseModel, model_validator

from hindsight_hooks.hooks import Host, HostContext, Message, RecordingUI, Tool, ToolResult, hookimpl
from hindsight_hooks.hooks.deep_copy import deep_copy


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


def depth_of(value: Any) -> int:
    n = 0
    while isinstance(value, list):
        value, n = value[0], n + 1
    return n


class Recorder:
    """Keeps what each hook got, and scribbles on it to prove the copies are its own."""

    def __init__(self) -> None:
        self.got: list[list[Message]] = []

    @hookimpl
    def context(self, messages: list[Message], ctx: HostContext) -> list[Message] | None:
        self.got.append(messages)
        messages[0]["content"] = "scribbled"
        return None

    @hookimpl
    def agent_end(self, messages: list[Message], ctx: HostContext) -> None:
        self.got.append(messages)
        messages[0]["content"] = "scribbled"


class Uncopyable:
    def __deepcopy__(self, memo: dict[int, Any]) -> Uncopyable:
        raise RecursionError("maximum recursion depth exceeded")


def test_a_transcript_nested_5000_deep_reaches_every_hook_as_a_private_copy(tmp_path: Path) -> None:
    recorder = Recorder()
    ui = RecordingUI()
    host = Host(tmp_path, ui=ui, plugins=[recorder])
    transcript: list[Message] = [{"role": "user", "content": "hello", "details": nested(5000)}]
    for_model = host.context(transcript)
    host.agent_end(transcript)
    transcript.append({"role": "assistant", "content": "hi", "details": nested(5000)})
    host.agent_end(transcript)  # the grown transcript: the previous copies are checked, not reused blindly
    assert ui.notices == []
    assert for_model[0]["content"] == "hello" and transcript[0]["content"] == "hello"
    assert len(recorder.got) == 3
    for got in recorder.got:
        assert got[0]["details"] is not transcript[0]["details"]
        assert depth_of(got[0]["details"]) == 5000
    assert depth_of(recorder.got[-1][1]["details"]) == 5000


def test_what_cannot_be_copied_is_told_once_and_the_host_goes_on(tmp_path: Path) -> None:
    recorder = Recorder()
    ui = RecordingUI()
    host = Host(tmp_path, ui=ui, plugins=[recorder])
    transcript: list[Message] = [{"role": "user", "content": "hello", "odd": Uncopyable()}]
    assert host.context(transcript) is transcript
    assert host.context(transcript) is transcript
    host.agent_end(transcript)
    host.agent_end(transcript)
    errors = ui.texts("error")
    assert len(errors) == 2, errors  # one per hook, not one per call
    assert all("RecursionError" in text for text in errors)
    assert recorder.got == [] and transcript[0]["content"] == "hello"


class ExplodingParams(BaseModel):
    value: Any = None

    @model_validator(mode="before")
    @classmethod
    def explode(cls, data: Any) -> Any:
        raise RecursionError("maximum recursion depth exceeded")


class ToolPlugin:
    @hookimpl
    def register_tools(self) -> list[Tool]:
        return [Tool("explode", "d", ExplodingParams, lambda p, c: ToolResult.of_text("ran"))]


def test_a_validator_that_fails_outright_is_an_invalid_arguments_result(tmp_path: Path) -> None:
    host = Host(tmp_path, ui=RecordingUI(), plugins=[ToolPlugin()])
    result = host.call_tool("explode", {"value": nested(10)})
    assert result.is_error and "invalid arguments: RecursionError" in result.text


def test_deep_copy_keeps_aliasing_cycles_and_types() -> None:
    shared = {"a": [1, 2]}
    loop: list[Any] = [1]
    loop.append(loop)
    ordered = OrderedDict([("x", [1])])
    value: Any = {"one": shared, "two": shared, "loop": loop, "ordered": ordered, "tuple": ([1], 2), 3: "int key"}
    copied = deep_copy(value)
    assert copied == {**value, "loop": copied["loop"]}
    assert copied["one"] is copied["two"] and copied["one"] is not shared
    assert copied["loop"][1] is copied["loop"] and copied["loop"] is not loop
    assert type(copied["ordered"]) is OrderedDict and copied["ordered"]["x"] is not ordered["x"]
    assert copied["tuple"] == ([1], 2) and copied["tuple"][0] is not value["tuple"][0]
    assert list(copied) == list(value)
