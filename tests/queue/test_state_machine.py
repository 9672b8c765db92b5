"""A hypothesis state machine over the queue: random enqueues, flushes that fail on command,
crashes (an abandoned claim), garbage and torn writes, time passing and requeues.

Invariant after every step: every acknowledged item is delivered, or sits in the active or the
dead-letter file; no job id appears twice in the active file. At the end, a healthy server
drains everything and every acknowledged item has been delivered.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from hindsight_hooks.queue import RetainQueue, read_tolerant
from hindsight_hooks.queue.jobs import dumps_line

from .conftest import FakeBackend, FakeClock, auth_error, job, make_cfg, markers_of_items, permanent, transient


class SimulatedCrash(BaseException):
    """Raised inside delivery: the flush dies between claim and commit, like a kill -9."""


class QueueMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="hh-queue-sm-"))
        self.path = self.dir / "retain-queue.jsonl"
        self.clock = FakeClock()
        self.backend = FakeBackend()
        self.acked: set[str] = set()
        self.counter = 0

    @initialize(max_attempts=st.integers(1, 3), dead_after_ms=st.sampled_from([0, 600_000]))
    def configure(self, max_attempts: int, dead_after_ms: int) -> None:
        """Small retry limits so dead-lettering (and requeueing) happens often."""
        cfg = make_cfg(
            claim_ttl_ms=60_000,
            max_attempts=max_attempts,
            retry_base_ms=1000,
            retry_max_ms=8000,
            dead_letter_after_ms=dead_after_ms,
            batch_max_items=3,
        )
        self.queue = RetainQueue(self.path, cfg, clock=self.clock)

    def _marker(self) -> str:
        self.counter += 1
        return f"m{self.counter}"

    @rule(bank=st.sampled_from(["bank-a", "bank-b"]), doc=st.sampled_from(["d1", "d2"]), coalesce=st.booleans())
    def enqueue(self, bank: str, doc: str, coalesce: bool) -> None:
        marker = self._marker()
        self.queue.enqueue(job(bank, marker, doc=doc, now=self.clock()), coalesce=coalesce)
        self.acked.add(marker)

    @rule(
        mode=st.sampled_from(["ok", "ok", "transient", "permanent", "auth"]),
        force=st.booleans(),
        max_jobs=st.none() | st.integers(0, 3),
    )
    def flush(self, mode: str, force: bool, max_jobs: int | None) -> None:
        failure = {"ok": None, "transient": transient(), "permanent": permanent(), "auth": auth_error()}[mode]
        self.backend.fail_always = failure
        self.backend.on_call = None
        try:
            self.queue.flush(self.backend, force=force, max_jobs=max_jobs)
        finally:
            self.backend.fail_always = None

    @rule(after_send=st.booleans())
    def crash_during_flush(self, after_send: bool) -> None:
        def crash(call: dict[str, Any]) -> None:
            self.backend.on_call = None
            if after_send:
                self.backend.delivered.append(call)  # the server got it; the commit never happens
            raise SimulatedCrash()

        self.backend.on_call = crash
        try:
            self.queue.flush(self.backend, force=True)
        except SimulatedCrash:
            pass
        finally:
            self.backend.on_call = None

    @rule(garbage=st.binary(min_size=1, max_size=60))
    def append_garbage(self, garbage: bytes) -> None:
        with open(self.path, "ab") as fh:
            fh.write(garbage)

    @rule(cut=st.integers(1, 400))
    def torn_append(self, cut: int) -> None:
        """A crash in the middle of an append: part of a line that was never acknowledged."""
        line = dumps_line(job("bank-a", self._marker(), now=self.clock()))
        with open(self.path, "ab") as fh:
            fh.write(line[: min(cut, len(line) - 1)])

    @rule(seconds=st.sampled_from([1, 30, 61, 600, 3600, 7200]))
    def advance(self, seconds: int) -> None:
        self.clock.advance(seconds)

    @precondition(lambda self: Path(str(self.path) + ".dead.jsonl").exists())
    @rule()
    def requeue(self) -> None:
        self.queue.requeue_dead()

    def _present(self) -> set[str]:
        found = set(self.backend.delivered_markers())
        for path in (self.path, Path(str(self.path) + ".dead.jsonl")):
            for queued in read_tolerant(path).jobs:
                found.update(markers_of_items(queued["items"]))
        return found

    @invariant()
    def nothing_acknowledged_is_lost(self) -> None:
        missing = self.acked - self._present()
        assert not missing, f"lost acknowledged items: {sorted(missing)[:5]}"

    @invariant()
    def no_id_twice_in_the_active_file(self) -> None:
        ids = [j["id"] for j in read_tolerant(self.path).jobs]
        assert len(ids) == len(set(ids))

    def teardown(self) -> None:
        if not hasattr(self, "queue"):
            shutil.rmtree(self.dir, ignore_errors=True)
            return
        try:
            for _ in range(40):
                self.clock.advance(3600)
                self.queue.requeue_dead()
                self.queue.flush(self.backend, force=True)
                if not read_tolerant(self.path).jobs:
                    break
            assert not read_tolerant(self.path).jobs
            missing = self.acked - set(self.backend.delivered_markers())
            assert not missing, f"never delivered: {sorted(missing)[:5]}"
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


QueueMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)
TestQueueMachine = QueueMachine.TestCase
