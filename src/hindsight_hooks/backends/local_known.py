""" "What do you remember?" is answered by what the user said to keep (ADR 223).

The first thing a user asks an agent with memory is what it remembers: "what do you know about
me?", "what do you remember about this project?", "Was weißt du über mich?". The question names no
subject, and searched by its words ("know", "remember") it finds nothing: no stored message says
them. What the user expects is what they said to be kept:

- the decisions they stated (ADR 220: "let's go with Postgres", "from now on …");
- their preferences and the project's conventions: "I prefer small commits", "we use pnpm, never
  npm", "please always run the linter", "remember that the staging key rotates monthly";
- the memories the model wrote with the retain tool in those words ("User prefers pnpm").

So for such a question the store takes as candidates the units last written that state one of
those (a user's message that is not a question, or a retain-tool memory), newest first, and shows
them ahead of the rest; the first requests of the last sessions follow (ADR 221), so a user who
stated nothing yet sees what they worked on.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .local_answers import asks
from .local_decisions import decision_cues, states_decision
from .local_indexed import TOOL_OUTPUT_LABEL
from .local_text import fold, query_terms, said_in_english, without_role_label
from .local_time import period_words_now
from .local_windows import ASSISTANT_PREFIX

# How many of the last sessions' first requests follow what was kept (ADR 221's walk).
KNOWN_SESSIONS = 3
# The question for the statements themselves: "what are my preferences?", "what conventions do we
# follow?" (folded), in the languages that say it this way.
_PREFERENCE_WORDS = r"(?:preferences|conventions|rules|standards|guidelines)"
_ASKS_FOR_PREFERENCES = (
    rf"\bwhat\s+(?:are|were)\s+(?:my|our|the)\s+{_PREFERENCE_WORDS}\b"
    rf"|\bwhat\s+{_PREFERENCE_WORDS}\s+do\s+(?:we|i)\s+(?:follow|use|have)\b"
    r"|\bwelche\s+(?:vorlieben|konventionen|regeln)\s+(?:habe|haben)\s+(?:ich|wir)\b"
    r"|\bquelles\s+sont\s+(?:mes|nos)\s+(?:preferences|conventions|regles)\b"
    r"|\bcuales\s+son\s+(?:mis|nuestras)\s+(?:preferencias|convenciones|reglas)\b"
)
_PREFERENCES = re.compile(_ASKS_FOR_PREFERENCES)
# The question, in its folded words: "what do you know / remember", "what have you learned",
# "what's in your memory", "summarize what you know", the preferences' question above, and the
# same in the other nine languages.
_ASKS_WHAT_IS_KNOWN = re.compile(
    r"\bwhat\s+(?:else\s+)?(?:do|did)\s+you\s+(?:remember|know|recall)\b"
    r"|\bwhat\s+(?:have|'ve|’ve)\s+you\s+(?:remembered|learned|learnt|stored|saved|kept|noted|got)\b"
    r"|\bwhat(?:'s|’s|\s+is)\s+in\s+(?:your|the)\s+memory\b|\bwhat\s+does\s+(?:your|the)\s+memory\s+(?:say|hold)\b"
    r"|\bwhat\s+you\s+(?:know|remember)\b|\bdo\s+you\s+(?:remember|know)\s+(?:me|us|anything)\b"
    rf"|{_ASKS_FOR_PREFERENCES}"
    r"|\bwas\s+(?:weißt|weisst)\s+du\b|\bwas\s+wissen\s+sie\b|\bworan\s+erinnerst\s+du\s+dich\b"
    r"|\bwas\s+hast\s+du\s+dir\s+gemerkt\b"
    r"|\bque\s+sais[\s-]+tu\b|\bqu'est[\s-]+ce\s+que\s+tu\s+sais\b|\bde\s+quoi\s+te\s+souviens[\s-]+tu\b"
    r"|\bque\s+savez[\s-]+vous\b"
    r"|\bque\s+(?:sabes|recuerdas|sabe\s+usted)\b"
    r"|\b(?:che\s+)?cosa\s+(?:sai|ricordi|ti\s+ricordi)\b"
    r"|\bo\s+que\s+(?:voce|tu)\s+(?:sabe|sabes|lembra|se\s+lembra)\b|\bdo\s+que\s+(?:voce|tu)\s+se\s+lembra\b"
    r"|\bwat\s+(?:weet|herinner)\s+(?:je|jij)\b"
    r"|\bчто\s+(?:ты|вы)\s+(?:знаешь|помнишь|знаете|помните)\b"
    r"|\bco\s+(?:wiesz|pamietasz)\b|\bco\s+o\s+(?:mnie|nas)\s+wiesz\b"
    r"|\bщо\s+(?:ти|ви)\s+(?:знаєш|пам'ятаєш|пам’ятаєш|знаєте)\b"
)
# What such a question may say besides and still name no subject: whom or what it is about as a
# whole (folded).
_GENERAL_WORDS = frozenset((
    "me", "us", "mi", "mim", "mij", "mnie", "nas", "обо", "мне", "мене", "нас", "nous", "moi", "uns", "mich",
    "project", "projects", "repo", "repository", "codebase", "code", "work", "team", "preferences", "far",
    "already", "anything", "everything", "projekt", "projet", "proyecto", "progetto", "projeto", "проект",
    "проекте", "проекті", "projekcie", "yet", "summarize", "summarise", "summary", "recap", "list", "tell",
    "show", "all", "please", "quick", "quickly", "briefly",
))  # fmt: skip
# How a preference or a convention is stated, besides the decisions of ADR 220 (folded). "Always"
# and "never" count at the start of a sentence or after its speaker ("we always squash", "Never push
# to main"), not in a report ("the build always fails").
_ALWAYS = (
    r"(?:always|never|immer|niemals|toujours|jamais|siempre|nunca|sempre|altijd|nooit|всегда|никогда|zawsze"
    r"|nigdy|завжди|ніколи)"
)
_SPEAKERS = r"(?:we|i|you|please|wir|ich|bitte|nous|on|je|nosotros|noi|nos|wij|ik|мы|я|my|ja|ми|prosze)"
_STATES_PREFERENCE = re.compile(
    rf"(?:^|[.!;:]\s*|\b{_SPEAKERS}\s+){_ALWAYS}\b"
    r"|\bi\s+(?:prefer|like|love|hate|dislike)\b|\bi(?:'d|’d|\s+would)\s+rather\b"
    r"|\bwe\s+(?:use|run|deploy|host|follow|keep|prefer)\b|\bour\s+\w+\s+is\b"
    r"|\bplease\s+(?:don't|don’t|do\s+not)\b|\bdon(?:'t|’t)\s+ever\b"
    r"|\bremember\s+(?:that|to)\b|\bkeep\s+in\s+mind\b|\bmake\s+sure\s+(?:to|that)\b|\bmy\s+name\s+is\b"
    r"|\bcall\s+me\b|\b(?:prefers|uses|likes)\b"
    r"|\b(?:ich\s+bevorzuge|ich\s+mag|wir\s+(?:verwenden|nutzen|benutzen)|merk\s+dir)\b"
    r"|\b(?:je\s+prefere|on\s+utilise|nous\s+utilisons|souviens[\s-]+toi)\b"
    r"|\b(?:prefiero|usamos|utilizamos|recuerda\s+que)\b"
    r"|\b(?:preferisco|usiamo|utilizziamo|ricorda\s+che)\b"
    r"|\b(?:prefiro|lembre[\s-]+se)\b"
    r"|\b(?:ik\s+geef\s+de\s+voorkeur|liever|we\s+gebruiken|onthoud)\b"
    r"|(?:предпочитаю|мы\s+используем|запомни)"
    r"|(?:wole|uzywamy|zapamietaj)"
    r"|(?:віддаю\s+перевагу|ми\s+використовуємо|запам'ятай|запам’ятай)"
)
# Their words as an FTS5 query of the index (stemmed and folded by its tokenizer), OR-ed with the
# decisions' (ADR 220): the candidates a question about what is known reads, each kept only when it
# states one of the above. Phrases where a word alone is said of code all day ("use", "run").
_ENGLISH_CUES = [
    "prefer", "prefers", "preferred", "rather", "always", "never", '"i like"', '"i love"', '"i hate"',
    '"we use"', '"we run"', '"we deploy"', '"we host"', '"we follow"', '"we keep"',
    '"remember that"', '"remember to"', '"keep in mind"', '"make sure"', '"my name"', '"call me"', "uses",
    "likes",
]  # fmt: skip
_OTHER_CUES = [
    "bevorzuge", '"ich mag"', "verwenden", "nutzen", "benutzen", "immer", "niemals", '"merk dir"', "prefere",
    '"on utilise"', "utilisons", "toujours", "jamais", "souviens", "prefiero", "usamos", "utilizamos",
    "siempre", "nunca", "recuerda", "preferisco", "usiamo", "utilizziamo", "sempre", "ricorda", "prefiro",
    "lembre", "voorkeur", "liever", "gebruiken", "altijd", "nooit", "onthoud", "предпочитаю", "используем",
    "всегда", "никогда", "запомни", "wolę", "używamy", "zawsze", "nigdy", "zapamiętaj", "перевагу",
    "використовуємо", "завжди", "ніколи", '"запам ятай"',
]  # fmt: skip
_CUES_IN_ENGLISH = "content : (" + " OR ".join(_ENGLISH_CUES) + ")"
_CUES_IN_ALL = "content : (" + " OR ".join(_ENGLISH_CUES + _OTHER_CUES) + ")"


def asks_what_is_known(query: str, is_time_word: Callable[[str], bool]) -> bool:
    """Whether ``query`` asks what the memory holds and about nothing in particular: it says one of
    the phrases above, and every word besides is a word for the user, the team or the project, or of
    its period ("what do you know about the billing service?" has a subject, and is searched)."""
    folded = fold(query)
    if _ASKS_WHAT_IS_KNOWN.search(folded) is None:
        return False
    rest = query_terms(_ASKS_WHAT_IS_KNOWN.sub(" ", folded))
    return all(fold(term) in _GENERAL_WORDS or is_time_word(term) for term in rest)


def asks_for_preferences(query: str) -> bool:
    """Whether a question about what is known asks for the preferences and conventions themselves
    ("what are my preferences?"): it is answered by what the user said to keep alone, without the
    last sessions' first requests, unless nothing was said to keep."""
    return _PREFERENCES.search(fold(query)) is not None


def asks_what_is_known_now(text: str) -> bool:
    """:func:`asks_what_is_known` for a prompt said now (its period read against the clock): the
    plugin searches such a prompt without the reply before it, whose words would be its subject."""
    if _ASKS_WHAT_IS_KNOWN.search(fold(text)) is None:  # most prompts: one expression, no period read
        return False
    return asks_what_is_known(text, period_words_now(text))


def kept_cues(query: str) -> str:
    """The FTS5 query for the statements to keep, in the language(s) of ``query``."""
    own = _CUES_IN_ENGLISH if said_in_english(query) else _CUES_IN_ALL
    return f"({own}) OR ({decision_cues(query)})"


def states_kept(content: str) -> bool:
    """Whether a unit states something the user said to keep: a decision (ADR 220), a preference or
    a convention, in a user's message that does not ask, or in a retain-tool memory (no role label).
    The agent's replies and a tool's output keep nothing of the user's."""
    if content.startswith((ASSISTANT_PREFIX, TOOL_OUTPUT_LABEL)):
        return False
    if asks(content):  # "do we always rebase?" asks, it states nothing (ADR 219's reading)
        return False
    return _STATES_PREFERENCE.search(fold(without_role_label(content))) is not None or states_decision(content)
