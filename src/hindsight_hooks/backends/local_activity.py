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
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .local_text import fold, query_terms
from .local_time import period_words_now

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


# A question about where the work was left (ADR 222), in its folded words: "where did we leave
# off?", "where were we?", "what were we working on?", "what have I been doing?", "last time",
# "remind me what we did", and the same in the other nine languages. "What we did" counts only after
# a verb of asking (ADR 235): "what did we do?" alone is also said of the step just taken (ADR 221).
_ASKS_WHERE_WE_LEFT = re.compile(
    r"\bwhere\s+(?:did|do|had)\s+(?:we|i)\s+(?:leave|left|stop|stopped)(?:\s+off)?\b"
    r"|\bwhere\s+(?:we|i)\s+(?:left|stopped)(?:\s+off)?\b|\bleft\s+off\b|\bwhere\s+were\s+we\b"
    r"|\bwhat\s+(?:were|was)\s+(?:we|i)\s+(?:doing|working\s+on|up\s+to|in\s+the\s+middle\s+of)\b"
    r"|\bwhat\s+(?:we|i)\s+(?:were|was)\s+(?:doing|working\s+on|up\s+to|in\s+the\s+middle\s+of)\b"
    r"|\bwhat\s+(?:have|had|'ve|’ve)\s+(?:we|i)\s+been\s+(?:doing|working\s+on|up\s+to)\b"
    r"|\b(?:remind|tell|show|recap|summari[sz]e)\s+(?:me|us)?\s*(?:of\s+)?what\s+(?:we|i|you)\s+(?:did|worked\s+on|got\s+done)\b"
    r"|\b(?:last|previous)\s+(?:time|session|conversation|chat)\b|\bthe\s+last\s+thing\s+(?:i|we|you)\b"
    r"|\bwo\s+(?:waren|sind)\s+wir(?:\s+stehen\s*geblieben|\s+stehengeblieben)?\b"
    r"|\bworan\s+(?:haben|hatten)\s+wir\s+(?:zuletzt\s+)?gearbeitet\b|\bletzte[sn]?\s+(?:mal|sitzung)\b"
    r"|\bou\s+en\s+(?:etions|etait|sommes)[\s-]+(?:nous|on)\b|\bla\s+derniere\s+fois\b|\bderniere\s+session\b"
    r"|\bsur\s+quoi\s+(?:travaillions[\s-]+nous|on\s+travaillait)\b"
    r"|\bdonde\s+(?:lo\s+dejamos|nos\s+quedamos)\b|\ben\s+que\s+estabamos\b|\bla\s+ultima\s+vez\b"
    r"|\bultima\s+(?:sesion|sessione|sessao)\b|\bdove\s+eravamo(?:\s+rimasti)?\b|\ba\s+che\s+punto\s+eravamo\b"
    r"|\bl'?\s*ultima\s+volta\b|\bsu\s+cosa\s+stavamo\s+lavorando\b"
    r"|\bonde\s+(?:paramos|estavamos)\b|\bda\s+ultima\s+vez\b|\bem\s+que\s+estavamos\b"
    r"|\bwaar\s+(?:waren|zijn)\s+we\s+(?:gebleven|mee\s+bezig)\b|\b(?:vorige|laatste)\s+(?:keer|sessie)\b"
    r"|(?:\bна\s+чем|\bгде)\s+мы\s+остановились\b|\bв\s+прошлыи\s+раз\b|\bнад\s+чем\s+мы\s+работали\b"
    r"|\b(?:na\s+czym|gdzie)\s+skonczylismy\b|\bostatnim\s+razem\b|\bnad\s+czym\s+pracowalismy\b"
    r"|(?:\bна\s+чому|\bде)\s+ми\s+зупинилися\b|\bминулого\s+разу\b|\bнад\s+чим\s+ми\s+працювали\b"
)
# Words such a question may say besides: asking, carrying on, summing up (folded).
_RESUMING_WORDS = frozenset((
    "remind", "tell", "again", "please", "pls", "quick", "quickly", "recap", "summary", "summarize", "summarise",
    "continue", "resume", "pick", "go", "on", "let", "lets", "ok", "okay", "hey", "hi", "hello", "so", "exactly",
    "us", "me", "back", "get", "give", "ask", "asked", "say", "said", "told", "talk", "talked", "discuss",
    "discussed",
))  # fmt: skip
# What is left to do, asked as a session's first prompt (ADR 222): "what's next?", "what's left to
# do?", "any open items?", and the same in the other nine languages (folded). Inside a session the
# same words ask about the work the model reads, so they count only as its first prompt.
_ASKS_WHAT_IS_NEXT = re.compile(
    r"\bwhat(?:'s|’s|\s+is|\s+are)\s+(?:next|left|pending|remaining|outstanding|still\s+open)\b"
    r"|\bwhat\s+(?:should|do|shall)\s+(?:we|i)\s+do\s+next\b|\bnext\s+steps?\b|\bwhat\s+remains\b"
    r"|\b(?:any\s+)?(?:open|pending)\s+(?:items|tasks|todos|points)\b"
    r"|\bwas\s+steht\s+an\b|\bwas\s+ist\s+(?:noch\s+)?offen\b|\bwie\s+geht\s+es\s+weiter\b"
    r"|\bqu'est[\s-]+ce\s+qui\s+reste(?:\s+a\s+faire)?\b|\bet\s+ensuite\b|\bla\s+suite\b"
    r"|\bque\s+(?:sigue|falta|queda)(?:\s+por\s+hacer)?\b|\bcosa\s+(?:resta|manca)(?:\s+da\s+fare)?\b"
    r"|\bo\s+que\s+(?:falta|vem\s+agora)(?:\s+fazer)?\b"
    r"|\bwat\s+(?:moet\s+er\s+nog(?:\s+gebeuren|\s+gedaan\s+worden)?|is\s+de\s+volgende\s+stap)\b"
    r"|\bчто\s+(?:дальше|осталось)\b|\bco\s+(?:dalej|zostalo)\b|\bщо\s+(?:далі|залишилося)\b"
    # How things stand, asked to begin a session (ADR 229): "what's the status?", "where are we?",
    # "catch me up", and the same in the other nine languages (folded).
    r"|\bwhat(?:'s|’s|\s+is)\s+the\s+(?:status|state\s+of\s+things)\b|\bstatus\s+(?:update|report)\b"
    r"|\bwhere\s+are\s+we(?:\s+at)?\b|\bwhere\s+do\s+(?:we|things)\s+stand\b|\bcatch\s+me\s+up\b"
    r"|\bbring\s+me\s+up\s+to\s+speed\b"
    r"|\b(?:wie|was)\s+ist\s+der\s+(?:stand|status)\b|\bwo\s+stehen\s+wir\b"
    r"|\bou\s+en\s+est[\s-]+on\b|\bquel\s+est\s+le\s+statut\b"
    r"|\ben\s+que\s+punto\s+estamos\b|\bcomo\s+vamos\b|\bcual\s+es\s+el\s+estado\b"
    r"|\ba\s+che\s+punto\s+siamo\b|\bqual\s+e\s+lo\s+stato\b"
    r"|\bem\s+que\s+ponto\s+estamos\b|\bqual\s+e\s+o\s+status\b"
    r"|\bhoe\s+staan\s+we\s+ervoor\b|\bwat\s+is\s+de\s+status\b"
    r"|\bкакои\s+(?:сеичас\s+)?статус\b|\bна\s+каком\s+мы\s+этапе\b"
    r"|\bjaki\s+jest\s+status\b|\bna\s+jakim\s+etapie\s+jestesmy\b"
    r"|\bякии\s+(?:зараз\s+)?статус\b|\bна\s+якому\s+ми\s+етапі\b"
)
# "Where were we on it?", "where did we leave off with that?": a pronoun names a subject of the talk.
_ABOUT_IT = re.compile(r"\b(?:on|with|about|regarding|for|in)\s+(?:it|that|this|them|these|those)\b")
# How many of the last session's last messages show where it ended.
ENDING_UNITS = 3


