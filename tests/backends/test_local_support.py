"""Shared helpers for the local-backend tests (this module holds no tests of its own)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hindsight_hooks.backends.base import BackendError, InContext, RecallRequest
from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.backends.local_time import period_words, time_window
from hindsight_hooks.timefmt import epoch_from_iso

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


def retain_talks(backend: LocalBackend, talks: list[tuple[str, list[tuple[str, str]]]]) -> LocalBackend:
    """Each talk ``(when, [(role, text), ...])`` retained in bank ``b`` as a session of its own, as
    auto-retain stores one, its messages said a second apart from ``when`` (ISO)."""
    for n, (when, talk) in enumerate(talks):
        start = epoch_from_iso(when) or 0.0
        said = json.dumps(
            [{"role": role, "content": text, "timestamp": (start + k) * 1000} for k, (role, text) in enumerate(talk)]
        )
        backend.retain_batch("b", [item(said, f"s{n}", source="auto", timestamp=when)], operation_id=f"o{n}")
    return backend


def texts_recalled(
    backend: LocalBackend, question: str, asked_on: str, limit: int = 8, seen: InContext | None = None
) -> list[str]:
    """The texts bank ``b`` recalls for ``question`` asked at ``asked_on`` (ISO), in their order
    (``seen``: what the model reads, the asking session's document among it)."""
    request = RecallRequest(query=question, query_timestamp=asked_on, limit=limit, in_context=seen)
    return [hit.text for hit in backend.recall("b", request).hits]


# When the questions of the tests of questions about the past are asked: a Tuesday afternoon.
QUESTIONS_ASKED_ON = "2026-12-01T15:00:00Z"


def recalled(backend: LocalBackend, question: str, limit: int = 8, seen: InContext | None = None) -> list[str]:
    """:func:`texts_recalled` of ``question`` asked at ``QUESTIONS_ASKED_ON``."""
    return texts_recalled(backend, question, QUESTIONS_ASKED_ON, limit, seen)


def words_of_the_period(question: str, asked_on: str) -> Callable[[str], bool]:
    """``local_time.period_words`` of ``question`` asked at ``asked_on`` (ISO)."""
    reference = epoch_from_iso(asked_on) or 0.0
    return period_words(question, reference, time_window(question, reference))


def with_vectors_in_memory(backend: LocalBackend, word: str) -> LocalBackend:
    """``backend`` (made with a ``semantic`` model) once every unit has its vector and the bank's
    matrix is in memory: a cold bank's vectors are read by the worker that a first recall (of
    ``word``) starts, and the next recall has them."""
    assert backend.wait_for_vectors(120)
    backend.recall("b", RecallRequest(query=word))
    assert backend.wait_for_vectors(120)
    return backend


def bank_of(tmp_path: Path, texts: list[str]) -> LocalBackend:
    """A real store whose bank ``b`` holds each text as a memory of its own."""
    backend = make(tmp_path)
    for n, text in enumerate(texts):
        backend.retain_batch("b", [item(text, f"d{n}")], operation_id=f"o{n}")
    return backend


def raw(path: Path) -> sqlite3.Connection:
    """A separate plain connection to the same file, for inspecting what the backend wrote."""
    return sqlite3.connect(str(path), isolation_level=None)


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else "absent"


def refused_open(path: Path) -> BackendError:
    """Opening ``path`` fails with a permanent error that names the file; returns the error."""
    with pytest.raises(BackendError) as info:
        LocalBackend(path)
    assert info.value.kind == "permanent" and str(path) in str(info.value)
    return info.value


def assert_refused_untouched(path: Path, *needles: str) -> None:
    """:func:`refused_open` (its message holding each of ``needles``), and the file and its
    folder stay exactly as they were."""
    before = file_digest(path)
    siblings = sorted(p.name for p in path.parent.iterdir())
    error = refused_open(path)
    for needle in needles:
        assert needle in str(error)
    assert file_digest(path) == before
    assert sorted(p.name for p in path.parent.iterdir()) == siblings


_FIRST_WRITER = r"""
import json, os, sys, time
from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.backends.local_time import period_words, time_window
from hindsight_hooks.timefmt import epoch_from_iso
path, name, go, bank, template = sys.argv[1:6]
while not os.path.exists(go):
    time.sleep(0.001)
item = json.loads(template.replace("{name}", name))
LocalBackend(path).retain_batch(bank, [item], operation_id=name)
print("done", flush=True)
"""


def migrated_at_once(tmp_path: Path, path: Path, word: str) -> LocalBackend:
    """Three child processes open the older-version file at ``path`` at once, each storing
    ``"P<n> <word>"`` in bank ``b`` as its first write; returns a backend on the result, checked
    healthy and finding all three writes (each migration test then checks what it kept)."""
    from hindsight_hooks.backends.base import RecallRequest

    names = [f"P{n}" for n in range(3)]
    first_writes_at_once(tmp_path, path, names, "b", {"content": "{name} " + word, "document_id": "{name}"})
    backend = LocalBackend(path)
    assert backend.quick_check() == []
    found = sorted(h.text for h in backend.recall("b", RecallRequest(query=word)).hits)
    assert found == [f"{name} {word}" for name in names]
    return backend


def first_writes_at_once(tmp_path: Path, path: Path, names: list[str], bank: str, template: dict[str, Any]) -> None:
    """Start one real child process per name, release them together, and have each open the store
    at ``path`` and retain ``template`` (``{name}`` replaced by its name) as its first write.

    Opening is where a new or old-version file gets its schema built or migrated, so this is how
    the tests race several hosts starting on one machine.
    """
    import os
    import subprocess
    import sys
    import time

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _FIRST_WRITER, str(path), name, str(go), bank, json.dumps(template)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for name in names
    ]
    time.sleep(0.5)  # let every interpreter reach the wait loop
    go.touch()
    for name, proc in zip(names, procs, strict=True):
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, f"opener {name} failed: {err[-2000:]}"
        assert out.strip() == "done"
