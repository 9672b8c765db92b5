"""One agent run, the way a real host drives the hooks.

A run is: the person's prompt → (``context`` hook → model → tool calls → tool results) × N →
the final answer → ``agent_end`` with the whole transcript. The list ``context`` returns goes
to the model and nowhere else: the transcript (and so the session file) only ever holds the
messages this host made, which is how Invariant 3 ("injected recall is never persisted into
the host transcript") holds by construction.

The run is cancellable from another thread (Ctrl-C in the REPL): between steps it checks the
event, and every unanswered tool call gets an error result, so the transcript stays a valid
conversation for the next model call.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..hooks import Host, Message, user_message
from .models import Model, aborted_message

DEFAULT_MAX_TOOL_ROUNDS = 8

OnMessage = Callable[[Message], object]


@dataclass
class RunOutcome:
    """What happened in one run."""

    new_messages: list[Message] = field(default_factory=list)
    aborted: bool = False
    error: str | None = None
    tool_rounds: int = 0
    hit_round_limit: bool = False


def tool_result_message(
    call_id: str, name: str, content: list[dict[str, Any]], details: dict[str, Any], is_error: bool
) -> Message:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": content,
        "details": details,
        "isError": is_error,
        "timestamp": int(time.time() * 1000),
    }


def _error_result(call: dict[str, Any], text: str) -> Message:
    return tool_result_message(
        str(call.get("id", "")),
        str(call.get("name", "")),
        [{"type": "text", "text": f"Error: {text}"}],
        {"error": {"message": text}},
        True,
    )


def tool_calls_of(msg: Message) -> list[dict[str, Any]]:
    content = msg.get("content")
    if not isinstance(content, list):
        return []
    return [p for p in content if isinstance(p, dict) and p.get("type") == "toolCall"]


class AgentRunner:
    """Runs prompts against ``model`` inside ``host``, appending to ``transcript``.

    ``on_message`` sees every message the run adds, in order (the REPL persists and prints
    them there). ``tool_schemas`` is computed once per runner: the host's tool set is fixed
    for a session.
    """

    def __init__(
        self,
        host: Host,
        model: Model,
        transcript: list[Message],
        on_message: OnMessage | None = None,
        max_tool_rounds: int = DEFAULT_MAX_TOOL_ROUNDS,
    ) -> None:
        self.host = host
        self.model = model
        self.transcript = transcript
        self.on_message = on_message
        self.max_tool_rounds = max(0, max_tool_rounds)
        self._schemas: list[dict[str, Any]] | None = None

    def tool_schemas(self) -> list[dict[str, Any]]:
        if self._schemas is None:
            schemas = []
            for tool in self.host.tools().values():
                try:
                    schemas.append(tool.json_schema())
                except Exception:  # one tool with a broken schema must not hide the others
                    continue
            self._schemas = schemas
        return self._schemas

    def _add(self, outcome: RunOutcome, msg: Message) -> None:
        self.transcript.append(msg)
        outcome.new_messages.append(msg)
        if self.on_message is not None:
            self.on_message(msg)

    def run(self, prompt: str, cancel: threading.Event | None = None) -> RunOutcome:
        """Run one prompt to its final answer (or abort), then fire ``agent_end``."""
        cancel = cancel or threading.Event()
        outcome = RunOutcome()
        try:
            self._add(outcome, user_message(prompt))
            self._loop(outcome, cancel)
        finally:
            # The run is over however it ended; the plugin decides what to retain.
            self.host.agent_end(self.transcript)
        return outcome

    def _loop(self, outcome: RunOutcome, cancel: threading.Event) -> None:
        tools = self.tool_schemas()
        rounds = 0
        while True:
            if cancel.is_set():
                self._abort(outcome)
                return
            for_model = self.host.context(self.transcript)
            if cancel.is_set():
                self._abort(outcome)
                return
            reply = self.model.complete(for_model, tools, cancel)
            if cancel.is_set() and reply.get("stopReason") != "aborted":
                reply = aborted_message(self.model.name)
            self._add(outcome, reply)
            if reply.get("stopReason") == "aborted":
                outcome.aborted = True
                return
            if reply.get("stopReason") == "error":
                outcome.error = str(reply.get("errorMessage") or "model call failed")
                return
            calls = tool_calls_of(reply)
            if not calls:
                return
            if rounds >= self.max_tool_rounds:
                outcome.hit_round_limit = True
                for call in calls:
                    self._add(outcome, _error_result(call, f"tool round limit ({self.max_tool_rounds}) reached"))
                return
            rounds += 1
            outcome.tool_rounds = rounds
            for call in calls:
                self._add(outcome, self._run_tool(call, cancel))

    def _run_tool(self, call: dict[str, Any], cancel: threading.Event) -> Message:
        if cancel.is_set():
            return _error_result(call, "aborted by the user")
        args = call.get("arguments")
        if not isinstance(args, dict):
            return _error_result(call, "the tool arguments were not a JSON object")
        name = str(call.get("name", ""))
        result = self.host.call_tool(name, args)
        return tool_result_message(str(call.get("id", "")), name, result.content, result.details, result.is_error)

    def _abort(self, outcome: RunOutcome) -> None:
        outcome.aborted = True
        self._add(outcome, aborted_message(self.model.name))
