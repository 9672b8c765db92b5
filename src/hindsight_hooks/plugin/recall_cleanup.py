"""``/hindsight:recall-cleanup`` (BEHAVIOUR.md §13): find, and prune offline, persisted recall blocks.

A host that wrongly persisted our injected block into its transcript would feed it back to the
model forever. Scanning is always safe; pruning touches only an explicit, inactive file, checks
that it did not change while we read it, keeps a byte-exact backup, and keeps the entry tree
connected by re-parenting children of removed entries.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..hooks import CommandResult
from .injected import is_injected

if TYPE_CHECKING:
    from .runtime import SessionRuntime

USAGE = "/hindsight:recall-cleanup [<session.jsonl>] [--prune]"


def line_is_injected(line: str) -> bool:
    """A JSONL line whose ``message`` (or top-level) content is an injected block."""
    try:
        obj = json.loads(line)
    except ValueError:
        return False
    if not isinstance(obj, dict):
        return False
    msg = obj.get("message")
    if isinstance(msg, dict) and "content" in msg and is_injected(msg):
        return True
    return "content" in obj and is_injected(obj)


def scan(path: Path) -> list[int]:
    """1-based numbers of matching lines."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        return [n for n, line in enumerate(fh, start=1) if line.strip() and line_is_injected(line)]


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
    shown = ", ".join(str(n) for n in matches[:10]) or "none"
    text = f"{target}: {len(matches)} persisted recall block(s); lines: {shown}"
    return CommandResult(
        text, "warning" if matches else "info", {"path": str(target), "count": len(matches), "lines": matches[:10]}
    )


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
    for line in lines:
        obj: dict[str, Any] | None = None
        try:
            o = json.loads(line)
            obj = o if isinstance(o, dict) else None
        except ValueError:
            obj = None
        if line.strip() and line_is_injected(line):
            if obj is not None and isinstance(obj.get("id"), str):
                removed[obj["id"]] = obj.get("parentId")
            continue
        parsed.append((line, obj))
    after = os.stat(path)
    if (before.st_mtime_ns, before.st_size) != (after.st_mtime_ns, after.st_size):
        return CommandResult("session file changed during scan; retry when idle", "warning")
    count = len(lines) - len(parsed)
    if count == 0:
        return CommandResult(f"{path}: nothing to prune", "info", {"pruned": 0})

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
    return CommandResult(
        f"pruned {count} line(s) from {path}; backup {backup}", "info", {"pruned": count, "backup": str(backup)}
    )
