"""Delivery outcomes (docs/queue.md#outcomes): aggregates only, never content.

``parse_outcome`` reads a raw retain response body tolerantly (the HTTP backend may use it);
``as_retain_outcome`` accepts whatever a backend returned; ``sum_outcomes`` is what a flush
reports. Missing bodies or fields give an empty outcome, never an error.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..backends.base import RetainOutcome


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _add_op(ops: dict[str, None], value: Any) -> None:
    if isinstance(value, str) and value:
        ops.setdefault(value, None)
    elif isinstance(value, dict):
        for key in ("id", "operation_id", "operationId"):
            if isinstance(value.get(key), str) and value[key]:
                ops.setdefault(value[key], None)
                return


def parse_outcome(body: Any) -> RetainOutcome:
    """``items_count``/``itemsCount``, ``usage.total_tokens`` and the operation ids, deduplicated in order."""
    if not isinstance(body, dict):
        return RetainOutcome()
    items_count = _int(body.get("items_count"))
    if items_count is None:
        items_count = _int(body.get("itemsCount"))
    usage = body.get("usage")
    tokens = _int(usage.get("total_tokens")) if isinstance(usage, dict) else None
    ops: dict[str, None] = {}
    for key in ("operation_id", "operationId", "id"):
        _add_op(ops, body.get(key))
    for key in ("operations", "operation_ids", "operationIds"):
        values = body.get(key)
        if isinstance(values, list):
            for value in values:
                _add_op(ops, value)
    return RetainOutcome(items_count=items_count, operation_ids=list(ops), tokens=tokens)


def as_retain_outcome(value: Any) -> RetainOutcome:
    """A backend's return value as a ``RetainOutcome`` (a raw dict is parsed, anything else is empty)."""
    if isinstance(value, RetainOutcome):
        return value
    return parse_outcome(value)


def sum_outcomes(outcomes: Iterable[RetainOutcome]) -> dict[str, Any]:
    """``{items_count?, operations?, tokens?}`` summed over a flush; fields absent everywhere stay absent."""
    items: int | None = None
    tokens: int | None = None
    ops: dict[str, None] = {}
    for outcome in outcomes:
        if outcome.items_count is not None:
            items = (items or 0) + outcome.items_count
        if outcome.tokens is not None:
            tokens = (tokens or 0) + outcome.tokens
        for op in outcome.operation_ids:
            ops.setdefault(op, None)
    out: dict[str, Any] = {}
    if items is not None:
        out["items_count"] = items
    if ops:
        out["operations"] = list(ops)
    if tokens is not None:
        out["tokens"] = tokens
    return out
