"""The ``strict`` import profile: drop successful tool results that are noise (docs/import.md 3).

Old sessions are full of tool output nobody will ask about again: progress and status lines,
empty results, huge listings, and the same command run five times. Memory extraction pays
for every byte and tends to "remember" whatever it is shown, so ``strict`` drops, among the
*successful* results only (a failure is always kept — that is where the lessons are):

* UI, process or status noise: a tool whose name says it manages the UI, processes or a
  status/progress display, text with terminal escape sequences (spinners, colour redraws), or
  a bare acknowledgement such as ``ok`` / ``done`` / ``(no output)``;
* empty results (no text once whitespace is collapsed);
* results larger than 2 KiB of text;
* repeats: the same tool with the same whitespace-collapsed text as an earlier result on
  the branch.

Works over a whole branch, so "earlier" crosses chunk boundaries.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..hooks.messages import Message, message_text

MAX_RESULT_BYTES = 2048

NOISE_TOOLS = frozenset(
    {
        # UI
        "ui",
        "notify",
        "set_status",
        "status",
        "statusline",
        "progress",
        "todo_read",
        "todo_write",
        "todoread",
        "todowrite",
        # processes and background jobs
        "process",
        "processes",
        "ps",
        "jobs",
        "job_status",
        "await",
        "cancel_job",
        "bash_output",
        "bashoutput",
        "kill_shell",
        "killshell",
    }
)
"""Tool names (lower-case) whose successful output is UI, process or status bookkeeping."""

ACKNOWLEDGEMENTS = frozenset(
    {"ok", "ok.", "done", "done.", "success", "succeeded", "completed", "started", "running"}
    | {"(no output)", "no output"}
)

_WS = re.compile(r"\s+")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def collapse(text: str) -> str:
    """Whitespace runs → one space, trimmed: the form repeats are compared in."""
    return _WS.sub(" ", text).strip()


def noise_reason(msg: Message, seen: set[tuple[str, str]]) -> str | None:
    """Why a successful tool result is noise under ``strict``, or ``None`` to keep it.

    ``seen`` holds ``(tool, collapsed text)`` of earlier results; this call adds ``msg``'s.
    """
    name = msg.get("toolName")
    tool = name.lower() if isinstance(name, str) else ""
    text = message_text(msg)
    flat = collapse(text)
    key = (tool, flat)
    repeated = key in seen
    seen.add(key)
    if msg.get("isError"):
        return None
    if tool in NOISE_TOOLS:
        return "noise"
    if not flat:
        return "empty"
    if len(text.encode("utf-8")) > MAX_RESULT_BYTES:
        return "too-large"
    if _ANSI.search(text) or "\r" in text.replace("\r\n", "\n") or flat.lower() in ACKNOWLEDGEMENTS:
        return "noise"
    if repeated:
        return "repeat"
    return None


def strict_drops(items: Sequence[tuple[int, Message]]) -> dict[int, str]:
    """Branch indexes of the tool results ``strict`` drops, with the reason."""
    seen: set[tuple[str, str]] = set()
    drops: dict[int, str] = {}
    for idx, msg in items:
        if msg.get("role") != "toolResult":
            continue
        reason = noise_reason(msg, seen)
        if reason is not None:
            drops[idx] = reason
    return drops
