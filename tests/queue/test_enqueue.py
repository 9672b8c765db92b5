"""Enqueue (docs/queue.md#enqueue): durable appends, bank_head, back-pressure, coalescing, closing, the cheap index."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from hindsight_hooks.queue import (
    QueueClosedError,
    QueueError,
    QueueFullError,
    RetainQueue,
    new_job,
    read_tolerant,
)
from hindsight_hooks.queue.jobs import InvalidJobError, dumps_line

from .conftest import T0, FakeBackend, FakeClock, item, job, make_cfg, markers_of_items, read_lines, transient

MakeQueue = Callable[..., RetainQueue]


def test_enqueue_appends_one_fsynced_line_and_reports_bank_head(make_queue: MakeQueue, qpath: Path) -> None:
    q = make_queue()
    first = q.enqueue(job("bank-a", "1"))
    second = q.enqueue(job("bank-a", "2"))
    other = q.enqueue(job("bank-b", "3"))
    assert (first.bank_head, second.bank_head, other.bank_head) == (True, False, True)
    assert not first.merged
    lines = read_lines(qpath)
    assert [x["id"] for x in lines] == [first.job_id, second.job_id, other.job_id]
    assert q.count_active() == 3


def test_state_folder_and_file_are_private(make_queue: MakeQueue, qpath: Path) -> None:
    make_queue().enqueue(job())
    assert stat.S_IMODE(os.stat(qpath).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(qpath.parent).st_mode) == 0o700


def test_a_torn_fragment_is_never_glued_to_the_new_job(make_queue: MakeQueue, qpath: Path) -> None:
    q = make_queue()
    q.enqueue(job(marker="before"))
    with open(qpath, "ab") as fh:
        fh.write(b'{"id":"torn-by-a-crash","bank_id":"ba')
    acked = q.enqueue(job(marker="after"))
    snap = read_tolerant(qpath)
    assert [j["id"] for j in snap.jobs][-1] == acked.job_id
    assert snap.malformed_lines == [b'{"id":"torn-by-a-crash","bank_id":"ba']


def test_queue_full_is_back_pressure_and_keeps_the_file(make_queue: MakeQueue, qpath: Path) -> None:
    probe = len(dumps_line(job())) + 1
    q = make_queue(max_active_bytes=probe * 2 + 10)
    q.enqueue(job(marker="1"))
    q.enqueue(job(marker="2"))
    before = qpath.read_bytes()
    with pytest.raises(QueueFullError, match="full"):
        q.enqueue(job(marker="3"))
    assert qpath.read_bytes() == before


def test_invalid_or_duplicate_jobs_are_refused(make_queue: MakeQueue) -> None:
    q = make_queue()
    j = job()
    q.enqueue(j)
    with pytest.raises(InvalidJobError, match="already queued"):
        q.enqueue(j)
    with pytest.raises(InvalidJobError):
        q.enqueue({**job(), "bank_id": ""})
    assert q.count_active() == 1


def test_closed_queue_refuses_writes_but_still_flushes(make_queue: MakeQueue, backend: FakeBackend) -> None:
    q = make_queue()
    q.enqueue(job())
    q.close()
    with pytest.raises(QueueClosedError, match=r"^Hindsight retain queue is closed\.$"):
        q.enqueue(job())
    assert q.flush(backend).sent == 1


def test_same_document_merge_concatenates_arrays(make_queue: MakeQueue, qpath: Path) -> None:
    q = make_queue()
    first = q.enqueue(job(marker="a", tags=["t1", "t2"]), coalesce=True)
    incoming = new_job(
        "bank-a",
        "auto",
        [
            item(
                "b",
                tags=["t2", "t3"],
                context="newer context",
                metadata={"turn": "2"},
                timestamp="2024-01-01T00:00:00Z",
            )
        ],
        True,
    )
    merged = q.enqueue(incoming, coalesce=True)
    assert merged.merged and merged.merge_kind == "document"
    assert merged.job_id == first.job_id and merged.bank_head
    lines = read_lines(qpath)
    assert len(lines) == 1
    only = lines[0]["items"]
    assert len(only) == 1
    assert orjson.loads(only[0]["content"]) == ["a", "b"]
    assert only[0]["tags"] == ["t1", "t2", "t3"]
    assert only[0]["context"] == "newer context"
    assert only[0]["metadata"] == {"turn": "2"}
    assert only[0]["timestamp"] == "2024-01-01T00:00:00Z"


def test_batch_merge_respects_item_and_byte_limits(make_queue: MakeQueue, qpath: Path) -> None:
    q = make_queue(batch_max_items=3)
    ids = [q.enqueue(job(marker=str(i), doc=f"doc-{i}"), coalesce=True) for i in range(5)]
    assert [r.merged for r in ids] == [False, True, True, False, True]
    lines = read_lines(qpath)
    assert [len(x["items"]) for x in lines] == [3, 2]
    assert ids[2].flush_due  # the tail reached batch_max_items
    assert not ids[4].flush_due

    big = make_queue(path=qpath.with_name("big.jsonl"), batch_max_bytes=len(dumps_line(job())) + 50)
    a = big.enqueue(job(marker="x", doc="d1"), coalesce=True)
    b = big.enqueue(job(marker="y", doc="d2"), coalesce=True)
    assert not b.merged and a.job_id != b.job_id


def test_no_merge_into_other_bank_attempted_claimed_or_other_source(
    make_queue: MakeQueue, qpath: Path, backend: FakeBackend, clock: FakeClock
) -> None:
    q = make_queue()
    q.enqueue(job("bank-a", "1"), coalesce=True)
    assert not q.enqueue(job("bank-b", "2"), coalesce=True).merged
    assert not q.enqueue(job("bank-b", "3", source="tool"), coalesce=True).merged
    # An attempted tail is sealed: its id may already be an operation_id on the server.
    sealed = make_queue(path=qpath.with_name("sealed.jsonl"))
    sealed.enqueue(job("bank-c", "5"), coalesce=True)
    backend.fail_next = [transient()]
    sealed.flush(backend)
    assert read_lines(sealed.path)[-1]["attempts"] == 1
    clock.advance(3600)  # out of backoff, so only the attempts rule can refuse the merge
    assert not sealed.enqueue(job("bank-c", "6"), coalesce=True).merged
    assert [len(x["items"]) for x in read_lines(sealed.path)] == [1, 1]


def test_claimed_tail_is_sealed(make_queue: MakeQueue, qpath: Path, backend: FakeBackend) -> None:
    q = make_queue()
    q.enqueue(job("bank-a", "1"), coalesce=True)
    seen: list[bool] = []

    def during_delivery(call: dict[str, object]) -> None:
        seen.append(q.enqueue(job("bank-a", "2"), coalesce=True).merged)

    backend.on_call = during_delivery
    result = q.flush(backend)
    assert seen == [False]
    assert result.sent == 1 and result.remaining == 1
    assert markers_of_items(read_lines(qpath)[0]["items"]) == ["2"]


def test_backoff_bank_coalesces_even_in_immediate_mode(
    make_queue: MakeQueue, qpath: Path, backend: FakeBackend, clock: FakeClock
) -> None:
    q = make_queue()
    q.enqueue(job("bank-a", "1"))
    backend.fail_next = [transient()]
    q.flush(backend)
    assert q.bank_in_backoff("bank-a") and not q.is_due_head("bank-a")
    second = q.enqueue(job("bank-a", "2"))
    third = q.enqueue(job("bank-a", "3"))
    assert not second.merged and third.merged and third.job_id == second.job_id
    assert not second.bank_head
    clock.advance(3600)
    assert not q.bank_in_backoff("bank-a") and q.is_due_head("bank-a")
    assert not q.bank_in_backoff("bank-zzz") and not q.is_due_head("bank-zzz")


def test_index_follows_other_processes_appends_and_rewrites(
    qpath: Path, clock: FakeClock, backend: FakeBackend
) -> None:
    a = RetainQueue(qpath, make_cfg(), clock=clock)
    b = RetainQueue(qpath, make_cfg(), clock=clock)
    assert a.enqueue(job("bank-a", "1")).bank_head
    assert not b.enqueue(job("bank-a", "2")).bank_head  # b saw a's append
    assert a.count_active() == 2
    b.flush(backend)  # rewrites the file (new inode) under a's feet
    assert a.count_active() == 0
    assert a.enqueue(job("bank-a", "3")).bank_head
    # A rewrite that keeps the size but changes the content is caught by the signature.
    data = qpath.read_bytes()
    qpath.write_bytes(data.replace(b'"bank-a"', b'"bank-z"'))
    assert a.enqueue(job("bank-z", "4")).bank_head is False


def test_coalesced_flush_due(make_queue: MakeQueue, clock: FakeClock) -> None:
    q = make_queue(batch_max_items=2, coalesce_max_age_ms=60000)
    assert not q.coalesced_flush_due()
    r = q.enqueue(job(marker="1", doc="d1", now=clock()), coalesce=True)
    assert not r.flush_due and not q.coalesced_flush_due()
    clock.advance(61)
    assert q.coalesced_flush_due("bank-a") and not q.coalesced_flush_due("bank-other")
    q2 = make_queue(path=Path(str(q.path) + "2"), batch_max_items=2)
    q2.enqueue(job(marker="1", doc="d1", now=clock()), coalesce=True)
    q2.enqueue(job(marker="2", doc="d2", now=clock()), coalesce=True)
    assert q2.coalesced_flush_due()


def test_enqueue_into_a_directory_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.mkdir()
    q = RetainQueue(path, make_cfg(), clock=FakeClock())
    with pytest.raises(QueueError, match="retain queue") as info:
        q.enqueue(job())
    assert "m" not in str(info.value).split(":")[-1]  # no content in the message


def test_created_at_follows_the_injected_clock(qpath: Path) -> None:
    clock = FakeClock(T0 + 86400)
    q = RetainQueue(qpath, make_cfg(), clock=clock)
    j = new_job("b", "auto", [item()], True, now=clock())
    q.enqueue(j)
    assert read_lines(qpath)[0]["created_at"] == "2023-11-15T22:13:20.000Z"


def test_merge_never_trusts_a_stale_index(make_queue: MakeQueue, qpath: Path) -> None:
    q = make_queue()
    first = q.enqueue(job(marker="aaaa"), coalesce=True)
    # Change the tail in place without changing the inode, the size or the line's first bytes:
    # the cheap index cannot notice, so the merge must check the file's own tail first.
    data = qpath.read_bytes()
    qpath.write_bytes(data.replace(b"aaaa", b"bbbb"))
    second = q.enqueue(job(marker="cccc"), coalesce=True)
    assert not second.merged and second.job_id != first.job_id
    lines = read_lines(qpath)
    assert [markers_of_items(x["items"]) for x in lines] == [["bbbb"], ["cccc"]]
    third = q.enqueue(job(marker="dddd"), coalesce=True)  # the index was rebuilt: merging resumes
    assert third.merged and third.job_id == second.job_id
