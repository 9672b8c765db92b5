"""What ``memory_edit``, the memories command and listing need from the embedded store.

Get, list, update, forget, invalidate one unit; a document's text and its deletion. Why apart:
these act on single units the user picked, not on batches or rankings.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

from ..timefmt import iso_from_epoch
from .base import BackendError, MemoryHit
from .local_hits import candidate_of, hit_of
from .local_indexed import indexed_columns
from .local_query import UNIT_COLUMNS, tag_groups_sql
from .local_vector_wiring import LocalVectorWiring
from .local_vectors import model_name, to_blob
from .tag_groups import TagGroupError, validate_tag_groups


class LocalEdit(LocalVectorWiring):
    """The per-unit part of ``LocalBackend``: get, list, update, forget, invalidate, documents."""

    def get_unit(self, bank_id: str, unit_id: str) -> MemoryHit | None:
        """One unit of this bank by id (invalidated ones included), without a score."""
        with self._read("get_unit") as conn:
            row = conn.execute(
                f"SELECT {UNIT_COLUMNS} FROM units AS u JOIN documents AS d "
                "ON d.bank_id = u.bank_id AND d.document_id = u.document_id WHERE u.bank_id = ? AND u.id = ?",
                (bank_id, unit_id),
            ).fetchone()
        return None if row is None else hit_of(candidate_of((*row, None)), scored=False)

    def list_units(
        self,
        bank_id: str,
        limit: int,
        offset: int,
        tag_groups: list[dict[str, Any]] | None = None,
        *,
        include_invalid: bool = False,
    ) -> list[MemoryHit]:
        """Units newest first (then by id), optionally filtered by ``tag_groups``."""
        try:
            groups = validate_tag_groups(tag_groups)
        except TagGroupError as exc:
            raise BackendError("list", "permanent", str(exc)) from None
        tag_sql, tag_params = tag_groups_sql(groups)
        validity = ""
        if not include_invalid:
            validity = " AND u.superseded_by IS NULL AND (u.valid_until IS NULL OR u.valid_until > ?)"
        params: list[Any] = [bank_id]
        if not include_invalid:
            params.append(iso_from_epoch(self._now()))
        with self._read("list") as conn:
            rows = conn.execute(
                f"SELECT {UNIT_COLUMNS} FROM units AS u JOIN documents AS d "
                "ON d.bank_id = u.bank_id AND d.document_id = u.document_id "
                f"WHERE u.bank_id = ?{validity} AND {tag_sql} ORDER BY u.created_at DESC, u.id LIMIT ? OFFSET ?",
                [*params, *tag_params, max(0, int(limit)), max(0, int(offset))],
            ).fetchall()
        return [hit_of(candidate_of((*r, None)), scored=False) for r in rows]

    def update_unit(
        self,
        bank_id: str,
        unit_id: str,
        content: str | None = None,
        importance: float | None = None,
        *,
        before: Callable[[sqlite3.Connection], None] | None = None,
    ) -> bool:
        """Replace content and/or importance (re-indexed by trigger); False when the unit is absent.

        ``before`` runs first inside the same transaction (the memories command records the
        old text there, so an edit and its history land together or not at all)."""
        if content is None and importance is None:
            raise BackendError("update", "permanent", "update requires content or importance")
        if content is not None and not content.strip():
            raise BackendError("update", "permanent", "content must not be empty")
        vector = self._embed([content])[0] if content is not None and self._embedder is not None else None
        with self._write("update") as conn:
            if before is not None:
                before(conn)
            sets: list[str] = []
            params: list[Any] = []
            if content is not None:
                row = conn.execute(
                    "SELECT context, source FROM units WHERE bank_id = ? AND id = ?", (bank_id, unit_id)
                ).fetchone()
                context, source = (str(row[0]), str(row[1])) if row else ("", "")
                search, script_terms = indexed_columns(content, source, context)  # ADR 179, ADR 115
                sets.append("content = ?, script_terms = ?, search_text = ?")
                params.extend([content, script_terms, search])
            if importance is not None:
                sets.append("importance = ?")
                params.append(min(1.0, max(0.0, float(importance))))
            cur = conn.execute(f"UPDATE units SET {', '.join(sets)} WHERE bank_id = ? AND id = ?",
                               [*params, bank_id, unit_id])  # fmt: skip
            if cur.rowcount == 0:
                return False
            if content is not None:
                conn.execute("DELETE FROM unit_vectors WHERE unit_id = ?", (unit_id,))
                if vector is not None:
                    conn.execute("INSERT INTO unit_vectors(unit_id, model, vector) VALUES (?, ?, ?)",
                                 (unit_id, model_name(self._embedder), to_blob(vector)))  # fmt: skip
        if content is not None and self._worker is not None:
            self._worker.notify([unit_id])  # a new vector row replaces the old one in memory too
        return True

    def forget_unit(self, bank_id: str, unit_id: str) -> bool:
        """Hard delete (tags, vector and index entry go with it)."""
        with self._write("forget") as conn:
            return conn.execute("DELETE FROM units WHERE bank_id = ? AND id = ?", (bank_id, unit_id)).rowcount > 0

    def invalidate_unit(self, bank_id: str, unit_id: str, replacement_id: str | None = None) -> bool:
        """``valid_until = now`` and ``superseded_by = replacement_id``: recall stops returning it."""
        with self._write("invalidate") as conn:
            cur = conn.execute(
                "UPDATE units SET valid_until = ?, superseded_by = ? WHERE bank_id = ? AND id = ?",
                (iso_from_epoch(self._now()), replacement_id, bank_id, unit_id),
            )
            return cur.rowcount > 0

    def document_text(self, bank_id: str, document_id: str, timeout_s: float | None = None) -> str | None:
        """A document's whole text (its parts in order), or None when it does not exist.

        Read by the retain-cursor recovery (ADR-066): the live document of a session holds the
        projection of every turn delivered for it.
        """
        from .local_write import document_text

        with self._read("document_text", timeout_s) as conn:
            return document_text(conn, bank_id, document_id)

    def delete_document(self, bank_id: str, document_id: str) -> int:
        """Remove a document and all its units; returns how many units were deleted."""
        with self._write("delete_document") as conn:
            n = conn.execute("DELETE FROM units WHERE bank_id = ? AND document_id = ?", (bank_id, document_id)).rowcount
            conn.execute("DELETE FROM documents WHERE bank_id = ? AND document_id = ?", (bank_id, document_id))
            return int(n)
