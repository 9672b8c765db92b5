"""The time words of a year's memories, as periods: seasons, parts of a month, months and years back (ADR 208).

A user who keeps a year of sessions asks about more than last week: "what did we decide last
summer?", "in early March", "a few months ago", "earlier this year", "a year ago", "over the
holidays". ``local_time.time_window`` reads named days and weeks, and ``local_time_spans`` the vague
words of the last few weeks; the phrases here name the longer periods, each as the span of days it
most likely means (the user's days, ``today`` being the reference day: ADR 212). The recall then weighs what was
said in that span (ADR 118); nothing outside it is dropped.

- Seasons are the meteorological ones of the user's hemisphere: in the north spring March–May,
  summer June–August, autumn (or fall) September–November, winter December–February; south of the
  tropics (a zone such as Australia/Sydney, ``timefmt.southern_hemisphere``) the opposite months,
  summer December–February (ADR 213). "last summer" is the latest summer that has
  ended (asked in summer: the one a year before); "this summer" is this year's, so far or past,
  and names no period before it starts (a plan, not a memory); "over the summer" and "this past
  summer" are the latest summer that has begun. "summer 2025", "the summer of 2025": that year's
  ("winter 2025" is the winter the new year 2025 falls in). "in the summer", "during the winter"
  are as often a habit or a plan ("we slow down in the summer"): they name a period only in a
  question about the past ("what did we decide in the spring?": did, was, were, had, decided, …).
- Parts of a month: "early March", "the beginning / start of March": days 1–10; "mid-March", "the
  middle of March": 11–20; "late March", "the end of March": 21 to the month's end. Without a year,
  the latest such part that has begun.
- "last quarter": the calendar quarter before this one; "this quarter": this one so far. A bare
  "Q3" is as often a plan as a memory: it names no period.
- "this year", "earlier this year", "so far this year": January 1 to today; "the year before last":
  that calendar year.
- "the past / last few months": 120 days and today; "the past / last couple (of) months": 61;
  "the past / last N months": 31 · N; "the past month": 31; "the past year", "the past / last
  twelve months": 365.
- "a couple (of) months ago / back": 30 to 90 days ago; "a few / several months ago / back": 60
  to 180 days ago. ("N years ago" is ``local_time``'s, beside "N days ago".)
- "over the holidays", "over / around Christmas", "over the Christmas break", "over New Year": the
  latest December 20 to January 6 that has begun.

English only here: ``local_time_words`` rewrites the other languages' phrases into these.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from ..timefmt import southern_hemisphere
from .local_time_spans import NUMBER, NUMBER_WORDS, PAST_WORDS

Window = tuple[float, float]

# Every phrase below holds one of these words: a query without any of them is not searched.
TRIGGERS = frozenset(
    {
        "spring", "summer", "autumn", "fall", "winter", "quarter", "year", "months", "month",
        "holidays", "christmas", "new",
    }
)  # fmt: skip
# A part of a month needs one of these beside a month's full name.
PART_WORDS = frozenset({"early", "mid", "late", "beginning", "start", "middle", "end", "first", "half", "week"})

_SEASON_START = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_SEASON = "spring|summer|autumn|fall|winter"
_SEASON_NAMED = re.compile(
    rf"\b(?:(last|this\s+past|this|over\s+the|earlier\s+this)\s+({_SEASON})\b(?!\s*,?\s*\d)"
    rf"|(?:the\s+)?({_SEASON})\s+(?:of\s+)?(\d{{4}})\b)",
    re.I,
)
# "in the summer", "during the winter" are as often a habit or a plan ("we slow down in the summer");
# asked about the past ("what did we decide in the spring?") they are the latest one that has begun.
_SEASON_IN = re.compile(rf"\b(?:in|during)\s+the\s+({_SEASON})\b(?!\s*,?\s*(?:of\s+)?\d)")
_MONTH_NAMES = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
    "november", "december",
)  # fmt: skip
_MONTH_OF = {name: n for n, name in enumerate(_MONTH_NAMES, start=1)}
_MONTH_PART = re.compile(
    rf"\b(?:(early|mid|late)[\s-]+|(?:the\s+)?(beginning|start|middle|end|first\s+week|last\s+week)\s+of\s+)"
    rf"({'|'.join(_MONTH_NAMES)})\b"
    r"(?:,?\s+(\d{4})\b)?",
    re.I,
)
_PART_DAYS = {
    "early": (1, 10), "beginning": (1, 10), "start": (1, 10), "mid": (11, 20), "middle": (11, 20),
    "first week": (1, 7), "last week": (24, 31),
}  # fmt: skip
_QUARTER = re.compile(r"\b(last|this)\s+quarter\b")
# A part of a year (ADR 214): "early last year", "mid-2025", "the end of the year", "late this year".
_YEAR_PART = re.compile(
    r"\b(?:(early|mid|late)[\s-]+|(?:the\s+)?(beginning|start|middle|end|first\s+half|second\s+half)\s+of\s+)"
    r"(?:(last|this|the)\s+year\b|(\d{4})\b)",
    re.I,
)
# The first month and how many months of each part ("the first half of 2025": January–June).
_YEAR_PARTS = {
    "early": (1, 4), "beginning": (1, 4), "start": (1, 4), "mid": (5, 4), "middle": (5, 4), "late": (9, 4),
    "end": (9, 4), "first half": (1, 6), "second half": (7, 6),
}  # fmt: skip
# "this time last year": a season, not a day, as "a year ago" is (``YEAR_SLACK_DAYS`` either side).
_THIS_TIME_LAST_YEAR = re.compile(
    r"\b(?:(?:around\s+|about\s+)?this\s+time|(?:around|about)\s+now)\s+last\s+year\b"
    r"|\blast\s+year\s+(?:around|about|at)\s+this\s+time\b"
)
YEAR_SLACK_DAYS = 60  # "a year ago" is a season, not a day: that many days either side (ADR 208)
TO_COME: Window = (0.0, 0.0)  # what ``year_part`` gives for a part of a year that has not begun
_THIS_YEAR = re.compile(r"\b(?:earlier\s+|so\s+far\s+)?this\s+year\b")
_YEAR_BEFORE_LAST = re.compile(r"\bthe\s+year\s+before\s+last\b")
_MONTH_BEFORE_LAST = re.compile(r"\bthe\s+month\s+before\s+last\b")
_LATELY = re.compile(
    rf"\b(?:last|past)\s+(few|couple(?:\s+of)?|{NUMBER}|twelve)\s+months\b|\bpast\s+(month|year)\b",
    re.I,
)
_MONTHS_BACK = re.compile(r"\b(?:a\s+)?(few|couple(?:\s+of)?|several)\s+months?\s+(?:ago|back)\b")
_HOLIDAYS = re.compile(
    r"\b(?:over\s+the\s+holidays|(?:over|around)\s+(?:the\s+)?christmas(?:\s+break)?|over\s+(?:the\s+)?new\s+year"
    r"|last\s+christmas|(?:at|on)\s+christmas)\b"
)
# The patterns whose numbers write a period ("summer 2025", "the past 3 months"): not searched as words.
NUMBER_PATTERNS = (_SEASON_NAMED, _MONTH_PART, _LATELY, _YEAR_PART)
_YEARS = range(1900, 2201)  # a year written out beyond these is not a time asked about ("summer 0000")


def year_period(lowered: str, words: frozenset[str], today: datetime) -> Window | None:
    """The period a phrase of ``lowered`` (the query's tail, lower-cased; ``words`` its words)
    names, relative to ``today`` (midnight of the user's day, on ``time_window``'s moved clock); None
    when it names none."""
    if words.isdisjoint(TRIGGERS):
        return None
    end_of_today = (today + timedelta(days=1)).timestamp()
    if m := _SEASON_NAMED.search(lowered):
        return _season(m, today)
    if not words.isdisjoint(PAST_WORDS) and (m := _SEASON_IN.search(lowered)):
        return _named_season("over the", m[1], today)  # the latest one that has begun
    if m := _QUARTER.search(lowered):
        first_month = 3 * ((today.month - 1) // 3) + 1
        start = datetime(today.year, first_month, 1, tzinfo=UTC)
        if m[1] == "this":
            return start.timestamp(), end_of_today
        return months_before(start, 3).timestamp(), start.timestamp()
    if _MONTH_BEFORE_LAST.search(lowered):  # asked in November: September (ADR 214)
        this_month = datetime(today.year, today.month, 1, tzinfo=UTC)
        return months_before(this_month, 2).timestamp(), months_before(this_month, 1).timestamp()
    if _YEAR_BEFORE_LAST.search(lowered):
        return datetime(today.year - 2, 1, 1, tzinfo=UTC).timestamp(), datetime(
            today.year - 1, 1, 1, tzinfo=UTC
        ).timestamp()
    if _THIS_YEAR.search(lowered):
        return datetime(today.year, 1, 1, tzinfo=UTC).timestamp(), end_of_today
    if m := _LATELY.search(lowered):
        if m[2]:  # "the past month", "the past year"
            back = 31 if m[2] == "month" else 365
        elif m[1] == "twelve":
            back = 365
        elif m[1].startswith("couple"):
            back = 61
        else:
            back = 120 if m[1] == "few" else 31 * (NUMBER_WORDS.get(m[1]) or int(m[1]))
        return (today - timedelta(days=back)).timestamp(), end_of_today
    if m := _MONTHS_BACK.search(lowered):
        first, last = (90, 30) if m[1].startswith("couple") else (180, 60)
        return (today - timedelta(days=first)).timestamp(), (today - timedelta(days=last - 1)).timestamp()
    if _HOLIDAYS.search(lowered):
        start = datetime(today.year, 12, 20, tzinfo=UTC)
        if start > today:
            start = start.replace(year=today.year - 1)
        return start.timestamp(), min(start + timedelta(days=18), today + timedelta(days=1)).timestamp()
    return None


def months_before(start: datetime, months: int) -> datetime:
    """The first day of the month ``months`` before the one ``start`` is in (``start``: a 1st)."""
    index = start.year * 12 + start.month - 1 - months
    return datetime(index // 12, index % 12 + 1, 1, tzinfo=UTC)


# South of the tropics a season's months are those of the opposite northern one (ADR 213): a
# southern summer is December to February, and "summer 2025" is the one the new year 2025 falls
# in, as a northern "winter 2025" is.
_SOUTHERN_MONTHS = {"summer": "winter", "winter": "summer", "spring": "autumn", "autumn": "spring", "fall": "spring"}


def _months_of(season: str) -> str:
    """The northern season whose months ``season`` names where the user is."""
    return _SOUTHERN_MONTHS[season] if southern_hemisphere() else season


def _season_span(year: int, season: str) -> tuple[datetime, datetime]:
    start = datetime(year, _SEASON_START[season], 1, tzinfo=UTC)
    index = year * 12 + start.month - 1 + 3
    return start, datetime(index // 12, index % 12 + 1, 1, tzinfo=UTC)


def _season(m: re.Match[str], today: datetime) -> Window | None:
    if m[3]:  # "summer 2025", "the winter of 2025": the winter the new year falls in
        season, year = _months_of(m[3].lower()), int(m[4])
        if year not in _YEARS:
            return None
        start, end = _season_span(year - 1 if season == "winter" else year, season)
        return start.timestamp(), end.timestamp()
    return _named_season(" ".join(m[1].split()), m[2].lower(), today)


def _named_season(how: str, season: str, today: datetime) -> Window | None:
    """``season`` as ``how`` names it ("last", "this", "over the", …), relative to ``today``."""
    season = _months_of(season)
    year = today.year if today.month >= _SEASON_START[season] else today.year - 1
    start, end = _season_span(year, season)  # the latest one that has begun
    going_on = end > today
    if how == "last" and going_on:
        start, end = _season_span(year - 1, season)
    elif how in ("this", "earlier this") and not going_on and start.year != today.year:
        return None  # "this winter", asked in November: the one to come
    return start.timestamp(), min(end, today + timedelta(days=1)).timestamp()


def years_ago(today: datetime, years: int) -> Window:
    """ "a year ago", "two years back", "this time last year": a season, ``YEAR_SLACK_DAYS`` either side."""
    middle = today - timedelta(days=365 * years)
    slack = timedelta(days=YEAR_SLACK_DAYS)
    return (middle - slack).timestamp(), (middle + slack).timestamp()


def year_part(lowered: str, words: frozenset[str], today: datetime) -> Window | None:
    """A third of a year ("early last year": January–April, "mid-2025": May–August, "the end of
    the year": September–December), or "this time last year" (a year ago, ``YEAR_SLACK_DAYS``
    either side), that ``lowered`` names; None when it names none; ``TO_COME`` for a part that
    has not begun ("late this year" asked in March: a plan, so no period at all)."""
    if "year" not in words and words.isdisjoint(PART_WORDS):
        return None
    if "year" in words and "last" in words and _THIS_TIME_LAST_YEAR.search(lowered):
        return years_ago(today, 1)
    if words.isdisjoint(PART_WORDS) or not (m := _YEAR_PART.search(lowered)):
        return None
    which = (m[3] or "").lower()
    year = int(m[4]) if m[4] else today.year - 1 if which == "last" else today.year
    if year not in _YEARS or (m[4] is None and which not in ("last", "this", "the")):
        return None
    first, months = _YEAR_PARTS[" ".join((m[1] or m[2]).lower().split())]
    start = datetime(year, first, 1, tzinfo=UTC)
    if start > today:
        return TO_COME
    end = datetime(year + 1, 1, 1, tzinfo=UTC) if first + months > 12 else datetime(year, first + months, 1, tzinfo=UTC)
    return start.timestamp(), min(end, today + timedelta(days=1)).timestamp()


def month_part(lowered: str, words: frozenset[str], today: datetime) -> Window | None:
    """The days of a part of a month ("early March", "the end of May 2025") that ``lowered`` names,
    the latest such part that has begun when no year is said; None when it names none.

    Asked before a month and year are read as the whole month ("early March 2025")."""
    if words.isdisjoint(PART_WORDS) or words.isdisjoint(_MONTH_OF) or not (m := _MONTH_PART.search(lowered)):
        return None
    part, month = " ".join((m[1] or m[2]).lower().split()), _MONTH_OF[m[3].lower()]
    first, last = _PART_DAYS.get(part, (21, 31))
    year = int(m[4]) if m[4] else today.year
    if year not in _YEARS:
        return None
    start = datetime(year, month, first, tzinfo=UTC)
    if not m[4] and start > today:
        year -= 1
        start = start.replace(year=year)
    index = year * 12 + month
    month_end = datetime(index // 12, index % 12 + 1, 1, tzinfo=UTC)
    end = min(month_end, datetime(year, month, 1, tzinfo=UTC) + timedelta(days=last))
    return start.timestamp(), end.timestamp()
