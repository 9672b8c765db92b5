""" "What do you remember?" is answered by what the user said to keep (ADR 223)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hindsight_hooks.backends.base import InContext, RecallRequest
from hindsight_hooks.backends.local_known import asks_what_is_known, states_kept
from hindsight_hooks.backends.local_rank import Candidate, these_first, these_first_in_order
from hindsight_hooks.backends.semantic import StaticEmbedder
from tests.backends.test_local_activity import DAY, EARLIER, TASKS
from tests.backends.test_local_support import QUESTIONS_ASKED_ON as ASKED_ON
from tests.backends.test_local_support import (
    item,
    make,
    retain_talks,
    texts_recalled,
    with_vectors_in_memory,
    words_of_the_period,
)
from tests.backends.test_local_support import recalled as recall

PNPM = "We use pnpm, never npm, in this repo."
POSTGRES = "Let's go with Postgres 16 for the billing database."
COMMITS = "I prefer small commits with conventional commit messages."
SAID = (
    "2026-11-20T10:00:00Z",
    [("user", PNPM), ("assistant", "Noted: pnpm only."), ("user", POSTGRES), ("assistant", "OK, Postgres 16 it is."),
     ("user", "do we always rebase before merging?"), ("assistant", "We always rebase, yes."),
     ("user", "the build always fails on the first run"), ("user", COMMITS), ("assistant", "Will do.")],
)  # fmt: skip
KEPT = [f"user: {COMMITS}", f"user: {POSTGRES}", f"user: {PNPM}"]  # newest said first
WORKED = [f"user: {TASKS[2]}", f"user: {TASKS[1]}", f"user: {TASKS[0]}"]

ASKED = [
    "what do you remember?", "what do you know about me?", "what do you know about this project?",
    "what do you remember about our work so far?", "tell me what you know", "summarize what you know about this repo",
    "what have you learned about me?", "what's in your memory?", "do you remember me?",
    "Was weißt du über mich?", "Que sais-tu de moi ?", "¿Qué sabes de mí?", "Cosa ricordi?",
    "O que você sabe sobre mim?", "Wat weet je over mij?", "Что ты знаешь обо мне?", "Co o mnie wiesz?",
    "Що ти знаєш про мене?", "what are my preferences?", "what conventions do we follow?",
    "Welche Regeln haben wir?", "Quelles sont mes préférences ?", "¿Cuáles son nuestras convenciones?",
]  # fmt: skip


@pytest.mark.parametrize("question", ASKED)
def test_a_question_about_what_the_memory_holds(question: str) -> None:
    assert asks_what_is_known(question, words_of_the_period(question, ASKED_ON))


@pytest.mark.parametrize(
    "question",
    ["what do you know about the billing service?", "do you know why the build fails?",
     "what do you remember about the cache TTL?", "what do we know about the outage?", "you know what, fix it"],
)  # fmt: skip
def test_a_question_with_a_subject_is_searched_as_before(question: str) -> None:
    assert not asks_what_is_known(question, words_of_the_period(question, ASKED_ON))


@pytest.mark.parametrize(
    ("content", "kept"),
    [
        (f"user: {PNPM}", True),
        (f"user: {POSTGRES}", True),
        (f"user: {COMMITS}", True),
        ("user: Never push straight to main.", True),
        ("user: remember that the staging key rotates monthly", True),
        ("user: Wir verwenden immer pnpm.", True),
        ("User prefers pnpm over npm.", True),  # a memory the model retained (no role label)
        ("user: do we always rebase before merging?", False),  # asks
        ("user: the build always fails on the first run", False),  # a report
        ("user: Add rate limiting to the public API.", False),  # a request
        ("assistant: We always rebase, yes.", False),  # the agent's, not the user's
        ("toolResult: never use eval", False),
    ],
)
def test_what_a_unit_states_to_keep(content: str, kept: bool) -> None:
    assert states_kept(content) is kept


@pytest.mark.parametrize("semantic", [False, True], ids=["lexical", "hybrid"])
def test_what_was_said_to_keep_comes_first_then_the_last_sessions(tmp_path: Path, semantic: bool) -> None:
    """Before: nothing at all for "what do you remember?" (no stored message says "remember")."""
    backend = retain_talks(
        make(tmp_path, semantic=StaticEmbedder()) if semantic else make(tmp_path), [SAID, EARLIER, *DAY]
    )
    if semantic:
        with_vectors_in_memory(backend, "pnpm")
    for question in ("what do you remember?", "what do you know about me?", "Was weißt du über mich?"):
        assert recall(backend, question) == [*KEPT, *WORKED], question


def test_a_changed_decision_shows_the_newer_first_and_both(tmp_path: Path) -> None:
    later = ("2026-11-28T10:00:00Z", [("user", "Let's switch the billing database from Postgres to MySQL.")])
    backend = retain_talks(make(tmp_path), [SAID, later])
    hits = recall(backend, "what do you remember?")
    assert hits[0] == "user: Let's switch the billing database from Postgres to MySQL."
    assert f"user: {POSTGRES}" in hits


def test_a_memory_the_model_retained_is_shown(tmp_path: Path) -> None:
    backend = retain_talks(make(tmp_path), [SAID])
    memory = item("User prefers tabs over spaces in Go files.", "hh-explicit:x", timestamp="2026-11-30T10:00:00Z")
    backend.retain_batch("b", [memory], operation_id="tool-1")
    assert recall(backend, "what do you remember?")[:2] == ["User prefers tabs over spaces in Go files.", KEPT[0]]


def test_a_memory_the_model_retained_in_any_words_is_shown(tmp_path: Path) -> None:
    """A retain-tool memory says what the user asked to keep, whatever its words: read through
    the bank's documents, not by the statements' words."""
    backend = retain_talks(make(tmp_path), [SAID, *DAY])
    memory = item("The staging key rotates monthly.", "hh-explicit:k", timestamp="2026-11-21T10:00:00Z")
    backend.retain_batch("b", [memory], operation_id="tool-2")
    hits = recall(backend, "what do you remember?")
    assert hits[0] == "The staging key rotates monthly."  # written last
    assert hits[1:4] == KEPT
    said_in_a_period = recall(backend, "what do you remember from November 20?")
    assert "The staging key rotates monthly." not in said_in_a_period  # retained on the 21st
    assert said_in_a_period[:3] == KEPT


def test_the_limit_keeps_places_for_the_last_sessions(tmp_path: Path) -> None:
    many = ("2026-11-21T10:00:00Z", [("user", f"We always run linter {n} before a commit.") for n in range(9)])
    backend = retain_talks(make(tmp_path), [SAID, many, *DAY])
    hits = recall(backend, "what do you remember?", limit=8)
    assert hits[:5] == [f"user: We always run linter {n} before a commit." for n in (8, 7, 6, 5, 4)]
    assert hits[5:] == WORKED


def test_the_asking_session_and_forgotten_statements_are_left_out(tmp_path: Path) -> None:
    backend = retain_talks(make(tmp_path), [SAID, *DAY])
    stated = next(h for h in backend.recall("b", RecallRequest(query="conventional commits")).hits if COMMITS in h.text)
    assert stated.id is not None and backend.forget_unit("b", stated.id)
    live = InContext("s3", [{"role": "user", "content": "what do you remember?"}])  # DAY[2] is document s3
    assert recall(backend, "what do you remember?", seen=live) == [*KEPT[1:], WORKED[1], WORKED[2]]


def test_a_subject_is_searched_by_its_words(tmp_path: Path) -> None:
    backend = retain_talks(make(tmp_path), [SAID, *DAY])
    assert texts_recalled(backend, "what do you know about the billing database?", ASKED_ON)[0] == f"user: {POSTGRES}"


@settings(max_examples=200, deadline=None)
@given(order=st.permutations(range(10)), first=st.lists(st.integers(0, 12), max_size=14), as_set=st.booleans())
def test_these_first_shows_every_candidate_once_the_listed_ones_ahead(
    order: list[int], first: list[int], as_set: bool
) -> None:
    """A walk's list may name a unit twice (a session's first request that is also a statement) and
    units that are no candidates: each candidate is shown once, the listed ones first — in the list's
    order, by their first place, or in the ranking's order when given as a set — then the rest."""
    ordered = [Candidate(n, str(n), 0.5, "", 0.0) for n in order]
    shown = [c.rowid for c in (these_first(ordered, set(first)) if as_set else these_first_in_order(ordered, first))]
    listed = [n for n in dict.fromkeys(first) if n in order]
    ahead = [n for n in order if n in listed] if as_set else listed
    assert shown == [*ahead, *(n for n in order if n not in listed)]


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=120))
def test_the_agents_words_and_a_tools_output_are_never_kept(text: str) -> None:
    assert not states_kept(f"assistant: {text}")
    assert not states_kept(f"toolResult: {text}")
    assert not states_kept(f"user: {text.rstrip()}?")


