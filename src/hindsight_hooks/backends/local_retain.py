"""The embedded store's write path: banks and retain batches, effectively once by ``operation_id``.

Why apart: this is where wire items are validated and turned into units; a repeated
``operation_id`` (re-delivery after a crash) returns the first outcome without writing again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from ..timefmt import iso_from_epoch, normalize_timestamp
from .base import BackendError, BankSpec, RetainOutcome
from .local_reindex import reindex_older_writes
from .local_schema import slot_range, store_error
from .local_units import ATTRIBUTES, derive_units, origin_of
from .local_vector_wiring import LocalVectorWiring
from .local_vectors import model_name, to_blob
from .local_write import PreparedItem, hash16, store_batch

OPERATION_RETENTION_S = 90 * 24 * 3600.0


_UPDATE_MODES = ("replace", "append")


class LocalRetain(LocalVectorWiring):
    """The write path of ``LocalBackend``: ``ensure_bank``, ``bank_exists``, ``retain_batch``."""

    def ensure_bank(self, bank_id: str, spec: BankSpec, timeout_s: float | None = None) -> bool:
        """Insert the bank row with the configured missions; True when it was created now."""
        check_bank_id("ensure_bank", bank_id)
        with self._write("ensure_bank", timeout_s) as conn:
            return self._insert_bank(conn, bank_id, spec)[1]

    def bank_exists(self, bank_id: str, timeout_s: float | None = None) -> bool:
        with self._read("bank_exists", timeout_s) as conn:
            return self._slot(conn, bank_id) is not None

    def retain_batch(
        self,
        bank_id: str,
        items: list[dict[str, Any]],
        *,
        operation_id: str,
        async_: bool = True,
        timeout_s: float | None = None,
    ) -> RetainOutcome:
        """Store a whole batch in one transaction; a repeated ``operation_id`` is a no-op.

        Re-delivery after a crash (same job id) returns the first delivery's outcome without
        writing again, which makes the queue's at-least-once delivery effectively once.
        """
        check_bank_id("retain", bank_id)
        if not isinstance(operation_id, str) or not operation_id:
            raise BackendError("retain", "permanent", "operation_id must be a non-empty string")
        if not isinstance(items, list) or not items:
            raise BackendError("retain", "permanent", "a retain batch needs at least one item")
        now = self._now()
        prepared = [_prepare_item(i, item, now) for i, item in enumerate(items)]
        done = self._applied(bank_id, operation_id, timeout_s)
        if done is not None:
            return done
        self._embed_items(prepared)
        with self._write("retain", timeout_s) as conn:
            row = conn.execute(
                "SELECT items_count, unit_ids_json FROM operations WHERE bank_id = ? AND operation_id = ?",
                (bank_id, operation_id),
            ).fetchone()
            if row is not None:
                return RetainOutcome(items_count=int(row[0]), unit_ids=list(orjson.loads(row[1])))
            slot, _ = self._insert_bank(conn, bank_id, None)
            now_iso = iso_from_epoch(now)
            model = model_name(self._embedder) if self._embedder is not None else ""
            try:
                unit_ids = store_batch(conn, bank_id, slot_range(slot), prepared, now_iso, model, to_blob)
            except OverflowError:
                raise store_error("retain", self.path, f"bank {bank_id!r} has no free unit ids left") from None
            conn.execute(
                "INSERT INTO operations(bank_id, operation_id, applied_at, items_count, unit_ids_json) "
                "VALUES (?, ?, ?, ?, ?)",
                (bank_id, operation_id, now_iso, len(items), orjson.dumps(unit_ids).decode("utf-8")),
            )
            conn.execute("DELETE FROM operations WHERE applied_at < ?", (iso_from_epoch(now - OPERATION_RETENTION_S),))
            reindex_older_writes(conn)  # units an older process wrote since the migration (ADR 182)
        if self._worker is not None:
            self._worker.notify(unit_ids)  # vectors after the durable write, off the caller's path
        return RetainOutcome(items_count=len(items), unit_ids=unit_ids)

    def _applied(self, bank_id: str, operation_id: str, timeout_s: float | None) -> RetainOutcome | None:
        with self._read("retain", timeout_s) as conn:
            row = conn.execute(
                "SELECT items_count, unit_ids_json FROM operations WHERE bank_id = ? AND operation_id = ?",
                (bank_id, operation_id),
            ).fetchone()
        if row is None:
            return None
        return RetainOutcome(items_count=int(row[0]), unit_ids=list(orjson.loads(row[1])))


def check_bank_id(operation: str, bank_id: object) -> None:
    if not isinstance(bank_id, str) or not bank_id:
        raise BackendError(operation, "permanent", "bank_id must be a non-empty string")


def _prepare_item(index: int, item: object, now: float) -> PreparedItem:
    """Validate one wire item and derive its units; errors name the item, never its content."""

    def bad(problem: str) -> BackendError:
        return BackendError("retain", "permanent", f"item {index}: {problem}")

    if not isinstance(item, Mapping):
        raise bad("must be an object")
    content = item.get("content")
    if not isinstance(content, str):
        raise bad("content must be a string")
    if not content.strip():
        raise bad("content must not be empty")
    context = item.get("context") or ""
    if not isinstance(context, str):
        raise bad("context must be a string")
    document_id = item.get("document_id")
    if document_id is None:
        document_id = "hh-unit:" + hash16(content)
    if not isinstance(document_id, str) or not document_id:
        raise bad("document_id must be a non-empty string")
    mode = item.get("update_mode") or "replace"
    if mode not in _UPDATE_MODES:
        raise bad("update_mode must be 'replace' or 'append'")
    tags = item.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise bad("tags must be a list of strings")
    metadata = item.get("metadata") or {}
    if not isinstance(metadata, Mapping):
        raise bad("metadata must be an object")
    occurred = normalize_timestamp(item.get("timestamp"))
    created_at = occurred or iso_from_epoch(now)
    units, shape = derive_units(content)
    attrs = ATTRIBUTES[origin_of(metadata, shape)]
    return PreparedItem(
        document_id=document_id,
        update_mode=mode,
        content=content,
        context=context,
        tags=list(dict.fromkeys(tags)),
        metadata=dict(metadata),
        created_at=created_at,
        occurred_at=occurred,
        unit_texts=[u.content for u in units],
        unit_times=[u.occurred_at for u in units],
        type=attrs.type,
        source=attrs.source,
        importance=attrs.importance,
    )
