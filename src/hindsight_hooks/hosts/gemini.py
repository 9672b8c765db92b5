"""Gemini CLI as a host: its hook events mapped onto the public ``Host`` (``hindsight-hooks hook gemini EVENT``).

Gemini CLI (0.61) runs the command hooks of ``~/.gemini/settings.json`` and of a trusted
project's ``.gemini/settings.json`` with the event as JSON on stdin (``session_id``,
``transcript_path`` — its session JSONL —, ``cwd``, ``hook_event_name``, ``timestamp``) and
reads a JSON answer from stdout. The mapping (a :class:`~.transcript_hooks.TranscriptAdapter`):

===============  ==============================================================================
``SessionStart``  deliver what earlier sessions left queued (a detached worker); answer at once
``BeforeAgent``   recall for the prompt, answered as ``hookSpecificOutput.additionalContext``.
                  Gemini appends it to the prompt as ``<hook_context>…</hook_context>`` with every
                  ``<`` and ``>`` HTML-escaped, so the block reaches the model as
                  ``&lt;hindsight-memory&gt;…`` (ADR-088); it records that part in the session
                  file, where the reader (:mod:`.gemini_transcript`) never reads it
``AfterAgent``    ``agent_end`` over the session file (the cursor keeps the new part), then deliver
``PreCompress``   the same (a flush); Gemini fires it before every turn's compression check
``SessionEnd``    the same; Gemini does not wait for this hook, the delivery is a detached worker's
===============  ==============================================================================

Every event also records its session as the project's current Gemini session, which our slash
commands act on (:mod:`.gemini_commands`). The expansion of one of our slash commands gets no
recall. Problems reach the user once per session as ``systemMessage`` (Gemini prints it).
"""

from __future__ import annotations

from pathlib import Path

from .gemini_transcript import COMMAND_MARKER, read_transcript
from .hookcmd import HookEvent
from .install import HookSpec, hook_command
from .transcript_hooks import HostProfile, TranscriptAdapter

NAME = "gemini"
DEADLINES_S = {
    "SessionStart": 3.0,
    "BeforeAgent": 8.0,
    "AfterAgent": 8.0,
    "PreCompress": 5.0,
    "SessionEnd": 5.0,
}
"""Each event's own limit, well under the timeout we install (:data:`INSTALL_TIMEOUT_MS`)."""
INSTALL_TIMEOUT_MS = 15_000
"""Gemini reads a hook's ``timeout`` in milliseconds (its default is 60 000)."""
EVENTS: tuple[str, ...] = ("SessionStart", "BeforeAgent", "AfterAgent", "PreCompress", "SessionEnd")
"""The events ``hindsight-hooks install gemini`` registers."""


def _is_our_command(prompt: str) -> bool:
    return prompt.lstrip().startswith(COMMAND_MARKER)


def _mark_session(hook: HookEvent) -> None:
    if hook.session_key is not None and hook.name in ("SessionStart", "BeforeAgent"):
        from .gemini_commands import mark_current

        mark_current(hook.cwd, hook.session_key)


ADAPTER = TranscriptAdapter(
    HostProfile(
        name=NAME,
        read=read_transcript,
        deadlines_s=DEADLINES_S,
        start_events=frozenset({"SessionStart"}),
        prompt_events=frozenset({"BeforeAgent"}),
        retain_events=frozenset({"AfterAgent", "PreCompress", "SessionEnd"}),
        reply_field="prompt_response",
        skip_prompt=_is_our_command,
        on_event=_mark_session,
    )
)


# --------------------------------------------------------------------------- install


def settings_path(scope: str, cwd: Path, home: Path | None = None) -> Path:
    """``<project>/.gemini/settings.json`` (``project``) or ``~/.gemini/settings.json`` (``user``)."""
    base = cwd if scope == "project" else (home if home is not None else Path.home())
    return base / ".gemini" / "settings.json"


def hook_specs(python: str | None = None) -> list[HookSpec]:
    """Our hooks for Gemini CLI (``HookSpec.timeout_s`` is written as ``timeout``, which Gemini
    reads in milliseconds)."""
    return [HookSpec(event, hook_command(NAME, event, python), timeout_s=INSTALL_TIMEOUT_MS) for event in EVENTS]


def mcp_entry(script: str) -> dict[str, object]:
    """``mcpServers.hindsight``: our MCP server, run in the project folder Gemini starts it in."""
    return {"command": script, "args": ["mcp"]}
