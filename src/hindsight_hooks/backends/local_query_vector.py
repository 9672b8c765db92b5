"""The query's vector for hybrid recall: its terms, each weighed by how rare it is in the bank (ADR 160).

A static model's text vector is an average of its tokens' vectors, so every word of the question
pulls as hard as every other. When the bank says one word everywhere — the name of the person a
chat is with, a project's name — that word drags the question towards every unit that says it,
greetings first ("Hi Kevin! How are you?" answered "what sports does Kevin like?"). bm25 avoids
this by weighing a term by its inverse document frequency; the vector side now does the same:

    query vector = normalise(Σ idf(t) · vector(t)),   idf(t) = ln((N − n + 0.5)/(n + 0.5) + 1)

over the lexical search's own terms (the same ≤ 12, so both lists read the same words), with
``n`` the term's matches in the bank (capped as the search caps them) and ``N`` the bank's size. A
term the bank never says weighs most, so "database" still leads to "we run Postgres 16". Each
term's vector is computed once per turn (``StaticEmbedder.term_vectors``); the weighing is a few
numpy operations on at most 12 rows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any


def idf(matches: int, units: int) -> float:
    """bm25's inverse document frequency, kept positive (the ``+ 1`` inside the logarithm)."""
    units = max(units, matches)
    return math.log((units - matches + 0.5) / (matches + 0.5) + 1.0)


def weighted_query(term_rows: Any, matches: Sequence[int], units: int) -> Any | None:
    """The unit-length weighted sum of ``term_rows`` (one per term), or None when no term has a
    known token (the caller then keeps the plain text vector)."""
    import numpy as np

    if len(matches) == 0 or len(matches) != len(term_rows):
        return None
    weights = np.asarray([idf(n, units) for n in matches], dtype=np.float32)
    summed = (weights[:, None] * np.asarray(term_rows, dtype=np.float32)).sum(axis=0)
    norm = float(np.linalg.norm(summed))
    if not math.isfinite(norm) or norm == 0.0:
        return None
    return (summed / norm).astype(np.float32)


def term_text(term: str) -> str:
    """What a query term says (a script term, ADR 115, is stored with a marker)."""
    from .local_script import is_script_term, literal

    return literal(term) if is_script_term(term) else term


def bank_query(plain: Any, term_rows: Any | None, matches: Sequence[int], units: int) -> Any:
    """The query vector for one bank: the weighted terms when they have vectors, else ``plain``."""
    if term_rows is None or units <= 0:
        return plain
    weighted = weighted_query(term_rows, matches, units)
    return plain if weighted is None else weighted


UNSAID_PROBES = 3
"""At most this many terms the bank never says get a vector search of their own (each a scan)."""


def unsaid_term_vectors(term_rows: Any, matches: Sequence[int]) -> list[Any]:
    """Unit-length vectors of the query's terms that no unit of the bank says, in query order.

    Why: such a term can only be matched by meaning, and in the weighted sum it is one voice
    among the question's words. "which database engine should I tune?" has a vector far from "we
    run Postgres 16" (cosine 0.18, under the 0.25 floor) although "database" alone is near it
    (0.28): searched on its own, the word finds what it means. A single-word vector's cosines with
    unrelated units are distributed as a question's are (REALTALK: 95th percentile 0.13 for both),
    so the same floor holds. None when the query has one term: its own vector is the query's.
    """
    import numpy as np

    if len(matches) < 2 or len(matches) != len(term_rows):
        return []
    out: list[Any] = []
    for row, n in zip(term_rows, matches, strict=True):
        if n:
            continue
        vector = np.asarray(row, dtype=np.float32)
        norm = float(np.linalg.norm(vector))
        if math.isfinite(norm) and norm > 0.0:
            out.append((vector / norm).astype(np.float32))
        if len(out) == UNSAID_PROBES:
            break
    return out
