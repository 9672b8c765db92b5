"""Pure wire mapping for the Hindsight 1.1.0 HTTP API: request bodies in, parsed results out.

Kept apart from the transport (``hindsight.py``) so every field decision can be unit-tested
without a socket, and so the exact shape we send is in one place to check against the
OpenAPI document (``hindsight-openapi-1.1.0.json``). Nothing here imports httpx.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import quote

from ..governance.redact import redact_error
from .base import MEMORY_ITEM_FIELDS, BankSpec, ErrorKind, MemoryHit, RecallRequest, ReflectRequest, RetainOutcome

API_PREFIX = "/v1/default/banks"
DETAIL_LIMIT = 500

_ITEM_FIELDS = MEMORY_ITEM_FIELDS  # a whitelist: nothing else reaches the server

# Validation-error keys that may echo the request (and so transcript text) back at us.
_ECHO_KEYS = frozenset({"input", "ctx", "url"})


def seg(value: str) -> str:
    """One URL-encoded path segment: ``/``, ``:``, spaces and ``%`` can never change the route."""
    return quote(value, safe="")


def bank_path(bank_id: str, *rest: str) -> str:
    """``/v1/default/banks/<bank>[/<rest>...]`` with every dynamic segment encoded by the caller."""
    return "/".join((API_PREFIX, seg(bank_id), *rest))


def omit_none(data: dict[str, Any]) -> dict[str, Any]:
    """``None`` fields are omitted from every request (docs/backends.md#hindsight-server)."""
    return {k: v for k, v in data.items() if v is not None}


# --------------------------------------------------------------------------- requests


def bank_create_body(spec: BankSpec) -> dict[str, Any]:
    """``PUT /banks/{id}`` body (``CreateBankRequest``); never the deprecated ``name``.

    Blank missions are left out so the server keeps its built-in default instead of an
    empty mission; ``enable_observations`` is always explicit because its default is on.
    """
    body: dict[str, Any] = {}
    for key in ("reflect_mission", "retain_mission", "observations_mission", "retain_extraction_mode"):
        value = getattr(spec, key)
        if isinstance(value, str) and value.strip():
            body[key] = value
    body["enable_observations"] = bool(spec.enable_observations)
    if spec.retain_structured_chunk_size is not None:
        body["retain_structured_chunk_size"] = int(spec.retain_structured_chunk_size)
    return body


def retain_item(item: dict[str, Any]) -> dict[str, Any]:
    """One ``MemoryItem``: the whitelisted fields of a queue item, ``None`` omitted."""
    return {k: item[k] for k in _ITEM_FIELDS if item.get(k) is not None}


def retain_body(items: list[dict[str, Any]], operation_id: str, async_: bool) -> dict[str, Any]:
    """``POST /memories`` body; the job id is the ``operation_id`` so redelivery is idempotent."""
    return {"items": [retain_item(i) for i in items], "async": bool(async_), "operation_id": operation_id}


def recall_body(req: RecallRequest) -> dict[str, Any]:
    """``POST /memories/recall`` body per docs/recall.md#per-bank-recall; ``tags``/``tags_match`` are never sent."""
    body: dict[str, Any] = {"query": req.query, "budget": req.budget, "max_tokens": int(req.max_tokens)}
    if req.types:
        body["types"] = list(req.types)
    if req.query_timestamp:
        body["query_timestamp"] = req.query_timestamp
    if req.include_source_facts:
        body["include"] = {"source_facts": {"max_tokens": int(req.max_source_facts_tokens)}}
    if req.tag_groups:
        body["tag_groups"] = list(req.tag_groups)
    return body


def reflect_body(req: ReflectRequest, *, fold_context: bool = False) -> dict[str, Any]:
    """``POST /reflect`` body. ``fold_context`` moves a context into the query (docs/backends.md#hindsight-server
    fallback)."""
    context = req.context if isinstance(req.context, str) and req.context.strip() else None
    query = req.query
    if context is not None and fold_context:
        query = f"{query}\n\nAdditional context:\n{context}"
        context = None
    body: dict[str, Any] = {"query": query, "budget": req.budget}
    if context is not None:
        body["context"] = context
    if req.max_tokens is not None:
        body["max_tokens"] = int(req.max_tokens)
    if req.response_schema is not None:
        body["response_schema"] = req.response_schema
    if req.include_facts:
        body["include"] = {"facts": {}}
    if req.tag_groups:
        body["tag_groups"] = list(req.tag_groups)
    return body


# --------------------------------------------------------------------------- responses


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _str_list(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _as_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _fact_text(fact: Any) -> str | None:
    if isinstance(fact, str):
        return fact or None
    if isinstance(fact, dict):
        for key in ("text", "content"):
            text = fact.get(key)
            if isinstance(text, str) and text:
                return text
    return None


def parse_recall_payload(payload: Any) -> list[MemoryHit]:
    """Read recall hits from any response shape the server family has used (docs/recall.md#per-bank-recall).

    Results come from ``results``, else ``memories``, else a bare array; an item's text is
    ``text``, else ``content``, else its JSON; evidence is ``source_fact_ids`` resolved
    through the ``source_facts`` map (unknown ids are skipped: the map may be cut by budget).
    """
    if isinstance(payload, list):
        rows: list[Any] = payload
        facts: dict[str, Any] = {}
    elif isinstance(payload, dict):
        raw = payload.get("results")
        if not isinstance(raw, list):
            raw = payload.get("memories")
        rows = raw if isinstance(raw, list) else []
        sf = payload.get("source_facts")
        facts = sf if isinstance(sf, dict) else {}
    else:
        return []
    hits: list[MemoryHit] = []
    for row in rows:
        if not isinstance(row, dict):
            hits.append(MemoryHit(text=row if isinstance(row, str) else _as_json(row)))
            continue
        if isinstance(row.get("text"), str):
            text = row["text"]
        elif isinstance(row.get("content"), str):
            text = row["content"]
        else:
            text = _as_json(row)
        evidence: list[str] = []
        for fid in _str_list(row.get("source_fact_ids")):
            fact = _fact_text(facts.get(fid))
            if fact is not None:
                evidence.append(fact)
        scores = row.get("scores")
        score = scores.get("final") if isinstance(scores, dict) else None
        raw_id = row.get("id")
        hits.append(
            MemoryHit(
                text=text,
                id=str(raw_id) if isinstance(raw_id, (str, int)) and not isinstance(raw_id, bool) else None,
                type=_str_or_none(row.get("type")) or _str_or_none(row.get("fact_type")),
                tags=_str_list(row.get("tags")),
                mentioned_at=_str_or_none(row.get("mentioned_at")),
                document_id=_str_or_none(row.get("document_id")),
                evidence=evidence,
                score=float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None,
            )
        )
    return hits


def parse_retain_outcome(payload: Any) -> RetainOutcome:
    """Aggregates of a retain response (docs/queue.md#outcomes); a missing body or fields give an empty outcome."""
    out = RetainOutcome()
    if not isinstance(payload, dict):
        return out
    out.items_count = _int_or_none(payload.get("items_count"))
    if out.items_count is None:
        out.items_count = _int_or_none(payload.get("itemsCount"))
    usage = payload.get("usage")
    if isinstance(usage, dict):
        out.tokens = _int_or_none(usage.get("total_tokens"))
    ids: list[str] = []

    def add(value: Any) -> None:
        if isinstance(value, str) and value and value not in ids:
            ids.append(value)

    for key in ("operation_id", "operationId", "id"):
        add(payload.get(key))
    ops = payload.get("operations")
    if isinstance(ops, list):
        for op in ops:
            if isinstance(op, dict):
                add(op.get("id") if isinstance(op.get("id"), str) else op.get("operation_id"))
            else:
                add(op)
    for key in ("operation_ids", "operationIds"):
        for op in _str_list(payload.get(key)):
            add(op)
    out.operation_ids = ids
    return out


# --------------------------------------------------------------------------- errors


def classify_status(status: int) -> ErrorKind:
    """HTTP status → error kind (docs/backends.md#hindsight-server). The queue maps ``not_found`` to transient
    itself."""
    if status in (401, 403):
        return "auth"
    if status == 404:
        return "not_found"
    if status in (408, 425, 429) or status >= 500:
        return "transient"
    return "permanent"


def _scrub(detail: Any) -> Any:
    """Drop the keys of FastAPI validation errors that echo request content back."""
    if isinstance(detail, list):
        return [_scrub(d) for d in detail]
    if isinstance(detail, dict):
        return {k: _scrub(v) for k, v in detail.items() if k not in _ECHO_KEYS}
    return detail


def raw_detail(body: Any) -> Any:
    """The unredacted ``detail`` (else ``message``) of an error body, for matching only."""
    if isinstance(body, dict):
        if body.get("detail") is not None:
            return body["detail"]
        if body.get("message") is not None:
            return body["message"]
    return None


def error_detail(body: Any, text: str, fallback: str) -> str:
    """``detail``, else ``message``, else the body text; JSON-encoded when structured,
    with echoed input removed, redacted and at most 500 characters."""
    value = raw_detail(body)
    if value is None:
        out = text.strip() or fallback
    elif isinstance(value, str):
        out = value
    else:
        out = _as_json(_scrub(value))
    return redact_error(out or fallback, DETAIL_LIMIT)


_CONTEXT_WORD = re.compile(r"\bcontext\b", re.I)


def names_context(detail: Any) -> bool:
    """True when a 422 detail points at the deprecated reflect ``context`` field."""
    if isinstance(detail, str):
        return bool(_CONTEXT_WORD.search(detail))
    if isinstance(detail, list):
        return any(names_context(d) for d in detail)
    if isinstance(detail, dict):
        loc = detail.get("loc")
        if isinstance(loc, list) and "context" in loc:
            return True
        return any(names_context(detail.get(k)) for k in ("msg", "message", "detail"))
    return False


def fmt_seconds(seconds: float) -> str:
    """``30`` / ``2.5`` / ``0.05``: short, stable seconds for messages."""
    return f"{max(0.0, seconds):.3f}".rstrip("0").rstrip(".")
