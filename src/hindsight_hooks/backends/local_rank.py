"""The local store's scoring, coverage, order and budget rules (BEHAVIOUR.md §15 "Ranking").

Pure functions over already-fetched candidates, so every rule can be checked by hand:

- ``fts = 1-(r-min)/(max-min)`` over the candidates' bm25 ranks (1 when all are equal);
- ``base = 0.8·fts + 0.2·importance`` — or ``0.5·dense + 0.3·fts + 0.2·importance`` with an
  embedder;
- ``score = round(base·(0.7+0.3·exp(-age_hours/72)), 4)``, age from ``query_timestamp`` or now
  (a unit newer than the reference time counts as age 0);
- coverage: with ≥3 terms, a unit that FTS matched on fewer than 25 % of the terms is dropped;
- order by score, then newer ``created_at``, then id; take while ``ceil(chars/4)`` fits
  ``max_tokens`` — always at least one — up to ``limit``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .local_text import fts_tokens, porter_stem, term_key

RECENCY_HOURS = 72.0
COVERAGE_MIN_TERMS = 3
COVERAGE_FRACTION = 0.25


@dataclass
class Candidate:
    """One unit on its way through ranking (``rank`` is FTS5's bm25: lower is better)."""

    rowid: int
    id: str
    content: str
    type: str
    source: str
    importance: float
    created_at: str
    created_epoch: float
    document_id: str
    tags: list[str]
    rank: float | None = None
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


def matched_stems(highlighted: Iterable[str | None], open_mark: str, close_mark: str) -> frozenset[str]:
    """The stems of the tokens FTS5 highlighted (i.e. matched) in a row's columns."""
    stems: set[str] = set()
    for text in highlighted:
        if not text or open_mark not in text:
            continue
        for chunk in text.split(open_mark)[1:]:
            inside = chunk.split(close_mark, 1)[0]
            stems.update(porter_stem(tok) for tok in fts_tokens(inside))
    return frozenset(stems)


def covers_enough(matched: frozenset[str], terms: Sequence[str]) -> bool:
    """§15 coverage: with ≥3 terms, at least 25 % of them must be among the matched stems."""
    if len(terms) < COVERAGE_MIN_TERMS:
        return True
    covered = 0
    for term in terms:
        key = term_key(term)
        if key and all(stem in matched for stem in key):
            covered += 1
    return covered / len(terms) >= COVERAGE_FRACTION


def estimated_tokens(text: str) -> int:
    return (len(text) + 3) // 4


def order_candidates(candidates: list[Candidate]) -> list[Candidate]:
    """By score (high first), then newer ``created_at``, then id (stable sorts, last key first)."""
    out = sorted(candidates, key=lambda c: c.id)
    out.sort(key=lambda c: c.created_epoch, reverse=True)
    out.sort(key=lambda c: c.score, reverse=True)
    return out


def cut_to_budget(ordered: Sequence[Candidate], limit: int, max_tokens: int) -> list[Candidate]:
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
