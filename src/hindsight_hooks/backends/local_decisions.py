"""A question about what was decided is answered by the decisions (ADR 220).

A user who keeps a year of sessions asks "what did we decide last week?", "what have we agreed
on?", "what decisions did we make recently?". The question names no subject: its subject is the
decisions themselves. Searched by its words, it finds the few units that say "decide" or "agreed"
(or none: "decisions" shares no stem with "decided"), and a period brings the week's units newest
first, so the block filled with the week's routine requests ("Rename the helper …") while "Let's
go with Postgres for the orders service, not MySQL." waited below them.

So for such a question — it asks about deciding, and every other word it says is a time, a word
of recency or a verb that goes with "decision" ("make", "take", "reach") — the store also takes
the units that *state* a decision as candidates (in the question's period, if it names one), and
puts those statements first, in their order. A statement of a decision is one that says it in one
of the ways people do: "let's go with …", "we decided / agreed / chose …", "we'll stick with …",
"from now on …", "always use …", or a change of mind that names what it left (ADR 209), in the
languages the store reads.

A question with a subject ("what did we choose for the cache?") is searched by its words: a
decision about something else is no answer to it. But a unit that states a decision says the
question's word of deciding ("Let's keep Redis for the cache" is about deciding, though it does
not say "decide"), and the units that state a decision and say every word of the subject go
before the subject's other units ("Clear the cache on staging").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice

from .local_answers import asks
from .local_change_marks import decided_marks
from .local_indexed import TOOL_OUTPUT_LABEL
from .local_rank import Candidate
from .local_text import LIGHT_VERBS, fold, porter_stem, said_in_english, without_role_label
from .local_windows import ASSISTANT_PREFIX

# A question about deciding: its decision word, in the ten languages the store reads (accents folded).
_ASKS_DECISION = re.compile(
    r"\b(?:decid\w*|decis\w*|agree[ds]?|agreements?|chose|choose|chosen|choices?|settled?|conclu\w*"
    r"|entschied\w*|entscheid\w*|beschlo\w*|beschluss\w*|geeinigt|vereinbar\w*"
    r"|convenu\w*|choisi\w*|choix"
    r"|acord\w*|elegi\w*|escog\w*"
    r"|concordat\w*|scelt\w*|scelto"
    r"|combinam\w*|combinad\w*|escolh\w*|decisa\w*|decisoe\w*"
    r"|beslo\w*|beslis\w*|afgesproken|afspraak\w*|gekozen"
    r"|реш\w*|договор\w*|выбр\w*"
    r"|zdecydow\w*|decyzj\w*|ustali\w*|wybra\w*"
    r"|виріш\w*|рішен\w*|домовил\w*|обрал\w*)\b"
)
# The words such a question may say besides its decision word and its time, and still name no
# subject: "what decisions did we make?", "which calls did we take?".
_GENERAL_WORDS_SAID = (
    "make", "made", "making", "take", "took", "taken", "reach", "reached", "come", "came", "have", "had", "any",
    "all", "important", "main", "big", "key", "treffen", "getroffen", "gefasst", "prendre", "pris", "tomar",
    "tomado", "tomamos", "prendere", "preso", "fazer", "feito", "nemen", "genomen", "принимали", "приняли",
    "принять", "podjęli", "podjelismy", "podjęliśmy", "ухвалили", "прийняли",
)  # fmt: skip
_GENERAL_WORDS = frozenset(porter_stem(fold(word)) for word in _GENERAL_WORDS_SAID)
# Words that ask how things stand lately (``local_time``'s recency words), said with no period.
_RECENT_WORDS_SAID = (
    "recent", "recently", "lately", "latest", "newest", "now", "nowadays", "current", "currently", "so", "far",
    "kürzlich", "kurzlich", "neulich", "zuletzt", "letztens", "récemment", "recemment", "dernièrement",
    "dernierement", "recientemente", "últimamente", "ultimamente", "recentemente", "ultimamente", "onlangs",
    "recent", "laatst", "недавно", "последнее", "время", "ostatnio", "нещодавно", "останнім",
)  # fmt: skip
_RECENT_WORDS = frozenset(porter_stem(fold(word)) for word in _RECENT_WORDS_SAID)


def is_recency_word(term: str) -> bool:
    """Whether a query term asks how things stand lately ("recently", "lately", "zuletzt")."""
    return porter_stem(fold(term)) in _RECENT_WORDS


# How a decision is stated. Verbs of choosing said by "let's", "we'll" or "we decided …"; a few
# fixed phrases; the other languages' past tenses of deciding and agreeing.
_STATES_DECISION = re.compile(
    r"\blet(?:'|’)?s\s+(?:just\s+)?(?:go\s+with|use|stick\s+with|keep|switch|move\s+to|adopt|pick|choose"
    r"|standardi[sz]e\s+on|settle\s+on|drop|stay\s+(?:on|with))\b"
    r"|\b(?:we|i)\s+(?:(?:have|'ve|’ve)\s+)?(?:decided|agreed|chose|picked|settled|opted|went\s+with)\b"
    r"|\b(?:decided|agreed)\s+(?:to|on|that|against)\b"
    r"|\bwe(?:'ll|’ll|\s+will|(?:'re|’re|\s+are)\s+going\s+to)\s+(?:use|go\s+with|stick\s+with|keep|switch"
    r"|move\s+to|adopt|stay\s+(?:on|with))\b"
    r"|\b(?:going|go)\s+with\b|\bstick(?:ing)?\s+with\b|\bsettled\s+on\b|\bthe\s+(?:plan|decision)\s+is\b"
    r"|\bfrom\s+now\s+on\b|\b(?:always|never)\s+use\b|\b(?:switched|migrated)\b"
    # German, French, Spanish, Italian, Portuguese, Dutch (accents folded)
    r"|\b(?:entschieden|beschlossen|geeinigt|vereinbart|ab\s+jetzt|wir\s+bleiben\s+bei|wir\s+nehmen)\b"
    r"|\b(?:(?:on\s+a|nous\s+avons|j'ai)\s+decide|convenu|on\s+part\s+sur|on\s+garde|desormais"
    r"|a\s+partir\s+de\s+maintenant)\b"
    r"|\b(?:decidimos|hemos\s+decidido|acordamos|vamos\s+con|nos\s+quedamos\s+con|a\s+partir\s+de\s+ahora)\b"
    r"|\b(?:abbiamo\s+deciso|deciso\s+di|concordato|andiamo\s+con|d'ora\s+in\s+poi|da\s+ora\s+in\s+poi)\b"
    r"|\b(?:combinamos|vamos\s+com|ficamos\s+com|a\s+partir\s+de\s+agora)\b"
    r"|\b(?:besloten|afgesproken|we\s+gaan\s+voor|we\s+kiezen\s+voor|voortaan|vanaf\s+nu)\b"
    # Russian, Polish, Ukrainian
    r"|(?:решили|договорились|выбрали|остаёмся\s+на|остаемся\s+на|теперь\s+всегда)"
    r"|(?:zdecydowalismy|zdecydowali|ustalilismy|ustalili|wybralismy|zostajemy\s+przy|od\s+teraz)"
    r"|(?:вирішили|домовилися|обрали|залишаємося\s+на|відтепер)"
    # "I decided / chose" (ADR 231): the singular past, ł written as such (it does not fold)
    r"|\bя\s+(?:решил|решила|выбрал|выбрала)\b|\b(?:zdecydowałem|zdecydowałam|wybrałem|wybrałam|ustaliłem|ustaliłam)\b"
    r"|\bя\s+(?:вирішив|вирішила|обрав|обрала)\b"
)
# A piece of every statement above: a text that holds none is not searched with the expression
# (most texts; the search costs ~0.2 ms on a long one, the pieces a few µs).
_STATEMENT_HINTS = (
    "let's", "let’s", "lets ", "decid", "agree", "chose", "picked", "settl", "opted", "went with", "go with",
    "going with", "stick",
    "we'll", "we’ll", "we will", "we're going", "we’re going", "we are going", "plan is", "decision is",
    "from now on", "always use", "never use", "switched", "migrated",
    "entschieden", "beschlossen", "geeinigt", "vereinbart", "ab jetzt", "bleiben bei", "wir nehmen",
    "convenu", "on part", "on garde", "desormais", "a partir de", "decidimos", "acordamos", "vamos co",
    "quedamos", "deciso", "concordato", "andiamo", "in poi", "combinamos", "ficamos", "besloten", "afgesproken",
    "gaan voor", "kiezen voor", "voortaan", "vanaf nu", "решили", "договорились", "выбрали", "остаёмся",
    "остаемся", "теперь всегда", "zdecydowal", "ustalil", "wybralismy", "zostajemy", "od teraz", "вирішили",
    "решил", "выбрал", "zdecydował", "wybrał", "ustalił", "вирішив", "вирішила", "обрав", "обрала",
    "домовилися", "обрали", "залишаємося", "відтепер",
)  # fmt: skip
# The words of those statements, as an FTS5 query of the index (its tokenizer stems and folds
# them as it did the units): what a question about decisions searches for its candidates, each
# then read and kept only when it states a decision. Phrases where a word alone is common ("part",
# "poi", "ahora"); of the words a change of mind is said with, those that say little else ("out",
# "moved", "replaced" are said of code all day).
_ENGLISH_CUES = [
    "decided", "agreed", "chose", "picked", "opted", "settled", "decision",
    '"go with"', '"going with"', '"went with"', '"stick with"', '"sticking with"', '"stay on"', '"stay with"',
    '"settle on"', '"from now on"', '"plan is"', '"decision is"', '"always use"', '"never use"',
    '"let s use"', '"let s keep"', '"let s switch"', '"let s move"', '"let s adopt"', '"let s drop"',
    '"let s pick"', '"let s choose"', '"let s standardize"', '"let s standardise"',
    '"we ll use"', '"we will use"', '"we ll keep"', '"we will keep"', '"going to use"',
    "switched", "migrated", "instead", "ditched", "reverted", "scrapped", "superseded", '"no longer"',
    '"second thought"', '"scratch that"', '"change of plan"', '"changed my mind"',
]  # fmt: skip
_OTHER_CUES = [
    "statt", "anstatt", "lieu", "invece", "вместо", "zamiast", "замість",
    "entschieden", "beschlossen", "geeinigt", "vereinbart", '"ab jetzt"', '"wir bleiben bei"', '"wir nehmen"',
    '"a decide"', '"avons decide"', '"ai decide"', "convenu", '"on part sur"', '"on garde"', "desormais",
    '"a partir de maintenant"', "decidimos", "decidido", "acordamos", '"vamos con"', '"nos quedamos con"',
    '"a partir de ahora"', "deciso", "concordato", '"andiamo con"', '"in poi"', "combinamos", '"vamos com"',
    '"ficamos com"', '"a partir de agora"', "besloten", "afgesproken", '"we gaan voor"', '"we kiezen voor"',
    "voortaan", '"vanaf nu"',
    "решили", "договорились", "выбрали", '"остаёмся на"', '"остаемся на"', '"теперь всегда"',
    "zdecydowaliśmy", "zdecydowali", "ustaliliśmy", "ustalili", "wybraliśmy", '"zostajemy przy"', '"od teraz"',
    '"я решил"', '"я решила"', '"я выбрал"', '"я выбрала"', "zdecydowałem", "zdecydowałam", "wybrałem", "wybrałam",
    "ustaliłem", "ustaliłam", '"я вирішив"', '"я вирішила"', '"я обрав"', '"я обрала"',
    "вирішили", "домовилися", "обрали", '"залишаємося на"', "відтепер",
]  # fmt: skip
# Each word an FTS5 query names is looked up in every segment of the index: the other languages'
# words double the search (2.4 → 4.3 ms at 10k units), so an English question leaves them out.
_CUES_IN_ENGLISH = "content : (" + " OR ".join(_ENGLISH_CUES) + ")"
_CUES_IN_ALL = "content : (" + " OR ".join(_ENGLISH_CUES + _OTHER_CUES) + ")"


def decision_cues(query: str) -> str:
    """The FTS5 query for the statements of decisions in the language(s) of ``query``."""
    return _CUES_IN_ENGLISH if said_in_english(query) else _CUES_IN_ALL


# How the agent proposes a choice that the user's answer then makes a decision ("We could replace
# eslint with biome. Shall I switch?" — "no, keep eslint for now"): a proposal, an alternative or a
# choice between two, in a message that asks. "Shall I commit?" proposes no choice (folded).
_PROPOSES = re.compile(
    r"\b(?:we|you|i)\s+could\b|\bhow\s+about\b|\bwhat\s+about\b|\bi\s+(?:suggest|propose|recommend)\b"
    r"|\binstead\b|\b(?:replace|replacing|switch(?:ing)?\s+to|mov(?:e|ing)\s+to|migrat(?:e|ing)\s+to)\b"
    r"|\bwould\s+you\s+(?:like|prefer|rather)\b|\bdo\s+you\s+want\s+(?:me\s+to|to)\b|\bor\b"
    r"|\bwir\s+konnten\b|\bstatt\b|\bon\s+pourrait\b|\bau\s+lieu\b|\bpodriamos\b|\ben\s+lugar\b"
    r"|\bpotremmo\b|\binvece\b|\bpoderiamos\b|\bem\s+vez\b|\bwe\s+zouden\b|\bin\s+plaats\b"
)
# Their words as an FTS5 query of the index, in the agent's messages the search reads newest first.
PROPOSAL_CUES = (
    'content : ("we could" OR "you could" OR "i could" OR "how about" OR "what about" OR suggest OR propose '
    'OR recommend OR instead OR replace OR replacing OR "switch to" OR "switching to" OR "move to" '
    'OR "migrate to" OR "would you like" OR "would you prefer" OR "do you want" OR "wir könnten" OR statt '
    'OR "on pourrait" OR "au lieu" OR podríamos OR "en lugar" OR potremmo OR invece OR poderíamos '
    'OR "em vez" OR "we zouden" OR "in plaats")'
)


def proposes(content: str) -> bool:
    """Whether a unit is the agent's proposal of a choice, asked (see ``_PROPOSES``)."""
    if not content.startswith(ASSISTANT_PREFIX) or not asks(content):  # ADR 219's reading of a question
        return False
    return _PROPOSES.search(fold(content)) is not None


