"""Retain cursor v3 (docs/retain.md#cursor), the pure parts: fingerprints, chains, filter_new, through, advance."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hindsight_hooks.retain.cursor import (
    TAIL_WINDOW,
    CursorState,
    FingerprintMemo,
    LegacyCursor,
    advance,
    build_cursor,
    canonical_json,
    chain,
    chain_extend,
    filter_new,
    filter_new_messages,
    fingerprint,
    message_id,
    retained_through_index,
)

T0 = 1_700_000_000_000


def msg(i: int, *, ids: bool = True, text: str | None = None, role: str | None = None, **extra: Any) -> dict[str, Any]:
    m: dict[str, Any] = {
        "role": role or ("user" if i % 2 == 0 else "assistant"),
        "content": text if text is not None else f"message {i}",
        "timestamp": T0 + i,
    }
    if ids:
        m["id"] = f"m{i}"
    m.update(extra)
    return m


def transcript(n: int, start: int = 0, **kw: Any) -> list[dict[str, Any]]:
    return [msg(i, **kw) for i in range(start, start + n)]


def cursor_over(msgs: list[dict[str, Any]], index: int | None = None) -> CursorState:
    return build_cursor(msgs, len(msgs) - 1 if index is None else index)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


# ----------------------------------------------------------------------------- fingerprint, ids, chains


def test_fingerprint_is_sha256_of_the_canonical_json() -> None:
    m = {
        "stopReason": "stop",
        "usage": {"input": 3},
        "content": [{"type": "text", "text": "héllo ✓"}],
        "role": "assistant",
        "model": "m",
        "timestamp": T0,
        "id": "a1",
        "parentId": "p",
        "isError": None,
    }
    expected = json.dumps(
        {"id": "a1", "role": "assistant", "timestamp": T0, "content": m["content"], "model": "m", "stopReason": "stop"},
        separators=(",", ":"),
        ensure_ascii=False,
    )
    assert fingerprint(m) == sha(expected)


def test_fingerprint_ignores_other_fields_and_key_order() -> None:
    a = {"role": "user", "content": "x", "timestamp": T0, "id": "u"}
    b = {"id": "u", "timestamp": T0, "content": "x", "role": "user", "usage": 1, "toolName": None}
    assert fingerprint(a) == fingerprint(b)
    assert fingerprint(a) != fingerprint({**a, "content": "y"})
    assert fingerprint(a) != fingerprint({**a, "id": "v"})
    assert fingerprint(a) != fingerprint({**a, "isError": False})


def test_fingerprint_never_fails_on_odd_values() -> None:
    odd = {"role": "user", "content": ["\ud800", 2**70, {1: "int key"}, b"bytes", {1, 2}, float("nan")], "id": 3}
    assert fingerprint(odd) == fingerprint(dict(odd))
    assert len(fingerprint("not a message")) == 64  # type: ignore[arg-type]


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(_json)
def test_canonical_json_matches_json_dumps_without_floats(value: Any) -> None:
    expected = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass")
    assert canonical_json(value) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("abc", "abc"), (7, "7"), (-1, "-1"), (True, ""), (False, ""), (1.5, ""), (None, ""), (["x"], "")],
)
def test_message_id(raw: Any, expected: str) -> None:
    assert message_id({"id": raw}) == expected
    assert message_id({}) == ""


def test_chain_definition() -> None:
    assert chain([], 5) == ""
    assert chain(["a", "b"], -1) == ""
    assert chain(["a"], 0) == sha("a")
    assert chain(["a", "b", "c"], 1) == sha(sha("a") + "b")
    assert chain(["a", "b"], 9) == chain(["a", "b"], 1)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=3), max_size=8), st.lists(st.text(max_size=3), max_size=8))
def test_chain_extend_continues_a_chain(a: list[str], b: list[str]) -> None:
    assert chain_extend(chain(a, len(a) - 1), b) == chain(a + b, len(a + b) - 1)


# ----------------------------------------------------------------------------- build_cursor / advance


def test_cursor_tail_covers_the_last_200_messages() -> None:
    msgs = transcript(450)
    c = cursor_over(msgs, 420)
    assert c.index == 420 and c.tail_start == 420 - TAIL_WINDOW + 1 == 221
    assert c.message_ids == tuple(f"m{i}" for i in range(221, 421))
    assert c.fingerprints == tuple(fingerprint(m) for m in msgs[221:421])
    assert c.chain_hash == chain([fingerprint(m) for m in msgs], 420)
    assert c.id_chain_hash == chain([f"m{i}" for i in range(450)], 420)
    small = cursor_over(msgs[:5])
    assert small.tail_start == 0 and len(small.fingerprints) == 5


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 450), min_size=1, max_size=5))
def test_extending_a_cursor_equals_rebuilding_it(steps: list[int]) -> None:
    msgs: list[dict[str, Any]] = []
    base: CursorState | None = None
    for k in steps:
        msgs = msgs + transcript(k, start=len(msgs))
        extended = build_cursor(msgs, len(msgs) - 1, base=base)
        assert extended == build_cursor(msgs, len(msgs) - 1)
        base = extended


def test_advance_no_op_outside_the_transcript() -> None:
    msgs = transcript(3)
    assert advance(None, msgs, -1) is None
    assert advance(None, msgs, 3) is None
    assert advance(None, [], 0) is None
    first = advance(None, msgs, 1, updated_at="2024-01-01T00:00:00.000Z")
    assert first is not None and first.index == 1 and first.updated_at == "2024-01-01T00:00:00.000Z"


def test_advance_is_monotonic_and_clamped() -> None:
    msgs = transcript(10)
    existing = cursor_over(msgs)
    edited = [dict(m) for m in msgs]
    edited[3]["content"] = "edited"
    moved = advance(existing, edited, 3)
    assert moved is not None and moved.index == 9  # an edit never moves the cursor back
    assert moved.fingerprints[3] == fingerprint(edited[3])
    shorter = transcript(6)
    clamped = advance(existing, shorter, 5)
    assert clamped is not None and clamped.index == 5  # a shorter branch clamps it
    assert clamped == cursor_over(shorter)


def test_advance_replaces_a_legacy_entry() -> None:
    msgs = transcript(4)
    new = advance(LegacyCursor((fingerprint(msgs[0]),)), msgs, 2)
    assert new == cursor_over(msgs, 2)


# ----------------------------------------------------------------------------- filter_new: the spec's cases


def test_no_state_means_everything() -> None:
    assert filter_new(transcript(3), None) == [0, 1, 2]
    assert filter_new([], cursor_over(transcript(3))) == []


def test_fast_path_returns_what_follows_the_index() -> None:
    msgs = transcript(15)
    assert filter_new(msgs, cursor_over(msgs, 9)) == [10, 11, 12, 13, 14]
    assert filter_new(msgs, cursor_over(msgs)) == []
    assert filter_new_messages(msgs, cursor_over(msgs, 12)) == msgs[13:]


def test_fast_path_cost_follows_the_delta() -> None:
    """Only the ≤200-message tail is hashed, not the 2,495-message prefix (ADR-011)."""
    msgs = transcript(2500)
    state = cursor_over(msgs, 2494)
    memo = FingerprintMemo()
    idx = filter_new(msgs, state, memo=memo)
    assert idx == list(range(2495, 2500))
    assert len(memo) == TAIL_WINDOW
    delta = [msgs[i] for i in idx]
    through = retained_through_index(msgs, delta, memo=memo)
    new = advance(state, msgs, through, memo=memo)
    assert new == cursor_over(msgs)
    assert len(memo) == TAIL_WINDOW + len(delta)  # each message hashed at most once per call


def test_edit_in_the_tail_returns_only_the_edited_message() -> None:
    msgs = transcript(20)
    state = cursor_over(msgs, 14)
    edited = [dict(m) for m in msgs]
    edited[7]["content"] = "rewritten"
    assert filter_new(edited, state) == [7, 15, 16, 17, 18, 19]
    assert filter_new(edited[:15], state) == [7]


def test_edit_without_ids_is_still_only_that_message() -> None:
    msgs = transcript(10, ids=False)
    state = cursor_over(msgs)
    edited = [dict(m) for m in msgs]
    edited[4]["content"] = "rewritten"
    assert filter_new(edited, state) == [4]


def test_edit_before_the_tail_is_not_seen() -> None:
    """Spec-defined blind spot: the prefix before the tail is only covered by the chain."""
    msgs = transcript(300)
    state = cursor_over(msgs, 289)
    edited = [dict(m) for m in msgs]
    edited[10]["content"] = "rewritten"
    assert filter_new(edited, state) == list(range(290, 300))


def test_branch_in_the_tail_returns_everything_after_the_branch_point() -> None:
    msgs = transcript(20)
    state = cursor_over(msgs)
    branch = msgs[:12] + transcript(5, start=100)
    assert filter_new(branch, state) == [12, 13, 14, 15, 16]
    longer = msgs[:12] + transcript(30, start=100)
    assert filter_new(longer, state) == list(range(12, 42))


def test_branch_marks_everything_after_even_matching_ids() -> None:
    """After an id mismatch, the spec includes every later message (branched)."""
    msgs = transcript(10)
    state = cursor_over(msgs)
    swapped = [*msgs[:4], msg(50), *msgs[5:]]
    assert filter_new(swapped, state) == [4, 5, 6, 7, 8, 9]


def test_shorter_branch_with_nothing_new() -> None:
    msgs = transcript(30)
    state = cursor_over(msgs)
    assert filter_new(msgs[:18], state) == []
    clamped = advance(state, msgs[:18], 17)
    assert clamped is not None and clamped.index == 17
    assert filter_new([*msgs[:18], msg(200)], clamped) == [18]


def test_identical_content_under_different_ids() -> None:
    same = [{"role": "user", "content": "ok", "timestamp": T0, "id": f"x{i}"} for i in range(6)]
    state = cursor_over(same, 2)
    assert filter_new(same, state) == [3, 4, 5]
    assert retained_through_index(same, same[3:5]) == 4
    assert retained_through_index(same, [same[1]]) == 1


# ----------------------------------------------------------------------------- legacy


def test_legacy_scans_from_the_end() -> None:
    msgs = transcript(15)
    legacy = LegacyCursor(tuple(fingerprint(m) for m in msgs[:10]))
    assert filter_new(msgs, legacy) == [10, 11, 12, 13, 14]
    only_old = LegacyCursor((fingerprint(msgs[3]),))
    assert filter_new(msgs, only_old) == list(range(4, 15))
    unknown = LegacyCursor(("0" * 64,))
    assert filter_new(msgs, unknown) == list(range(15))


# ----------------------------------------------------------------------------- beyond the spec: windows (ADR-011)


def test_suffix_windows_dedupe() -> None:
    full = transcript(60)
    state = cursor_over(full[:50])
    assert filter_new(full[30:], state) == list(range(20, 30))  # the window's new part only
    assert filter_new(full[50:], state) == list(range(10))  # a window holding only new messages
    assert filter_new(full[45:55], state) == [5, 6, 7, 8, 9]


def test_window_cursor_then_full_transcript() -> None:
    full = transcript(400)
    window_state = cursor_over(full[250:310])  # the last call passed only a window
    assert filter_new(full[:320], window_state) == list(range(310, 320))


def test_long_run_then_per_run_transcripts() -> None:
    """A host that passes only the current run: a >200-message run must not hide the next run."""
    run1 = transcript(250)
    state = cursor_over(run1)
    run2 = transcript(3, start=1000)
    assert filter_new(run2, state) == [0, 1, 2]
    no_ids = cursor_over(transcript(250, ids=False))
    assert filter_new(transcript(3, start=1000, ids=False), no_ids) == [0, 1, 2]


def test_deep_branch_loses_nothing() -> None:
    """A branch point before the tail: no overlap is visible, so everything is sent again."""
    msgs = transcript(300)
    state = cursor_over(msgs)
    branch = msgs[:40] + transcript(20, start=1000)
    assert filter_new(branch, state) == list(range(60))
    long_branch = msgs[:40] + transcript(400, start=1000)
    assert filter_new(long_branch, state) == list(range(440))


def test_window_with_a_new_message_in_front_is_not_a_branch() -> None:
    """E.g. compaction: a summary, then the kept recent messages, then new ones."""
    full = transcript(100)
    state = cursor_over(full)
    summary = {"role": "compactionSummary", "summary": "earlier work", "timestamp": T0 + 5000, "id": "sum"}
    compacted = [summary, *full[70:], *transcript(3, start=100)]
    assert filter_new(compacted, state) == [0, 31, 32, 33]


def test_window_with_an_edit() -> None:
    full = transcript(100)
    state = cursor_over(full)
    window = [dict(m) for m in full[60:]]
    window[5]["content"] = "changed"
    assert filter_new([*window, msg(100)], state) == [5, 40]


# ----------------------------------------------------------------------------- retained_through_index


def test_through_index_basics() -> None:
    msgs = transcript(5)
    assert retained_through_index(msgs, []) == -1
    assert retained_through_index(msgs, [msg(99)]) == -1
    assert retained_through_index(msgs, msgs[2:4]) == 3
    # A copy (not the same object) is found by id and fingerprint.
    assert retained_through_index(msgs, [dict(msgs[4])]) == 4


def test_through_index_is_the_first_match() -> None:
    dup = msg(1)
    msgs = [msg(0), dup, msg(2), dict(dup)]
    assert retained_through_index(msgs, [msgs[3]]) == 1


def test_through_index_distinguishes_int_and_str_ids() -> None:
    as_int = {"role": "user", "content": "x", "timestamp": T0, "id": 5}
    as_str = {**as_int, "id": "5"}
    assert message_id(as_int) == message_id(as_str) == "5"
    assert retained_through_index([as_int, as_str], [as_str]) == 1
    assert retained_through_index([as_int, as_str], [as_int]) == 0


def test_through_index_without_ids_or_with_odd_values() -> None:
    msgs = transcript(6, ids=False)
    assert retained_through_index(msgs, [msgs[4]]) == 4
    odd = [{"role": "user", "content": "a", "timestamp": 1.5}, {"role": "user", "content": "b", "timestamp": 1.5}]
    assert retained_through_index(odd, [dict(odd[1])]) == 1
    nan = [{"role": "user", "content": "a", "id": float("nan")}]
    assert retained_through_index(nan, nan) == 0
    mixed: list[Any] = ["not a message", msg(1)]
    assert retained_through_index(mixed, [msg(1)]) == 1


# ----------------------------------------------------------------------------- parity with the literal spec


def spec_filter_new(msgs: list[dict[str, Any]], c: CursorState) -> list[int]:
    """docs/retain.md#cursor filter_new transcribed literally: full chain check, then the slow path."""
    n = len(msgs)
    fps = [fingerprint(m) for m in msgs]
    if c.index < n and chain(fps, c.index) == c.chain_hash:
        return list(range(c.index + 1, n))
    out: list[int] = []
    branched = False
    for i in range(n):
        if i > c.index:
            out.append(i)
        elif i < c.tail_start:
            if branched:
                out.append(i)
        elif branched:
            out.append(i)
        elif i - c.tail_start >= len(c.message_ids) or message_id(msgs[i]) != c.message_ids[i - c.tail_start]:
            branched = True
            out.append(i)
        elif fps[i] != c.fingerprints[i - c.tail_start]:
            out.append(i)
    return out


