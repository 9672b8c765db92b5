""" "What changed?" is answered by the changes of mind the user stated (ADR 230).

A user back from a week away asks "what changed since last week?", "what has changed lately?",
"Was hat sich geändert?". The question names no subject, and searched by its words it finds the
units that say "change" (a status code changed, a changelog) while the changes themselves say
"we switched from pnpm to bun", "actually, keep Redis", "Jenkins is out". What the user expects is
those: the statements, theirs or the retain tool's, that replace an earlier decision, newest first,
in the period the question names (or lately).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .local_answers import asks
from .local_decisions import is_recency_word, says_decision
from .local_indexed import TOOL_OUTPUT_LABEL
from .local_text import fold, porter_stem, query_terms, said_in_english, without_role_label
from .local_time import OPENING_CHARS, announces_change, asks_for_a_change_elsewhere
from .local_windows import ASSISTANT_PREFIX

# The question, folded: "what (has) changed", "what changes did we make", "anything changed", "any
# changes", and the same in the other nine languages.
_ASKS_WHAT_CHANGED = re.compile(
    r"\bwhat(?:'s|’s|\s+has|\s+have)?\s+changed\b|\bwhat\s+(?:did\s+we|have\s+we|we)\s+changed?\b"
    r"|\bwhat\s+changes\s+(?:did|have)\s+we\s+(?:made?|had)\b|\b(?:has\s+)?anything\s+changed\b"
    r"|\bany\s+changes\b"
    r"|\bwas\s+hat\s+sich\s+(?:\w+\s+)?(?:ge)?andert\b|\bwas\s+haben\s+wir\s+geandert\b"
    r"|\bqu'est[\s-]+ce\s+qui\s+a\s+change\b|\bqu'avons[\s-]+nous\s+change\b|\bqu'est[\s-]+ce\s+qu'on\s+a\s+change\b"
    r"|\bque\s+(?:ha\s+cambiado|cambio|cambiamos)\b"
    r"|\bcosa\s+(?:e\s+cambiato|abbiamo\s+cambiato)\b"
    r"|\bo\s+que\s+(?:mudou|mudamos)\b"
    r"|\bwat\s+(?:is\s+er\s+veranderd|hebben\s+we\s+veranderd)\b"
    r"|\bчто\s+(?:изменилось|мы\s+изменили)\b"
    r"|\bco\s+(?:sie\s+zmieniło|zmienilismy)\b"  # ł has no base letter to fold to
    r"|\bщо\s+(?:змінилося|ми\s+змінили)\b"
)
# What such a question may say besides and still name no subject: whom or what it is about as a
# whole, and how it asks (folded stems).
_GENERAL_STEMS = frozenset(
    porter_stem(word)
    for word in (
        "us", "me", "project", "repo", "repository", "codebase", "here", "so", "far", "since", "then", "else",
        "tell", "summarize", "summarise", "list", "show", "please", "quick", "briefly", "decisions", "plans", "plan",
        "projekt", "projet", "proyecto", "progetto", "projeto", "проекте", "projekcie", "проекті", "seit",
        "depuis", "desde", "da", "sinds", "od", "з", "с",
    )
)  # fmt: skip
# The index's words of a change, OR-ed (stemmed and folded by its tokenizer on both sides), and the
# marks a unit carries of what it left behind (``local_change_marks``): the candidates a question
# about what changed reads, each kept only when it announces a change.
_ENGLISH_CUES = [
    "switched", "switch", "changed", "change", "moved", "migrated", "replaced", "instead", "dropped", "ditched",
    "reverted", "removed", '"no longer"', '"second thought"', '"scratch that"', '"never mind"', "actually",
    "rather", "out",
]  # fmt: skip
_OTHER_CUES = [
    "gewechselt", "umgestellt", "statt", "stattdessen", "ersetzt", "geändert", "remplacé", '"au lieu"', "plutôt",
    "changé", "cambiamos", "cambiado", '"en lugar"', '"en vez"', "reemplazado", "cambiato", "invece", "sostituito",
    "mudamos", '"em vez"', "substituído", "veranderd", '"in plaats"', "vervangen", "overgestapt", "вместо",
    "перешли", "заменили", "zamiast", "przeszliśmy", "zastąpiliśmy", "замість", "перейшли", "замінили",
    # the verbs that ask for a change (ADR 234)
    "wechsle", "ersetze", "migriere", "stell", "stelle", "passe", "passez", "remplace", "remplacez", "migre",
    "bascule", "cambia", "cambie", "reemplaza", "migra", "pasate", "pasa", "passa", "sostituisci", "muda",
    "mude", "troca", "troque", "substitui", "substitua", "stap", "vervang", "migreer", "schakel", "перейди",
    "перейдите", "переключи", "переключись", "замени", "замените", "смени", "przejdź", "przełącz", "zastąp",
    "zmień", "przenieś", "перейдіть", "переключіть", "заміни", "замініть", "зміни", "змініть",
]  # fmt: skip
_MARKS = "script_terms : (zzleft* OR zzgone*)"
_CUES_IN_ENGLISH = f"({_MARKS}) OR (content : ({' OR '.join(_ENGLISH_CUES)}))"
_CUES_IN_ALL = f"({_MARKS}) OR (content : ({' OR '.join(_ENGLISH_CUES + _OTHER_CUES)}))"


def asks_what_changed(query: str, is_time_word: Callable[[str], bool]) -> bool:
    """Whether ``query`` asks what changed and about nothing in particular: it says one of the
    phrases above, and every word besides is a word for the project or the asking, of recency, or
    of its period ("what changed in the billing service?" has a subject, and is searched)."""
    folded = fold(query)
    if _ASKS_WHAT_CHANGED.search(folded) is None:
        return False
    rest = query_terms(_ASKS_WHAT_CHANGED.sub(" ", folded))
    return all(porter_stem(term) in _GENERAL_STEMS or is_recency_word(term) or is_time_word(term) for term in rest)


def change_cues(query: str) -> str:
    """The FTS5 query for the statements of a change, in the language(s) of ``query``."""
    return _CUES_IN_ENGLISH if said_in_english(query) else _CUES_IN_ALL


# A request that makes the change: "Switch the session cache from Redis to Valkey", "please drop
# Jenkins" (folded, at the start of the message).
_ASKS_FOR_A_CHANGE = re.compile(r"^(?:please\s+)?(?:switch|move|migrate|replace|drop|revert|swap|ditch)\b")
# A decision taken back and what to do instead, said together: "Actually, keep Redis.", "On second
# thought, let's stay on npm.", "Scratch that: use Postgres." (ADR 234). The opener takes the decision
# back (``local_time``); the instruction after it is the new one. "Actually, the bug was in the
# parser" takes nothing back: no instruction follows.
_TAKES_BACK_AND_ASKS = re.compile(
    r"^(?:actually|on\s+second\s+thoughts?|scratch\s+that|never\s*mind|change\s+of\s+plans?|wait)\b[\s,:;.!-]*"
    r"(?:(?:no|ok|okay|hmm|sorry)\b[\s,:;.!-]*)?(?:please\s+|let[’']?s\s+|we[’']?ll\s+|we\s+should\s+|i[’']?d\s+rather\s+)?"
    r"(?:keep|use|go|stay|stick|switch|move|leave|revert|make|pick|choose|put|run|drop|return|roll|undo|skip|do\s+not"
    r"|don[’']?t|stop|start|turn|set|restore|bring)\b"
)


def states_change(content: str) -> bool:
    """Whether a unit states a change of mind: a user's message that does not ask, or a memory the
    model wrote with the retain tool (no role label), that announces a change and says it as a
    decision (in the words of deciding, or naming what it left behind, ADR 220) or asks for it ("Switch
    the cache from Redis to Valkey"). The agent's report
    of what it changed in the code ("I replaced the sleep with a poll"), a tool's output and a
    report of a change of no one's ("the hit rate dropped to 60%") are not."""
    if content.startswith((ASSISTANT_PREFIX, TOOL_OUTPUT_LABEL)) or asks(content):
        return False
    body = without_role_label(content)
    if asks_for_a_change_elsewhere(body):
        return True
    start = fold(body[:OPENING_CHARS]).lstrip()
    return announces_change(content) and (
        says_decision(body)
        or _ASKS_FOR_A_CHANGE.match(start) is not None
        or _TAKES_BACK_AND_ASKS.match(start) is not None
    )
