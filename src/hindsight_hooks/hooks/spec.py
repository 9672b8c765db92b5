"""The hook specifications every agent host fires and every plugin may implement.

The project name ``agent_hooks`` is shared by hosts and plugins: a host that knows nothing
about hindsight-hooks loads us from the ``agent_hooks`` entry-point group and drives us only
through these six hooks. All hooks are synchronous; async hosts use the ``Host`` ``a*`` twins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from .catalog import Command, Tool
    from .context import HostContext
    from .messages import Message

PROJECT_NAME = "agent_hooks"
ENTRY_POINT_GROUP = "agent_hooks"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


class AgentHookSpecs:
    """Hookspecs. Each returns what the docstring says; ``None`` means "nothing to add"."""

    @hookspec
    def session_start(self, ctx: HostContext) -> None:
        """A session begins (or resumes). Load config, resolve identity, open backends."""

    @hookspec
    def context(self, messages: list[Message], ctx: HostContext) -> list[Message] | None:
        """Before a model call: return a replacement message list, or None for unchanged.

        The host passes a deep copy and chains replacements in registration order.
        """

    @hookspec
    def agent_end(self, messages: list[Message], ctx: HostContext) -> None:
        """An agent run finished; ``messages`` is the full transcript the host holds."""

    @hookspec
    def shutdown(self, ctx: HostContext) -> None:
        """The host is closing; flush within a bound and release resources."""

    @hookspec
    def register_commands(self) -> list[Command]:
        """Slash commands this plugin offers (names without the slash)."""
        raise NotImplementedError

    @hookspec
    def register_tools(self) -> list[Tool]:
        """Tools this plugin offers to the model."""
        raise NotImplementedError