_op = st.one_of(
    st.tuples(st.just("edit"), st.floats(0, 1)),
    st.tuples(st.just("branch"), st.floats(0, 1), st.integers(0, 30)),
    st.tuples(st.just("append"), st.integers(1, 30)),
)


@settings(max_examples=300, deadline=None)
@given(
    n=st.integers(1, 420),
    at=st.floats(0, 1),
    ids=st.booleans(),
    ops=st.lists(_op, max_size=4),
)
def test_same_verdict_as_the_literal_spec_on_the_spec_domain(
    n: int, at: float, ids: bool, ops: list[tuple[Any, ...]]
) -> None:
    """Whenever the transcript still shares a message with the tail at the tail's own
    positions (the spec's assumption), filter_new returns exactly what docs/retain.md#cursor returns — while
    hashing only the tail instead of the whole prefix for the fast path."""
    base = transcript(n, ids=ids)
    state = cursor_over(base, int(at * (n - 1)))
    msgs = [dict(m) for m in base]
    fresh = iter(range(10_000, 20_000))
    for op in ops:
        if op[0] == "edit" and msgs:
            p = int(op[1] * (len(msgs) - 1))
            msgs[p] = {**msgs[p], "content": f"edited {next(fresh)}"}
        elif op[0] == "branch":
            b = state.tail_start + int(op[1] * (len(msgs) - state.tail_start))
            msgs = msgs[:b] + [msg(next(fresh), ids=ids) for _ in range(op[2])]
        elif op[0] == "append":
            msgs += [msg(next(fresh), ids=ids) for _ in range(op[1])]
    lo, hi = state.tail_start, min(state.index, len(msgs) - 1)
    exact = any(fingerprint(msgs[i]) == state.fingerprints[i - lo] for i in range(lo, hi + 1))
    same_id = ids and any(message_id(msgs[i]) == state.message_ids[i - lo] for i in range(lo, hi + 1))
    if exact or same_id:
        assert filter_new(msgs, state) == spec_filter_new(msgs, state)
    else:
        # Outside the spec's assumption the spec could lose messages; we send them all.
        assert filter_new(msgs, state) == list(range(len(msgs)))
