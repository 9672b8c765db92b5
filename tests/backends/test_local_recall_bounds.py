"""A local recall keeps its deadline and abort signal on the caller's thread (ADR 053).

The plugin runs embedded-store recalls inline, without a watchdog thread, so every wait inside
``LocalBackend.recall`` must be bounded by itself: statements (progress handler) and SQLite's
lock wait, which never calls the progress handler. In WAL mode an open connection is never
locked out, but opening one is (a thread's first recall): the lock is real, another process
holding the file in ``locking_mode=EXCLUSIVE`` before our connection opens.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hindsight_hooks.backends.base import BackendError, RecallRequest
from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.hooks import RecordingUI
from tests.backends.test_local_support import item, make
from tests.plugin.hostkit import Project, elapsed, exchange, injected_block, isolated, local_project, statuses, user
from tests.sqlite_lock import lock_held

__all__ = ["isolated", "local_project"]  # fixtures, re-exported for pytest


def request() -> RecallRequest:
    return RecallRequest(query="release notes", max_tokens=1000)


def _recall_in(thread: bool, fn: Any) -> tuple[BaseException | None, float]:
    """Run ``fn`` (on a fresh thread when asked: it must open its own connection) and time it."""
    box: list[BaseException | None] = [None]

    def run() -> None:
        try:
            fn()
        except BaseException as exc:
            box[0] = exc

    started = time.monotonic()
    if thread:
        t = threading.Thread(target=run)
        t.start()
        t.join(30)
    else:
        run()
    return box[0], time.monotonic() - started


@pytest.mark.parametrize("fresh_thread", [False, True])
def test_locked_file_cuts_a_recall_at_its_timeout(tmp_path: Path, fresh_thread: bool) -> None:
    backend = make(tmp_path)
    backend.retain_batch("b", [item("ship the release notes", "d")], operation_id="1")
    assert backend.recall("b", request()).hits
    backend.close()  # the next recall opens its connection while the lock is held
    with lock_held(backend.path, readers_too=True):
        exc, took = _recall_in(fresh_thread, lambda: backend.recall("b", request(), timeout_s=0.3))
    assert isinstance(exc, BackendError) and exc.kind == "timeout"
    assert 0.25 <= took < 2.0, "cut at the timeout, not after SQLite's 5 s busy wait"
    assert backend.recall("b", request()).hits, "the store answers again once the lock is gone"


@pytest.mark.parametrize("fresh_thread", [False, True])
def test_abort_cuts_a_recall_waiting_for_a_lock(tmp_path: Path, fresh_thread: bool) -> None:
    backend = make(tmp_path)
    backend.retain_batch("b", [item("ship the release notes", "d")], operation_id="1")
    signal = threading.Event()
    backend.close()
    with lock_held(backend.path, readers_too=True):
        timer = threading.Timer(0.3, signal.set)
        timer.start()
        try:
            exc, took = _recall_in(fresh_thread, lambda: backend.recall("b", request(), timeout_s=20, signal=signal))
        finally:
            timer.cancel()
    assert isinstance(exc, BackendError) and exc.kind == "aborted"
    assert 0.25 <= took < 2.0


def test_a_lock_without_a_deadline_still_ends_as_a_transient_error(tmp_path: Path) -> None:
    backend = make(tmp_path)
    backend.retain_batch("b", [item("ship the release notes", "d")], operation_id="1")
    backend.close()
    with lock_held(backend.path, readers_too=True):
        exc, took = _recall_in(False, lambda: backend.recall("b", request(), signal=threading.Event()))
    assert isinstance(exc, BackendError) and exc.kind == "transient" and "locked" in exc.detail
    assert took < 10.0


# -- the plugin's inline dispatch (recall_policy._recall_inline) --------------------------------------


def test_context_hook_cuts_a_slow_local_recall_at_its_timeout_and_goes_on(local_project: Project) -> None:
    """Thousands of units matching every query word take SQLite milliseconds to rank; a 1 ms
    ``recall.timeout_ms`` cuts that on the hook's thread (the progress handler), and the turn
    goes on unchanged, reported as a failed recall, exactly as a pool-thread timeout would."""
    words = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima"
    with local_project.host("seed") as host:
        host.agent_end(exchange(1))
    store = LocalBackend(local_project.db)
    bank = store_banks(local_project.db)
    filler = [item(f"{words} note {i}", f"hh-unit:{i}", source="auto") for i in range(6000)]
    for k in range(0, len(filler), 1000):
        store.retain_batch(bank, filler[k : k + 1000], operation_id=f"fill-{k}")
    store.close()
    local_project.configure({"recall": {"timeout_ms": 1, "failure_cooldown_ms": 1, "budget": "high"}}, replace=False)
    ui = RecordingUI()
    with local_project.host(ui=ui) as host:
        history = [user(words, 2)]
        with elapsed() as t:
            assert host.context(history) == history, "the turn goes on with the messages unchanged"
        assert t[0] < 1.0
        assert statuses(ui)[-2:] == ["mem:recalling", "mem:recall-failed"]
        assert any("timed out" in text for text in ui.texts("warning"))
    local_project.configure({"recall": {"timeout_ms": 5000}}, replace=False)
    with local_project.host("s3") as host:
        assert injected_block(host.context([user("about q1x", 3)])) is not None


def store_banks(db: Path) -> str:
    """The one bank the seeding session created (the project bank)."""
    import sqlite3

    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        (bank,) = conn.execute("SELECT bank_id FROM banks").fetchone()
    return str(bank)
