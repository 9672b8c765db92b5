"""A question about the first time, or about how long something went on, is answered oldest first (ADR 226)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hindsight_hooks.backends.local_time import asks_for_first
from tests.backends.test_local_support import QUESTIONS_ASKED_ON as ASKED_ON
from tests.backends.test_local_support import make, retain_talks, texts_recalled

STARTED = "user: Start the billing migration: move invoices to the new schema."
GOING = "user: Continue the billing migration with the refunds table."
DONE = "user: Finish the billing migration and drop the old tables."
TALKS = [
    ("2026-09-03T10:00:00Z", [("user", STARTED[6:]), ("assistant", "Created the new invoices schema.")]),
    ("2026-10-05T10:00:00Z", [("user", GOING[6:]), ("assistant", "Refunds moved.")]),
    ("2026-11-12T10:00:00Z", [("user", DONE[6:]), ("assistant", "Old billing tables dropped.")]),
    ("2026-11-20T10:00:00Z", [("user", "Add retries to the email sender."), ("assistant", "Added three retries.")]),
]
CACHE = [
    ("2026-10-01T10:00:00Z", [("user", "Let's use Redis for the session cache.")]),
    ("2026-11-15T10:00:00Z", [("user", "Switch the session cache from Redis to Valkey.")]),
]


@pytest.mark.parametrize(
    "question",
    ["when did we first talk about the billing migration?", "what did we originally decide about the cache?",
     "how long did the billing migration take?", "since when do we use pnpm?", "when did we start the migration?",
     "what was the cache at first?", "Wann haben wir zum ersten Mal über Billing gesprochen?",
     "Depuis quand utilise-t-on pnpm ?", "¿Cuándo hablamos por primera vez de la migración?",
     "Когда мы впервые обсуждали миграцию?", "Od kiedy używamy pnpm?", "Jak długo trwała migracja?"],
)  # fmt: skip
def test_a_question_about_the_first_time(question: str) -> None:
    assert asks_for_first(question)


@pytest.mark.parametrize(
    "question",
    ["what is the first step of the deploy?", "when did we last deploy?", "first, run the tests",
     "which database do we use?", "how do we run the first migration?"],
)  # fmt: skip
def test_other_questions_are_not(question: str) -> None:
    assert not asks_for_first(question)


def test_the_first_time_is_shown_first(tmp_path: Path) -> None:
    """Before: the finish of November first, the start of September third."""
    backend = retain_talks(make(tmp_path), TALKS)
    hits = texts_recalled(backend, "when did we first talk about the billing migration?", ASKED_ON, 4)
    assert [h for h in hits if h.startswith("user: ")] == [STARTED, GOING, DONE]
    assert hits[0] == STARTED
    assert texts_recalled(backend, "which billing migration steps are left?", ASKED_ON, 4)[0] == DONE  # as before


def test_what_was_decided_originally_comes_before_the_change(tmp_path: Path) -> None:
    """ADR 118 puts the statement that holds now first; asked what held originally, the first one."""
    backend = retain_talks(make(tmp_path), CACHE)
    assert texts_recalled(backend, "what did we originally decide for the session cache?", ASKED_ON, 4) == [
        "user: Let's use Redis for the session cache.",
        "user: Switch the session cache from Redis to Valkey.",
    ]
    assert texts_recalled(backend, "what do we use for the session cache?", ASKED_ON, 4)[0] == (
        "user: Switch the session cache from Redis to Valkey."
    )


def test_a_first_mention_long_ago_is_found_among_many_newer(tmp_path: Path) -> None:
    """Twenty short "Billing migration step n." of November outrank, by bm25, the long message that
    began it fifteen months before: the first units written that say the subject join the block."""
    began = ("2025-09-03T10:00:00Z", [("user", STARTED[6:])])
    steps = [(f"2026-11-{n + 1:02d}T10:00:00Z", [("user", f"Billing migration step {n}.")]) for n in range(20)]
    backend = retain_talks(make(tmp_path), [began, *steps])
    for question in (
        "when did we first talk about the billing migration?",
        "since when do we do the billing migration?",
    ):
        assert texts_recalled(backend, question, ASKED_ON, 8)[0] == STARTED, question
    assert STARTED not in texts_recalled(backend, "what is the next billing migration step?", ASKED_ON, 8)  # as before


def _branches(pattern: str) -> list[str]:
    """The pattern's top-level alternatives, a branch that is one group ``(?:a|b)`` split in turn."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(pattern):
        if ch == "(" and pattern[i - 1 : i] != "\\":
            depth += 1
        elif ch == ")" and pattern[i - 1 : i] != "\\":
            depth -= 1
        elif ch == "|" and depth == 0:
            out.append(pattern[start:i])
            start = i + 1
    out.append(pattern[start:])
    split: list[str] = []
    for branch in out:
        if branch.startswith("(?:") and branch.endswith(")") and len(_branches(branch[3:-1])) > 1:
            split.extend(_branches(branch[3:-1]))
        else:
            split.append(branch)
    return split


def test_every_phrase_of_the_first_time_says_one_of_the_words_checked_first() -> None:
    """``asks_for_first`` tries the long pattern only on a prompt that says one of its hints
    (ADR 227): so every phrase the pattern knows must say one, or the prefilter would hide it."""
    from hindsight_hooks.backends.local_time import _FIRST, _FIRST_HINTS

    branches = _branches(_FIRST.pattern)
    assert len(branches) > 50
    literal = [re.sub(r"\\[sbw]|\(\?:|[()?+*\\]", "", branch) for branch in branches]
    assert [text for text in literal if not any(hint in text for hint in _FIRST_HINTS)] == []