def asks_where_we_left_off(query: str, is_time_word: Callable[[str], bool]) -> bool:
    """Whether ``query`` asks where the work was left and about nothing else (ADR 222): it says one
    of the phrases above, and every word it says besides is a word of asking or carrying on, of
    doing, or of its period ("where did we leave off with the billing migration?" has a subject,
    and is searched as before)."""
    return _asks_only(_ASKS_WHERE_WE_LEFT, query, is_time_word)


def asks_what_is_next(query: str, is_time_word: Callable[[str], bool]) -> bool:
    """Whether ``query`` asks what is left to do and about nothing else ("what's next?"; "what's left
    of the billing migration?" has a subject). The store takes it for "where did we leave off?"
    only as a session's first prompt (ADR 222)."""
    return _asks_only(_ASKS_WHAT_IS_NEXT, query, is_time_word)


def _asks_only(phrases: re.Pattern[str], query: str, is_time_word: Callable[[str], bool]) -> bool:
    """Whether ``query`` says one of ``phrases`` and nothing besides but words of asking or carrying
    on, of doing, or of its period; a pronoun object ("on it") names a subject."""
    folded = fold(query)
    if phrases.search(folded) is None or _ABOUT_IT.search(folded) is not None:
        return False
    rest = query_terms(phrases.sub(" ", folded))
    return all(
        term in _RESUMING_WORDS or _ASKS_ACTIVITY.fullmatch(term) is not None or is_time_word(term) for term in rest
    )


def opens_a_session(messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the messages a host sends with a prompt are that prompt alone: no earlier turn of
    the user or the agent (a system message aside), so the prompt opens its session."""
    return sum(1 for m in messages if isinstance(m, Mapping) and m.get("role") in {"user", "assistant"}) <= 1


def asks_where_we_left_off_now(text: str) -> bool:
    """:func:`asks_where_we_left_off` for a prompt said now (its period read against the clock):
    the plugin searches such a prompt without the reply before it, whose words would be its subject."""
    if _ASKS_WHERE_WE_LEFT.search(fold(text)) is None:  # most prompts: one expression, no period read
        return False
    return asks_where_we_left_off(text, period_words_now(text))
