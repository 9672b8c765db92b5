"""Writes Codex rollout files line by line, in the shape Codex CLI 0.169 writes them.

The shapes were read off real rollouts of ``codex exec`` runs against the scripted model server
(``tests/hosts/test_codex_real.py`` runs the real program): every line is ``{"timestamp",
"ordinal", "type", "payload"}``; the conversation is in ``response_item`` lines; a user item
marks each part's provenance (the person, or the harness); hook context is a ``developer``
message whose kind is ``hooks.additional_context``; an MCP tool call carries its ``namespace``.
Only the fields the reader looks at, plus a few neighbours, are written.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

SESSION = "01a20ec2-c993-7cc0-9de7-fbf26fa2b990"


class CodexRollout:
    """Appends lines to one rollout file."""

    def __init__(self, path: Path, cwd: Path, session_id: str = SESSION) -> None:
        self.path = path
        self.cwd = cwd
        self.session_id = session_id
        self.ordinal = 0
        self.clock = 0
        self.turn = str(uuid.uuid4())
        path.parent.mkdir(parents=True, exist_ok=True)
        self.line(
            "session_meta", {"session_id": session_id, "id": session_id, "cwd": str(cwd), "cli_version": "0.169.0"}
        )

    # -- raw --------------------------------------------------------------------------------
    def line(self, kind: str, payload: dict[str, Any]) -> None:
        self.clock += 1
        obj = {
            "timestamp": f"2026-11-24T10:{self.clock // 60:02d}:{self.clock % 60:02d}.000Z",
            "ordinal": self.ordinal,
            "type": kind,
            "payload": payload,
        }
        self.ordinal += 1
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(obj) + "\n")

    def write_raw(self, text: str) -> None:
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(text)

    def _message(self, role: str, texts: list[str], origins: list[dict[str, Any]], kinds: list[str]) -> str:
        item_id = "msg_" + uuid.uuid4().hex
        part_type = "output_text" if role == "assistant" else "input_text"
        self.line(
            "response_item",
            {
                "type": "message",
                "id": item_id,
                "role": role,
                "content": [{"type": part_type, "text": t} for t in texts],
                "internal_chat_message_metadata_passthrough": {
                    "turn_id": self.turn,
                    "content_item_kinds": kinds,
                    "content_item_metadata": [{"provenance": o} for o in origins],
                },
            },
        )
        return item_id

    # -- conversation -----------------------------------------------------------------------
    def harness(self, text: str) -> str:
        """A user-role message Codex writes itself (``<environment_context>``, instructions)."""
        return self._message("user", [text], [{"type": "harness", "hook": False}], ["environments.environment_context"])

    def user(self, text: str) -> str:
        self.turn = str(uuid.uuid4())
        self.line("event_msg", {"type": "task_started", "turn_id": self.turn})
        return self._message("user", [text], [{"type": "user"}], ["user.text"])

    def hook_context(self, text: str) -> str:
        """What Codex records for a UserPromptSubmit hook's ``additionalContext``."""
        return self._message("developer", [text], [{"type": "harness", "hook": True}], ["hooks.additional_context"])

    def assistant(self, text: str) -> str:
        return self._message("assistant", [text], [], ["unknown"])

    def reasoning(self, summary: str) -> None:
        self.line(
            "response_item",
            {
                "type": "reasoning",
                "id": "rs_" + uuid.uuid4().hex,
                "summary": [{"type": "summary_text", "text": summary}],
            },
        )

    def call(self, name: str, arguments: dict[str, Any], namespace: str | None = None) -> str:
        call_id = "call_" + uuid.uuid4().hex[:12]
        payload: dict[str, Any] = {
            "type": "function_call",
            "id": "fc_" + uuid.uuid4().hex,
            "name": name,
            "arguments": json.dumps(arguments),
            "call_id": call_id,
        }
        if namespace:
            payload["namespace"] = namespace
        self.line("response_item", payload)
        return call_id

    def output(self, call_id: str, text: str) -> None:
        self.line(
            "response_item",
            {
                "type": "function_call_output",
                "id": "fco_" + uuid.uuid4().hex,
                "call_id": call_id,
                "output": [{"type": "input_text", "text": text}],
            },
        )

    def compacted(self, summary: str) -> None:
        self.line("compacted", {"message": summary, "replacement_history": []})

    def rollback(self, turns: int) -> None:
        self.line("event_msg", {"type": "thread_rolled_back", "num_turns": turns})

    def turn_done(self, reply: str) -> None:
        self.line("event_msg", {"type": "task_complete", "turn_id": self.turn, "last_agent_message": reply})

    def exchange(self, prompt: str, reply: str, block: str | None = None) -> None:
        """One turn as Codex records it: prompt, our hook's context (if any), reply."""
        self.user(prompt)
        if block is not None:
            self.hook_context(block)
        self.assistant(reply)
        self.turn_done(reply)

    # -- hook input ---------------------------------------------------------------------------
    def event(self, name: str, **extra: Any) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "session_id": self.session_id,
            "transcript_path": str(self.path),
            "cwd": str(self.cwd),
            "hook_event_name": name,
            "model": "scripted",
            "permission_mode": "bypassPermissions",
        }
        if name in ("UserPromptSubmit", "Stop"):
            payload["turn_id"] = self.turn
        payload.update(extra)
        return payload
