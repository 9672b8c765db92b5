"""A question about where the work was left is answered by the session before (ADR 222)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hindsight_hooks.backends.base import BankSpec, InContext, RecallRequest
from hindsight_hooks.backends.local_activity import asks_what_is_next, asks_where_we_left_off
from hindsight_hooks.backends.semantic import StaticEmbedder
from tests.backends.test_local_activity import DAY, EARLIER, TASKS
from tests.backends.test_local_support import QUESTIONS_ASKED_ON as ASKED_ON
from tests.backends.test_local_support import (
    make,
    retain_talks,
    with_vectors_in_memory,
    words_of_the_period,
)
from tests.backends.test_local_support import recalled as recall

LAST = (
    "2026-12-01T09:00:00Z",
    [
        ("user", "Add rate limiting to the public API."),
        ("assistant", "I added a token bucket in api/limits.py; the burst traffic tests still fail."),
        ("toolResult", "FAILED tests/test_limits.py::test_burst - assert 429 == 200"),
        ("user", "ok, we'll pick up the burst tests tomorrow"),
        ("assistant", "Noted: the burst tests are left to fix."),
        ("user", "thanks"),
    ],
)
OPENED = "user: Add rate limiting to the public API."
ENDED = [
    "assistant: I added a token bucket in api/limits.py; the burst traffic tests still fail.",
    "user: ok, we'll pick up the burst tests tomorrow",
    "assistant: Noted: the burst tests are left to fix.",
]
BEFORE = [f"user: {TASKS[2]}", f"user: {TASKS[1]}", f"user: {TASKS[0]}", "user: Set up the staging database backups."]

ASKED = [
    "where did we leave off?", "where were we?", "Where did I stop?", "let's continue where we left off",
    "what were we working on?", "what was I doing last time?", "remind me what we were doing",
    "what were we in the middle of?", "what have we been working on?", "what did we do last session?",
    "what did I ask you last time?", "what was the last thing I asked you?", "what did we talk about last time?",
    "Remind me what we did.", "tell me what we worked on", "recap what I got done", "summarize what you did",
    "Wo waren wir stehen geblieben?", "Où en étions-nous ?", "¿Dónde lo dejamos?", "Dove eravamo rimasti?",
    "Onde paramos?", "Waar waren we gebleven?", "На чём мы остановились?", "Na czym skończyliśmy?",
    "На чому ми зупинилися?",
]  # fmt: skip


@pytest.mark.parametrize("question", ASKED)
def test_a_question_about_where_the_work_was_left(question: str) -> None:
    assert asks_where_we_left_off(question, words_of_the_period(question, ASKED_ON))


@pytest.mark.parametrize(
    "question",
    ["where did we leave off with the billing migration?", "last time you said the cache was Redis",
     "what were we doing about the flaky test?", "where were we on the API design?", "what did we do?",
     "what's the status?", "where is the config file?", "what is the last time the backup ran?",
     "where were we on it?", "where did we leave off with that?", "remind me what we did to the cache",
     "that's what we did"],
)  # fmt: skip
def test_a_question_with_a_subject_of_its_own_is_searched_as_before(question: str) -> None:
    assert not asks_where_we_left_off(question, words_of_the_period(question, ASKED_ON))


@pytest.mark.parametrize("semantic", [False, True], ids=["lexical", "hybrid"])
def test_the_last_session_is_shown_from_its_request_to_how_it_ended(tmp_path: Path, semantic: bool) -> None:
    """Before: nothing at all for "where did we leave off?" (no unit says "leave"), and the
    "where were we?" of stop words only was not searched."""
    backend = retain_talks(
        make(tmp_path, semantic=StaticEmbedder()) if semantic else make(tmp_path), [EARLIER, *DAY, LAST]
    )
    if semantic:
        with_vectors_in_memory(backend, "limits")
    for question in ("where did we leave off?", "where were we?", "Wo waren wir stehen geblieben?"):
        hits = recall(backend, question)
        assert hits[:4] == [OPENED, *ENDED], question  # the tool's log and the "thanks" are no ending
        assert hits[4:8] == BEFORE, question  # then the sessions before it, newest first


def test_the_asking_session_is_passed_over(tmp_path: Path) -> None:
    """Asked inside a session whose messages the store holds already, the question is about the
    session before it: the live one's first request (in view) would otherwise take its place."""
    backend = retain_talks(make(tmp_path), [*DAY, LAST])
    live = InContext("s3", [{"role": "user", "content": "where did we leave off?"}])  # LAST is document s3
    hits = recall(backend, "where did we leave off?", seen=live)
    assert OPENED not in hits and not set(ENDED) & set(hits)
    # the release session ended on three reports ("next 8" is too short to say how it ended)
    steps = [f"assistant: Step {k} of session 2: edited module{k}.py, checks pass." for k in (6, 7, 8)]
    assert hits[:6] == [f"user: {TASKS[2]}", *steps, f"user: {TASKS[1]}", f"user: {TASKS[0]}"]


