"""The vague time words of chat as periods (ADR 204): the spans, and recall on a real SQLite file."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from hindsight_hooks.backends.base import RecallRequest
from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.backends.local_time import time_window
from tests.backends.test_local_support import item, make

SUNDAY = datetime(2026, 11, 29, 12, tzinfo=UTC)
WEDNESDAY = datetime(2026, 11, 25, 12, tzinfo=UTC)


def days(window: tuple[float, float] | None) -> tuple[str, str] | None:
    """The first day of ``window`` and the day it ends before, as ``MM-DD``."""
    if window is None:
        return None
    return tuple(datetime.fromtimestamp(t, UTC).strftime("%m-%d") for t in window)  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("query", "on_sunday", "on_wednesday"),
    [
        ("what did we do this morning?", ("11-29", "11-30"), ("11-25", "11-26")),
        ("what did I say last night?", ("11-28", "11-30"), ("11-24", "11-26")),
        ("what did we decide the other day?", ("11-23", "11-29"), ("11-19", "11-25")),
        ("what did we fix earlier this afternoon?", ("11-29", "11-30"), ("11-25", "11-26")),
        ("earlier tonight you said", ("11-29", "11-30"), ("11-25", "11-26")),
        ("what did we fix this afternoon?", ("11-29", "11-30"), ("11-25", "11-26")),  # a question about the past
        ("what was decided tonight?", ("11-29", "11-30"), ("11-25", "11-26")),
        ("what did we agree last evening?", ("11-28", "11-30"), ("11-24", "11-26")),
        ("the other night we chose Kafka", ("11-23", "11-29"), ("11-19", "11-25")),
        # British "fortnight" is two weeks (ADR 214)
        ("a fortnight ago", ("11-15", "11-22"), ("11-11", "11-18")),
        ("over the last fortnight", ("11-15", "11-30"), ("11-11", "11-26")),
        ("a few days ago", ("11-23", "11-29"), ("11-19", "11-25")),
        ("few days back", ("11-23", "11-29"), ("11-19", "11-25")),
        ("a couple of days ago", ("11-26", "11-29"), ("11-22", "11-25")),
        ("couple days back", ("11-26", "11-29"), ("11-22", "11-25")),
        ("a couple of weeks ago", ("11-08", "11-23"), ("11-04", "11-19")),
        ("a few weeks back", ("10-25", "11-16"), ("10-21", "11-12")),
        # the latest weekend, today included when it is one; "last weekend" on a weekend: the one before
        ("what happened over the weekend?", ("11-28", "11-30"), ("11-21", "11-23")),
        ("this past weekend", ("11-28", "11-30"), ("11-21", "11-23")),
        ("what did we decide last weekend?", ("11-21", "11-23"), ("11-21", "11-23")),
        ("in the last few days", ("11-25", "11-30"), ("11-21", "11-26")),
        ("over the past week", ("11-22", "11-30"), ("11-18", "11-26")),
        ("the last couple of weeks", ("11-15", "11-30"), ("11-11", "11-26")),
        ("the past few weeks", ("11-01", "11-30"), ("10-28", "11-26")),
        ("in the last couple of days", ("11-27", "11-30"), ("11-23", "11-26")),
        ("in the last 3 days", ("11-26", "11-30"), ("11-22", "11-26")),
        ("the past two weeks", ("11-15", "11-30"), ("11-11", "11-26")),
        ("the week before last", ("11-15", "11-22"), ("11-11", "11-18")),
        # "back" says "ago" in chat
        ("two weeks back we chose Kafka", ("11-15", "11-22"), ("11-11", "11-18")),
        ("3 days back", ("11-26", "11-27"), ("11-22", "11-23")),
    ],
)
def test_a_vague_time_is_the_span_it_most_likely_means(
    query: str, on_sunday: tuple[str, str], on_wednesday: tuple[str, str]
) -> None:
    assert days(time_window(query, SUNDAY.timestamp())) == on_sunday
    assert days(time_window(query, WEDNESDAY.timestamp())) == on_wednesday


@pytest.mark.parametrize(
    "query",
    [
        "the other option is Redis",
        "a few more tests",
        "the past tense of run",
        "a couple of reviewers",
        "the night shift runbook",
        "weekend deploys are frozen",
        "we never deploy on the weekend",  # a habit
        "roll back 2 commits",
        "go back to the last page",
        "the last 3 tests",
        "the past 3 releases",
        "tonight plans",  # a time to come, more often than not: a window holds what was said
        "what do we ship this afternoon?",
        "few people know the key",
    ],
)
def test_the_same_words_that_name_no_time_are_no_period(query: str) -> None:
    assert time_window(query, SUNDAY.timestamp()) is None


def test_a_named_time_still_wins_over_a_vague_one() -> None:
    """ "yesterday" and "3 days ago" name one day; a vague word beside them does not widen it."""
    assert days(time_window("the other thing we did yesterday", SUNDAY.timestamp())) == ("11-28", "11-29")
    assert days(time_window("a few notes from 3 days ago", SUNDAY.timestamp())) == ("11-26", "11-27")


def said(backend: LocalBackend, *turns: tuple[str, str, str]) -> LocalBackend:
    """Each ``(session, time, text)`` retained as its own session's one user turn, said then."""
    for op, when, text in turns:
        turn = json.dumps([{"role": "user", "content": text, "timestamp": when}])
        backend.retain_batch("b", [item(turn, op, source="auto", timestamp=when)], operation_id=op)
    return backend


QUEUE = (
    ("a", "2026-11-05T10:00:00Z", "We agreed the queue dashboard lives in Grafana, next to the API panels."),
    ("b", "2026-11-26T15:00:00Z", "We agreed to cap the queue at 500 jobs per worker."),
    ("c", "2026-11-12T09:00:00Z", "We agreed the queue consumers run in the workers namespace."),
    ("d", "2026-11-28T21:30:00Z", "We agreed the queue alerts page the on-call only after 10 minutes."),
    ("e", "2026-11-21T11:00:00Z", "We agreed the queue migration waits for the release freeze to end."),
)


@pytest.mark.parametrize(
    ("question", "first"),
    [
        ("what did we agree the other day about the queue?", "cap the queue"),
        ("what did we agree last night about the queue?", "the queue alerts"),
        ("what did we agree about the queue last weekend?", "the queue migration"),
        ("a few weeks back we agreed something about the queue, what?", "the queue consumers"),
    ],
)
def test_a_vague_time_puts_what_was_said_then_first(tmp_path: Path, question: str, first: str) -> None:
    """A user's trial (ADR 204): five agreements about the queue over a month. Asked with a vague
    time, each question got the same order, the one of 17 days ago first: the time was not read."""
    backend = said(make(tmp_path), *QUEUE)
    hits = backend.recall("b", RecallRequest(query=question, query_timestamp="2026-11-29T12:00:00Z")).hits
    assert first in hits[0].text
    assert "+time" in backend.last_search_mode
    assert len(hits) == len(QUEUE)  # what was said at other times stays, after
