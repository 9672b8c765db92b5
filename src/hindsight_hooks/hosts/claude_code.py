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
is valid JSON; an event we do not handle gets ``{}``. The adapter is the shared
:class:`~.transcript_hooks.TranscriptAdapter` (as for Codex and Gemini) given Claude Code's profile.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from .install import HookSpec, hook_command
from .transcript_hooks import HostProfile, TranscriptAdapter

if TYPE_CHECKING:
    from ..hooks.messages import Message

NAME = "claude-code"

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


def _read(path: Path, tail_bytes: int | None, *, since_compaction: bool = False) -> list[Message]:
    """The transcript's current branch, or only what follows its newest compaction (what the model is
    sent now, ADR 183); the reader is imported only when an event needs it."""
    from ..importer.claude_session import read_transcript

    return read_transcript(path, tail_bytes, since_compaction=since_compaction)


ADAPTER = TranscriptAdapter(
    HostProfile(
        name=NAME,
        read=_read,
        read_in_view=partial(_read, since_compaction=True),
        deadlines_s=DEADLINES_S,
        start_events=frozenset({"SessionStart"}),
        prompt_events=frozenset({"UserPromptSubmit"}),
        retain_events=frozenset({"Stop", "PreCompact", "SessionEnd"}),
        reply_field="last_assistant_message",  # only Stop carries it
    )
)


# --------------------------------------------------------------------------- install


def settings_path(scope: str, cwd: Path, home: Path | None = None) -> Path:
    """``<project>/.claude/settings.json`` (``project``) or ``~/.claude/settings.json`` (``user``)."""
    if scope == "project":
        return cwd / ".claude" / "settings.json"
    return (home if home is not None else Path.home()) / ".claude" / "settings.json"


def hook_specs(python: str | None = None) -> list[HookSpec]:
    """Our hooks for Claude Code: every event in :data:`EVENTS`, through this interpreter."""
    return [HookSpec(event, hook_command(NAME, event, python), timeout_s=INSTALL_TIMEOUT_S) for event in EVENTS]