def test_the_limit_and_the_period_hold(tmp_path: Path) -> None:
    backend = retain_talks(make(tmp_path), [EARLIER, *DAY, LAST])
    assert recall(backend, "where did we leave off?", limit=3) == [OPENED, *ENDED[:2]]
    # "yesterday" is Monday 30 November: the day's last session, then the two before it
    yesterday = recall(backend, "where did we leave off yesterday?")
    assert yesterday[0] == f"user: {TASKS[2]}"
    assert OPENED not in yesterday and f"user: {TASKS[1]}" in yesterday
    assert "user: Set up the staging database backups." not in yesterday


def test_a_subject_is_searched_as_before(tmp_path: Path) -> None:
    backend = retain_talks(make(tmp_path), [EARLIER, *DAY, LAST])
    assert recall(backend, "where did we leave off with the billing cron?")[0] == f"user: {TASKS[0]}"


def test_a_forgotten_message_is_not_brought_back(tmp_path: Path) -> None:
    backend = retain_talks(make(tmp_path), [*DAY, LAST])
    noted = next(
        h
        for h in backend.recall("b", RecallRequest(query="burst tests noted", query_timestamp=ASKED_ON)).hits
        if h.text == ENDED[2]
    )
    assert noted.id is not None and backend.forget_unit("b", noted.id)
    hits = recall(backend, "where did we leave off?")
    assert ENDED[2] not in hits
    assert hits[:3] == [OPENED, *ENDED[:2]]


def test_an_empty_bank_answers_nothing(tmp_path: Path) -> None:
    backend = make(tmp_path)
    backend.ensure_bank("b", BankSpec())
    assert recall(backend, "where did we leave off?") == []


_WORDS = ("cache", "schema", "deploy", "router", "billing", "token", "bucket", "invoice", "parser", "module")
_SAID = st.lists(
    st.tuples(st.sampled_from(["user", "assistant", "toolResult"]), st.lists(st.sampled_from(_WORDS), max_size=4)),
    min_size=1,
    max_size=7,
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions=st.lists(_SAID, min_size=1, max_size=5), live=st.none() | st.integers(0, 4), limit=st.integers(1, 9))
def test_the_walk_shows_the_last_session_then_the_ones_before_in_order(
    sessions: list[list[tuple[str, list[str]]]], live: int | None, limit: int
) -> None:
    """Whatever the sessions say: the newest session but the asking one gives its first request and
    its last three messages (of at least 12 characters, a tool's excepted) in the order said, each
    session before it its first request, newest first; nothing else, nothing twice, up to the limit."""
    talks = [
        (
            f"2026-11-{n + 1:02d}T10:00:00Z",
            [(role, " ".join([*words, f"m{n}x{k}"])) for k, (role, words) in enumerate(said)],
        )
        for n, said in enumerate(sessions)
    ]  # every text its own (the block shows one text once)
    live_doc = None if live is None or live >= len(talks) else f"s{live}"
    expected: list[str] = []
    walked = [n for n in reversed(range(len(talks))) if f"s{n}" != live_doc][:limit]
    for place, n in enumerate(walked):
        said = [f"{role}: {text}" for role, text in talks[n][1]]
        opener = next((s for s in said if s.startswith("user: ") and len(s) >= 18), None)
        expected += [opener] if opener else []
        if place == 0:
            ending = [s for s in said if s.split(": ", 1)[0] in {"user", "assistant"} and len(s) >= 18][-3:]
            expected += [s for s in ending if s != opener]
    with tempfile.TemporaryDirectory() as folder:
        backend = retain_talks(make(Path(folder)), talks)
        seen = (
            None if live_doc is None else InContext(live_doc, [{"role": "user", "content": "where did we leave off?"}])
        )
        try:
            assert recall(backend, "where did we leave off?", limit, seen) == expected[:limit]
        finally:
            backend.close()


