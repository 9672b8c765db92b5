"""The host contract: hookspecs, message model, context, UI, commands, tools and the Host harness."""

from .catalog import Command, CommandResult, Tool, ToolResult
from .context import UI, ConsoleUI, HostContext, NullUI, RecordingUI
from .host import Host
from .messages import Message, assistant_message, message_text, user_message
from .spec import ENTRY_POINT_GROUP, PROJECT_NAME, AgentHookSpecs, hookimpl, hookspec

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
