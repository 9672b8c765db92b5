"""A proposal the user answered is a decision (ADR 224)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hindsight_hooks.backends.base import RecallRequest
from hindsight_hooks.backends.local_decisions import proposes
from hindsight_hooks.backends.semantic import StaticEmbedder
from tests.backends.test_local_support import QUESTIONS_ASKED_ON as ASKED_ON
from tests.backends.test_local_support import make, retain_talks, with_vectors_in_memory
from tests.backends.test_local_support import recalled as recall

RELEASES = "assistant: We could cut a release every week, on Thursdays. Should I set that up?"
BIOME = "assistant: We could replace eslint with biome. Shall I switch?"
POSTGRES = "user: Let's go with Postgres 16 for the billing database."
TALKS = [
    ("2026-11-24T10:00:00Z", [("user", "Can we speed up the release process?"), ("assistant", RELEASES[11:]),
                              ("user", "yes, go ahead"), ("assistant", "Done: the weekly job runs on Thursdays.")]),
    ("2026-11-25T10:00:00Z", [("user", "Can we lint faster?"), ("assistant", BIOME[11:]),
                              ("user", "no, keep eslint for now"), ("assistant", "OK, eslint stays.")]),
    ("2026-11-26T10:00:00Z", [("user", POSTGRES[6:]), ("assistant", "Noted."),
                              ("assistant", "The tests pass. Shall I commit?"), ("user", "yes")]),
    ("2026-11-27T10:00:00Z", [("assistant", "We could move to pnpm instead of npm. Want me to?"),
                              ("user", "Let me first ask the team which package manager the CI image ships with.")]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("content", "proposal"),
    [
        (BIOME, True),
        (RELEASES, True),
        ("assistant: Postgres or MySQL for the orders service?", True),
        ("assistant: How about weekly releases?", True),
        ("assistant: Wir könnten Biome statt ESLint nehmen. Soll ich umstellen?", True),
        ("assistant: The tests pass. Shall I commit?", False),  # no choice proposed
        ("assistant: We could replace eslint with biome.", False),  # proposed, not asked
        ("user: We could replace eslint with biome, right?", False),  # the user's own question
    ],
)
def test_what_proposes_a_choice(content: str, proposal: bool) -> None:
    assert proposes(content) is proposal


@pytest.mark.parametrize("semantic", [False, True], ids=["lexical", "hybrid"])
def test_an_answered_proposal_is_a_decision_shown_with_its_answer(tmp_path: Path, semantic: bool) -> None:
    """Before: "what decisions did we make recently?" showed the Postgres line alone."""
    backend = retain_talks(make(tmp_path, semantic=StaticEmbedder()) if semantic else make(tmp_path), TALKS)
    if semantic:
        with_vectors_in_memory(backend, "eslint")
    hits = recall(backend, "what decisions did we make recently?")
    assert hits[:5] == [POSTGRES, BIOME, "user: no, keep eslint for now", RELEASES, "user: yes, go ahead"]
    assert "assistant: The tests pass. Shall I commit?" not in hits  # a yes to no choice decides nothing
    assert not any("pnpm" in hit for hit in hits)  # answered in many words of its own: not a decision yet


def test_a_proposal_answered_once_the_user_had_checked_is_a_decision(tmp_path: Path) -> None:
    """ADR 235: the user's "let me first ask the team" is no answer; the choice two messages later is."""
    checked = [*TALKS[3][1], ("assistant", "Sure, tell me what they say."), ("user", "ok, pnpm it is")]
    backend = retain_talks(make(tmp_path), [*TALKS[:3], (TALKS[3][0], checked)])
    hits = recall(backend, "what decisions did we make recently?")
    pnpm = "assistant: We could move to pnpm instead of npm. Want me to?"
    assert hits[hits.index(pnpm) + 1] == "user: ok, pnpm it is"
    assert hits.index(pnpm) < hits.index(BIOME)  # the newest decision first


def test_what_is_remembered_holds_the_answered_proposals_newest_first(tmp_path: Path) -> None:
    hits = recall(retain_talks(make(tmp_path), TALKS), "what do you remember?")
    assert hits[:5] == [POSTGRES, BIOME, "user: no, keep eslint for now", RELEASES, "user: yes, go ahead"]


def test_a_forgotten_answer_leaves_the_proposal_undecided(tmp_path: Path) -> None:
    backend = retain_talks(make(tmp_path), TALKS)
    answer = next(
        h
        for h in backend.recall("b", RecallRequest(query="keep eslint", query_timestamp=ASKED_ON)).hits
        if h.text == "user: no, keep eslint for now"
    )
    assert answer.id is not None and backend.forget_unit("b", answer.id)
    hits = recall(backend, "what decisions did we make recently?")
    assert BIOME not in hits and hits[:3] == [POSTGRES, RELEASES, "user: yes, go ahead"]


def test_a_period_holds_its_proposals_only(tmp_path: Path) -> None:
    hits = recall(retain_talks(make(tmp_path), TALKS), "what did we decide on November 24?")
    assert hits[:2] == [RELEASES, "user: yes, go ahead"]
    assert BIOME not in hits and POSTGRES not in hits


_KINDS = st.sampled_from(["answered", "answered at length", "unanswered", "work"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions=st.lists(st.lists(_KINDS, min_size=1, max_size=4), min_size=1, max_size=4))
def test_every_answered_proposal_is_shown_with_its_answer_and_no_other(sessions: list[list[str]]) -> None:
    """Whatever the sessions hold: the proposals shown for a question about decisions are the
    answered ones, each right before its answer; one answered at length, or not at all, is not."""
    talks, answered = [], []
    for n, kinds in enumerate(sessions):
        talk: list[tuple[str, str]] = []
        for k, kind in enumerate(kinds):
            tool = f"tool{n}x{k}"
            if kind == "work":
                talk += [("user", f"Rename module {tool} please."), ("assistant", f"Renamed {tool}.")]
                continue
            talk.append(("assistant", f"We could replace the linter with {tool}. Shall I switch?"))
            if kind == "answered":
                talk.append(("user", f"yes, go ahead with {tool}"))
                answered.append(f"assistant: {talk[-2][1]}")
            elif kind == "answered at length":
                talk.append(("user", f"Let me first ask the team whether the build image ships {tool} at all."))
            else:
                talk.append(("assistant", "Never mind, it is fine as it is."))
        talks.append((f"2026-11-{n + 10:02d}T10:00:00Z", talk))
    limit = 2 * len(answered) + 2
    with tempfile.TemporaryDirectory() as folder:
        backend = retain_talks(make(Path(folder)), talks)
        try:
            hits = recall(backend, "what decisions did we make recently?", limit)
        finally:
            backend.close()
    shown = [hit for hit in hits if proposes(hit)]
    assert sorted(shown) == sorted(answered)
    for proposal in shown:
        tool = proposal.split("with ", 1)[1].split(".", 1)[0]
        assert hits[hits.index(proposal) + 1] == f"user: yes, go ahead with {tool}"


def test_a_period_written_out_of_order_is_read_whole(tmp_path: Path) -> None:
    """A session imported late is written after newer ones: the period's rowids are read from the
    date index, so a decision said in it is found however late it was written."""
    late = ("2026-11-03T10:00:00Z", [("user", "Let's go with Fly.io for the preview deploys.")])
    backend = retain_talks(make(tmp_path), [*TALKS, late])
    assert recall(backend, "what did we decide on November 3?")[:1] == [
        "user: Let's go with Fly.io for the preview deploys."
    ]
    assert recall(backend, "what did we decide on November 24?")[:2] == [RELEASES, "user: yes, go ahead"]
