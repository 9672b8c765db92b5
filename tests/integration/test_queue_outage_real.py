"""The durable queue against the real Hindsight server when the server goes away mid-way.

A loopback relay sits between the client and the real server; the test takes it down (every
live connection dropped, new ones closed at once, as a server that died would) and brings it
back on the same port. Jobs queued before, during and after the outage must all reach the
server exactly once as documents, none dead-lettered, whatever the number of failed flushes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hindsight_hooks.backends.hindsight import HindsightBackend
from hindsight_hooks.config_model import QueueConfig
from hindsight_hooks.queue import RetainQueue, new_job, read_strict

from .relay import SwitchableRelay

pytestmark = pytest.mark.integration

MakeBank = Callable[..., str]


@pytest.fixture
def relay(hindsight_url: str) -> Iterator[SwitchableRelay]:
    r = SwitchableRelay(hindsight_url)
    yield r
    r.close()


def job(bank: str, n: int) -> dict[str, Any]:
    items = [
        {
            "content": f"outage test fact number {n}: the deploy window is {n} o'clock",
            "context": "hindsight-hooks outage test",
            "document_id": f"outage-doc-{n}",
            "update_mode": "replace",
            "tags": ["test:outage"],
        }
    ]
    return new_job(bank, "auto", items, async_=False)


def document_ids(backend: HindsightBackend, bank: str) -> list[str]:
    listed = backend.list_documents(bank, limit=100, timeout_s=30)["items"]
    return sorted(str(d["id"]) for d in listed)


def test_server_gone_mid_way_keeps_every_job_and_delivers_all_once_it_is_back(
    tmp_path: Path, relay: SwitchableRelay, make_bank: MakeBank, hindsight_backend: HindsightBackend
) -> None:
    bank = make_bank("hh-outage")
    cfg = QueueConfig(max_attempts=2, retry_base_ms=10, retry_max_ms=20)
    queue = RetainQueue(tmp_path / "retain-queue.jsonl", cfg)
    client = HindsightBackend(relay.url, timeout_ms=5000, retry_base_ms=10, retry_jitter_ms=5)
    try:
        acked = [queue.enqueue(job(bank, n)).job_id for n in range(6)]

        first = queue.flush(client, max_jobs=2)
        assert first.sent == 2 and first.remaining == 4, first.as_dict()

        relay.take_down()
        acked += [queue.enqueue(job(bank, n)).job_id for n in range(6, 8)]
        for _ in range(4):  # more failed flushes than max_attempts: still nothing dead-lettered
            failed = queue.flush(client, force=True)
            assert failed.sent == 0 and failed.dead_lettered == 0, failed.as_dict()
            assert failed.errors and "transient" in failed.error_kinds.values(), failed.as_dict()
        assert relay.refused > 0
        on_disk = [j["id"] for j in read_strict(queue.paths.active)]
        assert sorted(on_disk) == sorted(acked[2:])
        assert not queue.paths.dead.exists() or read_strict(queue.paths.dead) == []
        # the bank stops at its first failure, so the head job carries the attempts: past max_attempts
        assert max(j["attempts"] for j in read_strict(queue.paths.active)) >= 4 > cfg.max_attempts

        relay.bring_back()
        back = queue.flush(client, force=True)
        assert back.sent == 6 and back.remaining == 0 and back.dead_lettered == 0, back.as_dict()
        assert read_strict(queue.paths.active) == []
        assert document_ids(hindsight_backend, bank) == sorted(f"outage-doc-{n}" for n in range(8))
        for n in range(8):  # each delivered exactly once: one unit per single-sentence document
            units = hindsight_backend.list_memories(bank, document_id=f"outage-doc-{n}", timeout_s=30)["items"]
            assert len(units) == 1, (n, units)
    finally:
        client.close()
        queue.close()


@pytest.mark.parametrize("async_", [False, True], ids=["sync", "async"])
def test_server_dying_inside_a_flush_after_processing_a_request_keeps_the_job_and_resends_it(
    tmp_path: Path, relay: SwitchableRelay, make_bank: MakeBank, hindsight_backend: HindsightBackend, async_: bool
) -> None:
    """The worst moment: the server applied job 3 but died before answering. The job must stay
    queued (it was never acknowledged), nothing is dead-lettered, and after the server is back the
    resend lands. Replace-mode documents make the resend idempotent for sync delivery; async
    delivery is deduplicated by the server on ``operation_id`` = job id (ADR 013)."""
    bank = make_bank("hh-midflush")
    queue = RetainQueue(tmp_path / "retain-queue.jsonl", QueueConfig(max_attempts=2, retry_base_ms=10, retry_max_ms=20))
    client = HindsightBackend(relay.url, timeout_ms=5000, retry_base_ms=10, retry_jitter_ms=5)
    try:
        jobs = [job(bank, n) | {"async": async_} for n in range(6)]
        acked = [queue.enqueue(j).job_id for j in jobs]
        relay.die_after_requests(3)
        cut = queue.flush(client, force=True)
        assert cut.sent == 2 and cut.dead_lettered == 0 and cut.remaining == 4, cut.as_dict()
        assert "transient" in cut.error_kinds.values(), cut.as_dict()
        assert sorted(j["id"] for j in read_strict(queue.paths.active)) == sorted(acked[2:])
        if async_:  # the server did take job 2: the lost answer is the only reason it is still queued
            assert hindsight_backend.get_operation(bank, acked[2], timeout_s=30)["status"] != "not_found"
            # The server runs accepted operations on its own workers, not necessarily in order: wait
            # for each of the three it took before reading its documents.
            for operation in acked[:3]:
                hindsight_backend.wait_operation(bank, operation, timeout_s=60, poll_s=0.05)
        assert document_ids(hindsight_backend, bank) == [f"outage-doc-{n}" for n in range(3)]
        for _ in range(3):  # more failed flushes than max_attempts while it stays down
            down = queue.flush(client, force=True)
            assert down.sent == 0 and down.dead_lettered == 0, down.as_dict()

        relay.bring_back()
        back = queue.flush(client, force=True)
        assert back.sent == 4 and back.remaining == 0 and back.dead_lettered == 0, back.as_dict()
        assert not queue.paths.dead.exists() or read_strict(queue.paths.dead) == []
        if async_:
            for operation in acked:
                status = hindsight_backend.wait_operation(bank, operation, timeout_s=60, poll_s=0.05)
                assert status["status"] == "completed", status
        assert document_ids(hindsight_backend, bank) == sorted(f"outage-doc-{n}" for n in range(6))
        for n in range(6):  # job 2 was applied twice over the wire, yet is stored once
            units = hindsight_backend.list_memories(bank, document_id=f"outage-doc-{n}", timeout_s=30)["items"]
            assert len(units) == 1, (n, units)
    finally:
        client.close()
        queue.close()
