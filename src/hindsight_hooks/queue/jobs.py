"""Queue jobs: the line schema (docs/queue.md#job-schema), validation, construction and serialisation.

Two levels of checking on purpose:

* ``is_valid_job`` is the *reader's* rule and is deliberately minimal (ids, attempts, items with
  string content/context/document_id and a known update_mode). Anything that passes can be
  delivered, so a line with an odd optional field is never quarantined.
* ``new_job`` / ``normalize_item`` are the *writer's* rule: they check every optional field so
  that nothing malformed is ever acknowledged, and put keys in the canonical order.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import orjson

from ..backends.base import MEMORY_ITEM_FIELDS
from ..timefmt import iso_ms
from .errors import QueueError

Source = Literal["auto", "tool", "import", "command"]
SOURCES: frozenset[str] = frozenset({"auto", "tool", "import", "command"})
UPDATE_MODES: frozenset[str] = frozenset({"append", "replace"})
SCOPE_KEYWORDS: frozenset[str] = frozenset({"per_tag", "combined", "all_combinations", "shared"})
ERROR_KINDS: frozenset[str] = frozenset({"transient", "auth", "permanent"})

# Delivery bookkeeping fields; everything else is the job's payload, which a claim seals.
STATE_FIELDS: tuple[str, ...] = (
    "first_failed_at",
    "last_attempt_at",
    "next_attempt_at",
    "last_error",
    "last_error_kind",
    "claimed_at",
    "claim_token",
    "claimed_by",
    "dead_lettered_at",
)
_JOB_ORDER: tuple[str, ...] = ("id", "bank_id", "created_at", "source", "async", "items", "attempts", *STATE_FIELDS)
_NEW_JOB_KEYS: frozenset[str] = frozenset({"id", "bank_id", "created_at", "source", "async", "items", "attempts"})
_ITEM_ORDER: tuple[str, ...] = MEMORY_ITEM_FIELDS


class InvalidJobError(QueueError, ValueError):
    """A job or item handed to the queue does not match docs/queue.md#job-schema (the message names the field only)."""


def is_valid_item(item: object) -> bool:
    """The reader's minimal item rule (docs/queue.md#job-schema "Valid line")."""
    return (
        isinstance(item, dict)
        and isinstance(item.get("content"), str)
        and isinstance(item.get("context"), str)
        and isinstance(item.get("document_id"), str)
        and item.get("update_mode") in UPDATE_MODES
    )


def is_valid_job(job: object) -> bool:
    """The reader's minimal job rule: anything that passes is deliverable."""
    if not isinstance(job, dict):
        return False
    job_id = job.get("id")
    bank_id = job.get("bank_id")
    attempts = job.get("attempts")
    items = job.get("items")
    return (
        isinstance(job_id, str)
        and bool(job_id)
        and isinstance(bank_id, str)
        and bool(bank_id)
        and isinstance(attempts, int)
        and not isinstance(attempts, bool)
        and attempts >= 0
        and isinstance(items, list)
        and bool(items)
        and all(is_valid_item(item) for item in items)
    )


def _str_list(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _ok_metadata(value: object) -> bool:
    return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())


def _ok_scopes(value: object) -> bool:
    if isinstance(value, str):
        return value in SCOPE_KEYWORDS
    return isinstance(value, list) and all(_str_list(s) for s in value)


def _ok_entities(value: object) -> bool:
    return isinstance(value, list) and all(
        isinstance(e, dict)
        and isinstance(e.get("text"), str)
        and e.keys() <= {"text", "type"}
        and (e.get("type") is None or isinstance(e.get("type"), str))
        for e in value
    )


# Optional item fields: (check, what the error says it must be).
_OPTIONAL_ITEM_FIELDS: dict[str, tuple[Any, str]] = {
    "timestamp": (lambda v: isinstance(v, str), "an ISO string or 'unset'"),
    "tags": (_str_list, "a list of strings"),
    "metadata": (_ok_metadata, "a map of strings to strings"),
    "observation_scopes": (_ok_scopes, "a list of tag lists or a known keyword"),
    "entities": (_ok_entities, "a list of {text, type?}"),
    "strategy": (lambda v: isinstance(v, str), "a string"),
}
_ITEM_RANK = {key: i for i, key in enumerate(_ITEM_ORDER)}


