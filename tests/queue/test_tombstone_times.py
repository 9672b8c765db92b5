"""The tombstone's time rule (ADR 173): kept out only when said or queued at or before the forget.

Real ``tombstones.json`` files in ``tmp_path``; items in the wire shape a flush delivers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hindsight_hooks.queue.tombstones import (
    Tombstone,
    add_tombstones,
    delivery_filter,
    matcher_for,
    read_tombstones,
    tombstone_path,
)

FORGOT = "2025-05-01T12:00:00.500Z"
BANK = "b"


def item(content: str = "a fact", timestamp: str | None = None, session: str = "s1") -> dict[str, Any]:
    out: dict[str, Any] = {
        "content": content,
        "context": "",
        "document_id": "d1",
        "update_mode": "append",
        "tags": [f"session:{session}"],
        "metadata": {"session_id": session},
    }
    if timestamp is not None:
        out["timestamp"] = timestamp
    return out


def kept_out(stone: Tombstone, it: dict[str, Any], queued_at: str | None = None) -> bool:
    return matcher_for([stone], BANK).keeps_out(it, queued_at) is not None


def test_times_compare_as_instants_to_the_millisecond_whatever_their_form() -> None:
    stone = Tombstone(BANK, "session", "s1", FORGOT)
    assert kept_out(stone, item(timestamp="2025-05-01T12:00:00.500Z"))  # the same millisecond: out
    assert kept_out(stone, item(timestamp="2025-05-01T12:00:00.500999Z"))  # within it: out
    assert kept_out(stone, item(timestamp="2025-05-01T14:00:00.400+02:00"))  # an offset, earlier
    assert not kept_out(stone, item(timestamp="2025-05-01T14:00:00.501+02:00"))  # an offset, later
    assert not kept_out(stone, item(timestamp="2025-05-01T12:00:01"))  # naive = UTC, later
    assert not kept_out(stone, item(timestamp="2025-05-01T12:00:00.501Z", session="s2"))  # other session
    assert not kept_out(stone, item(timestamp="2025-05-01T12:00:00.501Z"))


def test_undated_items_and_stones_stay_out_as_before() -> None:
    assert kept_out(Tombstone(BANK, "session", "s1", FORGOT), item(timestamp=None))
    assert kept_out(Tombstone(BANK, "session", "s1", FORGOT), item(timestamp="unset"))
    assert kept_out(Tombstone(BANK, "session", "s1", ""), item(timestamp="2999-01-01T00:00:00Z"))


def test_the_job_time_and_the_transcript_inside_count_as_the_earliest() -> None:
    stone = Tombstone(BANK, "session", "s1", FORGOT)
    later = "2025-05-01T13:00:00.000Z"
    assert kept_out(stone, item(timestamp=later), queued_at="2025-05-01T11:59:59.000Z")  # queued before
    assert not kept_out(stone, item(timestamp=later), queued_at=later)
    replay = json.dumps([{"role": "user", "timestamp": "2024-01-01T00:00:00.000Z", "content": "old"}])
    assert kept_out(stone, item(replay, timestamp=later), queued_at=later)  # stamped now, said then
    fresh = json.dumps([{"role": "user", "timestamp": later, "content": "new"}])
    assert not kept_out(stone, item(fresh, timestamp=later), queued_at=later)


def test_a_second_forget_moves_the_cutoff_and_the_filter_names_it(tmp_path: Path) -> None:
    path = tombstone_path(tmp_path / "retain-queue.jsonl")
    assert add_tombstones(path, [Tombstone(BANK, "session", "s1", FORGOT)]) == 1
    assert add_tombstones(path, [Tombstone(BANK, "session", "s1", "2025-05-01T11:00:00.000Z")]) == 0
    assert [t.created_at for t in read_tombstones(path)] == [FORGOT]  # never moved back
    second = "2025-06-01T08:00:00.000Z"
    assert add_tombstones(path, [Tombstone(BANK, "session", "s1", second)]) == 0
    assert [t.created_at for t in read_tombstones(path)] == [second]
    keep = delivery_filter(tmp_path / "retain-queue.jsonl")
    assert keep is not None
    between = item("between the forgets", timestamp="2025-05-15T00:00:00.000Z")
    after = item("after both", timestamp="2025-06-01T08:00:00.001Z")
    sieved = keep(BANK, [between, after], "2025-06-02T00:00:00.000Z")
    assert sieved.kept == [after] and sieved.forgotten == 1 and sieved.forgotten_at == second
    assert keep("other-bank", [between], None).kept == [between]
