"""A memory that says only what the question says is no answer to it: such units go last.

Why: bm25 rewards short texts. Asked "how do we run the tests?", a bank of coding sessions ranks
the user's own requests ("run the tests", "ok run the tests", "Please run the tests again.") above
the turn that settled how the tests are run, and they fill the block. Each of them says nothing the
question does not: every word of it that the index weighs is a word of the question. They are
kept, after every candidate that says something more, so they still show when nothing else
answers (ADR 186).

Not for a question whose answer may well restate it: "when did we move to pnpm?" is answered by
the date of "we moved to pnpm", and "did the tests pass?" by "the tests pass". Those are asked
with "when" or start with a verb such as "did"; the rest ("how", "what", "which", a bare phrase)
ask for something the question does not say.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from .local_rank import Candidate
from .local_script import has_script_text
from .local_text import query_terms, term_key, weighed_tokens

# A yes/no question starts with one of these; a question about a time names one of the others.
_YES_NO = re.compile(
    r"^\W*(?:did|do|does|is|are|was|were|has|have|had|can|could|will|would|should|shall|may|might|must|am)\b", re.I
)
_WHEN = re.compile(r"\b(?:when|date|day|time|year|month|week|ago|since|until|how long)\b", re.I)


def asks_beyond_itself(query: str) -> bool:
    """Does the question ask for something it does not say (not yes/no, not when)?"""
    return _YES_NO.search(query) is None and _WHEN.search(query) is None


def question_stems(terms: Iterable[str]) -> frozenset[str]:
    """Every stem of the query's terms (as :func:`term_key` gives them)."""
    return frozenset(stem for term in terms for stem in term_key(term))


def says_only(cand: Candidate, stems: frozenset[str]) -> bool:
    """Is every weighed word of the unit's message (no stop words) one of ``stems``?

    Stops at the first word that is not: most units say something else in their first words.
    """
    words = query_terms(cand.words) if has_script_text(cand.words) else weighed_tokens(cand.words)
    return all(stem in stems for term in words for stem in term_key(term))


def restatements_last(ordered: Iterable[Candidate], stems: frozenset[str]) -> Iterator[Candidate]:
    """``ordered``, with the units found by their words that say only the question's words moved
    after all the others (in their order). Lazy until the first such unit: the budget cut usually
    stops pulling long before the end."""
    later: list[Candidate] = []
    for cand in ordered:
        if cand.rank is not None and stems and says_only(cand, stems):
            later.append(cand)
            continue
        yield cand
    yield from later
