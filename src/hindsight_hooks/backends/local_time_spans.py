"""The vague time words people use in chat, as periods (ADR 204).

``local_time.time_window`` reads a day or a period that is named: "yesterday", "3 days ago",
"last Friday", "in March". Asked in chat, a time is often vague: "what did we decide the other
day?", "a couple of days ago", "last night", "this morning", "over the weekend", "a few weeks
back", "in the last few days". Each is read here as the span of days it most likely means, wide
enough to hold the day the user has in mind; the recall then weighs what was said in that span
(ADR 118), and nothing outside it is dropped.

The spans, in the user's days like every window of the store (ADR 212), ``today`` being the
reference day:

- "this morning", "earlier this afternoon / evening", "earlier tonight": today ("tonight", "this
  afternoon / evening" are as often a time to come, and a window holds only what was said: they
  name no period without "earlier", or a word of a question about the past: "what did we fix this
  afternoon?");
- "last night", "last evening": yesterday and today (a late night crosses midnight);
- "the other day / night / evening", "(a) few days ago/back": 1 to 6 days ago; "(a) couple (of) days ago/back": 1 to 3;
- "over the weekend", "this past weekend": the latest Saturday and Sunday, up to today when today
  is one of them; "last weekend" the same, but asked on a weekend, the one before ("on the
  weekend", "during the weekend" are as often a habit: "we never deploy on the weekend");
- "a couple (of) weeks ago/back": 1 to 3 weeks ago; "a few weeks ago/back": 2 to 5 weeks ago;
- "in the last / past few days", "these last few days": the last 4 days and today; "the last /
  past couple (of) days": the last 2 days and today; "the last / past N days" (a number or a
  word up to seven): N days and today; "the past week": the last 7 days and today; "the last /
  past couple (of) weeks" and "two weeks": 14 days and today; "the last / past few weeks": 28
  days and today;
- "the week before last": the seven days before last week.

English only here: ``local_time_words`` rewrites the other languages' vague phrases into these.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

Window = tuple[float, float]

# The number words of "two weeks ago", "3 days back", "the last five days" (``local_time`` reads
# them too).
NUMBER_WORDS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}
NUMBER = r"\d{1,3}|" + "|".join(NUMBER_WORDS)

# Every phrase below holds one of these words: a query without any of them is not searched.
TRIGGERS = frozenset(
    {"morning", "night", "other", "few", "couple", "weekend", "past", "last", "before", "earlier", "afternoon",
     "evening", "tonight"}
)  # fmt: skip
# Words of a question about the past ("what did we decide this afternoon?"): with one of them a
# phrase that may name a time to come ("this afternoon", "in the spring") names one gone by.
PAST_WORDS = frozenset({"did", "was", "were", "had", "decided", "agreed", "chose", "picked", "said", "discussed"})

# "earlier this afternoon", "earlier tonight": "earlier" says it is over, so it names a period
_DAY_PART = re.compile(r"\b(?:this\s+morning|earlier\s+(?:this\s+(?:morning|afternoon|evening)|tonight))\b")
_DAY_PART_SAID = re.compile(r"\b(?:this\s+(?:afternoon|evening)|tonight)\b")
_LAST_NIGHT = re.compile(r"\blast\s+(?:night|evening)\b")
_DAYS_BACK = re.compile(
    r"\b(?:the\s+other\s+(?:day|night|evening)|(?:a\s+)?(few|couple(?:\s+of)?)\s+days?\s+(?:ago|back))\b"
)
_WEEKS_BACK = re.compile(r"\b(?:a\s+)?(few|couple(?:\s+of)?)\s+weeks?\s+(?:ago|back)\b")
_WEEKEND = re.compile(r"\b(?:over\s+the|(last)|this\s+past)\s+weekend\b")
_LATELY = re.compile(
    rf"\b(?:last|past)\s+(few|couple(?:\s+of)?|{NUMBER})\s+(day|week)s\b"
    r"|\bpast\s+(week)\b"
)
_WEEK_BEFORE_LAST = re.compile(r"\bthe\s+week\s+before\s+last\b")


def vague_span(lowered: str, words: frozenset[str], today: datetime) -> Window | None:
    """The span a vague time phrase of ``lowered`` (the query's tail, lower-cased; ``words`` its
    words) means, relative to ``today`` (midnight of the user's day, on ``time_window``'s moved
    clock); None when it names none."""
    if words.isdisjoint(TRIGGERS):
        return None
    day = timedelta(days=1)

    def span(first: int, last: int) -> Window:  # from ``first`` days ago to ``last`` days ago, both whole
        return (today - first * day).timestamp(), (today - (last - 1) * day).timestamp()

    if _DAY_PART.search(lowered) or (not words.isdisjoint(PAST_WORDS) and _DAY_PART_SAID.search(lowered)):
        return span(0, 0)
    if _LAST_NIGHT.search(lowered):
        return span(1, 0)
    if m := _DAYS_BACK.search(lowered):
        return span(3, 1) if m[1] and "couple" in m[1] else span(6, 1)
    if m := _WEEKS_BACK.search(lowered):
        return span(21, 7) if "couple" in m[1] else span(35, 14)
    if m := _WEEKEND.search(lowered):
        saturday = (today.weekday() - 5) % 7  # days since the latest Saturday (today when it is one)
        if m[1] and saturday < 2:  # "last weekend", asked on a Saturday or Sunday: the one before
            saturday += 7
        return span(saturday, max(0, saturday - 1))
    if _WEEK_BEFORE_LAST.search(lowered):
        return span(14, 8)
    if m := _LATELY.search(lowered):
        if m[3]:  # "the past week"
            return span(7, 0)
        count = 2 if m[1].startswith("couple") else 4 if m[1] == "few" else NUMBER_WORDS.get(m[1]) or int(m[1])
        if m[2] == "week":
            return span(28 if m[1] == "few" else 7 * count, 0)
        return span(count, 0)
    return None
