"""A memory that says only the question's words goes after the ones that say more (ADR 186):
the rule on its own, and recall on a real SQLite file."""

from __future__ import annotations

from pathlib import Path

import pytest

from hindsight_hooks.backends.base import RecallRequest
from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.backends.local_rank import Candidate
from hindsight_hooks.backends.local_restated import asks_beyond_itself, question_stems, restatements_last, says_only
from hindsight_hooks.backends.local_text import query_terms
from tests.backends.test_local_support import item, make

REQUESTS = ["run tests", "run the tests", "ok run the tests", "Please run the tests again."]
DECISION = "Decision: tests run with make check, which runs pytest and then mypy; CI calls the same target."
SLOW = "We keep slow tests behind the slow marker; they run nightly only."


def _cand(rowid: int, words: str, *, rank: float | None = -1.0) -> Candidate:
    return Candidate(
        rowid=rowid, id=f"u{rowid}", importance=0.5, created_at="", created_epoch=0.0, rank=rank, words=words
    )


def _stems(query: str) -> frozenset[str]:
    return question_stems(query_terms(query))


@pytest.mark.parametrize(
    ("words", "only"),
    [
        ("run tests", True),
        ("Please run the tests again.", True),  # "please", "again": stop words
        ("Running the test", True),  # the same stems
        ("run the tests and tell me", False),
        ("Tests pass.", False),
        ("", True),  # nothing the index weighs: nothing more than the question either
        ("東京サーバーの tests", False),  # script text is read as the store reads it
    ],
)
def test_what_says_only_the_questions_words(words: str, only: bool) -> None:
    assert says_only(_cand(1, words), _stems("how do we run the tests?")) is only


def test_restatements_keep_their_order_after_the_rest_and_units_without_rank_stay_in_place() -> None:
    stems = _stems("how do we run the tests?")
    ordered = [_cand(1, "run tests"), _cand(2, "tests pass"), _cand(3, "run the tests"),
               _cand(4, "run tests", rank=None), _cand(5, DECISION)]  # fmt: skip
    assert [c.rowid for c in restatements_last(ordered, stems)] == [2, 4, 5, 1, 3]
    assert [c.rowid for c in restatements_last(ordered, frozenset())] == [1, 2, 3, 4, 5]


@pytest.mark.parametrize(
    ("query", "beyond"),
    [
        ("how do we run the tests?", True),
        ("which package manager do we use", True),
        ("tests", True),
        ("did the tests pass?", False),  # "the tests pass" answers it
        ("Is the cache on?", False),
        ("when did we move to pnpm?", False),  # the date of "we moved to pnpm" answers it
        ("what day was the release?", False),
    ],
)
def test_which_questions_ask_for_more_than_they_say(query: str, beyond: bool) -> None:
    assert asks_beyond_itself(query) is beyond


def _bank(tmp_path: Path) -> LocalBackend:
    backend = make(tmp_path)
    for n, text in enumerate([*REQUESTS, DECISION, SLOW]):
        backend.retain_batch("b", [item(text, f"d{n}")], operation_id=f"o{n}")
    return backend


def test_the_decision_comes_before_the_requests_that_restate_the_question(tmp_path: Path) -> None:
    backend = _bank(tmp_path)
    try:
        hits = [h.text for h in backend.recall("b", RecallRequest(query="how do we run the tests?", limit=3)).hits]
        assert DECISION in hits and SLOW in hits  # without the rule: three of the four requests
        everything = [h.text for h in backend.recall("b", RecallRequest(query="how do we run the tests?")).hits]
        assert sorted(everything[2:]) == sorted(REQUESTS)  # kept, after what says more
    finally:
        backend.close()


def test_a_restatement_is_still_the_answer_to_a_yes_no_question_and_alone(tmp_path: Path) -> None:
    backend = _bank(tmp_path)
    try:
        hits = [h.text for h in backend.recall("b", RecallRequest(query="did we run the tests?", limit=2)).hits]
        assert hits[0] in REQUESTS  # the plain bm25 order
        (tmp_path / "other").mkdir()
        only = make(tmp_path / "other")
        only.retain_batch("b", [item("run the tests", "d0")], operation_id="o0")
        assert [h.text for h in only.recall("b", RecallRequest(query="how do we run the tests?")).hits] == [
            "run the tests"
        ]
        only.close()
    finally:
        backend.close()