def normalize_item(item: Mapping[str, Any], index: int = 0) -> dict[str, Any]:
    """Check one wire item strictly and return it with keys in canonical order, ``None`` dropped."""
    if not isinstance(item, Mapping):
        raise InvalidJobError(f"item {index}: must be an object")
    content, context, document_id = item.get("content"), item.get("context"), item.get("document_id")
    if not isinstance(content, str) or not isinstance(context, str) or not isinstance(document_id, str):
        missing = [k for k in ("content", "context", "document_id") if not isinstance(item.get(k), str)]
        raise InvalidJobError(f"item {index}: {', '.join(missing)} must be a string")
    if not document_id:
        raise InvalidJobError(f"item {index}: document_id must not be empty")
    if item.get("update_mode") not in UPDATE_MODES:
        raise InvalidJobError(f"item {index}: update_mode must be 'append' or 'replace'")
    out: dict[str, Any] = {}
    last_rank = -1
    ordered = True
    for key, value in item.items():
        rank = _ITEM_RANK.get(key)
        if rank is None:
            unknown = sorted(k for k in item if k not in _ITEM_RANK)
            raise InvalidJobError(f"item {index}: unknown field(s) {unknown}")
        if value is None:
            continue
        rule = _OPTIONAL_ITEM_FIELDS.get(key)
        if rule is not None and not rule[0](value):
            raise InvalidJobError(f"item {index}: {key} must be {rule[1]}")
        ordered = ordered and rank > last_rank
        last_rank = rank
        out[key] = value
    if not ordered:
        out = {key: out[key] for key in _ITEM_ORDER if key in out}
    return out


def new_job(
    bank_id: str,
    source: str,
    items: Sequence[Mapping[str, Any]],
    async_: bool,
    *,
    now: float | None = None,
    job_id: str | None = None,
) -> dict[str, Any]:
    """A fresh job (uuid4 id, ``created_at`` now, ``attempts`` 0) after strict validation."""
    if not isinstance(bank_id, str) or not bank_id:
        raise InvalidJobError("bank_id must be a non-empty string")
    if source not in SOURCES:
        raise InvalidJobError(f"source must be one of {sorted(SOURCES)}")
    if not items:
        raise InvalidJobError("a job needs at least one item")
    return {
        "id": job_id or str(uuid.uuid4()),
        "bank_id": bank_id,
        "created_at": iso_ms(time.time() if now is None else now),
        "source": source,
        "async": bool(async_),
        "items": [normalize_item(item, i) for i, item in enumerate(items)],
        "attempts": 0,
    }


def check_new_job(job: Mapping[str, Any]) -> dict[str, Any]:
    """Validate a job about to be enqueued; returns a copy in canonical order.

    A job handed to ``enqueue`` must be fresh: no attempts and no delivery state, so that a
    caller can never smuggle a claim or a backoff into the file.
    """
    if not isinstance(job, Mapping):
        raise InvalidJobError("job must be an object")
    unknown = job.keys() - _NEW_JOB_KEYS
    if unknown:
        state = sorted(k for k in unknown if k in STATE_FIELDS and job[k] is not None)
        if state:
            raise InvalidJobError(f"a new job must not carry delivery state {state}")
        extra = sorted(k for k in unknown if k not in STATE_FIELDS)
        if extra:
            raise InvalidJobError(f"unknown job field(s) {extra}")
    job_id = job.get("id")
    bank_id = job.get("bank_id")
    if not isinstance(job_id, str) or not job_id:
        raise InvalidJobError("id must be a non-empty string")
    if not isinstance(bank_id, str) or not bank_id:
        raise InvalidJobError("bank_id must be a non-empty string")
    if job.get("source") not in SOURCES:
        raise InvalidJobError(f"source must be one of {sorted(SOURCES)}")
    if not isinstance(job.get("async"), bool):
        raise InvalidJobError("async must be a boolean")
    if not isinstance(job.get("created_at"), str):
        raise InvalidJobError("created_at must be an ISO string")
    if job.get("attempts", 0) != 0:
        raise InvalidJobError("a new job must have attempts 0")
    items = job.get("items")
    if not isinstance(items, list) or not items:
        raise InvalidJobError("a job needs at least one item")
    return {
        "id": job_id,
        "bank_id": bank_id,
        "created_at": job["created_at"],
        "source": job["source"],
        "async": job["async"],
        "items": [normalize_item(item, i) for i, item in enumerate(items)],
        "attempts": 0,
    }


def canonical(job: Mapping[str, Any]) -> dict[str, Any]:
    """The job with keys in schema order (unknown keys kept at the end), ``None`` dropped."""
    out = {key: job[key] for key in _JOB_ORDER if job.get(key) is not None}
    for key, value in job.items():
        if key not in out and value is not None and key not in _JOB_ORDER:
            out[key] = value
    return out


def dumps_line(job: Mapping[str, Any]) -> bytes:
    """One JSONL line, without the trailing newline. Never contains a raw newline."""
    try:
        return orjson.dumps(job)
    except TypeError as exc:  # orjson.JSONEncodeError subclasses TypeError
        raise InvalidJobError(f"job is not serialisable as JSON ({type(exc).__name__})") from None


def loads_line(line: bytes) -> dict[str, Any] | None:
    """Parse one line; ``None`` when it is not a valid job (the caller quarantines it)."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if not is_valid_job(value):
        return None
    assert isinstance(value, dict)
    return value


def document_ids(job: Mapping[str, Any]) -> list[str]:
    """The job's document ids, unique, in item order."""
    seen: dict[str, None] = {}
    for item in job.get("items", []):
        seen.setdefault(str(item.get("document_id", "")), None)
    return list(seen)