@settings(max_examples=200, deadline=None)
@given(question=st.sampled_from(ASKED), subject=st.sampled_from(_WORDS), joint=st.sampled_from(["with", "on", "about"]))
def test_a_subject_added_to_any_form_makes_it_a_search(question: str, subject: str, joint: str) -> None:
    """ "Where did we leave off with the billing?" asks about the billing: searched as before."""
    asked = f"{question.rstrip('?？ ')} {joint} the {subject}?"
    assert not asks_where_we_left_off(asked, words_of_the_period(asked, ASKED_ON))


NEXT = ["what's next?", "what's left to do?", "what should we do next?", "any open items?", "next steps?",
        "Was ist noch offen?", "Qu'est-ce qui reste à faire ?", "¿Qué queda por hacer?", "Cosa resta da fare?",
        "Wat moet er nog gebeuren?", "Что осталось?", "Co dalej?", "Що далі?"]  # fmt: skip


STATUS = ["what's the status?", "status update?", "where are we?", "where are we at?", "where do things stand?",
          "catch me up", "bring me up to speed", "Wie ist der Stand?", "Où en est-on ?", "¿En qué punto estamos?",
          "A che punto siamo?", "Em que ponto estamos?", "Hoe staan we ervoor?", "Какой статус?",
          "Jaki jest status?", "Який статус?"]  # fmt: skip


@pytest.mark.parametrize("question", [*NEXT, *STATUS])
def test_a_question_about_what_is_left_to_do(question: str) -> None:
    assert asks_what_is_next(question, words_of_the_period(question, ASKED_ON))


@pytest.mark.parametrize(
    "question",
    ["what's left of the billing migration?", "what are the next steps for the release?", "next?!",
     "what's the status of the billing migration?", "where are we deploying the API?", "where are we with it?",
     "Wie ist der Stand beim Login?"],
)  # fmt: skip
def test_what_is_left_of_a_subject_is_searched(question: str) -> None:
    assert not asks_what_is_next(question, words_of_the_period(question, ASKED_ON))


def test_what_is_next_opening_a_session_is_where_we_left_off(tmp_path: Path) -> None:
    """As a session's first prompt "what's next?" asks where the last one stopped; inside a session
    it asks about the work in view, and is searched by its words as before."""
    backend = retain_talks(make(tmp_path), [*DAY, LAST])
    opening = InContext("s9", [{"role": "user", "content": "what's next?"}])
    assert recall(backend, "what's next?", seen=opening)[:4] == [OPENED, *ENDED]
    inside = InContext("s9", [{"role": "user", "content": "Rename the helper."},
                              {"role": "assistant", "content": "Renamed."},
                              {"role": "user", "content": "what's next?"}])  # fmt: skip
    assert OPENED not in recall(backend, "what's next?", seen=inside)
    assert OPENED not in recall(backend, "what's next?")  # a tool's recall: no session in view


@pytest.mark.parametrize("question", ["what's the status?", "where are we?", "Wie ist der Stand?"])
def test_how_things_stand_opening_a_session_is_where_we_left_off(tmp_path: Path, question: str) -> None:
    """ "What's the status?" to begin a session asks how the last one ended (ADR 229); inside a
    session it asks about the work in view, and is searched by its words as before."""
    backend = retain_talks(make(tmp_path), [*DAY, LAST])
    opening = InContext("s9", [{"role": "user", "content": question}])
    assert recall(backend, question, seen=opening)[:4] == [OPENED, *ENDED]
    inside = InContext("s9", [{"role": "user", "content": "Rename the helper."},
                              {"role": "assistant", "content": "Renamed."},
                              {"role": "user", "content": question}])  # fmt: skip
    assert OPENED not in recall(backend, question, seen=inside)
