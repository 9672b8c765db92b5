"""A question is shown with the answer it got (ADR 219), on a real SQLite store."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hindsight_hooks.backends.base import InContext, RecallRequest
from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.backends.local_answers import (
    ANSWER_MAX_CHARS,
    LATER_MAX_GAP,
    answer_among,
    answers,
    asks,
    decides_later,
    with_their_answers,
)
from hindsight_hooks.backends.local_rank import Candidate
from hindsight_hooks.backends.semantic import StaticEmbedder
from tests.backends.test_local_support import item, make, with_vectors_in_memory

ASKED_ON = "2026-11-29T12:00:00Z"


@functools.cache
def _embedder() -> StaticEmbedder:
    """One model for the module: loading it is the slow part."""
    return StaticEmbedder()


def sessions(backend: LocalBackend, *talks: list[tuple[str, str]]) -> LocalBackend:
    """Each talk retained as a session of its own, its messages in order, as auto-retain stores them."""
    for n, talk in enumerate(talks):
        when = f"2026-{n % 9 + 1:02d}-0{n % 7 + 1}T10:00:00Z"
        said = json.dumps([{"role": role, "content": text, "timestamp": when} for role, text in talk])
        backend.retain_batch("b", [item(said, f"s{n}", source="auto", timestamp=when)], operation_id=f"o{n}")
    return backend


def recall(backend: LocalBackend, question: str, **kw: object) -> list[str]:
    request = RecallRequest(query=question, query_timestamp=ASKED_ON, **kw)  # type: ignore[arg-type]
    return [hit.text for hit in backend.recall("b", request).hits]


LINT = [
    ("user", "Can we lint faster?"),
    ("assistant", "We could replace eslint with biome. Shall I switch?"),
    ("user", "no, keep eslint for now"),
    ("assistant", "OK, eslint stays."),
]
RUNNER = [
    ("user", "The unit tests take four minutes with jest, it's painful."),
    ("assistant", "I'd suggest moving the test runner to vitest: it reuses the Vite config. Want me to migrate?"),
    ("user", "yes, go ahead"),
    ("assistant", "Done: vitest.config.ts added, jest removed from package.json."),
]
PORT = [
    ("user", "which port does the dev server listen on?"),
    ("assistant", "5173."),
]


@pytest.mark.parametrize(
    ("question", "reply"),
    [
        ("assistant: Shall I switch?", "user: yes, go ahead"),
        ("assistant: We could replace eslint with biome. Shall I switch?", "user: no, keep eslint for now"),
        ("assistant: Want me to migrate? 🙂", "user: sounds good, do that"),
        ('assistant: Should I use "pnpm"?"', "user: Yes."),
        ("user: which port does the dev server listen on?", "assistant: 5173."),
        ("user: 東京サーバーはどこ？", "assistant: 東京です"),
        ("user: Who owns the billing job?", "assistant: Dara."),
    ],
)
def test_a_short_reply_of_the_other_side_answers_a_question(question: str, reply: str) -> None:
    assert asks(question)
    assert answers(question, reply)


@pytest.mark.parametrize(
    ("question", "reply"),
    [
        # the question is not a question: it asks in the middle, or not at all
        ("assistant: Shall I switch? I went ahead anyway.", "user: fine"),
        ("assistant: Switched to biome.", "user: great"),
        # the same side speaks on, or neither side does (a tool's memory)
        ("assistant: Shall I switch?", "assistant: I'll switch."),
        ("Shall I switch?", "user: yes"),
        # a reply with words of its own is a statement its own words find
        ("user: Who owns the billing job?", "assistant: That's Dara; they took it over after the reorg."),
        ("assistant: Shall I switch?", "user: " + "yes " * (ANSWER_MAX_CHARS // 4 + 1)),
    ],
)
def test_anything_else_is_no_answer_to_pair(question: str, reply: str) -> None:
    assert not answers(question, reply)


@pytest.mark.parametrize("semantic", [False, True], ids=["lexical", "hybrid"])
def test_a_proposal_is_shown_with_the_users_answer(tmp_path: Path, semantic: bool) -> None:
    """Before: "what did we decide about biome?" showed "Shall I switch?" and never "no, keep eslint
    for now", which says neither word of the question."""
    backend = sessions(make(tmp_path, semantic=_embedder()) if semantic else make(tmp_path), LINT, RUNNER, PORT)
    if semantic:
        with_vectors_in_memory(backend, "biome")
    hits = recall(backend, "what did we decide about biome?", limit=4)
    assert not semantic or "dense" in backend.last_search_mode
    proposal = hits.index("assistant: We could replace eslint with biome. Shall I switch?")
    assert hits[proposal + 1] == "user: no, keep eslint for now"
    hits = recall(backend, "should we use vitest?", limit=4)
    proposal = next(n for n, hit in enumerate(hits) if "vitest: it reuses" in hit)
    assert hits[proposal + 1] == "user: yes, go ahead"
    assert len(hits) == len(set(hits))


