"""The REPL driven in-process with scripted input: hook order, commands, exits."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hindsight_hooks.chat.loop import ChatLoop
from hindsight_hooks.chat.models import EchoModel
from hindsight_hooks.chat.session_file import SessionFile, read_session
from hindsight_hooks.chat.terminal_ui import TerminalUI
from hindsight_hooks.hooks import Host, HostContext, Message, hookimpl
from hindsight_hooks.plugin import plugin as hindsight_plugin


class HookLog:
    """A real plugin that records the order in which the host fires hooks."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    @hookimpl
    def session_start(self, ctx: HostContext) -> None:
        self.calls.append("session_start")

    @hookimpl
    def context(self, messages: list[Message], ctx: HostContext) -> list[Message] | None:
        self.calls.append(f"context:{len(messages)}")
        return None

    @hookimpl
    def agent_end(self, messages: list[Message], ctx: HostContext) -> None:
        self.calls.append(f"agent_end:{len(messages)}")

    @hookimpl
    def shutdown(self, ctx: HostContext) -> None:
        self.calls.append("shutdown")


def scripted(*lines: str | type[BaseException]) -> Callable[[str], str]:
    items: Iterator[str | type[BaseException]] = iter(lines)
    prompts: list[str] = []

    def read(prompt: str) -> str:
        prompts.append(prompt)
        item = next(items, EOFError)
        if isinstance(item, str):
            return item
        raise item()

    read.prompts = prompts  # type: ignore[attr-defined]
    return read


def make_loop(project: Path, read: Callable[[str], str], log: HookLog) -> tuple[ChatLoop, io.StringIO, SessionFile]:
    out = io.StringIO()
    session = SessionFile.create(project / ".hindsight" / "sessions" / "x.jsonl", project)
    ui = TerminalUI(out=out, interactive=False)
    host = Host(project, session_file=session.path, host_name="chat", ui=ui, plugins=[log, hindsight_plugin])
    return ChatLoop(host, EchoModel(), ui, session, out=out, read_line=read), out, session


def test_hooks_fire_in_host_order_and_commands_print_results(project: Path, isolated_env: dict[str, str]) -> None:
    log = HookLog()
    read = scripted(
        "first", "  ", "/hindsight:mode read-only", "/hindsight:nope", "/help", "second", "/quit", "never read"
    )
    loop, out, session = make_loop(project, read, log)
    assert loop.run() == 0
    assert log.calls == ["session_start", "context:1", "agent_end:2", "context:3", "agent_end:4", "shutdown"]
    text = out.getvalue()
    assert "echo: you said: first" in text and "echo: you said: second" in text
    assert "mode=read-only recall=on retain=off" in text
    assert "error: unknown command: /hindsight:nope" in text
    assert "/hindsight:doctor" in text  # /help lists the plugin's commands
    assert text.rstrip().endswith("bye")
    prompts = read.prompts  # type: ignore[attr-defined]
    assert len(prompts) == 7
    assert prompts[0].startswith("[mem:") and prompts[0].endswith("] you> ")
    assert "[mem:read-only] you> " in prompts
    assert len(read_session(session.path).messages) == 4


@pytest.mark.parametrize("ender", [EOFError, KeyboardInterrupt])
def test_eof_or_ctrl_c_on_an_empty_prompt_ends_with_shutdown(
    project: Path, isolated_env: dict[str, str], ender: type[BaseException]
) -> None:
    log = HookLog()
    loop, out, _ = make_loop(project, scripted("hello", ender), log)
    assert loop.run() == 0
    assert log.calls[-1] == "shutdown" and log.calls.count("shutdown") == 1
    assert "bye" in out.getvalue()
