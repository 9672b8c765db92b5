"""Reading an agent's JSONL transcript: whole or only its end, damaged lines skipped.

Claude Code's session, Codex's rollout and Gemini CLI's session file are all one JSON object per
line, appended while the agent runs. A hook that recalls needs only the last turns of what may
be a file of many megabytes, so :func:`read_lines` can start ``tail_bytes`` before the end
(dropping the first, cut line). A line that does not parse (the agent is writing it right now,
or the file is damaged) is skipped; it is never an error. This sits in ``importer/``, below
``hosts/``, because imports read those sessions with the hooks' own readers (ADR-110).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from .pi_session import numbered_lines


def read_lines(path: Path, tail_bytes: int | None = None) -> list[dict[str, Any]]:
    """The JSON objects of the file (or of its last ``tail_bytes``), in order."""
    with open(path, "rb") as fh:
        if tail_bytes is not None:
            size = os.fstat(fh.fileno()).st_size
            if size > tail_bytes:
                fh.seek(size - tail_bytes)
                fh.readline()
        data = fh.read()
    out: list[dict[str, Any]] = []
    for line in data.splitlines():
        if not line.strip():
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            out.append(obj)
    return out


def numbered_objects(path: Path) -> Iterator[tuple[int, dict[str, Any] | None, bool]]:
    """Each non-blank line as ``(1-based line number, its object or None if unparsable, ends with a newline)``."""
    for lineno, raw in numbered_lines(path):
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            obj = None
        yield lineno, obj if isinstance(obj, dict) else None, raw.endswith(b"\n")
