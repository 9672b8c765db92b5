"""Reading the embedded store for a migration: banks, counts and units in a stable order.

Everything goes through the store's own read snapshots (``LocalBackend._read``): the store may
be open in a running session, and reading ``memory.db`` bytes behind SQLite's back is how
data gets lost (ADR-120). Units come in ``rowid`` order, which is the order they were
written in and never changes for a unit, so "everything up to rowid N is done" is a complete
description of progress (ADR 151).

Only current memories move: a unit with ``valid_until`` set was retired by a later change of
mind (ADR 118) and recall no longer returns it, so it is counted and left behind (ADR 150).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from ..backends.local import LocalBackend

CURRENT = "valid_until IS NULL AND superseded_by IS NULL"
_CURRENT_U = "u.valid_until IS NULL AND u.superseded_by IS NULL"


@dataclass(frozen=True)
class SourceUnit:
    """One embedded memory as the migration sends it."""

    rowid: int
    id: str
    bank_id: str
    document_id: str
    seq: int
    text: str
    context: str
    created_at: str
    occurred_at: str | None
    metadata: dict[str, Any] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class BankCount:
    bank_id: str
    current: int
    retired: int


class EmbeddedSource:
    """The banks and units of one embedded store, read in its own snapshots."""

    def __init__(self, backend: LocalBackend) -> None:
        self.backend = backend

    def banks(self) -> list[BankCount]:
        """Every bank with how many current and retired memories it holds, by name."""
        with self.backend._read("migrate: count") as conn:
            names = [str(r[0]) for r in conn.execute("SELECT bank_id FROM banks ORDER BY bank_id")]
            out = []
            for name in names:
                current, retired = conn.execute(
                    f"SELECT coalesce(sum({CURRENT}), 0), coalesce(sum(NOT ({CURRENT})), 0) "
                    "FROM units WHERE bank_id = ?",
                    (name,),
                ).fetchone()
                out.append(BankCount(name, int(current), int(retired)))
        return out

    def remaining(self, bank_id: str, after_rowid: int) -> int:
        """Current memories of ``bank_id`` after ``after_rowid``: what a resumed run still sends."""
        with self.backend._read("migrate: count") as conn:
            row = conn.execute(
                f"SELECT count(*) FROM units WHERE bank_id = ? AND rowid > ? AND {CURRENT}", (bank_id, after_rowid)
            ).fetchone()
        return int(row[0])

    def units(self, bank_id: str, after_rowid: int, limit: int) -> list[SourceUnit]:
        """The next ``limit`` current memories of ``bank_id`` after ``after_rowid``, in rowid order."""
        with self.backend._read("migrate: read") as conn:
            rows = conn.execute(
                "SELECT u.rowid, u.id, u.document_id, u.seq, u.content, u.context, u.created_at, u.occurred_at, "
                "u.metadata_json, d.context FROM units AS u LEFT JOIN documents AS d "
                "ON d.bank_id = u.bank_id AND d.document_id = u.document_id "
                f"WHERE u.bank_id = ? AND u.rowid > ? AND {_CURRENT_U} "
                "ORDER BY u.rowid LIMIT ?",
                (bank_id, after_rowid, max(1, limit)),
            ).fetchall()
            ids = [str(r[1]) for r in rows]
            tags: dict[str, list[str]] = {i: [] for i in ids}
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                marks = ",".join("?" * len(chunk))
                for unit_id, tag in conn.execute(
                    f"SELECT unit_id, tag FROM unit_tags WHERE unit_id IN ({marks}) ORDER BY rowid", chunk
                ):
                    tags[str(unit_id)].append(str(tag))
        return [
            SourceUnit(
                rowid=int(r[0]),
                id=str(r[1]),
                bank_id=bank_id,
                document_id=str(r[2]),
                seq=int(r[3]),
                text=str(r[4]),
                context=str(r[5] or r[9] or ""),
                created_at=str(r[6]),
                occurred_at=r[7] if isinstance(r[7], str) and r[7] else None,
                metadata=_dict(r[8]),
                tags=tags[str(r[1])],
            )
            for r in rows
        ]


def _dict(raw: object) -> dict[str, Any]:
    try:
        value = orjson.loads(raw) if isinstance(raw, str | bytes) else {}
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}