def test_an_answer_found_on_its_own_is_shown_once_after_its_question(tmp_path: Path) -> None:
    backend = sessions(make(tmp_path), LINT)
    hits = recall(backend, "eslint biome", limit=5)
    assert hits.count("user: no, keep eslint for now") == 1
    assert hits.index("user: no, keep eslint for now") == hits.index(f"assistant: {LINT[1][1]}") + 1


def test_a_reply_that_asks_brings_its_own_answer(tmp_path: Path) -> None:
    talk = [
        ("assistant", "Shall I delete the merged feature branches?"),
        ("user", "which ones?"),
        ("assistant", "The twelve merged ones?"),
        ("user", "yes"),
    ]
    backend = sessions(make(tmp_path), talk)
    assert recall(backend, "delete feature branches", limit=4) == [f"{role}: {text}" for role, text in talk]


def test_an_answer_forgotten_or_no_longer_valid_is_not_shown(tmp_path: Path) -> None:
    backend = sessions(make(tmp_path), LINT)
    answer = next(
        hit
        for hit in backend.recall("b", RecallRequest(query="keep eslint", query_timestamp=ASKED_ON)).hits
        if hit.text == "user: no, keep eslint for now"
    )
    assert answer.id is not None
    assert backend.invalidate_unit("b", answer.id)
    assert "user: no, keep eslint for now" not in recall(backend, "biome", limit=4)
    assert backend.forget_unit("b", answer.id)
    assert "user: no, keep eslint for now" not in recall(backend, "biome", limit=4)
    assert f"assistant: {LINT[1][1]}" in recall(backend, "biome", limit=4)


def test_an_answer_the_model_reads_already_is_not_shown_again(tmp_path: Path) -> None:
    backend = sessions(make(tmp_path), LINT)
    today = InContext("hh-session:now", [{"role": "user", "content": "no, keep eslint for now"}])
    request = RecallRequest(query="biome", query_timestamp=ASKED_ON, in_context=today)
    hits = [hit.text for hit in backend.recall("b", request).hits]
    assert f"assistant: {LINT[1][1]}" in hits
    assert "user: no, keep eslint for now" not in hits


LINT_CHOICE = "user: Should we lint with biome or eslint?"
LOOKED = [
    ("user", LINT_CHOICE[6:]),
    ("assistant", "Let me check the repo's config first."),
    ("assistant", "There's an old .eslintrc but nothing in package.json runs it."),
    ("user", "ok, go with biome then"),
    ("assistant", "Switched: biome.json added, .eslintrc removed."),
]


