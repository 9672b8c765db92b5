"""When a question is about a time, and when two memories say the same thing differently (ADR 118).

Two small rules for the embedded store's recall, pure functions over text and candidates:

- :func:`time_window` reads a date or a period from the end of a query ("on March 4", "2025-03-04",
  "23.01.2024", "on Friday", "this week", "yesterday", "last week", "3 days ago", "in 2024", "since
  Monday"; vague ones too: "the other day", "last night", "over the weekend"; and a year's:
  "last summer", "early March", "a few months ago", "a year ago") relative to the
  recall's reference time, so the units said then can be fetched and put first. Only the query's
  first and last 300 characters are read (:func:`query_ends`): a date the user mentioned ten
  messages ago must not steer every later recall.
- :func:`asks_for_recent` tells a question about how things stand now ("which port *now*?"),
  the only kind for which hybrid recall lets a unit's age lower its score (ADR 160).
- :func:`newer_first` puts, among the hits, a newer unit above an older one that says much the
  same thing (most of the shorter one's content words appear in the other; fewer suffice when
  the newer one announces a change): when a decision changed, the statement that holds now comes
  first, and both stay, each with its date.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import TypeVar

from ..timefmt import utc_offset_s
from .local_text import STOP_WORDS, fold, fts_tokens, porter_stem, says_other_language_words, without_role_label
from .local_time_periods import (
    NUMBER_PATTERNS,
    TO_COME,
    month_part,
    months_before,
    year_part,
    year_period,
    years_ago,
)
from .local_time_spans import NUMBER, NUMBER_WORDS, vague_span
from .local_time_words import in_english

TAIL_CHARS = 300
SAME_SUBJECT = 0.6  # share of the shorter unit's content words the other must contain
MIN_SHARED = 3  # and at least this many: "A says message 77" / "A answers message 77" are not a change of mind

_MONTH_NAMES = (
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
    ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"),
    ("november", "nov"), ("december", "dec"),
)  # fmt: skip
_MONTHS = {name: n for n, names in enumerate(_MONTH_NAMES, start=1) for name in names}
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
# Numeric dates: "23.01.2024" is day first wherever dots are written; with slashes, "2024/01/23" is
# year first, and "23/01/2024" or "01/23/2024" is read only when one part cannot be a month (the
# other is then the month): "03/04/2024" is March 4 in one country and 3 April in another.
_DOTTED = re.compile(r"(?<![\d.])(\d{1,2})\.(\d{1,2})\.(\d{4})(?![\d.]\d)")
_YEAR_SLASH = re.compile(r"(?<![\d/])(\d{4})/(\d{1,2})/(\d{1,2})(?![\d/])")
_SLASH = re.compile(r"(?<![\d/])(\d{1,2})/(\d{1,2})/(\d{4})(?![\d/])")
_MONTH_DAY = re.compile(rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}}))?", re.I)
_DAY_MONTH = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH})\b\.?(?:,?\s+(\d{{4}}))?", re.I)
_MONTH_YEAR = re.compile(rf"\b(?:in\s+)?({_MONTH})\s+(\d{{4}})\b", re.I)
_YEAR = re.compile(r"\bin\s+(\d{4})\b", re.I)
# A month named without a year ("what did we change in May?", "during March", "last March"): the
# latest such month, up to this one ("last": before this one). Full names only, after one of those
# words, so "we may 4x the budget" and "the mar file" name no time (ADR 180).
_FULL_MONTHS = frozenset(names[0] for names in _MONTH_NAMES)
_NAMED_MONTH = re.compile(rf"\b(in|during|last)\s+({'|'.join(_FULL_MONTHS)})\b(?!\s*,?\s*\d)")
# "3 days ago", and "two weeks back" as people say it in chat (ADR 204)
_AGO = re.compile(rf"\b({NUMBER})\s+(day|week|month|year)s?\s+(?:or\s+so\s+)?(?:ago|back)\b", re.I)
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# "on Friday", "last Friday", "this past Friday": the latest such day before today. "every Friday"
# or a bare "Friday" is a habit or a name, not a day asked about.
_WEEKDAY = re.compile(rf"\b(?:on|last|this\s+past)\s+({'|'.join(_WEEKDAYS)})\b")
_TOKEN = re.compile(r"[a-z]+")
# The last "since …" of the query's end; what follows is read as a day ("since Monday" as "on Monday").
_SINCE = re.compile(r"\bsince\s+(?!.*\bsince\b)(.+)$", re.I | re.S)
_DIGIT = re.compile(r"\d")
_FORTNIGHT = re.compile(r"\b(?:a\s+)?fortnight\b", re.I)

Window = tuple[float, float]


def _day(year: int, month: int, day: int) -> Window | None:
    try:
        start = datetime(year, month, day, tzinfo=UTC)
        return start.timestamp(), (start + timedelta(days=1)).timestamp()
    except (ValueError, OverflowError):  # "2025-02-30", "9999-12-31" (its next day is past the calendar's end)
        return None


def _latest(month: int, day: int, ref: datetime) -> Window | None:
    """The most recent ``month``/``day`` on or before the reference day (a question is about the past)."""
    for year in (ref.year, ref.year - 1):
        window = _day(year, month, day)
        if window is not None and window[0] <= ref.timestamp():
            return window
    return None


def _month(year: int, month: int) -> Window | None:
    try:
        start = datetime(year, month, 1, tzinfo=UTC)
        end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
    except ValueError:  # "May 0000", "December 9999"
        return None
    return start.timestamp(), end.timestamp()


def _numeric_date(text: str) -> Window | None:
    """A day written in digits other than ISO: dotted day-month-year, year/month/day, or a slashed
    date whose order its numbers settle (None when they do not)."""
    if m := _DOTTED.search(text):
        return _day(int(m[3]), int(m[2]), int(m[1]))
    if m := _YEAR_SLASH.search(text):
        return _day(int(m[1]), int(m[2]), int(m[3]))
    for m in _SLASH.finditer(text):
        first, second, year = int(m[1]), int(m[2]), int(m[3])
        if first > 12 >= second:
            return _day(year, second, first)
        if second > 12 >= first:
            return _day(year, first, second)
    return None


def query_ends(query: str) -> tuple[str, ...]:
    """Where a query's time is read: its first ``TAIL_CHARS`` characters, then its last.

    The first: the plugin's query for this store puts the newest message first (ADR 187), and
    reflect puts the question before its context, so "and in March?" after a long reply is read
    (ADR 210). The last: a query written as a conversation, newest last. Nothing in between: a date
    mentioned ten messages ago must not steer every later recall."""
    if len(query) <= TAIL_CHARS:
        return (query,)
    return query[:TAIL_CHARS], query[-TAIL_CHARS:]


def time_window(query: str, reference_epoch: float, offset_s: float | None = None) -> Window | None:
    """The period ``query`` asks about, as [start, end) epoch seconds, else None: the one its start
    names, else the one its end names (:func:`query_ends`).

    Days are the user's: "yesterday" asked at 9:00 in California is the Californian yesterday,
    whose evening is the next day in UTC (ADR 212). ``offset_s``: the user's offset from UTC in
    seconds, by default this machine's (``TZ`` sets it). The periods are read on a clock moved by
    the offset at ``reference_epoch``, where UTC days are the user's days, and each edge is moved
    back by the machine's offset at that edge.

    Runs on every recall, so each pattern is tried only when the words or characters it needs
    are there (a digit, a month's or a weekday's name, "ago", …): most queries name no time.
    """
    offset = utc_offset_s(reference_epoch) if offset_s is None else offset_s
    window = _first_window(query, reference_epoch + offset)
    if window is None:
        return None
    if offset_s is not None:
        return window[0] - offset, window[1] - offset
    # Each edge back by the machine's offset at that edge: a window across a DST change ("last
    # summer" asked in Sydney in November) starts at local midnight, not an hour off.
    start, end = window
    return start - utc_offset_s(start - offset), end - utc_offset_s(end - offset)


def period_words(query: str, reference: float, named: tuple[float, float] | None) -> Callable[[str], bool]:
    """Which words of ``query`` are words of the period it names (``named``, its ``time_window``):
    without the word, the query names another period or none ("last" and "week" of "what did we
    decide last week?", not "cache")."""

    def is_time_word(term: str) -> bool:
        if named is None:
            return False
        # in its place a word no time phrase is made of, so the words around it stay apart ("the
        # cache last week" is not "the last week")
        without = re.sub(rf"(?<!\w){re.escape(term)}(?!\w)", "thing", query, flags=re.IGNORECASE)
        return time_window(without, reference) != named

    return is_time_word


def period_words_now(query: str) -> Callable[[str], bool]:
    """:func:`period_words` of ``query`` asked now, by this machine's clock: what the plugin reads a
    prompt with before the store has its reference time (ADRs 222, 223)."""
    now = time.time()
    return period_words(query, now, time_window(query, now))


def _first_window(query: str, reference_epoch: float) -> Window | None:
    """:func:`time_window` on the user's clock (``reference_epoch`` moved by their offset)."""
    for text in query_ends(query):
        window = _window_in(text, reference_epoch)
        if window is not None:
            return window
    return None


def _window_in(text: str, reference_epoch: float) -> Window | None:
    """The period ``text`` (one end of a query) names."""
    text = in_english(text) or text  # "gestern", "la semaine dernière", "hace 3 días" (ADR 193)
    if "fortnight" in text.lower():  # British: "a fortnight ago", "the last fortnight" (ADR 214)
        text = _FORTNIGHT.sub("two weeks", text)
    lowered = text.lower()
    words = frozenset(_TOKEN.findall(lowered))
    # Whole seconds: datetime rounds to the microsecond, and 0.5 µs before midnight is not tomorrow.
    ref = datetime.fromtimestamp(reference_epoch // 1, tz=UTC)
    today = datetime(ref.year, ref.month, ref.day, tzinfo=UTC)
    if "since" in words and (m := _SINCE.search(text)):
        # "what changed since Monday / March 4 / last week": from that day's start up to today's end.
        first = _first_window("on " + m[1], reference_epoch)
        end = (today + timedelta(days=1)).timestamp()
        if first is not None and first[0] < end:
            return first[0], end
    if part := month_part(lowered, words, today):  # "early March 2025" before "March 2025" (ADR 208)
        return part
    if part := year_part(lowered, words, today):  # "early last year", "mid-2025" before "last year" (ADR 214)
        return None if part == TO_COME else part
    digits = _DIGIT.search(text) is not None
    if digits:
        explicit = _explicit_day(text, words, ref)
        if explicit is not None:
            return explicit
    if "yesterday" in lowered:
        if re.search(r"\bday\s+before\s+yesterday\b", lowered):
            start = today - timedelta(days=2)
            return start.timestamp(), (start + timedelta(days=1)).timestamp()
        start = today - timedelta(days=1)
        return start.timestamp(), today.timestamp()
    if "today" in words and re.search(r"\btoday\b", lowered):
        return today.timestamp(), (today + timedelta(days=1)).timestamp()
    if ("ago" in words or "back" in words) and (m := _AGO.search(lowered)):
        n = NUMBER_WORDS.get(m[1]) or int(m[1])
        if m[2] == "year":
            return years_ago(today, n)
        days = {"day": 1, "week": 7, "month": 30}[m[2]] * n
        start = today - timedelta(days=days)
        span = {"day": 1, "week": 7, "month": 30}[m[2]]
        return start.timestamp(), (start + timedelta(days=span)).timestamp()
    if not words.isdisjoint(_WEEKDAYS) and (m := _WEEKDAY.search(lowered)):
        back = (today.weekday() - _WEEKDAYS.index(m[1])) % 7 or 7
        start = today - timedelta(days=back)
        return start.timestamp(), (start + timedelta(days=1)).timestamp()
    if not words.isdisjoint(_FULL_MONTHS) and (m := _NAMED_MONTH.search(lowered)):
        month = _MONTHS[m[2]]
        back = month > ref.month or (m[1] == "last" and month == ref.month)
        return _month(ref.year - 1 if back else ref.year, month)
    if "this" in words:
        if re.search(r"\bthis\s+week\b", lowered):
            return (today - timedelta(days=today.weekday())).timestamp(), (today + timedelta(days=1)).timestamp()
        if re.search(r"\bthis\s+month\b", lowered):
            return datetime(today.year, today.month, 1, tzinfo=UTC).timestamp(), (today + timedelta(days=1)).timestamp()
    if "last" in words:
        if re.search(r"\blast\s+year\b", lowered):
            new_year = datetime(today.year, 1, 1, tzinfo=UTC)
            return new_year.replace(year=today.year - 1).timestamp(), new_year.timestamp()
        # "last week", "last month": the calendar week (from Monday) or month before this one;
        # "the last week", "the last month": the days up to today (ADR 214). Asked on November 29,
        # "what did we decide last month?" means October; the 31 days before held three of its days.
        if m := re.search(r"\b(the\s+)?last\s+week\b", lowered):
            monday = today - timedelta(days=today.weekday())
            return (
                ((today - timedelta(days=7)).timestamp(), today.timestamp())
                if m[1]
                else ((monday - timedelta(days=7)).timestamp(), monday.timestamp())
            )
        if m := re.search(r"\b(the\s+)?last\s+month\b", lowered):
            if m[1]:
                return (today - timedelta(days=31)).timestamp(), today.timestamp()
            this_month = datetime(today.year, today.month, 1, tzinfo=UTC)
            return months_before(this_month, 1).timestamp(), this_month.timestamp()
    if period := year_period(lowered, words, today):  # "last summer", "a few months ago" (ADR 208)
        return period
    if digits and "in" in words and (m := _YEAR.search(text)):
        year = int(m[1])
        if 1970 <= year <= ref.year:
            return datetime(year, 1, 1, tzinfo=UTC).timestamp(), datetime(year + 1, 1, 1, tzinfo=UTC).timestamp()
    return vague_span(lowered, words, today)  # "the other day", "last night", "over the weekend" (ADR 204)


_DATE_PATTERNS = (
    _ISO,
    _DOTTED,
    _YEAR_SLASH,
    _SLASH,
    _MONTH_DAY,
    _DAY_MONTH,
    _MONTH_YEAR,
    _YEAR,
    _AGO,
    *NUMBER_PATTERNS,
)
_NUMBER_WORD = re.compile(r"\w*\d\w*")


def date_numbers(query: str) -> frozenset[str]:
    """The lower-case words with digits that write a date or a span at ``query``'s ends ("23",
    "01", "2024" of "23.01.2024"; "4th" of "March 4th"; "3" of "3 days ago").

    A question's date is answered by the time window; searched as words as well, its numbers
    would raise whatever says "23" or "2024" (a port, a count) above what was said that day.
    """
    found: set[str] = set()
    for end in query_ends(query):
        if _DIGIT.search(end) is None:
            continue
        text = in_english(end) or end  # "am 4. März 2024" as "4 march 2024" (ADR 193)
        for pattern in _DATE_PATTERNS:
            for m in pattern.finditer(text):
                found.update(w.lower() for w in _NUMBER_WORD.findall(m[0]))
    return frozenset(found)


def _explicit_day(text: str, words: frozenset[str], ref: datetime) -> Window | None:
    """A day or month written out: ISO, in digits, or with a month's name (``text`` has a digit)."""
    if "-" in text and (m := _ISO.search(text)):
        return _day(int(m[1]), int(m[2]), int(m[3]))
    if ("." in text or "/" in text) and (numeric := _numeric_date(text)):
        return numeric
    if words.isdisjoint(_MONTHS):
        return None
    if m := _MONTH_DAY.search(text):
        month, day = _MONTHS[m[1].lower()], int(m[2])
        return _day(int(m[3]), month, day) if m[3] else _latest(month, day, ref)
    if m := _DAY_MONTH.search(text):
        day, month = int(m[1]), _MONTHS[m[2].lower()]
        return _day(int(m[3]), month, day) if m[3] else _latest(month, day, ref)
    if m := _MONTH_YEAR.search(text):
        return _month(int(m[2]), _MONTHS[m[1].lower()])
    return None


_RECENT = re.compile(
    r"\b(?:latest|newest|recent|recently|lately|now|nowadays|current|currently|still|anymore|these\s+days"
    r"|at\s+the\s+moment)\b",
    re.I,
)


def asks_for_recent(query: str) -> bool:
    """Does either end of ``query`` ask about how things stand now ("which port is it *now*?")?

    Hybrid recall weighs a unit's age only then (ADR 160): "what sports does she watch?" asks
    about three weeks of chat alike, and an age penalty on it pushed older evidence out.
    """
    return any(_RECENT.search(end) is not None for end in query_ends(query))


# A question about the first time, or about how long something went on (accents folded): "when did
# we first talk about the billing migration?", "what did we originally decide?", "how long did the
# migration take?", "since when do we use pnpm?", and the same in the other nine languages.
_FIRST = re.compile(
    r"\bwhen\s+\w+\s+(?:\w+\s+)?first\b|\bfirst\s+time\b|\boriginally\b|\binitially\b|\bat\s+first\b"
    r"|\bin\s+the\s+beginning\b|\bfirst\s+(?:mentioned|talked|discussed|said|decided|started|brought|came)\b"
    r"|\bhow\s+long\s+(?:did|has|have|had|was|were)\b|\bsince\s+when\b"
    r"|\bwhen\s+did\s+(?:we|i|you)\s+(?:start|begin)\b"
    r"|\bzum\s+ersten\s+mal\b|\berstmals\b|\bursprunglich\b|\banfangs\b|\bseit\s+wann\b|\bwie\s+lange\b"
    r"|\bpour\s+la\s+premiere\s+fois\b|\ba\s+l'origine\b|\bau\s+debut\b|\bdepuis\s+quand\b|\bcombien\s+de\s+temps\b"
    r"|\bpor\s+primera\s+vez\b|\boriginalmente\b|\bal\s+principio\b|\bdesde\s+cuando\b|\bcuanto\s+tiempo\b"
    r"|\bper\s+la\s+prima\s+volta\b|\ball'inizio\b|\boriginariamente\b|\bda\s+quando\b|\bquanto\s+tempo\b"
    r"|\bpela\s+primeira\s+vez\b|\bno\s+inicio\b|\bdesde\s+quando\b"
    r"|\bvoor\s+het\s+eerst\b|\boorspronkelijk\b|\baanvankelijk\b|\bsinds\s+wanneer\b|\bhoe\s+lang\b"
    r"|(?:в\s+первыи\s+раз|впервые|изначально|сначала|с\s+каких\s+пор|как\s+долго)"
    r"|\bpo\s+raz\s+pierwszy\b|\bpierwotnie\b|\bna\s+poczatku\b|\bod\s+kiedy\b|\bjak\s+(?:dlugo|długo)\b"
    r"|(?:вперше|спочатку|спершу|відколи|як\s+довго)"
)


# The words such a question asks with, besides its subject ("when did we first talk about the
# billing migration?" is about "billing" and "migration"), as stems.
_ASKING_FIRST = frozenset(
    porter_stem(word)
    for word in (
        "first", "time", "times", "talk", "talked", "discuss", "discussed", "mention", "mentioned", "start",
        "started", "begin", "began", "begun", "beginning", "originally", "initially", "long", "take", "took",
        "taken", "since", "say", "said", "come", "came", "bring", "brought", "decide", "decided", "happen",
        "happened", "ever", "use", "used",
    )
)  # fmt: skip


def first_subject(terms: list[str]) -> list[str]:
    """The terms of a question about the first time that name its subject (see ``_ASKING_FIRST``)."""
    return [term for term in terms if porter_stem(fold(term)) not in _ASKING_FIRST]


# One of these is in every phrase of ``_FIRST`` (folded): a substring test of them all costs a few
# µs, the pattern's fifty-odd branches ~0.1 ms a prompt, and most prompts say none of them (ADR 227).
_FIRST_HINTS = (
    "first", "origin", "initial", "begin", "long", "since", "start", "erst", "ursprung", "anfang", "seit",
    "lang", "premiere", "debut", "depuis", "combien", "prim", "principio", "desde", "cuanto", "inizio",
    "quando", "quanto", "inicio", "spronk", "aanvank", "sinds", "перв", "изначальн", "сначала", "пор", "долго",
    "pierw", "poczat", "kiedy", "dlugo", "długo", "перш", "спочатку", "відколи", "довго",
)  # fmt: skip


def asks_for_first(query: str) -> bool:
    """Does ``query`` ask when something began, or how long it went on? Its answer is what was said
    first about it, and then what followed: the block is shown oldest first (ADR 226)."""
    folded = fold(query)
    return any(hint in folded for hint in _FIRST_HINTS) and _FIRST.search(folded) is not None


# -- change of mind ------------------------------------------------------------------------------------


@lru_cache(maxsize=512)
def content_stems(text: str) -> frozenset[str]:
    """The stems of a text's content words (no stop words, no 1-char tokens, no role label).

    Cached: every recall compares its hits this way (``newer_first``), and the memories that
    answer one turn mostly answer the next (the last 512 texts and their stems)."""
    return frozenset(porter_stem(t) for t in fts_tokens(stem_body(text)) if len(t) > 1 and t not in STOP_WORDS)


def stem_body(text: str) -> str:
    """What of ``text`` its content stems are read from: no role label, and none of the words that
    take a decision back (``_TAKEN_BACK``). Shared, so a reader that walks the tokens itself
    (``local_echo.acknowledges``) reads the same words."""
    body = without_role_label(text)
    if _may_say(body, _TAKEN_BACK_HINTS):
        body = _TAKEN_BACK.sub(" ", body)
    return body


# Words that take a decision back and say nothing of its subject ("on second thought", "scratch
# that"): they announce a change (``_CHANGE``), and are left out of a statement's stems, so they do
# not thin out what it shares with the statement it takes back (ADR 196).
_TAKING_BACK = r"on\s+second\s+thoughts?|scratch\s+that|chang(?:e|ed|ing)\s+(?:my|our)\s+minds?|never\s*mind"
_TAKEN_BACK = re.compile(rf"\b(?:{_TAKING_BACK}|after\s+all|actually)\b", re.I)
_TAKEN_BACK_HINTS = ("second", "scratch", "mind", "after", "actually")  # one is in each of its phrases


def _may_say(text: str, hints: tuple[str, ...]) -> bool:
    """Could a case-blind pattern match ``text``, whose every match holds one of ``hints``?

    A prefilter for the long change patterns, which cost 10–40 µs a text while most memories say
    none of their words: a substring test of the lower-cased text is a few µs. Exact for ASCII
    text only (``re.I`` also folds a few other letters, "ſ" as "s"), so other text always may.
    """
    if not text.isascii():
        return True
    folded = text.lower()
    return any(hint in folded for hint in hints)


def same_subject(
    a: frozenset[str], b: frozenset[str], min_shared: int = MIN_SHARED, share: float = SAME_SUBJECT
) -> bool:
    """Do two units say much the same thing (most of the shorter one's words are in the other)?

    Identical word sets are not a change of mind but a repeat (ADR 055 shows those once).
    ``min_shared`` and ``share`` are lower for a newer statement that announces a change
    (``CHANGE_MIN_SHARED``, ``CHANGE_SHARE``).
    """
    shared = len(a & b)
    if shared < min_shared or a == b:
        return False
    return shared / min(len(a), len(b)) >= share


# A statement that announces a change ("change of plan: …", "we switched to …", "switch the
# database to …", "X is out", "no longer", "instead"; "switched: …", "removed X", ADR 188) marks
# the subject it shares with an older one as changed: two content words in common are enough
# then, a third of the shorter one's ("the cache is Redis" → "change of plan: the cache is now
# Memcached, Redis is out" share cache and Redis; "let's use Postgres 16 for the main database" →
# "switch the database to MySQL 8, Postgres licensing worries legal" share database and Postgres,
# two of five; ADR 180). Without the announcement three are needed, and 60 %.
# A decision said as it is taken: "let's drop Redis", "we'll replace Jenkins with Buildkite",
# "we're removing the Redis consumer", "we decided to ditch Opsgenie" (ADR 211). Without such a
# lead, "replace the handler" and "remove self" describe code.
_DECIDING = (
    r"(?:let[’']?s|let\s+us|we[’']?ll|we\s+will|(?:we[’']?re|we\s+are)\s+going\s+to|(?:we\s+)?(?:decided|agreed)\s+to"
    r"|time\s+to)\s+"
)
_CHANGE = re.compile(
    r"\b(?:change\s+of\s+plans?|changed|switch(?:ed|es|ing)?\s+(?:[\w.+#-]+\s+){0,3}?(?:to|from|over)"
    r"|chang(?:e|es|ing)\s+(?:[\w.+#-]+\s+){0,3}?to|instead|no\s+longer|any\s*more"
    r"|from\s+now\s+on|replac(?:e|ed|es|ing)|migrat(?:e|ed|ing)\s+(?:to|from|off)|(?:is|are)\s+(?:now|out)"
    r"|(?:moved|moving)\s+(?:to|from|off)|dropp(?:ed|ing)|reverted?|scrap(?:ped)?|superseded?"
    r"|switched|remov(?:e|ed|es|ing)|ditch(?:ed|es|ing)?"
    rf"|{_DECIDING}drop"
    # how people take a decision back in chat (ADR 196)
    rf"|{_TAKING_BACK}|decided\s+against|decid(?:e|ed|ing)\s+not\s+to|rather\s+than|after\s+all(?!\s*,))\b"
    # "Actually, …" opening a sentence takes back what was said; inside one it is filler
    # ("the bug was actually in the parser").
    r"|(?:^|[.!?:;]\s*)actually\b",
    re.I | re.M,
)
# The same announcements in the other languages whose function words are stop words (ADR 192):
# German, French, Spanish, Italian, Portuguese, Dutch, and Russian (ADR 194). Searched only in a text that says one of
# their function words: the list is long, and most memories are English (35 → 130 µs a text).
_CHANGE_ELSEWHERE = re.compile(
    r"\b(?:planänderung|umgestellt|umstellen|umzustellen|stattdessen|statt|anstatt|nicht\s+mehr|ab\s+(?:jetzt|sofort)"
    r"|künftig|ersetzt|ersetzen|entfernt|gewechselt|migriert"
    # the separable verb: "stell die Queue auf RabbitMQ um", "wir stellen den Build auf Vite um"
    r"|stell(?:e|t|en)?\s+(?:[\w.-]+\s+){0,6}?auf\s+(?:[\w.-]+\s+){1,3}?um(?=\s*(?:[.,;:!?]|$))"
    r"|changement\s+de\s+plan|au\s+lieu\s+d|à\s+la\s+place|désormais|dorénavant|remplac(?:é|ée|és|ées|er|ons)"
    r"|supprim(?:é|ée|és|ées)|migr(?:é|ée|és|ées)|pass(?:é|ée|és|ées|ons)\s+à"
    r"|cambio\s+de\s+planes?|en\s+(?:lugar|vez)\s+de|ya\s+no|a\s+partir\s+de\s+ahora|reemplaz(?:ado|ada|ar|amos)"
    r"|cambi(?:ado|amos|ar)\s+a|migrad[oa]s?|eliminad[oa]s?|quitad[oa]s?"
    r"|cambio\s+di\s+piano|invece|al\s+posto\s+d|non\s+più|d'ora\s+in\s+poi|sostituit[oaie]|rimoss[oaie]"
    r"|migrat[oai]|passati\s+a"
    r"|mudança\s+de\s+planos?|em\s+vez\s+de|ao\s+invés\s+de|não\s+mais|a\s+partir\s+de\s+agora"
    r"|substituíd[oa]s?|removid[oa]s?|trocamos"
    r"|in\s+plaats\s+van|niet\s+meer|vanaf\s+nu|vervangen|verwijderd|gemigreerd|overgestapt|overgezet"
    r"|вместо|больше\s+не|переш(?:ел|ёл|ли|ла)\s+на|переключил[аи]?(?:сь)?|заменил[аи]?|удалил[аи]?"
    r"|отказал[аи]?сь|с\s+этого\s+момента"
    # Polish, with and without accents, and Ukrainian (ADR 199)
    r"|zamiast|zmiana\s+planu|ju[żz]\s+nie|nie\s+(?:\w+\s+)?ju[żz]|od\s+(?:teraz|dzi[śs])"
    r"|(?:zmienili|przeszli|przesiedli)[śs]my(?:\s+si[ęe])?\s+na|zast[ąa]pili[śs]my|zast[ąa]pion[aey]"
    r"|usun[ęe]li[śs]my|usuni[ęe]t[aey]|zmigrowali[śs]my"
    r"|замість|більше\s+не|відтепер|з\s+цього\s+моменту|перейшли\s+на|переключилися\s+на|замінили"
    r"|видалили|відмовилися)\b",
    re.I,
)
# One of these is in every English announcement above (lower-cased): "more" for "any more" and
# "anymore", "now" for "from now on" and "is now", "out" for "are out", "mind" for "never mind".
_CHANGE_HINTS = (
    "chang", "switch", "instead", "longer", "more", "now", "replac", "migrat", "out", "mov", "drop", "revert",
    "scrap", "supersed", "remov", "ditch", "second", "scratch", "mind", "decid", "rather", "after", "actually",
)  # fmt: skip
CHANGE_MIN_SHARED = 2
CHANGE_SHARE = 1 / 3


# The same requests in the other languages read (folded: "й" as "и", Polish "ł" kept), at the
# message's start: "Wechsle den Cache auf Valkey", "Remplace Jenkins par Buildkite", "Cambia a pnpm",
# "Перейди на pnpm" (folded: "переиди"), "Zastąp Jenkinsa Buildkite'em" (ADR 234). The verb that asks
# for the change announces it, as "switch … to" does in English; as there, "remove" does not (it
# is as often a change of the code).
_ASKS_FOR_A_CHANGE_ELSEWHERE = re.compile(
    r"^(?:bitte\s+|s'il\s+te\s+plait\s+|por\s+favor\s+|per\s+favore\s+|graag\s+|пожалуиста\s+|prosze\s+"
    r"|будь\s+ласка\s+)?"
    r"(?:wechsle|ersetze|migriere|stell(?:e)?\s+(?:[\w.-]+\s+){0,6}?auf\s+(?:[\w.-]+\s+){1,3}?um(?=\s*(?:[.,;:!?]|$))"
    r"|passe\s+(?:a|sur)|passez\s+(?:a|sur)|remplace|remplacez|migre\s+(?:vers|sur)|bascule"
    r"|cambia\s+(?:a|de)|cambie\s+a|reemplaza|migra\s+a|pasate\s+a|pasa\s+a"
    r"|passa\s+a|sostituisci|migra\s+(?:a|su)"
    r"|muda\s+para|mude\s+para|troca|troque|substitui|substitua|migra\s+para"
    r"|stap\s+over|vervang|migreer|schakel\s+over"
    r"|переиди(?:те)?\s+на|переключи(?:те)?(?:сь)?\s+на|замени(?:те)?|смени(?:те)?"
    r"|przejdz\s+na|przełacz\s+na|zastap|zmien\s+na|przenies\s+na"
    r"|переид[иі](?:ть)?\s+на|переключи(?:ть)?(?:ся)?\s+на|заміни(?:ть)?|зміни(?:ть)?\s+на)\b"
)


# How much of a message a reading of its opening folds: every such pattern ends within a dozen words,
# and ``announces_change`` asks it of every hit in the other languages (folding 5,000 characters of
# German: 494 µs; the first 300: 31 µs).
OPENING_CHARS = 300


def asks_for_a_change_elsewhere(text: str) -> bool:
    """Does ``text`` (a message, its role label aside) open by asking for a change in one of the other
    languages ("Wechsle den Cache auf Valkey", "Перейди на pnpm", ADR 234)?"""
    return _ASKS_FOR_A_CHANGE_ELSEWHERE.match(fold(without_role_label(text)[:OPENING_CHARS]).lstrip()) is not None


@lru_cache(maxsize=1024)
def announces_change(text: str) -> bool:
    """Does ``text`` say that something changed (a decision replaced, a tool switched)?

    Cached: the successors, the newer-above rule, a kind's words (ADR 232) and "what changed?" each
    ask it of the same hits in one recall, and the hits of one turn mostly answer the next."""
    said = _may_say(text, _CHANGE_HINTS) and _CHANGE.search(text) is not None
    return said or (
        _maybe_elsewhere(text) and (_CHANGE_ELSEWHERE.search(text) is not None or asks_for_a_change_elsewhere(text))
    )


@lru_cache(maxsize=512)
def _maybe_elsewhere(text: str) -> bool:
    """Could ``text`` be in one of the other languages? Not when it is plain ASCII and says none of
    their function words ("Используем Actions вместо Jenkins" says none, but is not ASCII).

    Cached like ``content_stems``: ``newer_first`` asks it of a hit twice (``announces_change``,
    then ``left_behind``), and the hits of one turn mostly answer the next."""
    return not text.isascii() or says_other_language_words(text)


# What a change names as left behind: "switched from MySQL", "instead of Jenkins", "replaced
# Memcached", "Redis is out". An older statement that says that word is the decision changed,
# even when it shares no other word with the newer one ("we will use MySQL" → "we switched from
# MySQL to Postgres", ADR 174).
_THE = r"(?:(?:the|our|a|an)\s+)?"


def _left_pattern(moved: str, named: str) -> re.Pattern[str]:
    """A left-behind pattern: ``moved`` are the verbs said with "from" / "off", ``named`` the words
    the thing left behind follows directly; "instead of", "no longer use", "decided against" and
    "X is out" in both."""
    return re.compile(
        rf"\b(?:(?:{moved})\s+(?:away\s+)?(?:from|off(?:\s+of)?)|instead\s+of|{named}"
        rf"|no\s+longer\s+(?:use|using|run|running|on)|decided\s+against)\s+{_THE}([\w.+#-]+)"
        r"|\b([\w.+#-]+)\s+(?:is|are)\s+out\b",
        re.I,
    )


_LEFT_BEHIND = _left_pattern(
    r"switch(?:ed|ing)?|mov(?:ed|ing)|migrat(?:e|ed|ing)", r"replac(?:e|ed|es|ing)|dropp(?:ed|ing)|rather\s+than"
)
# The same, said of a decision (ADR 209's marks): "replaced", "removed" in the past forms only, as
# "replace the handler", "remove self", "None rather than bool" describe code as often as a change
# of mind; "switch from" and "migrate off" are a decision in any form ("let's switch from pnpm to
# bun"), "moving off" too, "move from" only when past ("move from the cache to the disk" is code).
_LEFT_DECIDED = _left_pattern(
    r"switch(?:ed|ing)?|migrat(?:e|ed|ing)|moved|moving(?=\s+(?:away\s+)?off)",
    rf"replaced|dropped|{_DECIDING}(?:replace|drop)|(?:we[’']?re|we\s+are)\s+(?:replacing|dropping)",
)
_REMOVED_DECIDED = re.compile(
    rf"\b(?:removed|ditched|{_DECIDING}(?:remove|ditch)|(?:we[’']?re|we\s+are)\s+(?:removing|ditching))"
    rf"\s+{_THE}([\w.+#-]+)",
    re.I,
)
# "instead of X" in the other languages of ADR 192, with their articles (searched as above).
_LEFT_BEHIND_ELSEWHERE = re.compile(
    r"\b(?:(?:an)?statt\s+(?:(?:der|die|das|dem|den|des)\s+)?|au\s+lieu\s+(?:de\s+(?:la\s+|l')?|du\s+|des\s+|d')"
    r"|en\s+(?:lugar|vez)\s+(?:del\s+|de\s+(?:la\s+|los\s+|las\s+)?)|invece\s+(?:di\s+|del(?:la|lo|l')?\s*)"
    r"|em\s+vez\s+d[eoa]s?\s+|in\s+plaats\s+van\s+(?:(?:de|het)\s+)?|вместо\s+|zamiast\s+|замість\s+)([\w.+#-]+)",
    re.I,
)
# What a change names as removed: "removed the Redis stream consumer", "ditched Jenkins" (ADR 188).
# Weaker than the phrases above: the word after "removed" is often only a part's first word (the
# stream consumer went, Redis stayed), so an older statement must share one more word with the
# newer one besides it.
_REMOVED = re.compile(rf"\b(?:remov(?:e|ed|es|ing)|ditch(?:ed|es|ing)?)\s+{_THE}([\w.+#-]+)", re.I)


def left_behind(text: str) -> frozenset[str]:
    """The stems of the words a change announces as left behind (empty for most texts)."""
    found = left_behind_words(text)
    return content_stems(" ".join(found)) if found else frozenset()


# A participle after a form of "be", "get" or a modal is passive or not yet done: "whitespace is
# replaced by a space", "the module will be removed in 3.14", "this method should be replaced" say
# what code does or will do, and the word after the verb is not what was given up ("Redis was
# removed" names Redis before the verb). A decision's marks skip these (ADR 211).
_PARTICIPLES = ("replaced", "dropped", "removed", "ditched")
_PASSIVE_BEFORE = re.compile(
    r"\b(?:am|is|are|was|were|be|been|being|get|gets|got|gotten|getting|will|would|shall|should|can|could"
    r"|may|might|must)\s+(?:(?:not|never|already|also|just|then|now|all|\w+ly)\s+)?$",
    re.I,
)


# Words that follow a verb as adverbs, never as the thing it gave up ("newlines removed instead").
NOT_A_THING = frozenset({
    "instead", "otherwise", "entirely", "completely", "altogether", "later", "already", "onwards", "afterwards",
    "earlier", "recently", "quietly", "silently", "automatically", "manually", "permanently", "temporarily",
    "immediately", "eventually", "finally", "today", "yesterday", "anyway", "accordingly",
})  # fmt: skip


def _active(text: str, match: re.Match[str]) -> bool:
    """Is ``match`` (a left-behind or removed phrase) said as a decision taken, not in the passive,
    and does it name a thing (not "removed instead")?"""
    if any(word and word.lower() in NOT_A_THING for word in match.groups()):
        return False
    if not match.group(0).lower().startswith(_PARTICIPLES):
        return True
    return _PASSIVE_BEFORE.search(text, max(0, match.start() - 40), match.start()) is None


def left_behind_words(text: str, decided: bool = False) -> list[str]:
    """The words a change announces as left behind, as written ("pnpm" of "switched from pnpm");
    ``decided``: only as a decision already taken says it ("switched from", "replaced", not
    "replace", nor "is replaced by" or "will be dropped")."""
    if decided:
        found = [w for m in _LEFT_DECIDED.finditer(text) if _active(text, m) for w in m.groups() if w]
    else:
        found = [w for m in _LEFT_BEHIND.finditer(text) for w in m.groups() if w]
    if _maybe_elsewhere(text):
        for match in _LEFT_BEHIND_ELSEWHERE.finditer(text):
            word = match.group(1).rstrip(".")
            found.append(word)
            # Polish and Ukrainian decline a name after "instead of": "zamiast Postgresa",
            # "zamiast Jenkinsa". The older statement says "Postgres" (ADR 199).
            declines = match.group(0).lower().startswith(("zamiast", "замість"))
            if declines and len(word) > 4 and word[-1].lower() in "auау":
                found.append(word[:-1])
    return found


def removed(text: str, decided: bool = False) -> frozenset[str]:
    """The stems of the words a change names as removed ("removed the Redis consumer": redi);
    ``decided``: only in the past forms ("removed", not "remove"), not in the passive."""
    if decided:
        found = [m.group(1) for m in _REMOVED_DECIDED.finditer(text) if _active(text, m)]
    else:
        found = _REMOVED.findall(text)
    return content_stems(" ".join(found)) if found else frozenset()


T = TypeVar("T")


def newer_first(
    hits: Sequence[T],
    text: Callable[[T], str],
    epoch: Callable[[T], float],
    about: Callable[[T], str] | None = None,
    names: Callable[[T, frozenset[str]], bool] | None = None,
) -> list[T]:
    """``hits`` with each newer unit moved just above the first older one that says the same thing.

    Nothing is dropped; hits that have no such twin keep their places. ``about``: words a hit is
    about besides its text (a user's elliptic change, the terms of the message it answers: ADR 206);
    they count as its words when two hits are compared, never as an announcement. ``names``: does
    one of these stems of a hit name something (not a word the bank says everywhere)? A change
    linked to an older hit only by what it left behind must name it so (ADR 211).
    """
    out = list(hits)
    # Each hit's stems and time once: the search below looks at every pair again after each move.
    stems = {id(h): content_stems(text(h)) | (content_stems(about(h)) if about else frozenset()) for h in out}
    said = {id(h): epoch(h) for h in out}
    announced: dict[int, bool] = {}  # read only for pairs close enough to need it (a regex per hit)
    left: dict[int, tuple[frozenset[str], frozenset[str]]] = {}  # (left behind, removed)

    def announces(hit: T) -> bool:
        if id(hit) not in announced:
            announced[id(hit)] = announces_change(text(hit))
        return announced[id(hit)]

    def leaves(newer: T, older: T) -> bool:
        """Does ``newer`` name a word of ``older`` as what it left behind (or as removed, with one
        more word shared)? The regexes run only for a pair that shares a word at all, as
        ``announces`` does for close pairs."""
        if stems[id(older)].isdisjoint(stems[id(newer)]) or not announces(newer):
            return False
        if id(newer) not in left:
            left[id(newer)] = (left_behind(text(newer)), removed(text(newer)))
        old, new = stems[id(older)], stems[id(newer)]
        behind, gone = left[id(newer)]
        if old == new:
            return False
        if not behind.isdisjoint(old):
            link = behind & old
        elif not gone.isdisjoint(old) and len(old & new) >= CHANGE_MIN_SHARED:
            link = gone & old
        else:
            return False
        return names is None or names(older, link)

    # Whether a newer hit should stand above an older one depends on the two hits only, not on
    # where they stand: decided once per pair, then each scan after a move only looks it up.
    above: dict[tuple[int, int], bool] = {}

    def outranks(newer: T, older: T) -> bool:
        key = (id(newer), id(older))
        if key not in above:
            a, b = stems[id(older)], stems[id(newer)]
            above[key] = said[id(newer)] > said[id(older)] and (
                same_subject(a, b)
                or (same_subject(a, b, CHANGE_MIN_SHARED, CHANGE_SHARE) and announces(newer))
                or leaves(newer, older)
            )
        return above[key]

    for _ in range(len(out) ** 2):  # each move fixes one pair; a handful of hits, so bounded and small
        move = next(
            ((i, j) for i in range(len(out)) for j in range(i + 1, len(out)) if outranks(out[j], out[i])),
            None,
        )
        if move is None:
            break
        out.insert(move[0], out.pop(move[1]))
    return out
