"""Writes Gemini CLI session files record by record, in the shape Gemini CLI 0.61 writes them.

The shapes were read off real session files of ``gemini -p`` runs against the scripted model
server (``tests/hosts/test_gemini_real.py`` runs the real program) and off the CLI's own loader:
a metadata line, message records (a record with a known ``id`` replaces that message), ``$set``
updates (``messages`` replaces the list, as after a compression), and ``$rewindTo``. A user
record that carried hook context keeps what was typed in ``displayContent`` and the context as
a ``<hook_context>`` part, with ``<`` and ``>`` HTML-escaped as Gemini does.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

SESSION = "a4591f55-6918-4950-9cab-0af7db3d1531"
SNAPSHOT_ACK = "Got it. Thanks for the additional context!"


def escaped(text: str) -> str:
    """What Gemini CLI 0.61 does to a hook's additionalContext."""
    return text.replace("<", "&lt;").replace(">", "&gt;")


class GeminiSession:
    """Appends records to one session file."""

    def __init__(self, path: Path, cwd: Path, session_id: str = SESSION) -> None:
        self.path = path
        self.cwd = cwd
        self.session_id = session_id
        self.clock = 0
        path.parent.mkdir(parents=True, exist_ok=True)
        self.write({"sessionId": session_id, "projectHash": "0" * 64, "startTime": self._stamp(), "kind": "main"})
        preamble = {"id": uuid.uuid4().hex, "timestamp": self._stamp(), "type": "user"}
        preamble["content"] = [{"text": "<session_context>\nThis is the Gemini CLI.\n</session_context>"}]
        self.write({"$set": {"messages": [preamble]}})

    def _stamp(self) -> str:
        self.clock += 1
        return f"2026-11-24T10:{self.clock // 60:02d}:{self.clock % 60:02d}.000Z"

    def write(self, obj: dict[str, Any]) -> None:
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(obj) + "\n")

    def write_raw(self, text: str) -> None:
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(text)

    def record(self, kind: str, content: Any, record_id: str | None = None, **extra: Any) -> dict[str, Any]:
        rec: dict[str, Any] = {"id": record_id or str(uuid.uuid4()), "timestamp": self._stamp(), "type": kind}
        rec["content"] = content
        rec.update(extra)
        self.write(rec)
        self.write({"$set": {"lastUpdated": rec["timestamp"]}})
        return rec

    # -- conversation -----------------------------------------------------------------------
    def user(self, text: str, context: str | None = None) -> dict[str, Any]:
        """A prompt; with ``context`` it is recorded as Gemini records a BeforeAgent hook's answer."""
        if context is None:
            return self.record("user", [{"text": text}])
        parts = [{"text": text}, {"text": f"<hook_context>{escaped(context)}</hook_context>"}]
        return self.record("user", parts, displayContent=[{"text": text}])

    def reply(self, text: str, **extra: Any) -> dict[str, Any]:
        return self.record("gemini", text, thoughts=[], model="gemini-scripted", **extra)

    def tool_turn(self, name: str, args: dict[str, Any], output: str, text: str = "") -> None:
        """A reply that called a tool: recorded empty first, then again with its toolCalls, then
        the tool's result as a user record of ``functionResponse`` parts (as Gemini does)."""
        rec = self.reply(text)
        call_id = f"{name}_{uuid.uuid4().hex[:8]}"
        response = {"functionResponse": {"id": call_id, "name": name, "response": {"output": output}}}
        call = {"id": call_id, "name": name, "args": args, "result": [response], "status": "success"}
        self.write({**rec, "toolCalls": [call]})
        self.record("user", [response])

    def exchange(self, prompt: str, reply: str, context: str | None = None) -> None:
        self.user(prompt, context)
        self.reply(reply)

    def info(self, text: str) -> None:
        self.record("info", text)

    def rewind_to(self, record_id: str) -> None:
        self.write({"$rewindTo": record_id})

    def compress(self, summary: str, keep: list[dict[str, Any]]) -> None:
        """What a compression leaves: the summary, the model's acknowledgement, the kept records."""
        head = [
            {"id": str(uuid.uuid4()), "timestamp": self._stamp(), "type": "user", "content": [{"text": summary}]},
            {
                "id": str(uuid.uuid4()),
                "timestamp": self._stamp(),
                "type": "gemini",
                "content": [{"text": SNAPSHOT_ACK}],
            },
        ]
        self.write({"$set": {"messages": head + keep}})

    # -- hook input ---------------------------------------------------------------------------
    def event(self, name: str, **extra: Any) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "session_id": self.session_id,
            "transcript_path": str(self.path),
            "cwd": str(self.cwd),
            "hook_event_name": name,
            "timestamp": "2026-11-24T10:00:00.000Z",
        }
        payload.update(extra)
        return payload
