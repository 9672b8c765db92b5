"""Flush (docs/queue.md#flush, docs/queue.md#retries): claim/deliver/commit, limits, per-bank stops, failure handling,
results."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hindsight_hooks.backends.base import BackendError
from hindsight_hooks.queue import QueueError, RetainQueue, new_job
from hindsight_hooks.queue.jobs import dumps_line
from hindsight_hooks.queue.policy import APPEND_UNSUPPORTED, DEAD_LETTER_SUFFIX
from hindsight_hooks.timefmt import iso_ms, parse_iso

from .conftest import (
    FakeBackend,
    FakeClock,
    auth_error,
    item,
    job,
    permanent,
    read_lines,
    transient,
)

MakeQueue = Callable[..., RetainQueue]


def fill(q: RetainQueue, spec: list[tuple[str, str]]) -> list[str]:
    return [q.enqueue(job(bank, marker)).job_id for bank, marker in spec]


def test_delivers_in_order_one_batched_request_per_job(
    make_queue: MakeQueue, backend: FakeBackend, qpath: Path
) -> None:
    q = make_queue()
    multi = new_job("bank-a", "tool", [item("x", doc="d1"), item("y", doc="d2", mode="replace")], False)
    ids = [q.enqueue(multi).job_id, *fill(q, [("bank-a", "z")])]
    result = q.flush(backend, request_timeout_ms=1500)
    assert backend.delivered_ids() == ids
    first = backend.calls[0]
    assert first["async"] is False and len(first["items"]) == 2
    assert first["items"][1]["update_mode"] == "replace"
    assert first["timeout_s"] == pytest.approx(1.5)
    assert result.sent == 2 and result.remaining == 0 and result.waiting == 0
    assert read_lines(qpath) == []
    assert result.operation_ids == [f"op-{i}" for i in ids]
    assert result.outcome == {"items_count": 3, "operations": [f"op-{i}" for i in ids], "tokens": 14}
    d0 = result.delivered[0]
    assert d0["queue_job_id"] == ids[0] and d0["bank_id"] == "bank-a" and d0["source"] == "tool"
    assert d0["document_ids"] == ["d1", "d2"] and d0["tags"] == ["repo:test"]
    assert d0["outcome"] == {"items_count": 2, "operations": [f"op-{ids[0]}"], "tokens": 7}
    shaped = result.as_dict()
    assert set(shaped) >= {
        "sent",
        "remaining",
        "waiting",
        "dead_lettered",
        "malformed",
        "operation_ids",
        "outcome",
        "delivered",
    }


def test_empty_queue_and_missing_file(make_queue: MakeQueue, backend: FakeBackend, qpath: Path) -> None:
    result = make_queue().flush(backend)
    assert (result.sent, result.remaining, result.outcome, result.as_dict().get("operation_ids")) == (0, 0, None, None)
    assert not qpath.exists()


def test_max_jobs_and_zero_budget(make_queue: MakeQueue, backend: FakeBackend) -> None:
    q = make_queue()
    ids = fill(q, [("bank-a", "1"), ("bank-a", "2"), ("bank-b", "3")])
    assert q.flush(backend, max_elapsed_ms=0).sent == 0
    assert backend.calls == []
    result = q.flush(backend, max_jobs=2)
    assert result.sent == 2 and result.remaining == 1
    assert backend.delivered_ids() == ids[:2]
    assert q.flush(backend, max_jobs=0).sent == 0


def test_elapsed_budget_is_checked_before_each_job(make_queue: MakeQueue, backend: FakeBackend, qpath: Path) -> None:
    q = make_queue()
    fill(q, [("bank-a", "1"), ("bank-a", "2"), ("bank-a", "3")])
    backend.on_call = lambda call: time.sleep(0.5)
    # Job 2 starts at ~0.5 s (< 0.9: sent, with 0.4 s of slack for a busy machine); job 3 would
    # start at >= 1.0 s (> 0.9: released unattempted, whatever the load).
    result = q.flush(backend, max_elapsed_ms=900, request_timeout_ms=30000)
    assert result.sent == 2 and result.remaining == 1
    assert backend.calls[0]["timeout_s"] <= 0.9  # clipped to the time left, not the 30 s cap
    assert backend.calls[1]["timeout_s"] <= 0.4
    assert all("claim_token" not in j for j in read_lines(qpath))  # the unattempted job was released


def test_banks_filter(make_queue: MakeQueue, backend: FakeBackend) -> None:
    q = make_queue()
    ids = fill(q, [("bank-a", "1"), ("bank-b", "2"), ("bank-a", "3")])
    result = q.flush(backend, banks={"bank-b"})
    assert backend.delivered_ids() == [ids[1]] and result.remaining == 2


def test_a_bank_stops_at_its_first_failure_others_go_on(
    make_queue: MakeQueue, backend: FakeBackend, qpath: Path, clock: FakeClock
) -> None:
    q = make_queue()
    ids = fill(q, [("bank-a", "1"), ("bank-a", "2"), ("bank-b", "3")])
    backend.fail_next = [transient("server unavailable", 503)]
    result = q.flush(backend)
    assert [c["operation_id"] for c in backend.calls] == [ids[0], ids[2]]
    assert result.sent == 1 and result.remaining == 2 and result.waiting == 1
    assert result.errors == {"bank-a": "retain failed: server unavailable"}
    assert result.error_kinds == {"bank-a": "transient"}
    lines = {x["id"]: x for x in read_lines(qpath)}
    failed, released = lines[ids[0]], lines[ids[1]]
    assert failed["attempts"] == 1 and failed["last_error_kind"] == "transient"
    assert failed["first_failed_at"] == failed["last_attempt_at"] == iso_ms(clock())
    assert released["attempts"] == 0 and "claim_token" not in released and "claimed_at" not in released
    # Backoff: the bank is skipped while its head is not due ...
    backend.calls.clear()
    assert q.flush(backend).sent == 0 and backend.calls == []
    # ... unless forced (/hindsight:flush), which still stops at the first failure.
    backend.fail_next = [transient()]
    q.flush(backend, force=True)
    assert [c["operation_id"] for c in backend.calls] == [ids[0]]
    clock.advance(3600)
    assert q.flush(backend).sent == 2


def test_auth_failure_releases_every_bank(make_queue: MakeQueue, backend: FakeBackend, qpath: Path) -> None:
    q = make_queue()
    ids = fill(q, [("bank-a", "1"), ("bank-b", "2"), ("bank-c", "3")])
    backend.fail_next = [auth_error()]
    result = q.flush(backend)
    assert [c["operation_id"] for c in backend.calls] == [ids[0]]
    assert result.error_kinds == {"bank-a": "auth"} and result.sent == 0
    attempts = {x["id"]: x["attempts"] for x in read_lines(qpath)}
    assert attempts == {ids[0]: 1, ids[1]: 0, ids[2]: 0}


def test_banks_are_ensured_once_and_again_after_a_404(
    make_queue: MakeQueue, backend: FakeBackend, clock: FakeClock
) -> None:
    q = make_queue()
    ensured: list[str] = []
    fill(q, [("bank-a", "1"), ("bank-b", "2")])
    q.flush(backend, ensure_bank=ensured.append)
    fill(q, [("bank-a", "3")])
    q.flush(backend, ensure_bank=ensured.append)
    assert ensured == ["bank-a", "bank-b"]
    fill(q, [("bank-a", "4")])
    backend.fail_next = [BackendError("retain", "not_found", "bank not found", 404)]
    result = q.flush(backend, ensure_bank=ensured.append)
    assert result.error_kinds == {"bank-a": "transient"}
    clock.advance(3600)
    q.flush(backend, ensure_bank=ensured.append)
    assert ensured == ["bank-a", "bank-b", "bank-a"]


def test_ensure_failure_is_a_delivery_failure(make_queue: MakeQueue, backend: FakeBackend, qpath: Path) -> None:
    q = make_queue()
    fill(q, [("bank-a", "1")])

    def broken(bank: str) -> None:
        raise BackendError("ensure_bank", "transient", "connection refused")

    result = q.flush(backend, ensure_bank=broken)
    assert result.sent == 0 and backend.calls == []
    assert read_lines(qpath)[0]["attempts"] == 1


def test_backoff_grows_with_jitter_and_caps(
    make_queue: MakeQueue, backend: FakeBackend, qpath: Path, clock: FakeClock
) -> None:
    q = make_queue(retry_base_ms=2000, retry_max_ms=10000, max_attempts=100)
    fill(q, [("bank-a", "1")])
    backend.fail_always = transient()
    delays = []
    for _ in range(6):
        q.flush(backend, force=True)
        line = read_lines(qpath)[0]
        due_at = parse_iso(line["next_attempt_at"])
        assert due_at is not None
        delays.append(due_at - clock())
    expected = [2, 4, 8, 10, 10, 10]
    for got, base in zip(delays, expected, strict=True):
        assert base <= got < base * 1.25 + 0.002


def test_dead_letter_only_after_attempts_and_permanent_or_a_week(
    make_queue: MakeQueue, backend: FakeBackend, qpath: Path, clock: FakeClock
) -> None:
    q = make_queue(max_attempts=3)
    dead_path = Path(str(qpath) + ".dead.jsonl")
    (jid,) = fill(q, [("bank-a", "1")])
    backend.fail_always = transient()
    for _ in range(6):  # many transient failures within a day: nothing is dead-lettered
        assert q.flush(backend, force=True).dead_lettered == 0
        clock.advance(3600)
    assert read_lines(qpath)[0]["attempts"] == 6 and not dead_path.exists()
    clock.advance(7 * 86400)
    result = q.flush(backend, force=True)
    assert result.dead_lettered == 1 and result.dead_letter_ids == [jid] and result.remaining == 0
    (dead,) = read_lines(dead_path)
    assert dead["id"] == jid and dead["last_error"].endswith(DEAD_LETTER_SUFFIX)
    assert dead["dead_lettered_at"] == iso_ms(clock())


def test_permanent_failures_dead_letter_at_max_attempts(
    make_queue: MakeQueue, backend: FakeBackend, qpath: Path, clock: FakeClock
) -> None:
    q = make_queue(max_attempts=2)
    fill(q, [("bank-a", "1")])
    backend.fail_always = permanent("invalid tags", 400)
    assert q.flush(backend, force=True).dead_lettered == 0
    assert q.flush(backend, force=True).dead_lettered == 1
    assert read_lines(qpath) == []
    assert read_lines(Path(str(qpath) + ".dead.jsonl"))[0]["last_error_kind"] == "permanent"


def test_422_on_append_reads_upgrade_hindsight(make_queue: MakeQueue, backend: FakeBackend, qpath: Path) -> None:
    q = make_queue()
    fill(q, [("bank-a", "1")])
    backend.fail_next = [
        BackendError("retain", "permanent", "body.items.0.update_mode: unexpected value 'append'", 422)
    ]
    result = q.flush(backend)
    assert result.errors["bank-a"] == APPEND_UNSUPPORTED
    assert read_lines(qpath)[0]["last_error"] == APPEND_UNSUPPORTED


def test_stored_errors_are_redacted_and_bounded(make_queue: MakeQueue, backend: FakeBackend, qpath: Path) -> None:
    q = make_queue()
    fill(q, [("bank-a", "1")])
    backend.fail_next = [
        RuntimeError("upstream said Bearer abcdefghijklmnop0123 and sk-ant-api03-XYZXYZXYZXYZ " + "x" * 900)
    ]
    result = q.flush(backend)
    stored = read_lines(qpath)[0]
    for text in (stored["last_error"], result.errors["bank-a"]):
        assert "abcdefghijklmnop0123" not in text and "XYZXYZXYZXYZ" not in text
        assert len(text) <= 500
    assert stored["last_error_kind"] == "transient"  # an unknown exception is transient


def test_dead_letters_are_deduplicated_by_id(make_queue: MakeQueue, backend: FakeBackend, qpath: Path) -> None:
    q = make_queue(max_attempts=1)
    dead_path = Path(str(qpath) + ".dead.jsonl")
    (jid,) = fill(q, [("bank-a", "1")])
    # A crash after the dead-letter append but before the rewrite leaves the job in both files.
    line = read_lines(qpath)[0]
    dead_path.write_bytes(dumps_line({**line, "dead_lettered_at": "x"}) + b"\n")
    backend.fail_always = permanent()
    assert q.flush(backend).dead_lettered == 1
    assert [x["id"] for x in read_lines(dead_path)] == [jid]
    assert read_lines(qpath) == []


def test_dead_letter_file_unwritable_fails_before_the_rewrite(
    make_queue: MakeQueue, backend: FakeBackend, qpath: Path
) -> None:
    q = make_queue(max_attempts=1)
    (jid,) = fill(q, [("bank-a", "1")])
    Path(str(qpath) + ".dead.jsonl").mkdir()
    backend.fail_always = permanent()
    with pytest.raises(QueueError, match="dead"):
        q.flush(backend)
    (still,) = read_lines(qpath)
    assert still["id"] == jid and still["attempts"] == 0  # the failure was not committed either


def test_live_claims_block_their_bank_and_expire(
    make_queue: MakeQueue, backend: FakeBackend, qpath: Path, clock: FakeClock
) -> None:
    q = make_queue(claim_ttl_ms=120000)
    ids = fill(q, [("bank-a", "1"), ("bank-a", "2"), ("bank-b", "3")])
    lines = read_lines(qpath)
    lines[0].update(claimed_at=iso_ms(clock() - 10), claim_token="someone-else")
    qpath.write_bytes(b"".join(dumps_line(x) + b"\n" for x in lines))
    result = q.flush(backend)
    assert backend.delivered_ids() == [ids[2]] and result.remaining == 2
    assert read_lines(qpath)[0]["claim_token"] == "someone-else"  # another flusher's claim is left alone
    clock.advance(121)
    assert q.flush(backend).sent == 2
    assert backend.delivered_ids() == [ids[2], ids[0], ids[1]]


def test_enqueue_during_delivery_is_never_lost(make_queue: MakeQueue, backend: FakeBackend, qpath: Path) -> None:
    q = make_queue()
    fill(q, [("bank-a", "1")])
    added: list[str] = []
    backend.on_call = lambda call: added.append(q.enqueue(job("bank-a", f"during-{len(added)}")).job_id)
    result = q.flush(backend, max_jobs=1)
    assert result.sent == 1 and result.remaining == 1
    assert [x["id"] for x in read_lines(qpath)] == added


def test_delivered_but_uncommitted_job_is_resent_with_the_same_operation_id(
    make_queue: MakeQueue, backend: FakeBackend, qpath: Path, clock: FakeClock
) -> None:
    class Crash(BaseException):
        pass

    q = make_queue(claim_ttl_ms=1000)
    (jid,) = fill(q, [("bank-a", "1")])

    def crash_after_send(call: dict[str, Any]) -> None:
        backend.on_call = None
        raise Crash()

    backend.on_call = crash_after_send
    with pytest.raises(Crash):
        q.flush(backend)
    assert read_lines(qpath)[0]["claim_token"]  # the claim survived the "crash"
    assert q.flush(backend).sent == 0  # still claimed
    clock.advance(2)
    assert q.flush(backend).sent == 1
    assert [c["operation_id"] for c in backend.calls] == [jid, jid]


def test_backend_returning_raw_bodies_is_parsed(make_queue: MakeQueue, qpath: Path) -> None:
    class RawBackend(FakeBackend):
        def retain_batch(self, bank_id: str, items: list[dict[str, Any]], **kw: Any) -> Any:
            return {
                "itemsCount": 2,
                "operations": [{"id": "o1"}, "o2", {"operation_id": "o1"}],
                "usage": {"total_tokens": 5},
            }

    class NoneBackend(FakeBackend):
        def retain_batch(self, bank_id: str, items: list[dict[str, Any]], **kw: Any) -> Any:
            return None

    q = make_queue()
    fill(q, [("bank-a", "1")])
    result = q.flush(RawBackend())
    assert result.outcome == {"items_count": 2, "operations": ["o1", "o2"], "tokens": 5}
    fill(q, [("bank-a", "2")])
    empty = q.flush(NoneBackend())
    assert empty.sent == 1 and empty.outcome == {} and empty.delivered[0]["outcome"] == {}


def test_receipts_are_written_when_asked(qpath: Path, clock: FakeClock, backend: FakeBackend) -> None:
    from hindsight_hooks.queue.receipts import read_receipts

    from .conftest import make_cfg

    receipts = qpath.parent / "retain-receipts.json"
    q = RetainQueue(qpath, make_cfg(), clock=clock, receipts_path=receipts)
    q.enqueue(new_job("bank-a", "tool", [item("secret body", doc="d1"), item("other", doc="d2")], True))
    q.flush(backend)
    stored = read_receipts(receipts)
    assert [r["document_id"] for r in stored] == ["d2", "d1"]
    assert "secret body" not in receipts.read_text()


def test_report_and_last_outcome(make_queue: MakeQueue, backend: FakeBackend) -> None:
    q = make_queue()
    fill(q, [("bank-a", "1")])
    assert "last_outcome" not in q.report()
    q.flush(backend)
    (jid,) = backend.delivered_ids()
    assert q.report()["last_outcome"] == {"items_count": 1, "operations": [f"op-{jid}"], "tokens": 7}


def test_markers_survive_merges_end_to_end(make_queue: MakeQueue, backend: FakeBackend) -> None:
    q = make_queue()
    for i in range(5):
        q.enqueue(job("bank-a", str(i)), coalesce=True)
    q.flush(backend)
    assert backend.delivered_markers() == ["0", "1", "2", "3", "4"] and len(backend.calls) == 1
