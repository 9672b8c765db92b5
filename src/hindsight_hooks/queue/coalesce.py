"""Coalescing an incoming job into the queue's tail (docs/queue.md#enqueue step 3).

Pure functions: the caller reads the file, picks the tail and rewrites atomically.

The tail may take the incoming items only while it is still *unsent*: same bank, ``attempts==0``
and no claim (a claim seals a job, because its id may already be an ``operation_id`` on the
server and a payload must never change under an id). We also require the same ``source`` and
``async`` flag: one job is one request, and receipts report one source per job.

* **Same-document merge** — a live session appends to one document each turn; two such appends
  with JSON-array contents become one item whose array is the concatenation, so the server sees
  one request with the whole delta.
* **Batch merge** — otherwise the incoming items join the tail's, within ``batch_max_items`` and
  ``batch_max_bytes`` (the serialised job line). A same-document merge that would pass
  ``batch_max_bytes`` is not done either, so no request grows without bound.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal

import orjson

from .jobs import dumps_line

if TYPE_CHECKING:
    from ..config_model import QueueConfig

MergeKind = Literal["document", "batch"]


def can_take(tail: dict[str, Any], incoming: dict[str, Any]) -> bool:
    """Whether ``tail`` is an eligible coalescing target for ``incoming``."""
    return (
        tail.get("bank_id") == incoming.get("bank_id")
        and tail.get("attempts") == 0
        and not tail.get("claim_token")
        and not tail.get("claimed_at")
        and not tail.get("dead_lettered_at")
        and tail.get("source") == incoming.get("source")
        and bool(tail.get("async", True)) == bool(incoming.get("async", True))
    )


def _json_array(text: str) -> list[Any] | None:
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, list) else None


def _ordered_union(a: list[str] | None, b: list[str] | None) -> list[str]:
    return list(dict.fromkeys([*(a or []), *(b or [])]))


def merge_document(last: dict[str, Any], item: dict[str, Any]) -> dict[str, Any] | None:
    """Join two ``append`` items of one document with JSON-array contents; ``None`` if not mergeable."""
    if not (
        last.get("update_mode") == "append"
        and item.get("update_mode") == "append"
        and last.get("document_id") == item.get("document_id")
    ):
        return None
    first = _json_array(last["content"])
    second = _json_array(item["content"])
    if first is None or second is None:
        return None
    merged = dict(last)
    merged["content"] = json.dumps(first + second, indent=2, ensure_ascii=False)
    tags = _ordered_union(last.get("tags"), item.get("tags"))
    if tags:
        merged["tags"] = tags
    else:
        merged.pop("tags", None)
    merged["context"] = item["context"]
    for key in ("metadata", "timestamp"):
        if item.get(key) is not None:
            merged[key] = item[key]
        else:
            merged.pop(key, None)
    return merged


def merge(tail: dict[str, Any], incoming: dict[str, Any], cfg: QueueConfig) -> tuple[dict[str, Any], MergeKind] | None:
    """The tail with the incoming items merged in, or ``None`` when it cannot take them."""
    if not can_take(tail, incoming):
        return None
    items_in: list[dict[str, Any]] = incoming["items"]
    tail_items: list[dict[str, Any]] = tail["items"]
    if len(items_in) == 1:
        joined = merge_document(tail_items[-1], items_in[0])
        if joined is not None:
            candidate = {**tail, "items": [*tail_items[:-1], joined]}
            if len(dumps_line(candidate)) <= cfg.batch_max_bytes:
                return candidate, "document"
            return None
    if len(tail_items) + len(items_in) > cfg.batch_max_items:
        return None
    candidate = {**tail, "items": [*tail_items, *items_in]}
    if len(dumps_line(candidate)) > cfg.batch_max_bytes:
        return None
    return candidate, "batch"


def is_full(job: dict[str, Any], cfg: QueueConfig) -> bool:
    """A tail that can take no more: at the item limit, or at the byte limit."""
    return len(job.get("items", [])) >= cfg.batch_max_items or len(dumps_line(job)) >= cfg.batch_max_bytes
