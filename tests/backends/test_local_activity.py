"""A question about what was done in a period is answered session by session (ADR 221)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from hindsight_hooks.backends.base import RecallRequest
from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.backends.local_activity import asks_what_was_done
from hindsight_hooks.backends.local_recall import period_words
from hindsight_hooks.backends.local_text import query_terms
from hindsight_hooks.backends.local_time import time_window
from hindsight_hooks.timefmt import epoch_from_iso
from tests.backends.test_local_support import item, make

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


def sessions(backend: LocalBackend, talks: list[tuple[str, list[tuple[str, str]]]]) -> LocalBackend:
    for n, (when, talk) in enumerate(talks):
        start = epoch_from_iso(when) or 0.0
        said = json.dumps([
            {"role": role, "content": text, "timestamp": (start + k) * 1000} for k, (role, text) in enumerate(talk)
        ])  # fmt: skip
        backend.retain_batch("b", [item(said, f"s{n}", source="auto", timestamp=when)], operation_id=f"o{n}")
    return backend


def recall(backend: LocalBackend, question: str, limit: int = 8) -> list[str]:
    request = RecallRequest(query=question, query_timestamp=ASKED_ON, limit=limit)
    return [hit.text for hit in backend.recall("b", request).hits]


def _period_words(question: str) -> Callable[[str], bool]:
    reference = epoch_from_iso(ASKED_ON) or 0.0
    return period_words(question, reference, time_window(question, reference))


@pytest.mark.parametrize(
    "question",
    ["what did we do yesterday?", "what did I work on last week?", "what happened on Monday?",
     "what have we been working on this week?", "Was haben wir gestern gemacht?",
     "Qu'est-ce qu'on a fait hier ?", "¿Qué hicimos ayer?"],
)  # fmt: skip
def test_a_question_about_what_was_done_in_a_period(question: str) -> None:
    assert asks_what_was_done(question, query_terms(question), _period_words(question))


@pytest.mark.parametrize(
    "question", ["what happened to the cache yesterday?", "how do we deploy?", "what did we deploy yesterday?"]
)
def test_a_question_with_a_subject_is_no_question_about_the_day(question: str) -> None:
    assert not asks_what_was_done(question, query_terms(question), _period_words(question))


def test_yesterday_is_told_session_by_session(tmp_path: Path) -> None:
    """Before: eight messages of the evening session, neither the billing migration nor the login fix."""
    backend = sessions(make(tmp_path), [*DAY, EARLIER])
    hits = recall(backend, "what did we do yesterday?")
    assert hits[:3] == [f"user: {TASKS[2]}", f"user: {TASKS[1]}", f"user: {TASKS[0]}"]  # the newest session first
    assert "user: Set up the staging database backups." not in hits  # the 25th is not yesterday
    assert recall(backend, "Was haben wir gestern gemacht?")[:3] == hits[:3]


def test_a_sessions_first_word_that_says_nothing_gives_way_to_its_first_request(tmp_path: Path) -> None:
    when, talk = DAY[0]
    backend = sessions(make(tmp_path), [(when, [("user", "ok"), ("assistant", "Hi!"), *talk])])
    assert recall(backend, "what did we do yesterday?")[0] == f"user: {TASKS[0]}"


def test_a_forgotten_first_request_is_not_brought_back(tmp_path: Path) -> None:
    backend = sessions(make(tmp_path), DAY)
    opener = next(
        h
        for h in backend.recall("b", RecallRequest(query="billing cron", query_timestamp=ASKED_ON)).hits
        if h.text == f"user: {TASKS[0]}"
    )
    assert opener.id is not None and backend.forget_unit("b", opener.id)
    hits = recall(backend, "what did we do yesterday?")
    assert f"user: {TASKS[0]}" not in hits
    assert hits[:2] == [f"user: {TASKS[2]}", f"user: {TASKS[1]}"]
