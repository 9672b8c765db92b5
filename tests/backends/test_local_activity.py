"""A question about what was done in a period is answered session by session (ADR 221)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hindsight_hooks.backends.base import RecallRequest
from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.backends.local_activity import asks_what_was_done
from hindsight_hooks.backends.local_text import query_terms
from hindsight_hooks.timefmt import epoch_from_iso
from tests.backends.test_local_support import item, make, retain_talks, texts_recalled, words_of_the_period

ASKED_ON = "2026-12-01T12:00:00Z"  # a Tuesday; "yesterday" is Monday 30 November
TASKS = ("Migrate the billing cron to the new scheduler.", "Fix the flaky login test on CI.",
         "Write the release notes for 2.4.")  # fmt: skip


def _session(n: int, when: str, first: str, steps: int = 9) -> tuple[str, list[tuple[str, str]]]:
    talk = [("user", first)]
    for k in range(steps):
        talk += [("assistant", f"Step {k} of session {n}: edited module{k}.py, checks pass."), ("user", f"next {k}")]
    return when, talk


DAY = [_session(n, f"2026-11-30T{9 + 3 * n:02d}:00:00Z", task) for n, task in enumerate(TASKS)]
EARLIER = _session(7, "2026-11-25T10:00:00Z", "Set up the staging database backups.")


def recall(backend: LocalBackend, question: str, limit: int = 8) -> list[str]:
    return texts_recalled(backend, question, ASKED_ON, limit)


@pytest.mark.parametrize(
    "question",
    ["what did we do yesterday?", "what did I work on last week?", "what happened on Monday?",
     "what have we been working on this week?", "Was haben wir gestern gemacht?",
     "Qu'est-ce qu'on a fait hier ?", "¿Qué hicimos ayer?"],
)  # fmt: skip
def test_a_question_about_what_was_done_in_a_period(question: str) -> None:
    assert asks_what_was_done(question, query_terms(question), words_of_the_period(question, ASKED_ON))


@pytest.mark.parametrize(
    "question", ["what happened to the cache yesterday?", "how do we deploy?", "what did we deploy yesterday?"]
)
def test_a_question_with_a_subject_is_no_question_about_the_day(question: str) -> None:
    assert not asks_what_was_done(question, query_terms(question), words_of_the_period(question, ASKED_ON))


def test_yesterday_is_told_session_by_session(tmp_path: Path) -> None:
    """Before: eight messages of the evening session, neither the billing migration nor the login fix."""
    backend = retain_talks(make(tmp_path), [*DAY, EARLIER])
    hits = recall(backend, "what did we do yesterday?")
    assert hits[:3] == [f"user: {TASKS[2]}", f"user: {TASKS[1]}", f"user: {TASKS[0]}"]  # the newest session first
    assert "user: Set up the staging database backups." not in hits  # the 25th is not yesterday
    assert recall(backend, "Was haben wir gestern gemacht?")[:3] == hits[:3]


def test_a_sessions_first_word_that_says_nothing_gives_way_to_its_first_request(tmp_path: Path) -> None:
    when, talk = DAY[0]
    backend = retain_talks(make(tmp_path), [(when, [("user", "ok"), ("assistant", "Hi!"), *talk])])
    assert recall(backend, "what did we do yesterday?")[0] == f"user: {TASKS[0]}"


def test_a_forgotten_first_request_is_not_brought_back(tmp_path: Path) -> None:
    backend = retain_talks(make(tmp_path), DAY)
    opener = next(
        h
        for h in backend.recall("b", RecallRequest(query="billing cron", query_timestamp=ASKED_ON)).hits
        if h.text == f"user: {TASKS[0]}"
    )
    assert opener.id is not None and backend.forget_unit("b", opener.id)
    hits = recall(backend, "what did we do yesterday?")
    assert f"user: {TASKS[0]}" not in hits
    assert hits[:2] == [f"user: {TASKS[2]}", f"user: {TASKS[1]}"]


@pytest.mark.parametrize("question", ["what have we been working on lately?", "what did we do recently?"])
def test_lately_is_told_by_the_last_sessions(tmp_path: Path, question: str) -> None:
    """No period, but a word of recency: the last sessions, newest first, whenever they were."""
    backend = retain_talks(make(tmp_path), [*DAY, EARLIER])
    assert recall(backend, question)[:4] == [
        f"user: {TASKS[2]}",
        f"user: {TASKS[1]}",
        f"user: {TASKS[0]}",
        "user: Set up the staging database backups.",
    ]


def _said_at(backend: LocalBackend, document: str, said: list[tuple[str, str, str]]) -> None:
    """One session ``document`` of messages ``(role, text, when)``, each said at its own time."""
    messages = [{"role": role, "content": text, "timestamp": (epoch_from_iso(when) or 0.0) * 1000}
                for role, text, when in said]  # fmt: skip
    backend.retain_batch("b", [item(json.dumps(messages), document, source="auto")], operation_id=document)


def test_a_resumed_session_does_not_hide_the_sessions_since_it_began(tmp_path: Path) -> None:
    """Session a began on 2 November and was resumed today; b was said on 20 November. Before, the
    walk went on from a's start, so b, said inside a's span, was passed over."""
    backend = make(tmp_path)
    _said_at(backend, "a", [("user", "Port the importer to the new API.", "2026-11-02T10:00:00Z"),
                            ("assistant", "Started on the importer.", "2026-11-02T10:01:00Z"),
                            ("user", "Let's finish the importer port today.", "2026-12-01T09:00:00Z")])  # fmt: skip
    _said_at(backend, "b", [("user", "Fix the flaky login test on CI.", "2026-11-20T10:00:00Z")])
    assert recall(backend, "what have we been working on lately?")[:2] == [
        "user: Port the importer to the new API.",
        "user: Fix the flaky login test on CI.",
    ]


def test_two_sessions_said_side_by_side_are_both_told(tmp_path: Path) -> None:
    """Two agents at once: their messages interleave, and each session gives its request."""
    backend = make(tmp_path)
    _said_at(backend, "a", [("user", "Write the release notes for 2.4.", "2026-11-30T09:00:00Z"),
                            ("user", "Add the changelog link too.", "2026-11-30T11:00:00Z")])  # fmt: skip
    _said_at(backend, "b", [("user", "Migrate the billing cron to the new scheduler.", "2026-11-30T10:00:00Z")])
    assert recall(backend, "what did we do yesterday?")[:2] == [
        "user: Write the release notes for 2.4.",
        "user: Migrate the billing cron to the new scheduler.",
    ]
