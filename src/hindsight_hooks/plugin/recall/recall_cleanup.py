"""``/hindsight:recall-cleanup`` (docs/commands.md#hindsightrecall-cleanup): find, and prune offline, persisted recall
blocks.

A host that wrongly persisted our injected block into its transcript would feed it back to the
model forever; so would a reply that quoted the block (an echo, or a host writing it back
HTML-escaped). Both are found: *injected* lines are messages that are our block (docs/recall.md#injection), and
*quoted* lines are other messages holding a block or its fixed lines (ADR-065). Scanning is
always safe; pruning touches only an explicit, inactive file, checks that it did not change
while we read it, and keeps a byte-exact backup. Injected entries are removed and their
children re-parented so the entry tree stays connected; a quoted block is cut out of its
message, which stays.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...hooks import CommandResult
from ...retain.echo_guard import has_echo, scrub_value
from ...retain.injected import is_injected

if TYPE_CHECKING:
    from ..runtime import SessionRuntime

USAGE = "/hindsight:recall-cleanup [<session.jsonl>] [--prune]"


INJECTED, QUOTED = "injected", "quoted"
SHOWN = 10


def _message_of(obj: Any) -> dict[str, Any] | None:
    """The message a session line carries: its ``message``, or the line itself (with ``content``)."""
    if not isinstance(obj, dict):
        return None
    msg = obj.get("message")
    if isinstance(msg, dict) and "content" in msg:
        return msg
    return obj if "content" in obj else None


def _kind(obj: Any) -> str | None:
    msg = _message_of(obj)
    if msg is None:
        return None
    if is_injected(msg):
        return INJECTED
    return QUOTED if has_echo([msg.get("content")]) else None


def line_kind(line: str) -> str | None:
    """``injected`` (the line's message is our block), ``quoted`` (it holds our block), or ``None``."""
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    return _kind(obj)


def scan(path: Path) -> list[tuple[int, str]]:
    """1-based numbers of matching lines, with their kind."""
    out: list[tuple[int, str]] = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for n, line in enumerate(fh, start=1):
            kind = line_kind(line) if line.strip() else None
            if kind is not None:
                out.append((n, kind))
    return out


def recall_cleanup(rt: SessionRuntime, argv: list[str]) -> CommandResult:
    prune = "--prune" in argv
    paths = [a for a in argv if a != "--prune"]
    if len(paths) > 1 or any(a.startswith("--") for a in paths):
        return CommandResult(f"usage: {USAGE}", "warning", {"usage": USAGE})
    active = rt.ctx.session_file
    if paths:
        target = Path(paths[0])
        if not target.is_absolute():
            target = rt.cwd / target
    elif active is not None:
        target = Path(active)
    else:
        return CommandResult("no session file available", "warning")
    if not target.is_file():
        return CommandResult(f"{target} is not a file", "warning")
    if prune:
        is_active = active is not None and os.path.realpath(active) == os.path.realpath(target)
        if not paths or is_active:
            return CommandResult(
                "refusing to prune the active session file; re-run with the file path and --prune once the "
                "session is idle",
                "warning",
            )
        return _prune(target)
    matches = scan(target)
    numbers = [n for n, _ in matches]
    injected = [n for n, kind in matches if kind == INJECTED]
    quoted = [n for n, kind in matches if kind == QUOTED]
    shown = ", ".join(str(n) for n in numbers[:SHOWN]) or "none"
    detail = f" ({len(quoted)} quoted inside other messages)" if quoted else ""
    text = f"{target}: {len(matches)} persisted recall block(s){detail}; lines: {shown}"
    data = {
        "path": str(target),
        "count": len(matches),
        "lines": numbers[:SHOWN],
        "injected": injected[:SHOWN],
        "quoted": quoted[:SHOWN],
    }
    return CommandResult(text, "warning" if matches else "info", data)


def _prune(path: Path) -> CommandResult:
    before = os.stat(path)
    raw = path.read_bytes()
    lines = raw.decode("utf-8", errors="surrogateescape").split("\n")
    trailing_newline = raw.endswith(b"\n")
    if trailing_newline:
        lines = lines[:-1]
    removed: dict[str, Any] = {}
    keep: list[str] = []
    parsed: list[tuple[str, dict[str, Any] | None]] = []
    cut = 0
    for line in lines:
        obj: dict[str, Any] | None = None
        try:
            o = json.loads(line)
            obj = o if isinstance(o, dict) else None
        except ValueError:
            obj = None
        kind = _kind(obj) if line.strip() else None
        if kind == INJECTED:
            if obj is not None and isinstance(obj.get("id"), str):
                removed[obj["id"]] = obj.get("parentId")
            continue
        if kind == QUOTED and obj is not None:
            obj = _without_quoted_block(obj)
            line = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
            cut += 1
        parsed.append((line, obj))
    after = os.stat(path)
    if (before.st_mtime_ns, before.st_size) != (after.st_mtime_ns, after.st_size):
        return CommandResult("session file changed during scan; retry when idle", "warning")
    count = len(lines) - len(parsed)
    if count == 0 and cut == 0:
        return CommandResult(f"{path}: nothing to prune", "info", {"pruned": 0, "cut": 0})

    def resolve(parent: Any) -> Any:
        seen = 0
        while isinstance(parent, str) and parent in removed and seen < 10_000:
            parent = removed[parent]
            seen += 1
        return parent

    for line, obj in parsed:
        if obj is not None and obj.get("parentId") in removed:
            obj = dict(obj)
            obj["parentId"] = resolve(obj["parentId"])
            keep.append(json.dumps(obj, ensure_ascii=False, separators=(",", ":")))
        else:
            keep.append(line)
    backup = path.with_name(f"{path.name}.hindsight-recall-prune.{int(time.time() * 1000)}.bak")
    fd = os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(raw)
        fh.flush()
        os.fsync(fh.fileno())
    tmp = path.with_name(f"{path.name}.hindsight-prune.tmp")
    body = "\n".join(keep) + ("\n" if trailing_newline else "")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, before.st_mode & 0o7777)
    with os.fdopen(fd, "wb") as fh:
        fh.write(body.encode("utf-8", errors="surrogateescape"))
        fh.flush()
        os.fsync(fh.fileno())
    os.chmod(tmp, before.st_mode & 0o7777)
    os.replace(tmp, path)
    cut_text = f" and cut {cut} quoted block(s)" if cut else ""
    return CommandResult(
        f"pruned {count} line(s){cut_text} from {path}; backup {backup}",
        "info",
        {"pruned": count, "cut": cut, "backup": str(backup)},
    )


def _without_quoted_block(obj: dict[str, Any]) -> dict[str, Any]:
    """The entry with our block (and its fixed lines) cut out of its message's content."""
    msg = _message_of(obj)
    assert msg is not None
    cleaned = dict(msg, content=scrub_value(msg.get("content")))
    return dict(obj, message=cleaned) if msg is not obj else cleaned
