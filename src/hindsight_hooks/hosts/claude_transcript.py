"""The Claude Code transcript reader, under the name the host readers import it by.

The reader itself is :mod:`hindsight_hooks.importer.claude_session` (the importer, which sits
below ``hosts/``, reads Claude Code sessions with it too; ADR-110). The other transcript
readers of this package (Codex, Gemini CLI) share its line reading and time parsing through
these names.
"""

from __future__ import annotations

from ..importer.claude_session import current_chain, epoch_ms, read_lines, read_transcript, to_messages

__all__ = ["current_chain", "epoch_ms", "read_lines", "read_transcript", "to_messages"]
