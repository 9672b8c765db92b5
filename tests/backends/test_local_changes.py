""" "What changed?" is answered by the changes of mind the user stated (ADR 230)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hindsight_hooks.backends.local_changes import asks_what_changed, states_change
from hindsight_hooks.backends.semantic import StaticEmbedder
from tests.backends.test_local_support import QUESTIONS_ASKED_ON as ASKED_ON
from tests.backends.test_local_support import make, retain_talks, with_vectors_in_memory, words_of_the_period
from tests.backends.test_local_support import recalled as recall

VALKEY = "user: Switch the session cache from Redis to Valkey."
PNPM = "user: We switched from npm to pnpm in this repo."
TALKS = [
    ("2026-10-01T10:00:00Z", [("user", "Let's use Redis for the session cache."), ("assistant", "Redis it is.")]),
    ("2026-10-20T10:00:00Z", [("user", PNPM[6:]), ("assistant", "Noted.")]),
    ("2026-11-15T10:00:00Z", [("user", VALKEY[6:]), ("assistant", "I replaced the Redis client with Valkey's.")]),
    ("2026-11-20T10:00:00Z", [("user", "Add retries to the email sender."), ("assistant", "The error rate dropped.")]),
]
ASKED = [
    "what changed?", "what has changed lately?", "what changed since last month?", "what did we change?",
    "any changes?", "anything changed recently?", "Was hat sich geändert?", "Qu'est-ce qui a changé ?",
    "¿Qué ha cambiado?", "Cosa è cambiato?", "O que mudou?", "Wat is er veranderd?", "Что изменилось?",
    "Co się zmieniło?", "Що змінилося?",
]  # fmt: skip


@pytest.mark.parametrize("question", ASKED)
def test_a_question_about_what_changed(question: str) -> None:
    assert asks_what_changed(question, words_of_the_period(question, ASKED_ON))


@pytest.mark.parametrize(
    "question",
    ["what changed in the email sender?", "what changed about the cache?", "what changed the test results?",
     "why did the build change?", "change the port to 8080"],
)  # fmt: skip
def test_a_question_with_a_subject_is_searched_as_before(question: str) -> None:
    assert not asks_what_changed(question, words_of_the_period(question, ASKED_ON))


@pytest.mark.parametrize(
    ("content", "stated"),
    [
        (VALKEY, True),
        (PNPM, True),
        ("user: Let's switch to bun.", True),
        ("User switched the team from npm to pnpm.", True),  # a memory the retain tool wrote
        ("user: the hit rate dropped to 60%", False),  # a change of no one's
        ("user: should we switch to bun?", False),  # asks
        ("assistant: I replaced the sleep with a poll.", False),  # the agent's report of its code
        ("toolResult: switched to branch main", False),
        # a decision taken back with the one that replaces it (ADR 234)
        ("user: Actually, keep Redis.", True),
        ("user: On second thought, let's stay on npm.", True),
        ("user: Scratch that: use Postgres.", True),
        ("user: Actually, the bug was in the parser.", False),  # takes nothing back
        ("user: Actually, can we keep Redis?", False),  # asks
        ("assistant: Actually, keep Redis.", False),
        # a request in the other languages (ADR 234)
        ("user: Wechsle den Session-Cache von Redis auf Valkey.", True),
        ("user: Remplace Jenkins par Buildkite.", True),
        ("user: Cambia a pnpm en este repo.", True),
        ("user: Passa a pnpm.", True),
        ("user: Muda para pnpm.", True),
        ("user: Vervang Jenkins door Buildkite.", True),
        ("user: Перейди на pnpm в этом репозитории.", True),
        ("user: Zastąp Jenkinsa Buildkite.", True),
        ("user: Перейдіть на pnpm.", True),
        ("user: Wechselst du das Thema?", False),
        ("user: Entferne den Debug-Log.", False),  # as "remove" in English: a change of the code
        ("user: Stell dir vor, auf der Party war sie auch.", False),  # "stell … auf" without "um"
        ("user: Cambia el color del botón", False),  # no "a": a change of the code, not of mind
        ("assistant: Remplace Jenkins par Buildkite.", False),
    ],
)
def test_what_a_unit_states_as_a_change(content: str, stated: bool) -> None:
    assert states_change(content) is stated


@pytest.mark.parametrize("semantic", [False, True], ids=["lexical", "hybrid"])
def test_the_changes_stated_come_first_newest_first(tmp_path: Path, semantic: bool) -> None:
    """Before: "what changed?" found what says "change" (nothing here), not "we switched from npm"."""
    backend = retain_talks(make(tmp_path, semantic=StaticEmbedder()) if semantic else make(tmp_path), TALKS)
    if semantic:
        with_vectors_in_memory(backend, "pnpm")
    for question in ("what changed?", "what has changed lately?", "Was hat sich geändert?"):
        assert recall(backend, question)[:2] == [VALKEY, PNPM], question
    assert recall(backend, "what changed last month?")[:1] == [VALKEY]  # November: the Valkey switch only
    assert PNPM not in recall(backend, "what changed last month?")
    assert "user: Add retries to the email sender." in recall(backend, "what changed in the email sender?")[:2]


@settings(max_examples=200, deadline=None)
@given(
    question=st.sampled_from(ASKED),
    subject=st.sampled_from(["billing", "cache", "deploy", "router", "schema", "invoices", "parser"]),
)
def test_a_subject_added_to_any_form_makes_it_a_search(question: str, subject: str) -> None:
    asked = f"{question.rstrip('?？ ')} in the {subject} service?"
    assert not asks_what_changed(asked, words_of_the_period(asked, ASKED_ON))


def test_a_decision_taken_back_is_a_change(tmp_path: Path) -> None:
    """ADR 234: "Actually, keep Redis." names nothing it left behind and no word of deciding; it takes
    the Valkey switch back, and "what changed?" shows it first."""
    kept = "user: Actually, keep Redis for the session cache."
    backend = retain_talks(
        make(tmp_path), [*TALKS, ("2026-11-25T10:00:00Z", [("user", kept[6:]), ("assistant", "Reverted to Redis.")])]
    )
    assert recall(backend, "what changed?")[:2] == [kept, VALKEY]


def test_a_request_for_a_change_in_german_is_a_change(tmp_path: Path) -> None:
    """ADR 234: "Wechsle …" says no word ADR 230 read; "Was hat sich geändert?" now shows it first."""
    asked = "user: Wechsle den Session-Cache von Redis auf Valkey."
    talks = [TALKS[0], ("2026-11-25T10:00:00Z", [("user", asked[6:]), ("assistant", "Erledigt.")])]
    assert recall(retain_talks(make(tmp_path), talks), "Was hat sich geändert?")[:1] == [asked]
