"""Assemble a chat session: the session file, the UI, the model, the Host, the REPL."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TextIO

from ..hooks import Host, Message
from .agent import DEFAULT_MAX_TOOL_ROUNDS
from .loop import ChatLoop
from .models import make_model
from .session_file import SessionFile, SessionFileError, new_session_path
from .terminal_ui import TerminalUI


def run_chat(
    cwd: Path,
    *,
    session_file: Path | None = None,
    host_name: str = "chat",
    model_name: str = "echo",
    base_url: str | None = None,
    api_key: str | None = None,
    max_tool_rounds: int = DEFAULT_MAX_TOOL_ROUNDS,
    assume_yes: bool = False,
    plugins: list[object] | None = None,
    out: TextIO | None = None,
) -> int:
    """Run the REPL until the person leaves; returns the process exit code.

    ``session_file``: resumed when it already holds a session, created otherwise; by default
    a new file under ``<cwd>/.hindsight/sessions/``. ``base_url`` / ``api_key`` fall back to
    ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` (only used when ``model_name`` is not ``echo``).
    """
    stream = out or sys.stdout
    cwd = Path(cwd).absolute()
    if not cwd.is_dir():
        print(f"error: {cwd} is not a folder", file=sys.stderr)
        return 2
    path = Path(session_file).absolute() if session_file is not None else new_session_path(cwd)
    try:
        session, parsed = SessionFile.open(path, cwd)
    except (SessionFileError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    transcript: list[Message] = list(parsed.messages) if parsed is not None else []
    if parsed is not None:
        note = f"resumed {len(transcript)} message(s) from {path}"
        if parsed.bad_lines:
            note += f" ({parsed.bad_lines} unreadable line(s) skipped)"
        print(note, file=stream)
    model = make_model(
        model_name,
        base_url or os.environ.get("OPENAI_BASE_URL") or None,
        api_key or os.environ.get("OPENAI_API_KEY") or None,
    )
    ui = TerminalUI(out=stream, assume_yes=assume_yes, interactive=True)
    host = Host(cwd, session_file=path, host_name=host_name, ui=ui, plugins=plugins)
    loop = ChatLoop(host, model, ui, session, transcript, out=stream, max_tool_rounds=max_tool_rounds)
    return loop.run()