@pytest.mark.parametrize(
    ("question", "reply", "decides"),
    [
        (LINT_CHOICE, "user: ok, go with biome then", True),
        ("assistant: We could replace eslint with biome. Shall I switch?", "user: fine, biome it is", True),
        ("assistant: Postgres or MySQL for the orders service?", "user: Postgres.", True),
        (LINT_CHOICE, "user: thanks", False),  # names nothing that was asked
        (LINT_CHOICE, "user: biome?", False),  # asks in turn
        (LINT_CHOICE, "assistant: go with biome", False),  # the user chooses
        (LINT_CHOICE, "user: biome broke the pre-commit hook on the CI runner", False),  # words of its own
        (LINT_CHOICE, "user: biome " + "ok " * (ANSWER_MAX_CHARS // 3), False),  # too long for a reply
        ("user: We lint with biome.", "user: ok, biome", False),  # nothing was asked
    ],
)
def test_a_later_choice_of_the_user_decides_what_was_asked(question: str, reply: str, decides: bool) -> None:
    assert decides_later(question, reply) is decides


def test_the_answer_is_the_next_reply_or_a_later_choice_before_the_talk_moves_on() -> None:
    choice = "user: ok, go with biome then"
    looked, report = "assistant: Let me check the repo's config first.", "assistant: There's an old .eslintrc."
    assert answer_among(LINT_CHOICE, ["assistant: Biome.", choice]) == 0  # the next message answers
    assert answer_among(LINT_CHOICE, [looked, report, choice]) == 2
    assert answer_among(LINT_CHOICE, [looked, None, choice]) == 2  # a message not read is passed over
    assert answer_among(LINT_CHOICE, [looked, "user: Also fix the flaky login test.", choice]) is None
    assert answer_among(LINT_CHOICE, [looked, *[report] * LATER_MAX_GAP, choice]) is None  # too far
    assert answer_among(LINT_CHOICE, [looked, *[report] * (LATER_MAX_GAP - 1), choice]) == LATER_MAX_GAP
    assert answer_among("user: We lint with biome.", [looked, choice]) is None
    assert answer_among(LINT_CHOICE, []) is None


@pytest.mark.parametrize("semantic", [False, True], ids=["lexical", "hybrid"])
def test_a_choice_made_after_the_agent_looked_is_shown_with_the_question(tmp_path: Path, semantic: bool) -> None:
    """Before (ADR 235): "what did we decide about linting?" showed the question and the agent's
    look at the repository, and never "ok, go with biome then", which says neither word asked."""
    backend = sessions(make(tmp_path, semantic=_embedder()) if semantic else make(tmp_path), LOOKED, RUNNER, PORT)
    if semantic:
        with_vectors_in_memory(backend, "lint")
    hits = recall(backend, "what did we decide about linting?", limit=4)
    assert not semantic or "dense" in backend.last_search_mode
    assert hits[hits.index(LINT_CHOICE) + 1] == "user: ok, go with biome then"
    assert len(hits) == len(set(hits))


def _cand(rowid: int, question: bool) -> Candidate:
    text = f"user: message {rowid}" + ("?" if question else ".")
    return Candidate(rowid, str(rowid), 0.5, "", 0.0, content=text, seq=rowid)


@settings(max_examples=200, deadline=None)
@given(
    order=st.permutations(range(12)),
    asking=st.sets(st.integers(0, 11)),
    replies=st.dictionaries(st.integers(0, 11), st.integers(0, 11)),
    batch=st.integers(1, 6),
)
# Found by ``scripts/fuzz``: 5 is the third reply of the chain 11 → 1 → 10 → 5 (``MAX_HOPS``), so its
# own answer is not looked up, and it is also the next unit in the order; it was pulled, not ranked there.
@example(
    order=[11, 5, 2, 3, 4, 1, 6, 7, 8, 9, 10, 0],
    asking={0, 1, 2, 3, 5, 10, 11},
    replies={1: 10, 0: 0, 2: 0, 3: 0, 4: 0, 5: 0, 6: 0, 7: 0, 10: 5, 11: 1},
    batch=1,
)
def test_every_unit_is_shown_once_and_an_answer_right_after_its_question(
    order: list[int], asking: set[int], replies: dict[int, int], batch: int
) -> None:
    """Whatever the look-up answers, nothing is lost or repeated, every unit but an answer keeps its
    place in the order, and an answer not shown before follows its question."""
    pool = {n: _cand(n, n in asking) for n in range(12)}

    def answered_by(questions: list[Candidate]) -> dict[int, Candidate]:
        return {q.rowid: pool[replies[q.rowid]] for q in questions if replies.get(q.rowid, q.rowid) != q.rowid}

    shown = [c.rowid for c in with_their_answers([pool[n] for n in order], answered_by, batch)]
    assert len(shown) == len(set(shown)) and set(shown) == set(order)
    for place, rowid in enumerate(shown):
        next_in_order = next(n for n in order if n not in shown[:place])
        before = shown[place - 1] if place else None
        pulled = before is not None and before in asking and replies.get(before) == rowid
        if rowid != next_in_order:  # pulled up: the answer of the unit before it, which asks
            assert pulled
        elif not pulled and rowid in asking and replies.get(rowid, rowid) not in shown[: place + 1]:
            assert shown[place + 1] == replies[rowid]  # a question ranked in its place brings its answer
