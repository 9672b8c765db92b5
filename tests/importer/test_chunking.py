"""Curated chunking: whole turns, bounded by turns and bytes, inclusive ranges (docs/import.md "Modes" 4)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hindsight_hooks.importer.chunking import array_size, chunk_turns, json_size, split_turns


def _msg(role: str, text: str) -> dict:
    return {"role": role, "content": text}


def _conversation(turns: int, replies: int = 1, text: str = "x") -> list[tuple[int, dict]]:
    msgs = []
    for t in range(turns):
        msgs.append(_msg("user", f"u{t} {text}"))
        msgs.extend(_msg("assistant", f"a{t}.{r} {text}") for r in range(replies))
    return list(enumerate(msgs))


def test_turns_start_at_user_messages_and_a_leading_turn_is_kept() -> None:
    items = [
        (0, _msg("assistant", "hello")),
        (1, _msg("user", "q1")),
        (2, _msg("assistant", "a1")),
        (3, _msg("user", "q2")),
    ]
    assert [[i for i, _ in t] for t in split_turns(items)] == [[0], [1, 2], [3]]


def test_turn_limit_closes_chunks() -> None:
    items = _conversation(7, replies=2)  # 21 messages, 3 per turn
    chunks = chunk_turns(items, turns_per_document=3, max_document_bytes=10**6)
    assert [(c.index, c.start, c.end, c.turns) for c in chunks] == [(0, 0, 8, 3), (1, 9, 17, 3), (2, 18, 20, 1)]


def test_byte_limit_closes_chunks_before_the_turn_that_would_overflow() -> None:
    items = _conversation(4, replies=1, text="y" * 100)
    one_turn = array_size([json_size(m) for _, m in items[:2]])
    # room for exactly two turns
    two_turns = array_size([json_size(m) for _, m in items[:4]])
    chunks = chunk_turns(items, turns_per_document=12, max_document_bytes=two_turns)
    assert [(c.start, c.end) for c in chunks] == [(0, 3), (4, 7)]
    # one byte less and each chunk holds one turn
    chunks = chunk_turns(items, turns_per_document=12, max_document_bytes=two_turns - 1)
    assert [(c.start, c.end) for c in chunks] == [(0, 1), (2, 3), (4, 5), (6, 7)]
    assert one_turn < two_turns


def test_an_oversized_turn_becomes_its_own_chunk_and_is_not_cut() -> None:
    items = [
        (0, _msg("user", "small")),
        (1, _msg("user", "z" * 5000)),
        (2, _msg("assistant", "ok")),
        (3, _msg("user", "s")),
    ]
    chunks = chunk_turns(items, turns_per_document=12, max_document_bytes=200)
    assert [(c.start, c.end) for c in chunks] == [(0, 0), (1, 2), (3, 3)]


def test_ranges_use_branch_indexes_not_positions() -> None:
    # index 1 was an injected block removed before chunking
    items = [(0, _msg("user", "q")), (2, _msg("assistant", "a")), (3, _msg("user", "q2")), (5, _msg("assistant", "a2"))]
    chunks = chunk_turns(items, turns_per_document=1, max_document_bytes=10**6)
    assert [(c.start, c.end) for c in chunks] == [(0, 2), (3, 5)]


def test_array_size_matches_compact_json() -> None:
    msgs = [
        _msg("user", "héllo ✓"),
        _msg("assistant", "two"),
        {"role": "toolResult", "content": [{"type": "text", "text": "x"}]},
    ]
    compact = json.dumps(msgs, ensure_ascii=False, separators=(",", ":")).encode()
    assert array_size([json_size(m) for m in msgs]) == len(compact)


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError):
        chunk_turns([], turns_per_document=0, max_document_bytes=1)


roles = st.sampled_from(["user", "assistant", "toolResult", "custom"])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(roles, st.text(max_size=60)), max_size=40),
    st.integers(min_value=1, max_value=5),
    st.integers(min_value=20, max_value=600),
)
def test_property_chunks_partition_whole_turns_within_limits(msgs: list, turns: int, max_bytes: int) -> None:
    items = [(i * 2, _msg(r, t)) for i, (r, t) in enumerate(msgs)]  # sparse indexes, as after filtering
    chunks = chunk_turns(items, turns_per_document=turns, max_document_bytes=max_bytes)
    # a partition of the items, in order
    assert [it for c in chunks for it in c.items] == items
    for n, c in enumerate(chunks):
        assert c.index == n
        assert 1 <= c.turns <= turns
        assert (c.start, c.end) == (c.items[0][0], c.items[-1][0])
        if n > 0:
            assert c.messages[0]["role"] == "user"  # chunks start at a turn boundary
        size = array_size([json_size(m) for m in c.messages])
        assert size <= max_bytes or c.turns == 1  # only a single oversized turn may exceed
