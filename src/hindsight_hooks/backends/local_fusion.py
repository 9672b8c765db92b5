"""Hybrid scoring: lexical and vector candidates fused by reciprocal rank, then docs/backends.md#embedded-store's other
signals (ADR 117).

With the ``[semantic]`` extra a candidate may come from the bm25 search, from the vector search,
or from both. Their raw scores are not comparable (bm25 is unbounded and depends on the query's
words; cosine between averaged token vectors sits in a narrow band that differs per query), so
each list contributes by *rank*: ``rrf = 1/(K + lexical rank) + 1/(K + vector rank)``, the usual
reciprocal rank fusion with ``K = 60``, a unit missing from a list contributing nothing for it.
``rrf`` is normalised so the best candidate has 1, and then takes the place of ``fts`` in the
docs/backends.md#embedded-store formula: ``score = round(0.8·rel + 0.2·importance, 4)``, times
``0.7 + 0.3·exp(-age_h/72)`` only when the question asks how things stand now (ADR 160).
Within the vector list, short texts are discounted (:func:`vector_key`, ADR 160).

The turn-window signal (ADR 052) is in both lists already: a reply is indexed and embedded with
its prompt's terms.
"""

from __future__ import annotations

from .local_rank import Candidate, final_score

RRF_K = 60.0
# The vector order discounts short texts: a cosine counts ``size/(size + SHORT_TEXT_CHARS)`` of
# itself (ADR 160). A static model's vector of "Hi Kevin! How are you?" is the vector of its one
# content word, so a question naming Kevin finds every greeting closer than the answer. Chosen
# on the choice halves of both benches: 48 to 180 characters gave the same within 0.3 points.
SHORT_TEXT_CHARS = 60.0


def vector_key(cand: Candidate) -> float:
    """A candidate's place in the vector order: its cosine, discounted when its text is short."""
    dense = cand.dense or 0.0
    return dense * cand.size / (cand.size + SHORT_TEXT_CHARS) if cand.size > 0 else dense


def fuse_scores(
    candidates: list[Candidate],
    reference_epoch: float,
    floor: float = 0.0,
    period: frozenset[int] = frozenset(),
    *,
    by_age: bool = True,
) -> None:
    """Fill ``score`` from the lexical order (``rank``), the vector order (``dense``) and, when the
    query names a time, the order of the units said then (ADR 118).

    Only units at least ``floor`` similar to the query are in the vector order (by their cosine
    as it is; the order within is by :func:`vector_key`, shorter texts discounted): below it a unit
    is not "found by its vector" (ADR 116), and ranking the lexical candidates by such cosines
    would only shuffle them. The time order holds the units said in the period (rowids in
    ``period``): those the words or the vector found first, in their order, then the newest.

    ``by_age`` False (the query does not ask how things stand now, ADR 160): the recency factor
    is left out, so a unit's age only breaks ties (newer first, ``order_candidates``).
    """
    lexical = sorted((c for c in candidates if c.rank is not None), key=lambda c: (c.rank, c.rowid))
    vector = sorted(
        (c for c in candidates if c.dense is not None and c.dense >= floor and c.dense > 0),
        key=lambda c: (-vector_key(c), c.rowid),
    )
    said_then = sorted(
        (c for c in candidates if c.rowid in period),
        key=lambda c: (c.rank is None, c.rank or 0.0, -(c.dense or 0.0), -c.created_epoch, c.rowid),
    )
    fused = {id(c): 0.0 for c in candidates}
    for order in (lexical, vector, said_then):
        for position, cand in enumerate(order, start=1):
            fused[id(cand)] += 1.0 / (RRF_K + position)
    best = max(fused.values(), default=0.0)
    for cand in candidates:
        relevance = fused[id(cand)] / best if best > 0 else 0.0
        base = 0.8 * relevance + 0.2 * cand.importance
        cand.score = final_score(base, cand.created_epoch, reference_epoch) if by_age else round(base, 4)
