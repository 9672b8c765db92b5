"""The host contract: hookspecs, message model, context, UI, commands, tools and the Host harness.

``Host`` (the reference host in ``hooks.host``) sits at the top of the layers (ADR 143): it is
loaded the first time someone asks for it, so importing the contract never imports it.
"""

from typing import TYPE_CHECKING, Any

from .catalog import Command, CommandResult, Tool, ToolResult
from .context import UI, ConsoleUI, HostContext, NullUI, RecordingUI
from .messages import Message, assistant_message, message_text, user_message
from .spec import ENTRY_POINT_GROUP, PROJECT_NAME, AgentHookSpecs, hookimpl, hookspec

if TYPE_CHECKING:
    from .host import Host

__all__ = [
    "ENTRY_POINT_GROUP",
    "PROJECT_NAME",
    "UI",
    "AgentHookSpecs",
    "Command",
    "CommandResult",
    "ConsoleUI",
    "Host",
    "HostContext",
    "Message",
    "NullUI",
    "RecordingUI",
    "Tool",
    "ToolResult",
    "assistant_message",
    "hookimpl",
    "hookspec",
    "message_text",
    "user_message",
]


def __getattr__(name: str) -> Any:
    if name == "Host":
        from .host import Host

        return Host
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
