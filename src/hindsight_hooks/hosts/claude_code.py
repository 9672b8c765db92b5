"""Claude Code as a host: its hook events mapped onto the public ``Host`` (``hindsight-hooks hook claude-code EVENT``).

Claude Code runs each configured hook as a command, with the event as JSON on stdin (every event
carries ``session_id``, ``transcript_path``, ``cwd`` and ``hook_event_name``), and reads a JSON
answer from stdout. The mapping:

=================  ===========================================================================
``SessionStart``   deliver leftovers: a detached worker runs ``start()`` + ``shutdown()``; the
                   hook itself answers at once
``UserPromptSubmit`` recall for the prompt (the transcript's last turns + the prompt, through
                   ``Host.context``), answered as ``hookSpecificOutput.additionalContext``
                   holding the ``<hindsight-memory>`` block; Claude Code puts it in a system
                   message of the request, and records it in the transcript as an
                   ``attachment`` line that the transcript reader never turns into a message
``Stop``           ``agent_end`` over the transcript; the plugin's persistent cursor keeps only
                   the new part and queues it durably (a short-lived host: no delivery here),
                   then a detached worker delivers it
``PreCompact``     retain what is not retained yet, then deliver in a worker (flush)
``SessionEnd``     the same, the worker's ``shutdown()`` being the bounded flush
=================  ===========================================================================

The session is Claude Code's ``session_id``: the plugin's session file is
``<cwd>/.hindsight/sessions/<session_id>.jsonl`` (:func:`~.hookcmd.session_file_for`, the file the
CLI's and the MCP server's ``--session-id`` name too), so a resumed session (same id) keeps its
cursor, mode and tags, and the bank comes from ``cwd`` as for every host. Problems reach the
user once per session as ``systemMessage``. Every answer
is valid JSON; an event we do not handle gets ``{}``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from .hookcmd import HookEvent, HookRun, session_file_for
from .install import HookSpec, hook_command

NAME = "claude-code"
RECALL_TAIL_BYTES = 512 * 1024
"""Recall composes its query from the last turns; this much of the file's end holds them."""
STOP_SETTLE_S = 0.5
"""How long ``Stop`` waits for Claude Code to finish writing the reply it reports."""

DEADLINES_S = {
    "SessionStart": 3.0,
    "UserPromptSubmit": 8.0,
    "Stop": 8.0,
    "SubagentStop": 3.0,
    "PreCompact": 8.0,
    "SessionEnd": 8.0,
}
"""Each event's own limit: well under the timeout we install (:data:`INSTALL_TIMEOUT_S`) and
Claude Code's default of 60 s."""
INSTALL_TIMEOUT_S = 15
EVENTS: tuple[str, ...] = ("SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd")
"""The events ``hindsight-hooks install claude-code`` registers."""


class ClaudeCode:
    """The :class:`~.hookcmd.HostAdapter` for Claude Code."""

    name = NAME

    def deadline_s(self, event: str) -> float:
        return DEADLINES_S.get(event, 3.0)

    def read_event(self, event: str, payload: dict[str, Any]) -> HookEvent:
        cwd_raw = payload.get("cwd")
        cwd = Path(cwd_raw) if isinstance(cwd_raw, str) and cwd_raw else Path(os.getcwd())
        sid = payload.get("session_id")
        key = sid if isinstance(sid, str) and sid.strip() else None
        raw_path = payload.get("transcript_path")
        transcript = Path(raw_path) if isinstance(raw_path, str) and raw_path else None
        return HookEvent(
            host=NAME,
            name=event,
            payload=payload,
            cwd=cwd,
            session_key=key,
            transcript=transcript,
            session_file=session_file_for(cwd, key) if key is not None else transcript,
        )

    def empty_answer(self, event: str) -> dict[str, Any]:
        return {}

    def with_notices(self, event: str, answer: dict[str, Any], notices: list[str]) -> dict[str, Any]:
        return {**answer, "systemMessage": "\n".join(notices)}

    def handle(self, hook: HookEvent, run: HookRun) -> dict[str, Any]:
        if hook.name == "UserPromptSubmit":
            return self._prompt(hook, run)
        retained = hook.name in ("Stop", "PreCompact", "SessionEnd") and _retain(hook, run)
        if retained or hook.name == "SessionStart":  # deliver leftovers / what was just queued
            run.deliver_later()
        return {}

    def _prompt(self, hook: HookEvent, run: HookRun) -> dict[str, Any]:
        from ..hooks import user_message

        prompt = hook.payload.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            return {}
        messages = _transcript(hook, RECALL_TAIL_BYTES)
        last = messages[-1] if messages else None
        if not (last and last.get("role") == "user" and _text(last) == prompt):
            messages.append(user_message(prompt))
        block = run.recall_block(messages)
        if not block:
            return {}
        return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": block}}


def _text(msg: dict[str, Any]) -> str:
    from ..hooks import message_text

    return message_text(msg)


def _transcript(hook: HookEvent, tail_bytes: int | None) -> list[dict[str, Any]]:
    from ..importer.claude_session import read_transcript

    if hook.transcript is None:
        return []
    try:
        return read_transcript(hook.transcript, tail_bytes)
    except OSError:
        return []


def _retain(hook: HookEvent, run: HookRun) -> bool:
    """``agent_end`` over the whole transcript; False when there is nothing to read."""
    if hook.transcript is None:
        return False
    messages = _transcript(hook, None)
    expected = hook.payload.get("last_assistant_message")
    if hook.name == "Stop" and isinstance(expected, str) and expected.strip():
        # the hook may start before Claude Code has written the reply it reports: wait briefly
        deadline = time.monotonic() + STOP_SETTLE_S
        while not _ends_with(messages, expected) and time.monotonic() < deadline:
            time.sleep(0.05)
            messages = _transcript(hook, None)
    if not messages:
        return False
    run.retain(messages)
    return True


def _ends_with(messages: list[dict[str, Any]], text: str) -> bool:
    for msg in reversed(messages):
        if msg.get("role") == "assistant":
            return text.strip() in _text(msg)
    return False


ADAPTER = ClaudeCode()


# --------------------------------------------------------------------------- install


def settings_path(scope: str, cwd: Path, home: Path | None = None) -> Path:
    """``<project>/.claude/settings.json`` (``project``) or ``~/.claude/settings.json`` (``user``)."""
    if scope == "project":
        return cwd / ".claude" / "settings.json"
    return (home if home is not None else Path.home()) / ".claude" / "settings.json"


def hook_specs(python: str | None = None) -> list[HookSpec]:
    """Our hooks for Claude Code: every event in :data:`EVENTS`, through this interpreter."""
    return [HookSpec(event, hook_command(NAME, event, python), timeout_s=INSTALL_TIMEOUT_S) for event in EVENTS]
