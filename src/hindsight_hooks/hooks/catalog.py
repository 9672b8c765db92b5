"""Commands and tools: what a plugin offers to the person and to the model."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

if TYPE_CHECKING:
    from .context import HostContext

Level = Literal["info", "warning", "error"]


@dataclass
class CommandResult:
    """What a slash command reports back: text for the person, structured ``data`` for scripts."""

    text: str
    level: Level = "info"
    data: dict[str, Any] | None = None


def _no_completion(prefix: str) -> list[str]:
    return []


@dataclass
class Command:
    """A slash command; ``name`` has no leading slash (``hindsight:mode``)."""

    name: str
    description: str
    handler: Callable[[str, HostContext], CommandResult]
    complete: Callable[[str], list[str]] = _no_completion
    usage: str = ""


@dataclass
class ToolResult:
    """A tool's answer: content parts for the model, ``details`` for the host and tests."""

    content: list[dict[str, Any]] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The text of the first text part (convenience for hosts and tests)."""
        for part in self.content:
            if part.get("type") == "text":
                return str(part.get("text", ""))
        return ""

    @property
    def is_error(self) -> bool:
        return "error" in self.details

    @classmethod
    def of_text(cls, text: str, **details: Any) -> ToolResult:
        return cls(content=[{"type": "text", "text": text}], details=dict(details))

    @classmethod
    def error(cls, message: str, kind: str = "error") -> ToolResult:
        return cls(
            content=[{"type": "text", "text": f"Error: {message}"}],
            details={"error": {"kind": kind, "message": message}},
        )


@dataclass
class Tool:
    """A model-callable tool whose arguments are validated by a pydantic model.

    ``available`` answers "offer this tool in this session?" for hosts that list tools per
    session (``Host.session_tools``): ``register_tools`` has no session, so a tool that only
    makes sense with some config says so here instead (ADR-085). ``None`` means always offered;
    ``execute`` still refuses cleanly whatever the answer, for hosts that never ask.
    """

    name: str
    description: str
    parameters: type[BaseModel]
    execute: Callable[[Any, HostContext], ToolResult]
    available: Callable[[HostContext], bool] | None = None

    def json_schema(self) -> dict[str, Any]:
        """The function-calling schema (OpenAI ``tools`` entry shape)."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters.model_json_schema(by_alias=False),
            },
        }
