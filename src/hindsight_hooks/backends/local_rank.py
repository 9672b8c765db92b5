"""The local store's scoring, coverage, order and budget rules (docs/backends.md#embedded-store "Ranking").

Pure functions over already-fetched candidates, so every rule can be checked by hand:

- ``fts = 1-(r-min)/(max-min)`` over the candidates' bm25 ranks (1 when all are equal);
- ``base = 0.8·fts + 0.2·importance`` — or ``0.5·dense + 0.3·fts + 0.2·importance`` with an
  embedder;
- ``score = round(base·(0.7+0.3·exp(-age_hours/72)), 4)``, age from ``query_timestamp`` or now
  (a unit newer than the reference time counts as age 0);
- coverage: with ≥3 terms, a unit that FTS matched on fewer than 25 % of the terms is dropped;
- order by score, then newer ``created_at``, then id; skip a unit showing the same text as a
  better-placed one (docs/recall.md#quality-filter's duplicate key, ADR 055); take while ``ceil(chars/4)`` fits
  ``max_tokens`` — always at least one — up to ``limit``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from .base import same_text_key
from .local_query_vector import idf
from .local_text import LIGHT_VERBS, term_key
from .local_windows import neighbour_of

RECENCY_HOURS = 72.0
COVERAGE_MIN_TERMS = 3
WEIGHTED_MIN_TERMS = 2  # the common-word bar applies from two terms (ADR 181)
COVERAGE_FRACTION = 0.25
COMMON_IDF_SHARE = 0.4  # a term under 40 % of the rarest term's idf is common (ADR 181)


@dataclass
class Candidate:
    """One unit on its way through ranking (``rank`` is FTS5's bm25: lower is better).

    Scoring and ordering read only the fields before ``content``; the rest is filled in
    (``detailed``) for the candidates that coverage and the budget actually look at.
    """

    rowid: int
    id: str
    importance: float
    created_at: str
    created_epoch: float
    rank: float | None = None
    size: int = 0  # characters behind the unit's vector (message + turn terms); 0 when not read
    content: str = ""
    context: str = ""
    words: str = ""  # the words the index holds of the message (ADR 179); read with the details
    type: str = ""
    source: str = ""
    document_id: str = ""
    tags: list[str] = field(default_factory=list)
    occurred_at: str = ""  # when it was said (the message's own time), '' when unknown
    seq: int = -1  # its place in its document; -1 until read with the details
    detailed: bool = False
    matched: frozenset[str] = field(default_factory=frozenset)
    dense: float | None = None
    score: float = 0.0


def fts_scores(ranks: Sequence[float]) -> list[float]:
    """Min-max normalised bm25 ranks: the best (lowest) rank → 1, the worst → 0."""
    if not ranks:
        return []
    lo, hi = min(ranks), max(ranks)
    if hi == lo:
        return [1.0 for _ in ranks]
    return [1.0 - (r - lo) / (hi - lo) for r in ranks]


def recency(created_epoch: float, reference_epoch: float) -> float:
    age_hours = max(0.0, (reference_epoch - created_epoch) / 3600.0)
    return math.exp(-age_hours / RECENCY_HOURS)


def final_score(base: float, created_epoch: float, reference_epoch: float) -> float:
    return round(base * (0.7 + 0.3 * recency(created_epoch, reference_epoch)), 4)


def score_candidates(candidates: list[Candidate], reference_epoch: float, *, dense_mode: bool) -> None:
    """Fill ``score`` on every candidate; units without an FTS rank get ``fts = 0``."""
    ranks = [c.rank for c in candidates if c.rank is not None]
    normalised = iter(fts_scores(ranks))
    for cand in candidates:
        fts = next(normalised) if cand.rank is not None else 0.0
        if dense_mode:
            base = 0.5 * (cand.dense or 0.0) + 0.3 * fts + 0.2 * cand.importance
        else:
            base = 0.8 * fts + 0.2 * cand.importance
        cand.score = final_score(base, cand.created_epoch, reference_epoch)


def term_keys(terms: Sequence[str]) -> list[frozenset[str]]:
    """Each term's stems (a term like ``foo_bar`` has two), computed once per recall."""
    return [frozenset(term_key(t)) for t in terms]


def covers_enough(
    matched: frozenset[str],
    keys: Sequence[frozenset[str]],
    common: Callable[[], Sequence[bool]],
    near: bool = False,
) -> bool:
    """docs/backends.md#embedded-store coverage, two bars a unit that matches some of the terms must pass:
    with ≥ 3 terms, at least 25 % of them; with ≥ 2, at least one term that is not common
    (``common``: :func:`common_terms`, ADR 181), unless the unit is ``near`` the question by
    meaning (its vector passed the dense floor). ``common`` is called only for a unit that matches
    some of the terms, not all."""
    if len(keys) < WEIGHTED_MIN_TERMS:
        return True
    hit = [bool(key) and key <= matched for key in keys]
    if all(hit):
        return True
    if len(keys) >= COVERAGE_MIN_TERMS and sum(hit) / len(keys) < COVERAGE_FRACTION:
        return False
    return near or not all(c for c, h in zip(common(), hit, strict=True) if h)


def common_terms(matches: Sequence[int], units: int, limit: int) -> tuple[bool, ...]:
    """Which of the query's terms are common in the bank: said by more units than the recall
    returns, and under 40 % of the query's rarest term's idf (bm25's, ADR 181).

    Why: such a word ("use" in "which database do we use?") matches hundreds of units that say
    nothing about the question; when the rare word has fewer matches than the limit, they would
    fill the rest of it. A count that the search capped is a lower bound, so a capped term is
    taken as at least that common.
    """
    weights = [idf(n, units) for n in matches]
    rarest = max((w for n, w in zip(matches, weights, strict=True) if n > 0), default=0.0)
    return tuple(n > limit and w < COMMON_IDF_SHARE * rarest for n, w in zip(matches, weights, strict=True))


def near_by_meaning(cand: Candidate, floor: float | None) -> bool:
    """Is the unit's vector at or above the dense ``floor`` (None: recall is by words only)?"""
    return floor is not None and cand.dense is not None and cand.dense >= floor


def covered_in_order(
    ordered: Iterable[Candidate],
    keys: Sequence[frozenset[str]],
    common: Callable[[], Sequence[bool]],
    find: Callable[[str], frozenset[str]],
    floor: float | None = None,
) -> Iterator[Candidate]:
    """Candidates in order, dropping lexical ones under the coverage bar.

    Lazy on purpose: the budget cut stops pulling after ``limit`` hits, so only the units that
    could be returned get their text examined. Dense-only hits (no rank) have no terms to cover.
    In hybrid recall (``floor``: the dense floor) a unit whose vector is that close to the
    question passes the common-word bar: its meaning answers for it.
    """
    check = len(keys) >= WEIGHTED_MIN_TERMS
    for cand in ordered:
        if check and cand.rank is not None:
            # what the index holds of the unit: its words and turn terms, no provenance (ADR 179)
            cand.matched = find(f"{cand.words}\n{neighbour_of(cand.context)}")
            if not covers_enough(cand.matched, keys, common, near_by_meaning(cand, floor)):
                continue
        yield cand


def light_last(
    ordered: Iterable[Candidate], keys: Sequence[frozenset[str]], floor: float | None = None
) -> Iterator[Candidate]:
    """Candidates in order, those that match only the question's light verbs moved after the rest
    (ADR 205).

    In a small bank "use" is not common (ADR 181 needs more units than the recall returns), so
    "which db do we use?" ranked "The frontend uses React" above the database memories by bm25's
    idf alone. Such a unit is kept, after the units that say something the question asks about;
    one whose vector is near the question (hybrid, ``floor``) keeps its place. Needs
    ``cand.matched`` (set by :func:`covered_in_order`), and a question with a light verb and
    some other term.
    """
    light = [key for key in keys if key <= LIGHT_VERBS]
    if not light or len(light) == len(keys):
        yield from ordered
        return
    held: list[Candidate] = []
    for cand in ordered:
        if cand.rank is not None and cand.matched and cand.matched <= LIGHT_VERBS and not near_by_meaning(cand, floor):
            held.append(cand)
            continue
        yield cand
    yield from held


def these_first(ordered: list[Candidate], first: Collection[int]) -> list[Candidate]:
    """``ordered`` with the candidates whose rowids are in ``first`` ahead of the others, each group
    in the ranking's order (the decisions of ADR 220, the first mentions of ADR 226)."""
    return [c for c in ordered if c.rowid in first] + [c for c in ordered if c.rowid not in first]


def these_first_in_order(ordered: list[Candidate], first: Sequence[int]) -> list[Candidate]:
    """``ordered`` with the candidates whose rowids are in ``first`` ahead of the others, in the order
    ``first`` lists them (a session walk's, ADRs 221–223: newest session first, a session's ending in
    the order it was said); a unit listed twice keeps its first place."""
    place: dict[int, int] = {}
    for n, rowid in enumerate(first):
        place.setdefault(rowid, n)
    ahead = sorted((c for c in ordered if c.rowid in place), key=lambda c: place[c.rowid])
    return ahead + [c for c in ordered if c.rowid not in place]


def distinct_shown(ordered: Iterable[Candidate]) -> Iterator[Candidate]:
    """Candidates in order, skipping any that shows the same text as a better-placed one (ADR 055).

    A transcript repeats itself ("Done. All tests pass locally." in many sessions); each copy is
    its own unit with the same bm25 rank, so without this one phrase can fill most of ``limit``
    — and docs/recall.md#quality-filter then drops the copies, leaving the agent fewer memories than it asked for.
    """
    seen: set[str] = set()
    for cand in ordered:
        key = same_text_key(cand.content)
        if key in seen:
            continue
        seen.add(key)
        yield cand


def estimated_tokens(text: str) -> int:
    return (len(text) + 3) // 4


def order_candidates(candidates: list[Candidate]) -> list[Candidate]:
    """By score (high first), then newer ``created_at``, then id (stable sorts, last key first)."""
    out = sorted(candidates, key=lambda c: c.id)
    out.sort(key=lambda c: c.created_epoch, reverse=True)
    out.sort(key=lambda c: c.score, reverse=True)
    return out


def cut_to_budget(ordered: Iterable[Candidate], limit: int, max_tokens: int) -> list[Candidate]:
    """Take while the estimated tokens fit ``max_tokens`` (always at least one), up to ``limit``."""
    taken: list[Candidate] = []
    used = 0
    for cand in ordered:
        if len(taken) >= max(1, limit):
            break
        cost = estimated_tokens(cand.content)
        if taken and used + cost > max_tokens:
            break
        taken.append(cand)
        used += cost
    return taken
