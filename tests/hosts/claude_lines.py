"""Writes Claude Code session files line by line, in the shape Claude Code 2.1 writes them.

The shapes were read off real transcripts of ``claude -p`` runs against the scripted model server
(``tests/hosts/test_claude_code_real.py`` runs the real program): every line with a ``uuid``
points at its parent, an assistant reply is one line per content block with a shared
``message.id``, hook output is an ``attachment`` line, and a compaction starts over from a
``compact_boundary`` whose ``logicalParentUuid`` names the line before it.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

SESSION = "0f5b3c1e-9d1c-4c53-9a61-6f1e6d7c2a10"


class ClaudeSession:
    """Appends lines to one session file; each new line's parent is the previous line's uuid."""

    def __init__(self, path: Path, cwd: Path, session_id: str = SESSION) -> None:
        self.path = path
        self.cwd = cwd
        self.session_id = session_id
        self.leaf: str | None = None
        self.clock = 0
        path.parent.mkdir(parents=True, exist_ok=True)

    # -- raw --------------------------------------------------------------------------------
    def _stamp(self) -> str:
        self.clock += 1
        return f"2026-11-24T10:{self.clock // 60:02d}:{self.clock % 60:02d}.000Z"

    def line(self, kind: str, parent: str | None = "leaf", **fields: Any) -> str:
        uid = str(uuid.uuid4())
        obj: dict[str, Any] = {
            "parentUuid": self.leaf if parent == "leaf" else parent,
            "isSidechain": False,
            "type": kind,
            "uuid": uid,
            "timestamp": self._stamp(),
            "cwd": str(self.cwd),
            "sessionId": self.session_id,
            "version": "2.1.197",
            "userType": "external",
        }
        obj.update(fields)
        self.write(obj)
        if not obj.get("isSidechain"):
            self.leaf = uid
        return uid

    def write(self, obj: dict[str, Any]) -> None:
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(obj) + "\n")

    def write_raw(self, text: str) -> None:
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(text)

    # -- conversation -------------------------------------------------------------------------
    def user(self, content: Any, parent: str | None = "leaf", **fields: Any) -> str:
        return self.line("user", parent, message={"role": "user", "content": content}, **fields)

    def assistant(self, *blocks: dict[str, Any], stop: str = "end_turn", parent: str | None = "leaf") -> list[str]:
        """One reply: a line per block, all with one ``message.id`` (as Claude Code streams it)."""
        msg_id = "msg_" + uuid.uuid4().hex[:24]
        uids = []
        for i, block in enumerate(blocks):
            message = {
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "model": "claude-opus-4-8",
                "content": [block],
                "stop_reason": stop if i == len(blocks) - 1 else None,
            }
            uids.append(self.line("assistant", parent if i == 0 else "leaf", message=message))
        return uids

    def say(self, text: str) -> list[str]:
        return self.assistant({"type": "text", "text": text})

    def tool_call(self, name: str, arguments: dict[str, Any], text: str = "") -> str:
        call_id = "toolu_" + uuid.uuid4().hex[:20]
        blocks = ([{"type": "text", "text": text}] if text else []) + [
            {"type": "tool_use", "id": call_id, "name": name, "input": arguments}
        ]
        self.assistant(*blocks, stop="tool_use")
        return call_id

    def tool_result(self, call_id: str, output: str, is_error: bool = False) -> str:
        block = {"type": "tool_result", "tool_use_id": call_id, "content": output, "is_error": is_error}
        return self.user([block], toolUseResult={"stdout": output})

    def attachment(self, attachment: dict[str, Any]) -> str:
        return self.line("attachment", attachment=attachment)

    def injected(self, block: str) -> str:
        """Claude Code's record of a UserPromptSubmit hook's additionalContext."""
        return self.attachment(
            {
                "type": "hook_additional_context",
                "content": [block],
                "hookName": "UserPromptSubmit",
                "toolUseID": "hook-" + uuid.uuid4().hex,
                "hookEvent": "UserPromptSubmit",
            }
        )

    def compact(self, summary: str) -> str:
        """A compaction: a boundary (no parent; the logical parent is the old leaf) and a summary."""
        old = self.leaf
        self.line(
            "system",
            parent=None,
            subtype="compact_boundary",
            content="Conversation compacted",
            logicalParentUuid=old,
            compactMetadata={"trigger": "manual", "preTokens": 1000},
        )
        return self.user(summary, isCompactSummary=True, isVisibleInTranscriptOnly=True)

    def side(self, text: str) -> str:
        """A subagent's line (a sidechain) in the main file, as older versions wrote them."""
        return self.line("user", parent=None, isSidechain=True, message={"role": "user", "content": text})

    def housekeeping(self) -> None:
        """Lines without a uuid that Claude Code writes around turns."""
        self.write({"type": "queue-operation", "operation": "enqueue", "sessionId": self.session_id, "content": "x"})
        self.write({"type": "last-prompt", "lastPrompt": "x", "leafUuid": self.leaf, "sessionId": self.session_id})

    def turn(self, prompt: str, reply: str, block: str | None = None) -> None:
        """One ``claude -p`` turn: prompt, our injected block's record, the reply, the Stop record."""
        self.housekeeping()
        self.user(prompt, promptId=str(uuid.uuid4()))
        if block is not None:
            self.injected(block)
        self.say(reply)
        self.attachment({"type": "hook_success", "hookName": "Stop", "hookEvent": "Stop", "stdout": "{}\n"})

    def event(self, name: str, **extra: Any) -> dict[str, Any]:
        """The JSON Claude Code gives a hook for this session."""
        return {
            "session_id": self.session_id,
            "transcript_path": str(self.path),
            "cwd": str(self.cwd),
            "hook_event_name": name,
            **extra,
        }
