"""The time words of a year's memories as periods (ADR 208): seasons, parts of a month, months and
years back, in English and as the other languages' phrases are rewritten; and recall on a real file."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from hindsight_hooks.backends.base import RecallRequest
from hindsight_hooks.backends.local_time import date_numbers, time_window
from tests.backends.test_local_support import make
from tests.backends.test_local_time_spans import said

NOVEMBER = datetime(2026, 11, 29, 12, tzinfo=UTC)  # autumn
JULY = datetime(2026, 7, 15, 12, tzinfo=UTC)  # summer
JANUARY = datetime(2026, 1, 10, 12, tzinfo=UTC)  # winter, the new year just begun


def days(window: tuple[float, float] | None) -> tuple[str, str] | None:
    """The first day of ``window`` and the day it ends before, as ``YY-MM-DD``."""
    if window is None:
        return None
    return tuple(datetime.fromtimestamp(t, UTC).strftime("%y-%m-%d") for t in window)  # type: ignore[return-value]


def on(query: str, day: datetime) -> tuple[str, str] | None:
    return days(time_window(query, day.timestamp()))


@pytest.mark.parametrize(
    ("query", "in_november", "in_july", "in_january"),
    [
        # a season: "last" is the latest that has ended; "this" is this year's, none before it begins
        ("what did we decide last summer?", ("26-06-01", "26-09-01"), ("25-06-01", "25-09-01"),
         ("25-06-01", "25-09-01")),
        ("this summer", ("26-06-01", "26-09-01"), ("26-06-01", "26-07-16"), None),
        ("over the summer", ("26-06-01", "26-09-01"), ("26-06-01", "26-07-16"), ("25-06-01", "25-09-01")),
        ("this past summer", ("26-06-01", "26-09-01"), ("26-06-01", "26-07-16"), ("25-06-01", "25-09-01")),
        ("this winter", None, None, ("25-12-01", "26-01-11")),
        ("last winter", ("25-12-01", "26-03-01"), ("25-12-01", "26-03-01"), ("24-12-01", "25-03-01")),
        ("last fall", ("25-09-01", "25-12-01"), ("25-09-01", "25-12-01"), ("25-09-01", "25-12-01")),
        ("last spring", ("26-03-01", "26-06-01"), ("26-03-01", "26-06-01"), ("25-03-01", "25-06-01")),
        ("the summer of 2025", ("25-06-01", "25-09-01"), ("25-06-01", "25-09-01"), ("25-06-01", "25-09-01")),
        ("in summer 2025 we", ("25-06-01", "25-09-01"), ("25-06-01", "25-09-01"), ("25-06-01", "25-09-01")),
        ("winter 2025", ("24-12-01", "25-03-01"), ("24-12-01", "25-03-01"), ("24-12-01", "25-03-01")),
        # a part of a month: the latest that has begun
        ("early March", ("26-03-01", "26-03-11"), ("26-03-01", "26-03-11"), ("25-03-01", "25-03-11")),
        ("mid-March", ("26-03-11", "26-03-21"), ("26-03-11", "26-03-21"), ("25-03-11", "25-03-21")),
        ("late November", ("26-11-21", "26-12-01"), ("25-11-21", "25-12-01"), ("25-11-21", "25-12-01")),
        ("at the beginning of December", ("25-12-01", "25-12-11"), ("25-12-01", "25-12-11"),
         ("25-12-01", "25-12-11")),
        ("the end of May 2025", ("25-05-21", "25-06-01"), ("25-05-21", "25-06-01"), ("25-05-21", "25-06-01")),
        ("in early March 2025", ("25-03-01", "25-03-11"), ("25-03-01", "25-03-11"), ("25-03-01", "25-03-11")),
        # quarters and years
        ("last quarter", ("26-07-01", "26-10-01"), ("26-04-01", "26-07-01"), ("25-10-01", "26-01-01")),
        ("this quarter", ("26-10-01", "26-11-30"), ("26-07-01", "26-07-16"), ("26-01-01", "26-01-11")),
        ("earlier this year", ("26-01-01", "26-11-30"), ("26-01-01", "26-07-16"), ("26-01-01", "26-01-11")),
        ("the year before last", ("24-01-01", "25-01-01"), ("24-01-01", "25-01-01"), ("24-01-01", "25-01-01")),
        # lately, and months or years back
        ("the past few months", ("26-08-01", "26-11-30"), ("26-03-17", "26-07-16"), ("25-09-12", "26-01-11")),
        ("the last couple of months", ("26-09-29", "26-11-30"), ("26-05-15", "26-07-16"),
         ("25-11-10", "26-01-11")),
        ("the past 3 months", ("26-08-28", "26-11-30"), ("26-04-13", "26-07-16"), ("25-10-09", "26-01-11")),
        ("the past year", ("25-11-29", "26-11-30"), ("25-07-15", "26-07-16"), ("25-01-10", "26-01-11")),
        ("the last twelve months", ("25-11-29", "26-11-30"), ("25-07-15", "26-07-16"),
         ("25-01-10", "26-01-11")),
        ("a couple of months ago", ("26-08-31", "26-10-31"), ("26-04-16", "26-06-16"),
         ("25-10-12", "25-12-12")),
        ("a few months back", ("26-06-02", "26-10-01"), ("26-01-16", "26-05-17"), ("25-07-14", "25-11-12")),
        ("a year ago", ("25-09-30", "26-01-28"), ("25-05-16", "25-09-13"), ("24-11-11", "25-03-11")),
        ("two years back", ("24-09-30", "25-01-28"), ("24-05-16", "24-09-13"), ("23-11-12", "24-03-11")),
        ("a year or so ago", ("25-09-30", "26-01-28"), ("25-05-16", "25-09-13"), ("24-11-11", "25-03-11")),
        # the holidays: the latest that have begun
        ("over the holidays", ("25-12-20", "26-01-07"), ("25-12-20", "26-01-07"), ("25-12-20", "26-01-07")),
        ("around Christmas", ("25-12-20", "26-01-07"), ("25-12-20", "26-01-07"), ("25-12-20", "26-01-07")),
        # a third of a year (ADR 214): early January–April, mid May–August, late / end September–December
        ("what did we decide early last year?", ("25-01-01", "25-05-01"), ("25-01-01", "25-05-01"),
         ("25-01-01", "25-05-01")),
        ("late last year", ("25-09-01", "26-01-01"), ("25-09-01", "26-01-01"), ("25-09-01", "26-01-01")),
        ("at the end of last year", ("25-09-01", "26-01-01"), ("25-09-01", "26-01-01"), ("25-09-01", "26-01-01")),
        ("mid-2025", ("25-05-01", "25-09-01"), ("25-05-01", "25-09-01"), ("25-05-01", "25-09-01")),
        ("in late 2024", ("24-09-01", "25-01-01"), ("24-09-01", "25-01-01"), ("24-09-01", "25-01-01")),
        # this year's: up to today, and none before it begins ("late this year" asked in July: a plan)
        ("at the start of the year", ("26-01-01", "26-05-01"), ("26-01-01", "26-05-01"), ("26-01-01", "26-01-11")),
        ("late this year", ("26-09-01", "26-11-30"), None, None),
        ("what happened mid this year?", ("26-05-01", "26-09-01"), ("26-05-01", "26-07-16"), None),
        ("early next year", None, None, None),
        # "this time last year" is a year ago, two months either side
        ("what did we do this time last year?", ("25-09-30", "26-01-28"), ("25-05-16", "25-09-13"),
         ("24-11-11", "25-03-11")),
        ("last year around this time", ("25-09-30", "26-01-28"), ("25-05-16", "25-09-13"), ("24-11-11", "25-03-11")),
        # "last Christmas", "at Christmas" are the holidays
        ("what did we ship last Christmas?", ("25-12-20", "26-01-07"), ("25-12-20", "26-01-07"),
         ("25-12-20", "26-01-07")),
        # halves of a year, and the first or last week of a month
        ("the first half of last year", ("25-01-01", "25-07-01"), ("25-01-01", "25-07-01"), ("25-01-01", "25-07-01")),
        ("the second half of this year", ("26-07-01", "26-11-30"), ("26-07-01", "26-07-16"), None),
        ("what did we ship in the first week of March?", ("26-03-01", "26-03-08"), ("26-03-01", "26-03-08"),
         ("25-03-01", "25-03-08")),
        ("the last week of February 2025", ("25-02-24", "25-03-01"), ("25-02-24", "25-03-01"),
         ("25-02-24", "25-03-01")),
        # the calendar month two before this one
        ("what did we decide the month before last?", ("26-09-01", "26-10-01"), ("26-05-01", "26-06-01"),
         ("25-11-01", "25-12-01")),
        # a part word without a year names none of these
        ("the end of the day", None, None, None),
        ("late night fix", None, None, None),
    ],
)  # fmt: skip
def test_a_year_scale_time_is_the_period_it_most_likely_means(
    query: str,
    in_november: tuple[str, str] | None,
    in_july: tuple[str, str] | None,
    in_january: tuple[str, str] | None,
) -> None:
    assert (on(query, NOVEMBER), on(query, JULY), on(query, JANUARY)) == (in_november, in_july, in_january)


@pytest.mark.parametrize(
    "query",
    [
        "we slow down in the summer",  # a habit
        "during the winter the cache is cold",
        "we ship this winter",  # asked in November: a plan
        "fall back to sqlite",
        "the end of the queue",
        "we may start early",
        "the start of the file",
        "new year's resolutions list",
        "what is planned for Q3?",  # a plan as often as a memory
        "the year field of the form",
        "a few more months of data",
    ],
)
def test_the_same_words_that_name_no_period_name_none(query: str) -> None:
    assert on(query, NOVEMBER) is None


def test_a_named_day_still_wins_and_a_periods_numbers_are_not_searched() -> None:
    assert on("what did we do yesterday about the summer release?", NOVEMBER) == ("26-11-28", "26-11-29")
    assert date_numbers("the summer of 2025") == {"2025"}
    assert date_numbers("in the past 3 months") == {"3"}
    assert date_numbers("early March 2025") >= {"2025"}


@pytest.mark.parametrize(
    ("query", "english"),
    [
        ("was haben wir letzten Sommer entschieden?", "last summer"),
        ("im vergangenen Winter", "last winter"),
        ("qu'avons-nous décidé l'été dernier ?", "last summer"),
        ("le printemps dernier", "last spring"),
        ("el verano pasado", "last summer"),
        ("l'estate scorsa", "last summer"),
        ("no verão passado", "last summer"),
        ("vorige zomer", "last summer"),
        ("прошлой зимой", "last winter"),
        ("zeszłego lata", "last summer"),
        ("минулої зими", "last winter"),
        ("diesen Sommer", "this summer"),
        ("cet été", "this summer"),
        ("quest'estate", "this summer"),
        ("этим летом", "this summer"),
        ("dieses Jahr", "earlier this year"),
        ("cette année", "earlier this year"),
        ("este año", "earlier this year"),
        ("quest'anno", "earlier this year"),
        ("dit jaar", "earlier this year"),
        ("в этом году", "earlier this year"),
        ("w tym roku", "earlier this year"),
        ("цього року", "earlier this year"),
        ("vor ein paar Monaten", "a few months ago"),
        ("il y a quelques mois", "a few months ago"),
        ("hace unos meses", "a few months ago"),
        ("qualche mese fa", "a few months ago"),
        ("há alguns meses", "a few months ago"),
        ("een paar maanden geleden", "a few months ago"),
        ("несколько месяцев назад", "a few months ago"),
        ("kilka miesięcy temu", "a few months ago"),
        ("кілька місяців тому", "a few months ago"),
        ("vor einem Jahr", "a year ago"),
        ("il y a un an", "a year ago"),
        ("hace un año", "a year ago"),
        ("un anno fa", "a year ago"),
        ("een jaar geleden", "a year ago"),
        ("год назад", "a year ago"),
        ("rok temu", "a year ago"),
        ("рік тому", "a year ago"),
        ("vor zwei Jahren", "two years ago"),
        ("il y a deux ans", "two years ago"),
        ("dwa lata temu", "two years ago"),
    ],
)
def test_the_other_languages_say_the_same_periods(query: str, english: str) -> None:
    assert on(query, NOVEMBER) == on(english, NOVEMBER) is not None


PIPELINE = (
    ("a", "2025-11-20T10:00:00Z", "We agreed the deploy pipeline builds on every merge to main."),
    ("b", "2025-12-23T15:00:00Z", "We agreed the deploy pipeline stays frozen until January 5."),
    ("c", "2026-03-04T09:00:00Z", "We agreed the deploy pipeline signs every image with cosign."),
    ("d", "2026-07-14T11:00:00Z", "We agreed the deploy pipeline runs the smoke tests in staging first."),
    ("e", "2026-09-30T16:00:00Z", "We agreed the deploy pipeline pages the release owner when it fails."),
    ("f", "2026-11-24T10:00:00Z", "We agreed the deploy pipeline moves to the new runners next week."),
)


@pytest.mark.parametrize(
    ("question", "first"),
    [
        ("what did we agree about the deploy pipeline last summer?", ["smoke tests"]),
        ("in early March we agreed something about the deploy pipeline, what?", ["signs every image"]),
        ("what did we agree about the deploy pipeline a couple of months ago?", ["pages the release owner"]),
        ("what did we agree about the deploy pipeline over the holidays?", ["stays frozen"]),
        ("was haben wir letzten Sommer zur deploy pipeline vereinbart?", ["smoke tests"]),
        # "a year ago" is two months either side: both agreements said around then come first
        ("what did we agree about the deploy pipeline a year ago?", ["every merge", "stays frozen"]),
        ("qu'a-t-on convenu pour la deploy pipeline il y a un an ?", ["every merge", "stays frozen"]),
    ],
)
def test_a_year_scale_time_puts_what_was_said_then_first(tmp_path: Path, question: str, first: list[str]) -> None:
    """A user's trial (ADR 208): a year of agreements about one pipeline. Asked with a season, a part
    of a month or "a year ago", each question got the same order, the newest first: the time was
    not read."""
    backend = said(make(tmp_path), *PIPELINE)
    hits = backend.recall("b", RecallRequest(query=question, query_timestamp="2026-11-29T12:00:00Z")).hits
    assert sorted(next(text for text in first if text in hit.text) for hit in hits[: len(first)]) == sorted(first)
    assert "+time" in backend.last_search_mode
    assert len(hits) == len(PIPELINE)  # what was said at other times stays, after


@pytest.mark.parametrize(
    ("query", "period"),
    [
        ("what did we decide in the spring?", ("26-03-01", "26-06-01")),
        ("during the winter we had outages, which ones?", ("25-12-01", "26-03-01")),
        ("what was agreed in the fall?", ("26-09-01", "26-11-30")),  # the autumn going on, up to today
        ("what will we do in the summer?", None),  # a plan
        ("we slow down in the summer", None),  # a habit
    ],
)
def test_in_the_season_names_one_only_in_a_question_about_the_past(query: str, period: tuple[str, str] | None) -> None:
    assert on(query, NOVEMBER) == period


def local_days(window: tuple[float, float] | None) -> tuple[str, str] | None:
    """A window's first day and the day after its last, on this machine's clock."""
    if window is None:
        return None
    first, after = (datetime.fromtimestamp(t, tz=UTC).astimezone().date().isoformat() for t in window)
    return first, after


@pytest.mark.parametrize(
    ("zone", "query", "expected"),
    [
        ("Australia/Sydney", "what did we decide last summer?", ("2025-12-01", "2026-03-01")),
        ("Australia/Sydney", "the summer of 2025", ("2024-12-01", "2025-03-01")),
        ("Australia/Sydney", "what did we ship this spring?", ("2026-09-01", "2026-11-30")),
        ("Australia/Sydney", "what will we do this summer?", None),  # Sydney's summer is still to come
        ("NZ", "what did we change over the winter?", ("2026-06-01", "2026-09-01")),
        ("America/Argentina/Buenos_Aires", "what did we decide last autumn?", ("2026-03-01", "2026-06-01")),
        ("America/New_York", "what did we decide last summer?", ("2026-06-01", "2026-09-01")),
        ("Asia/Jakarta", "what did we decide last summer?", ("2026-06-01", "2026-09-01")),  # tropics: northern
    ],
)
def test_seasons_follow_the_users_hemisphere(
    user_zone: Callable[[str], None], zone: str, query: str, expected: tuple[str, str] | None
) -> None:
    """ADR 213: before, "last summer" asked in Sydney in November was June to August, its winter."""
    user_zone(zone)
    assert local_days(time_window(query, datetime(2026, 11, 29, 2, tzinfo=UTC).timestamp())) == expected
