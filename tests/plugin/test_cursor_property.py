"""Stateful property tests of the cursor through the agent_end algorithm (docs/retain.md#order steps 4–8).

Hosts pass growing transcripts whole, as suffix windows, or only the new part, sometimes with
an injected recall block; the plugin restarts (a new CursorStore on the same file). In an
append-only history every message must be retained exactly once; with edits, branches and
failed enqueues, no message of the final transcript may be lost.
"""

from __future__ import annotations

import shutil
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from hindsight_hooks.retain.cursor import (
    CursorState,
    CursorStore,
    FingerprintMemo,
    filter_new,
    fingerprint,
    retained_through_index,
)
from hindsight_hooks.retain.injected import drop_injected

T0 = 1_700_000_000_000
SID = "0123456789abcdef"
ROLES = ("user", "assistant", "toolResult", "custom")
BLOCK = {
    "role": "user",
    "content": "<hindsight-memory>\nrecalled\n</hindsight-memory>",
    "customType": "hindsight-recall",
}


class _Transcripts(RuleBasedStateMachine):
    """Shared parts: a transcript, a store on a real file, and the simulated agent_end."""

    def __init__(self) -> None:
        super().__init__()
        self.folder = Path(tempfile.mkdtemp(prefix="cursor-prop-"))
        self.path = self.folder / "retain-cursors.json"
        self.store = CursorStore(self.path)
        self.transcript: list[dict[str, Any]] = []
        self.uid = 0
        self.ids = True
        self.repeat_content = False

    def teardown(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    @initialize(ids=st.booleans(), repeat_content=st.booleans())
    def setup(self, ids: bool, repeat_content: bool) -> None:
        self.ids = ids
        # Identical content (and timestamp) under different ids: only the ids tell them apart.
        self.repeat_content = repeat_content and ids

    def new_message(self) -> dict[str, Any]:
        self.uid += 1
        if self.repeat_content:
            msg: dict[str, Any] = {"role": "user", "content": "continue", "timestamp": T0}
        else:
            msg = {"role": ROLES[self.uid % len(ROLES)], "content": f"message {self.uid}", "timestamp": T0 + self.uid}
        if self.ids:
            msg["id"] = f"u{self.uid}"
        return msg

    def append(self, k: int) -> None:
        self.transcript.extend(self.new_message() for _ in range(k))

    def window(self, data: st.DataObject, latest_start: int) -> list[dict[str, Any]]:
        """What the host passes: the whole transcript, a suffix, or only what is pending,
        always covering everything not retained yet; sometimes with an injected block."""
        kind = data.draw(st.sampled_from(["full", "suffix", "pending"]), label="window")
        start = {"full": 0, "pending": latest_start}.get(kind)
        if start is None:
            start = data.draw(st.integers(0, latest_start), label="start")
        passed = list(self.transcript[start:])
        if passed and data.draw(st.booleans(), label="inject"):
            passed.insert(len(passed) - 1, dict(BLOCK))
        return passed

    def run_agent_end(self, passed: list[dict[str, Any]], enqueue_ok: bool = True) -> list[dict[str, Any]] | None:
        """docs/retain.md#order steps 2, 4, 5, 7, 8; returns the retained delta (None if the enqueue failed)."""
        msgs = drop_injected(passed)
        memo = FingerprintMemo()
        delta = [msgs[i] for i in filter_new(msgs, self.store.get(SID), memo=memo)]
        if not delta:
            self.store.advance(SID, msgs, len(msgs) - 1, memo=memo)
            return []
        if not enqueue_ok:
            return None  # a failed enqueue never moves the cursor
        through = retained_through_index(msgs, delta, memo=memo)
        self.store.advance(SID, msgs, through if through >= 0 else len(msgs) - 1, memo=memo)
        return delta

    @rule(k=st.integers(1, 8))
    def grow(self, k: int) -> None:
        self.append(k)

    @precondition(lambda self: len(self.transcript) < 700)
    @rule(k=st.integers(150, 320))
    def grow_past_the_tail(self, k: int) -> None:
        self.append(k)

    @rule()
    def restart(self) -> None:
        self.store = CursorStore(self.path)


class AppendOnly(_Transcripts):
    """No edits, no branches: every message is retained exactly once."""

    def __init__(self) -> None:
        super().__init__()
        self.retained: Counter[str] = Counter()
        self.pending_from = 0

    @rule(data=st.data())
    def agent_end(self, data: st.DataObject) -> None:
        delta = self.run_agent_end(self.window(data, self.pending_from))
        assert delta is not None
        self.retained.update(fingerprint(m) for m in delta)
        self.pending_from = len(self.transcript)

    @invariant()
    def retained_exactly_once(self) -> None:
        expected = Counter(fingerprint(m) for m in self.transcript[: self.pending_from])
        assert self.retained == expected


class EditsAndBranches(_Transcripts):
    """Edits, branches (longer and shorter) and failed enqueues: nothing is ever lost."""

    def __init__(self) -> None:
        super().__init__()
        self.ever: set[str] = set()
        self.dirty_from = 0  # every message before this index is retained as it is now

    @rule(data=st.data(), ok=st.sampled_from([True, True, True, False]))
    def agent_end(self, data: st.DataObject, ok: bool) -> None:
        delta = self.run_agent_end(self.window(data, self.dirty_from), enqueue_ok=ok)
        if delta is None:
            return
        self.ever.update(fingerprint(m) for m in delta)
        self.dirty_from = len(self.transcript)

    @precondition(lambda self: bool(self.transcript))
    @rule(data=st.data())
    def edit(self, data: st.DataObject) -> None:
        """Rewrite one message in place (same id). The spec sees an edit only inside the
        cursor's 200-message tail (or in what is still pending), so only those are edited."""
        state = self.store.get(SID)
        tail = set(state.fingerprints) if isinstance(state, CursorState) else set()
        editable = [p for p, m in enumerate(self.transcript) if p >= self.dirty_from or fingerprint(m) in tail]
        if not editable:
            return
        p = data.draw(st.sampled_from(editable), label="edit at")
        self.uid += 1
        self.transcript[p] = {**self.transcript[p], "content": f"edited {self.uid}"}
        self.dirty_from = min(self.dirty_from, p)

    @rule(data=st.data(), k=st.integers(0, 12))
    def branch(self, data: st.DataObject, k: int) -> None:
        """Go back to any earlier message and continue from there (k=0: a shorter branch)."""
        b = data.draw(st.integers(-1, len(self.transcript) - 1), label="branch after")
        del self.transcript[b + 1 :]
        self.append(k)
        self.dirty_from = min(self.dirty_from, b + 1)

    @invariant()
    def nothing_lost(self) -> None:
        missing = [p for p, m in enumerate(self.transcript[: self.dirty_from]) if fingerprint(m) not in self.ever]
        assert missing == []


_settings = settings(
    max_examples=80,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

TestAppendOnly = AppendOnly.TestCase
TestAppendOnly.settings = _settings
TestEditsAndBranches = EditsAndBranches.TestCase
TestEditsAndBranches.settings = _settings
