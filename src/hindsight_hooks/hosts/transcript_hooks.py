"""What the command-hook agents that keep a transcript file have in common: one adapter, configured.

Codex CLI and Gemini CLI (like Claude Code, see :mod:`.claude_code`) run a command per hook
event with the event as JSON on stdin; every event carries ``session_id``, ``transcript_path``
and ``cwd``. Their adapters differ only in event names, answer shapes, deadlines and the reader
of the transcript, so each is a :class:`TranscriptAdapter` built from a :class:`HostProfile`:

- a **start** event delivers what earlier sessions left queued (a detached worker), answering at
  once;
- a **prompt** event recalls for the prompt (the transcript's last turns plus the prompt, through
  the public ``Host.context``) and answers with the host's "additional context" shape;
- a **retain** event runs ``agent_end`` over the whole transcript (the plugin's persistent cursor
  keeps only the new part and queues it durably), then a detached worker delivers it. A host's
  final reply may reach its file a moment after the event: when the event names the reply
  (``reply_field``), the adapter waits up to :data:`SETTLE_S` for the file to end with it.

The session is the host's ``session_id`` (:func:`~.hookcmd.session_file_for`), so hooks, slash
commands and the MCP server of one agent session share its mode, tags and retain cursor.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .hookcmd import HookEvent, HookRun, session_file_for

if TYPE_CHECKING:  # the hooks package (pydantic) loads only when an event is handled
    from ..hooks.messages import Message

RECALL_TAIL_BYTES = 512 * 1024
"""Recall composes its query from the last turns; this much of the file's end holds them."""
SETTLE_S = 0.5
"""How long a retain event waits for the host to finish writing the reply it reports."""

Reader = Callable[[Path, int | None], "list[Message]"]


@dataclass(frozen=True)
class HostProfile:
    """Everything host-specific about a transcript-driven adapter."""

    name: str
    read: Reader
    deadlines_s: dict[str, float]
    start_events: frozenset[str]
    prompt_events: frozenset[str]
    retain_events: frozenset[str]
    read_in_view: Reader | None = None
    """The reader of what the model is sent now, for recall: a host whose file keeps the turns
    before a compaction (Claude Code, Codex) reads from its newest compaction, so the block does not
    leave out turns the model no longer sees (ADR 183). ``None``: :attr:`read` (Gemini's file is
    the compacted history already)."""
    reply_field: str | None = None
    """The payload key holding the final reply of a retain event (to wait for it to be written)."""
    skip_prompt: Callable[[str], bool] = lambda prompt: False
    """Prompts that get no recall (e.g. the expansion of our own slash command)."""
    on_event: Callable[[HookEvent], None] = lambda hook: None
    """Host-specific bookkeeping every event does first (must not raise)."""


class TranscriptAdapter:
    """A :class:`~.hookcmd.HostAdapter` for a host described by a :class:`HostProfile`."""

    def __init__(self, profile: HostProfile) -> None:
        self.profile = profile
        self.name = profile.name

    def deadline_s(self, event: str) -> float:
        return self.profile.deadlines_s.get(event, 3.0)

    def read_event(self, event: str, payload: dict[str, Any]) -> HookEvent:
        cwd_raw = payload.get("cwd")
        cwd = Path(cwd_raw) if isinstance(cwd_raw, str) and cwd_raw else Path(os.getcwd())
        sid = payload.get("session_id")
        key = sid if isinstance(sid, str) and sid.strip() else None
        raw_path = payload.get("transcript_path")
        transcript = Path(raw_path) if isinstance(raw_path, str) and raw_path else None
        return HookEvent(
            host=self.name,
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

    def context_answer(self, event: str, block: str) -> dict[str, Any]:
        """The answer that adds ``block`` to the model's context for this prompt."""
        return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": block}}

    def handle(self, hook: HookEvent, run: HookRun) -> dict[str, Any]:
        profile = self.profile
        profile.on_event(hook)
        if hook.name in profile.prompt_events:
            return self._prompt(hook, run)
        retained = hook.name in profile.retain_events and self._retain(hook, run)
        if retained or hook.name in profile.start_events:
            run.deliver_later()
        return {}

    # -- recall ---------------------------------------------------------------------------------
    def _prompt(self, hook: HookEvent, run: HookRun) -> dict[str, Any]:
        from ..hooks import message_text, user_message

        prompt = hook.payload.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip() or self.profile.skip_prompt(prompt):
            return {}
        messages = self._transcript(hook, RECALL_TAIL_BYTES, self.profile.read_in_view)
        last = messages[-1] if messages else None
        if not (last and last.get("role") == "user" and message_text(last).strip() == prompt.strip()):
            messages.append(user_message(prompt))
        block = run.recall_block(messages)
        return self.context_answer(hook.name, block) if block else {}

    # -- retain ---------------------------------------------------------------------------------
    def _transcript(self, hook: HookEvent, tail_bytes: int | None, reader: Reader | None = None) -> list[Message]:
        if hook.transcript is None:
            return []
        try:
            return (reader or self.profile.read)(hook.transcript, tail_bytes)
        except OSError:
            return []

    def _retain(self, hook: HookEvent, run: HookRun) -> bool:
        """``agent_end`` over the whole transcript; False when there is nothing to read."""
        if hook.transcript is None:
            return False
        messages = self._transcript(hook, None)
        field = self.profile.reply_field
        expected = hook.payload.get(field) if field else None
        if isinstance(expected, str) and expected.strip():
            deadline = time.monotonic() + SETTLE_S
            while not ends_with_reply(messages, expected) and time.monotonic() < deadline:
                time.sleep(0.05)
                messages = self._transcript(hook, None)
        if not messages:
            return False
        run.retain(messages)
        return True


def ends_with_reply(messages: list[Message], text: str) -> bool:
    """True when the newest assistant message holds ``text`` (the reply the host reported)."""
    from ..hooks import message_text

    for msg in reversed(messages):
        if msg.get("role") == "assistant":
            return text.strip() in message_text(msg)
    return False
