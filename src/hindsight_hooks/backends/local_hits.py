"""Rows of the embedded store as ranking candidates, and candidates as ``MemoryHit``.

Why apart: recall and the per-unit reads (``get_unit``, ``list_units``) build hits the same way,
so the column positions of ``local_query`` are read in one place.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from ..timefmt import epoch_from_iso
from .base import MemoryHit
from .local_query import (
    D_CONTENT,
    D_CONTEXT,
    D_DOC,
    D_OCCURRED,
    D_SEQ,
    D_SOURCE,
    D_TAGS,
    D_TYPE,
    D_WORDS,
    K_CREATED,
    K_ID,
    K_IMPORTANCE,
    K_RANK,
    K_ROWID,
    K_SIZE,
    R_CONTENT,
    R_CONTEXT,
    R_CREATED,
    R_DOC,
    R_ID,
    R_IMPORTANCE,
    R_OCCURRED,
    R_RANK,
    R_ROWID,
    R_SOURCE,
    R_TAGS,
    R_TYPE,
    fetch_details,
)
from .local_rank import Candidate


def candidate_of(row: tuple[Any, ...]) -> Candidate:
    """A fully read candidate from a ``UNIT_COLUMNS`` row plus its rank."""
    created = str(row[R_CREATED])
    return Candidate(
        rowid=int(row[R_ROWID]),
        id=str(row[R_ID]),
        importance=float(row[R_IMPORTANCE]),
        created_at=created,
        created_epoch=epoch_from_iso(created) or 0.0,
        rank=None if row[R_RANK] is None else float(row[R_RANK]),
        content=str(row[R_CONTENT]),
        context=str(row[R_CONTEXT] or ""),
        type=str(row[R_TYPE]),
        source=str(row[R_SOURCE]),
        document_id=str(row[R_DOC]),
        tags=list(orjson.loads(row[R_TAGS])),
        occurred_at=str(row[R_OCCURRED] or ""),
        detailed=True,
    )


def ranked_candidate(row: tuple[Any, ...]) -> Candidate:
    """A candidate from a ranked search row: what scoring reads, details later."""
    created = str(row[K_CREATED])
    return Candidate(
        rowid=int(row[K_ROWID]),
        id=str(row[K_ID]),
        importance=float(row[K_IMPORTANCE]),
        created_at=created,
        created_epoch=epoch_from_iso(created) or 0.0,
        rank=float(row[K_RANK]),
        size=int(row[K_SIZE] or 0),
    )


def detailed(conn: sqlite3.Connection, ordered: list[Candidate], chunk: int) -> Iterator[Candidate]:
    """``ordered``, with text, kind, document and tags read a chunk at a time as they are pulled.

    The budget cut stops pulling after ``limit`` hits, so usually one statement reads the
    details of the first ``chunk`` candidates and the rest are never read.
    """
    for start in range(0, len(ordered), chunk):
        part = ordered[start : start + chunk]
        details = fetch_details(conn, [c.rowid for c in part if not c.detailed])
        for cand in part:
            if not cand.detailed:
                row = details.get(cand.rowid)
                if row is None:  # cannot happen inside one snapshot; never show a half-read unit
                    continue
                cand.content, cand.context = str(row[D_CONTENT]), str(row[D_CONTEXT] or "")
                cand.type, cand.source, cand.document_id = str(row[D_TYPE]), str(row[D_SOURCE]), str(row[D_DOC])
                cand.tags = list(orjson.loads(row[D_TAGS]))
                cand.occurred_at = str(row[D_OCCURRED] or "")
                cand.words = str(row[D_WORDS])
                cand.seq = int(row[D_SEQ])
                cand.detailed = True
            yield cand


def said_epoch(cand: Candidate) -> float:
    """When a unit was said: its message's own time, else when it was stored."""
    return (epoch_from_iso(cand.occurred_at) if cand.occurred_at else None) or cand.created_epoch


def unranked_candidate(row: tuple[Any, ...]) -> Candidate:
    """A candidate from a row of the rank columns that no word search ranked: found by its time, its
    vector, its place beside another unit or what it states (it has no bm25 rank to normalise)."""
    cand = ranked_candidate((*row[:K_RANK], 0.0))
    cand.rank = None
    return cand


def join_unranked(candidates: list[Candidate], rows: Iterable[tuple[Any, ...]]) -> set[int]:
    """Each of ``rows`` (the rank columns) added to ``candidates`` with no rank, unless a search found
    it already (it keeps that candidate and its score); returns all of their rowids. How the units a
    period, a decision or a session's start brings join the ranking (ADRs 118, 220, 221)."""
    have = {c.rowid for c in candidates}
    joined: set[int] = set()
    for row in rows:
        rowid = int(row[K_ROWID])
        joined.add(rowid)
        if rowid not in have:
            have.add(rowid)
            candidates.append(unranked_candidate(row))
    return joined


def hit_of(cand: Candidate, scored: bool = True) -> MemoryHit:
    return MemoryHit(
        text=cand.content,
        id=cand.id,
        type=cand.type,
        tags=list(cand.tags),
        document_id=cand.document_id,
        score=cand.score if scored else None,
        source=cand.source,
        created_at=cand.created_at,
        importance=cand.importance,
        mentioned_at=cand.occurred_at or cand.created_at or None,  # when it was said (ADR 118)
    )
