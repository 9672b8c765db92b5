"""A question about what was done in a period is answered session by session (ADR 221).

"What did we do yesterday?", "what did I work on last week?", "Was haben wir gestern gemacht?"
name a period and nothing else. A period brings its units newest first (ADR 118), so a day of
three sessions of twenty messages each gave the block eight messages of its last session: the
release notes of the evening, and neither the billing migration of the morning nor the login
fix of the afternoon. What was done in a session is said best by what the user asked for first.

So for such a question — it says a word of doing, working or happening, names a period, and every
other word it says is a word of that period — each session (document) with messages in the period
gives its first request of the user in that period (one of at least ``OPENER_MIN_CHARS``, not
"ok" or "continue"), newest session first, ahead of the other units of the period.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .local_text import fold

# A question about what was done: its word of doing, working or happening (accents folded).
_ASKS_ACTIVITY = re.compile(
    r"\b(?:do|did|done|doing|work|worked|working|happen|happened|happening|accomplish\w*|achiev\w*|busy"
    r"|gemacht|getan|gearbeitet|passiert|fait|travaille|passe|hicimos|hecho|trabajamos|trabajado|paso"
    r"|fatto|lavorato|successo|fizemos|feito|trabalhamos|aconteceu|gedaan|gewerkt|gebeurd"
    r"|делали|сделали|работали|произошло|robilismy|zrobilismy|pracowalismy|робили|зробили|працювали)\b"
)
# A session's first request shorter than this ("ok", "continue", "go on") says nothing of its task.
OPENER_MIN_CHARS = 12


def asks_what_was_done(query: str, terms: list[str], is_time_word: Callable[[str], bool]) -> bool:
    """Whether ``query`` asks what was done in the period it names and about nothing else: it says
    a word of doing, and each of its ``terms`` is such a word or a word of its period."""
    if _ASKS_ACTIVITY.search(fold(query)) is None:
        return False
    return all(_ASKS_ACTIVITY.fullmatch(fold(term)) is not None or is_time_word(term) for term in terms)
