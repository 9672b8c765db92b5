"""Hook implementations: the wiring between the host contract and our policies."""

from __future__ import annotations

from ..hooks import Command, HostContext, Message, Tool, hookimpl


class HindsightPlugin:
    """The plugin object registered under the ``agent_hooks`` entry point."""

    @hookimpl
    def session_start(self, ctx: HostContext) -> None:
        return None

    @hookimpl
    def context(self, messages: list[Message], ctx: HostContext) -> list[Message] | None:
        return None

    @hookimpl
    def agent_end(self, messages: list[Message], ctx: HostContext) -> None:
        return None

    @hookimpl
    def shutdown(self, ctx: HostContext) -> None:
        return None

    @hookimpl
    def register_commands(self) -> list[Command]:
        return []

    @hookimpl
    def register_tools(self) -> list[Tool]:
        return []