def asks_about_decisions(query: str) -> bool:
    """Whether ``query`` asks about deciding ("what did we decide", "Was haben wir beschlossen?")."""
    return _ASKS_DECISION.search(fold(query)) is not None


def is_decision_word(term: str) -> bool:
    """Whether a query term is a word of deciding ("decide", "agreed", "entschieden")."""
    return _ASKS_DECISION.fullmatch(fold(term)) is not None


def asks_only_about_decisions(terms: list[str], is_time_word: Callable[[str], bool]) -> bool:
    """Whether a question about deciding names no subject: each of its ``terms`` is a decision word,
    one of the verbs and words said with "decision", a word of recency, or a word of its period
    (``is_time_word``). "what did we decide last week?" names none; "… about the cache?" does."""
    for term in terms:
        if is_decision_word(term):
            continue
        stem = porter_stem(fold(term))
        if stem in _GENERAL_WORDS or stem in _RECENT_WORDS or is_time_word(term):
            continue
        return False
    return True


def says_decision(text: str, *, changes: bool = True) -> bool:
    """Whether a text (a message without its role label) says a decision the ways ``states_decision``
    reads, whoever said it; ``changes=False``: only in the words of deciding, not as a change of
    mind (whose reading costs more, for a check run on every candidate)."""
    folded = fold(text)
    if any(hint in folded for hint in _STATEMENT_HINTS) and _STATES_DECISION.search(folded) is not None:
        return True
    if not changes:
        return False
    # A change of mind is a decision when it names what it left ("switched from Redis", "instead of
    # Jenkins", "Redis is out", ADR 209): "the hit rate dropped to 60%" announces a change of no one's.
    left, gone = decided_marks(text)
    return bool(left or gone)