@settings(max_examples=200, deadline=None)
@given(
    question=st.sampled_from(ASKED),
    subject=st.sampled_from(["billing", "cache", "deploy", "router", "schema", "invoices", "parser"]),
)
def test_a_subject_added_to_any_form_makes_it_a_search(question: str, subject: str) -> None:
    """ "What do you know about the billing service?" asks about it: searched as before."""
    asked = f"{question.rstrip('?？ ')} about the {subject} service?"
    assert not asks_what_is_known(asked, words_of_the_period(asked, ASKED_ON))


@pytest.mark.parametrize("semantic", [False, True], ids=["lexical", "hybrid"])
def test_a_question_for_the_preferences_is_answered_by_them_alone(tmp_path: Path, semantic: bool) -> None:
    """ "What are my preferences?" asks for what was said to keep, not for what was worked on
    (ADR 228): the last sessions' first requests stay out of its block — unless nothing was said
    to keep, when they are what there is."""
    backend = retain_talks(
        make(tmp_path, semantic=StaticEmbedder()) if semantic else make(tmp_path), [SAID, EARLIER, *DAY]
    )
    if semantic:
        with_vectors_in_memory(backend, "pnpm")
    for question in ("what are my preferences?", "what conventions do we follow?", "Quelles sont mes préférences ?"):
        hits = recall(backend, question)
        assert hits[: len(KEPT)] == KEPT, question
        assert not set(WORKED) & set(hits), question
    assert recall(backend, "what do you remember?") == [*KEPT, *WORKED]  # the general question keeps both
    bare = retain_talks(make(tmp_path / "bare"), [EARLIER, *DAY])
    assert recall(bare, "what are my preferences?")[:3] == WORKED
