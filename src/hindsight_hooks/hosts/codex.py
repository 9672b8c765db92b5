"""Codex CLI as a host: its hook events mapped onto the public ``Host`` (``hindsight-hooks hook codex EVENT``).

Codex (0.169) runs the command hooks of ``$CODEX_HOME/hooks.json`` and of a trusted project's
``.codex/hooks.json`` with the event as JSON on stdin (``session_id``, ``transcript_path`` — its
rollout JSONL —, ``cwd``, ``hook_event_name``, ...) and reads a JSON answer from stdout, in the
shape Claude Code uses. The mapping (a :class:`~.transcript_hooks.TranscriptAdapter`):

====================  =========================================================================
``SessionStart``      deliver what earlier sessions left queued (a detached worker); answer at once
``UserPromptSubmit``  recall for the prompt, answered as ``hookSpecificOutput.additionalContext``;
                      Codex sends it to the model as a ``developer`` message and records it in the
                      rollout as one, which the reader (``importer/codex_session.py``) never reads
``Stop``              ``agent_end`` over the rollout (the cursor keeps the new part), then deliver
``PreCompact``        the same (a flush before Codex compacts)
``SessionEnd``        the same; Codex clamps this hook's timeout to 3 s, so ours is 2.5 s and the
                      delivery is a detached worker's; leftovers also go at the next start
====================  =========================================================================

Problems reach the user once per session as ``systemMessage``. ``exec`` runs only reviewed
(trusted) hooks; ``hindsight-hooks install codex`` does not trust them for you (ADR-089).
"""

from __future__ import annotations

import json
import os
from functools import partial
from pathlib import Path

from ..importer.codex_session import read_transcript
from .install import HookSpec, hook_command
from .transcript_hooks import HostProfile, TranscriptAdapter

NAME = "codex"
DEADLINES_S = {
    "SessionStart": 3.0,
    "UserPromptSubmit": 8.0,
    "Stop": 8.0,
    "PreCompact": 8.0,
    "SessionEnd": 2.5,
}
"""Each event's own limit, under the timeout we install (and Codex's 3 s clamp on SessionEnd)."""
INSTALL_TIMEOUT_S = 15
SESSION_END_TIMEOUT_S = 3
EVENTS: tuple[str, ...] = ("SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd")
"""The events ``hindsight-hooks install codex`` registers."""

ADAPTER = TranscriptAdapter(
    HostProfile(
        name=NAME,
        read=read_transcript,
        read_in_view=partial(read_transcript, since_compaction=True),  # what the model is sent now (ADR 183)
        deadlines_s=DEADLINES_S,
        start_events=frozenset({"SessionStart"}),
        prompt_events=frozenset({"UserPromptSubmit"}),
        retain_events=frozenset({"Stop", "PreCompact", "SessionEnd"}),
        reply_field="last_assistant_message",
    )
)


# --------------------------------------------------------------------------- install


def codex_home(home: Path | None = None) -> Path:
    """``$CODEX_HOME``, else ``~/.codex`` (where Codex keeps its user config)."""
    chosen = os.environ.get("CODEX_HOME")
    if chosen:
        return Path(chosen).expanduser()
    return (home if home is not None else Path.home()) / ".codex"


def hooks_path(scope: str, cwd: Path, home: Path | None = None) -> Path:
    """``<project>/.codex/hooks.json`` (``project``) or ``$CODEX_HOME/hooks.json`` (``user``)."""
    return (cwd / ".codex" if scope == "project" else codex_home(home)) / "hooks.json"


def config_path(scope: str, cwd: Path, home: Path | None = None) -> Path:
    """The ``config.toml`` that takes our MCP server: the project's or ``$CODEX_HOME``'s."""
    return (cwd / ".codex" if scope == "project" else codex_home(home)) / "config.toml"


def hook_specs(python: str | None = None) -> list[HookSpec]:
    return [
        HookSpec(
            event,
            hook_command(NAME, event, python),
            timeout_s=SESSION_END_TIMEOUT_S if event == "SessionEnd" else INSTALL_TIMEOUT_S,
        )
        for event in EVENTS
    ]


APPROVED_TOOLS = ("hindsight_retain", "hindsight_retain_global", "hindsight_recall", "hindsight_reflect")
"""Tools Codex may call without asking (they only read or add memory); ``memory_edit`` asks."""
PASSED_ENV = (
    "HINDSIGHT_BASE_URL",
    "HINDSIGHT_API_KEY",
    "HINDSIGHT_API_KEY_REF",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
)
"""Variables Codex hands on to the MCP server (it starts MCP servers with a reduced environment)."""


def mcp_toml(script: str) -> str:
    """The TOML that registers ``<script> mcp`` as Codex's MCP server ``hindsight``."""
    lines = [
        "[mcp_servers.hindsight]",
        f"command = {json.dumps(script)}",
        'args = ["mcp"]',
        f"env_vars = {json.dumps(list(PASSED_ENV))}",
        "startup_timeout_sec = 30",
    ]
    for tool in APPROVED_TOOLS:
        lines += ["", f"[mcp_servers.hindsight.tools.{tool}]", 'approval_mode = "approve"']
    return "\n".join(lines) + "\n"