def states_decision(content: str) -> bool:
    """Whether a unit states a decision (see the module doc): a user's message, or a memory the
    model wrote with the retain tool (no role label). The agent proposes, reports what it did ("I
    replaced the sleep with a poll" is a change, not a choice) and says the user's decisions back
    (ADR 215); a tool's output decides nothing."""
    if content.startswith((ASSISTANT_PREFIX, TOOL_OUTPUT_LABEL)):
        return False
    return says_decision(without_role_label(content))


def subject_words(terms: list[str], is_time_word: Callable[[str], bool]) -> list[str]:
    """The terms of a question about deciding that name what it is about: not its words of deciding,
    the verbs said with them ("use", "make"), words of recency, or words of its period."""
    return [
        term
        for term in terms
        if not is_decision_word(term)
        and (stem := porter_stem(fold(term))) not in _GENERAL_WORDS
        and stem not in LIGHT_VERBS
        and stem not in _RECENT_WORDS
        and not is_time_word(term)
    ]


def decisions_about_first(
    ordered: Iterable[Candidate], subject: Sequence[frozenset[str]], lookahead: int
) -> Iterator[Candidate]:
    """``ordered`` with the units among its first ``lookahead`` that state a decision and say every
    word of the question's ``subject`` (each a term's stems; ``cand.matched`` is set by the coverage
    rule) ahead of the others, each group in its order; the rest after them as they come. "what did
    we choose for the cache?" then opens with "Let's keep Redis for the cache", not "Clear the cache"."""
    pulled = iter(ordered)
    head = list(islice(pulled, lookahead))
    about = [c for c in head if all(key <= c.matched for key in subject) and states_decision(c.content)]
    chosen = {cand.rowid for cand in about}
    yield from about
    yield from (cand for cand in head if cand.rowid not in chosen)
    yield from pulled
