"""Shared helpers for the local-backend tests (this module holds no tests of its own)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

from hindsight_hooks.backends.local import LocalBackend

T0 = 1_700_000_000.0  # 2023-11-14T22:13:20Z
T0_ISO = "2023-11-14T22:13:20.000Z"


class Clock:
    """An injected wall clock the test moves by hand."""

    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def item(
    content: str,
    document_id: str,
    *,
    mode: str = "replace",
    tags: list[str] | None = None,
    source: str = "tool",
    timestamp: str | None = None,
    context: str = "",
    metadata: dict[str, str] | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "content": content,
        "context": context,
        "document_id": document_id,
        "update_mode": mode,
        "metadata": {"retain_source": source, **(metadata or {})},
    }
    if tags is not None:
        out["tags"] = tags
    if timestamp is not None:
        out["timestamp"] = timestamp
    return out


def messages_json(*pairs: tuple[str, Any]) -> str:
    return json.dumps([{"role": role, "content": content} for role, content in pairs])


def make(tmp_path: Path, clock: Clock | None = None, **kw: Any) -> LocalBackend:
    return LocalBackend(tmp_path / "memory.db", clock=clock or Clock(), **kw)


def raw(path: Path) -> sqlite3.Connection:
    """A separate plain connection to the same file, for inspecting what the backend wrote."""
    return sqlite3.connect(str(path), isolation_level=None)


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else "absent"
