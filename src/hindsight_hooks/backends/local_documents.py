"""The embedded store's banks, counts, and whole documents in a stable order (what a migration reads).

Here, beside the store, because it reads the store's tables in the store's own read snapshots
(``LocalBackend._read``): the store may be open in a running session, and reading
``memory.db`` bytes behind SQLite's back is how data gets lost (ADR-120). ``migrate`` only
sees the records below.

A migration sends whole documents (ADR 150), ordered by (``created_at``, ``document_id``): the
order they were first written, which never changes for a document (the table's implicit rowid
is not used: a VACUUM may renumber it). A pass may be limited
to documents written to since a time (``since``): that is how a re-run finds sessions that grew
after they were sent (ADR 151).

Only current memories move: a unit with ``valid_until`` or ``superseded_by`` set was retired by
a later change of mind (ADR 118) and recall no longer returns it, so it is counted and left
behind (ADR 150).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    import sqlite3

    from .local import LocalBackend

CURRENT = "u.valid_until IS NULL AND u.superseded_by IS NULL"
_DOCS_PER_READ = 200


@dataclass(frozen=True)
class SourceUnit:
    """One embedded memory as the migration sends it."""

    id: str
    document_id: str
    seq: int
    text: str
    context: str
    created_at: str
    occurred_at: str | None
    metadata: dict[str, Any] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)


Cursor = tuple[str, str]
"""A place in the send order: (``created_at``, ``document_id``) of the last document done."""
START: Cursor = ("", "")


@dataclass(frozen=True)
class SourceDocument:
    """A document with its current memories in order; ``cursor`` is its place in the send order."""

    cursor: Cursor
    document_id: str
    units: list[SourceUnit]


@dataclass(frozen=True)
class BankCount:
    bank_id: str
    current: int
    retired: int
    documents: int


def _pass_filter(after: Cursor, since: str | None) -> tuple[str, list[Any]]:
    where = "AND (d.created_at > ? OR (d.created_at = ? AND d.document_id > ?))"
    params: list[Any] = [after[0], after[0], after[1]]
    if since:
        where += " AND d.updated_at >= ?"
        params.append(since)
    return where, params


class EmbeddedSource:
    """The banks and documents of one embedded store, read in its own snapshots."""

    def __init__(self, backend: LocalBackend) -> None:
        self.backend = backend

    def banks(self) -> list[BankCount]:
        """Every bank by name, with its current and retired memories and its documents that hold any."""
        with self.backend._read("migrate: count") as conn:
            names = [str(r[0]) for r in conn.execute("SELECT bank_id FROM banks ORDER BY bank_id")]
            out = []
            for name in names:
                current, retired, docs = conn.execute(
                    f"SELECT coalesce(sum({CURRENT}), 0), coalesce(sum(NOT ({CURRENT})), 0), "
                    f"count(DISTINCT CASE WHEN {CURRENT} THEN u.document_id END) FROM units AS u WHERE u.bank_id = ?",
                    (name,),
                ).fetchone()
                out.append(BankCount(name, int(current), int(retired), int(docs)))
        return out

    def remaining(self, bank_id: str, after: Cursor, since: str | None) -> int:
        """Current memories in the documents a pass still has to send."""
        extra, params = _pass_filter(after, since)
        with self.backend._read("migrate: count") as conn:
            row = conn.execute(
                "SELECT count(*) FROM units AS u JOIN documents AS d "
                "ON d.bank_id = u.bank_id AND d.document_id = u.document_id "
                f"WHERE u.bank_id = ? AND {CURRENT} {extra}",
                [bank_id, *params],
            ).fetchone()
        return int(row[0])

    def documents(self, bank_id: str, after: Cursor, since: str | None, min_units: int) -> list[SourceDocument]:
        """The next documents of a pass after ``after``: whole documents, at least one, and
        more until they hold ``min_units`` memories. Documents without a current memory come
        back empty (the caller moves past them)."""
        out: list[SourceDocument] = []
        held = 0
        with self.backend._read("migrate: read") as conn:
            while held < min_units:
                extra, params = _pass_filter(after, since)
                rows = conn.execute(
                    "SELECT d.created_at, d.document_id, d.context FROM documents AS d "
                    f"WHERE d.bank_id = ? {extra} ORDER BY d.created_at, d.document_id LIMIT ?",
                    [bank_id, *params, _DOCS_PER_READ],
                ).fetchall()
                if not rows:
                    break
                for created, doc_id, doc_context in rows:
                    units = _units(conn, bank_id, str(doc_id), str(doc_context or ""))
                    after = (str(created), str(doc_id))
                    out.append(SourceDocument(after, str(doc_id), units))
                    held += len(units)
                    if held >= min_units:
                        break
        return out

    def all_documents(self, bank_id: str) -> list[SourceDocument]:
        """Every document of the bank that holds a current memory (what the check compares)."""
        out: list[SourceDocument] = []
        after = START
        while True:
            page = self.documents(bank_id, after, None, 1000)
            if not page:
                return [d for d in out if d.units]
            out.extend(page)
            after = page[-1].cursor


def _units(conn: sqlite3.Connection, bank_id: str, document_id: str, doc_context: str) -> list[SourceUnit]:
    rows = conn.execute(
        "SELECT u.id, u.seq, u.content, u.context, u.created_at, u.occurred_at, u.metadata_json FROM units AS u "
        f"WHERE u.bank_id = ? AND u.document_id = ? AND {CURRENT} ORDER BY u.seq, u.rowid",
        (bank_id, document_id),
    ).fetchall()
    tags: dict[str, list[str]] = {str(r[0]): [] for r in rows}
    if rows:
        for unit_id, tag in conn.execute(
            "SELECT t.unit_id, t.tag FROM unit_tags AS t JOIN units AS u ON u.id = t.unit_id "
            "WHERE u.bank_id = ? AND u.document_id = ? ORDER BY t.rowid",
            (bank_id, document_id),
        ):
            if str(unit_id) in tags:
                tags[str(unit_id)].append(str(tag))
    return [
        SourceUnit(
            id=str(r[0]),
            document_id=document_id,
            seq=int(r[1]),
            text=str(r[2]),
            context=str(r[3] or doc_context),
            created_at=str(r[4]),
            occurred_at=r[5] if isinstance(r[5], str) and r[5] else None,
            metadata=stored_json(r[6], dict),
            tags=tags[str(r[0])],
        )
        for r in rows
    ]


def stored_json(raw: object, kind: type[list[Any]] | type[dict[str, Any]]) -> Any:
    """A stored JSON column (``tags_json``, ``metadata_json``) as ``kind``; an empty one when the
    row holds something else (a damaged or hand-edited row keeps its text and loses only this)."""
    try:
        value = orjson.loads(raw) if isinstance(raw, str | bytes) else kind()
    except orjson.JSONDecodeError:
        return kind()
    return value if isinstance(value, kind) else kind()
