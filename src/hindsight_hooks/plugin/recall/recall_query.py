"""Automatic-recall query composition (docs/recall.md#query) and recall-response reading
(docs/recall.md#per-bank-recall).

The query is deterministic: the same transcript tail, config and clock always give the same
text, so the recall cache (docs/recall.md#cache) and prompt caching upstream stay effective. Truncation
always keeps the *newest* transcript text, because the last user turn is what the recall is
for; the preamble/hints prefix survives whenever it leaves room for a useful tail.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from ...backends.base import MemoryHit
from ...config_model import RecallConfig
from ...governance.redact import redact_text
from ...hooks.messages import Message
from ...retain.injected import is_injected

QueryKind = Literal["project", "user"]

EMPTY_BODY = "current coding task"
"""The body used when no transcript text survives, so the query is never just a preamble."""

MIN_TAIL_CHARS = 20
"""Below this much room for the body, the prefix is sacrificed to keep the newest text."""

REDACT_MARGIN_CHARS = 65536
"""How much text before the kept tail is redacted with it. Redacting a whole multi-MB tool
result every turn would cost the hook ~0.1 s/MB; a secret that starts in the margin and reaches
into the tail is still seen whole, since every rule's reach is far shorter than this (a PEM
block is bounded at 20,000 chars, a quoted value at one line)."""

# Host message role -> the `recall.roles` vocabulary (and the label written into the query).
_ROLE_NAMES: dict[str, str] = {
    "user": "user",
    "assistant": "assistant",
    "toolResult": "tool",
    "system": "system",
}


@dataclass(frozen=True)
class ComposedQuery:
    """One scope's recall query.

    ``query`` is what Hindsight receives and what the snapshot shows; ``body`` is the
    transcript part alone, which the local backend searches (a preamble would only add
    noise to a bm25 match).
    """

    query: str
    body: str


def _compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _part_text(part: Any) -> str | None:
    """The query text of one content part, or ``None`` for parts the query skips."""
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return None
    kind = part.get("type")
    if kind == "text":
        text = part.get("text")
        return text if isinstance(text, str) else None
    if kind == "image":
        return "[image omitted]"
    if kind == "toolCall":
        name = part.get("name")
        label = f"[toolCall {name if isinstance(name, str) else ''}]"
        args = part.get("arguments")
        if args not in (None, "", {}, []):
            label += " " + _compact_json(args)
        return label
    return None  # thinking and unknown parts carry nothing we want to search for


def message_query_text(msg: Message) -> str:
    """The trimmed text a message contributes to the query (``""`` when it has none)."""
    content = msg.get("content")
    if isinstance(content, str):
        return content.strip()
    if not isinstance(content, list):
        return ""
    pieces = [t for t in (_part_text(p) for p in content) if t is not None]
    return "\n".join(pieces).strip()


def _prefix_sections(kind: QueryKind, cfg: RecallConfig, repo_key: str, cwd: Path, now: datetime | None) -> list[str]:
    sections: list[str] = []
    preamble = cfg.project_query_preamble if kind == "project" else cfg.user_query_preamble
    if preamble.strip():
        sections.append(preamble.strip())
    if cfg.include_date_in_query:
        moment = now if now is not None else datetime.now(UTC)
        if moment.tzinfo is not None:
            moment = moment.astimezone(UTC)
        sections.append(f"Current date: {moment:%Y-%m-%d}")
    hints = f"Context hints: scope:{kind}"
    if kind == "project" and cfg.include_repo_hints_in_query:
        hints += f"; repo:{repo_key}; cwd:{Path(cwd).name}"
    sections.append(hints)
    return sections


def query_body(messages: list[Message], cfg: RecallConfig, *, redact: bool = True) -> str:
    """The transcript part of the query: the last ``recall.context_turns`` messages that carry
    query text, redacted when ``redact`` (docs/recall.md#query).

    It is the same for every scope, so a context hook computes it once. The walk starts at the
    newest message and stops as soon as it has its turns: a long transcript costs this hook
    its tail, not its length.
    """
    wanted = set(cfg.roles)
    turns = max(1, cfg.context_turns)
    lines: list[str] = []
    for msg in reversed(messages):
        if len(lines) >= turns:
            break
        if not isinstance(msg, dict):
            continue
        role = _ROLE_NAMES.get(str(msg.get("role")))
        if role is None or role not in wanted or is_injected(msg):
            continue
        text = message_query_text(msg)
        if text:
            lines.append(f"{role}: {text}")
    lines.reverse()
    body = "\n".join(lines) or EMPTY_BODY
    return _redacted_tail(body, max(1, cfg.max_query_chars)) if redact else body


def compose_query(
    messages: list[Message],
    kind: QueryKind,
    cfg: RecallConfig,
    *,
    repo_key: str,
    cwd: Path,
    now: datetime | None = None,
    redact: bool = True,
    body: str | None = None,
) -> ComposedQuery:
    """Build the recall query for one scope from the transcript tail (docs/recall.md#query).

    Injected recall blocks are never part of the query: recalling on our own previous
    output would make memory echo itself. With ``redact`` (``retain.redact_secrets``) every
    part of the query is redacted before it is truncated. ``body`` is :func:`query_body`'s
    result when the caller already has it (one per hook, whatever the number of scopes).
    """
    if body is None:
        body = query_body(messages, cfg, redact=redact)
    sections = _prefix_sections(kind, cfg, repo_key, cwd, now)
    limit = max(1, cfg.max_query_chars)
    if redact:
        sections = [_redacted_section(s) for s in sections]
    prefix = "\n\n".join(sections)
    query = "\n\n".join([*sections, body])
    if len(query) > limit:
        remaining = limit - len(prefix) - 2
        if prefix and remaining >= MIN_TAIL_CHARS:
            query = prefix + "\n\n" + body[-remaining:].lstrip()
        else:
            query = query[-limit:].lstrip()
    if len(body) > limit:
        body = body[-limit:].lstrip()
    return ComposedQuery(query=query, body=body)


@lru_cache(maxsize=64)
def _redacted_section(section: str) -> str:
    """A prefix section redacted: the preamble, the date line and the repo hints are the same turn
    after turn, and each secret pattern costs its scan of them on every prompt (``redact_text``
    reads no state, so its answer for a text is kept)."""
    return redact_text(section)


def _redacted_tail(body: str, limit: int) -> str:
    """``body`` redacted, cut first to its last ``limit`` chars plus the margin (at a line start
    when one is in the margin, so no rule sees a line from its middle)."""
    start = len(body) - limit - REDACT_MARGIN_CHARS
    if start > 0:
        nl = body.find("\n", start, start + REDACT_MARGIN_CHARS)
        body = body[nl + 1 if nl >= 0 else start :]
    return redact_text(body)


# --- reading a Hindsight recall response (docs/recall.md#per-bank-recall "Reading results") ---------------------------


def _result_items(payload: Any) -> list[Any]:
    if isinstance(payload, list):
        return payload
    if isinstance(payload, dict):
        for key in ("results", "memories"):
            items = payload.get(key)
            if isinstance(items, list):
                return items
    return []


def _fact_text(fact: Any) -> str | None:
    if isinstance(fact, str):
        return fact
    if isinstance(fact, dict):
        text = fact.get("text")
        if isinstance(text, str):
            return text
        content = fact.get("content")
        if isinstance(content, str):
            return content
    return None


def _source_facts(payload: Any) -> dict[str, str]:
    """The ``source_facts`` id → text map; a list of ``{id, text}`` objects is accepted too."""
    facts = payload.get("source_facts") if isinstance(payload, dict) else None
    out: dict[str, str] = {}
    if isinstance(facts, dict):
        for fid, fact in facts.items():
            text = _fact_text(fact)
            if text is not None:
                out[str(fid)] = text
    elif isinstance(facts, list):
        for fact in facts:
            if isinstance(fact, dict) and fact.get("id") is not None:
                text = _fact_text(fact)
                if text is not None:
                    out[str(fact["id"])] = text
    return out


def _item_text(item: Any) -> str:
    if isinstance(item, str):
        return item
    if isinstance(item, dict):
        text, content = item.get("text"), item.get("content")
        for candidate in (text, content):
            if isinstance(candidate, str) and candidate.strip():
                return candidate
        if isinstance(text, str) or isinstance(content, str):
            return ""  # an explicitly blank memory stays blank (the quality filter drops it)
    return _compact_json(item)


def _opt_str(value: Any) -> str | None:
    if value is None or isinstance(value, dict | list):
        return None
    return str(value)


def read_results(payload: Any) -> list[MemoryHit]:
    """Turn a raw Hindsight recall response into hits, tolerating every shape seen in the wild.

    Results come from ``results``, else ``memories``, else a bare array. Evidence is the text of
    each ``source_fact_ids`` entry found in the ``source_facts`` map; unknown ids are skipped.
    Never raises on odd input: a response we cannot read is simply empty.
    """
    facts = _source_facts(payload)
    hits: list[MemoryHit] = []
    for item in _result_items(payload):
        hit = MemoryHit(text=_item_text(item))
        if isinstance(item, dict):
            hit.id = _opt_str(item.get("id"))
            hit.type = _opt_str(item.get("type"))
            hit.mentioned_at = _opt_str(item.get("mentioned_at"))
            hit.document_id = _opt_str(item.get("document_id"))
            tags = item.get("tags")
            if isinstance(tags, list):
                hit.tags = [t for t in tags if isinstance(t, str)]
            score = item.get("score")
            if isinstance(score, int | float) and not isinstance(score, bool):
                hit.score = float(score)
            ids = item.get("source_fact_ids")
            if isinstance(ids, list):
                hit.evidence = [facts[str(fid)] for fid in ids if str(fid) in facts]
        hits.append(hit)
    return hits


_ROLE_LABEL = re.compile(r"^(?:user|assistant|tool|system): ", re.MULTILINE)


# The newest message alone is the embedded store's query when it has this many words to search by.
PROMPT_TERMS = 2
# What ``_part_text`` writes in place of an image or before a tool call's arguments: not the
# message's words ("image" would find the memories about container images).
_PART_MARK = re.compile(r"\[image omitted\]|\[toolCall ([^\]\n]*)\]")


def local_search_text(body: str) -> str:
    """The body for the embedded store's word search: its messages newest first, without their
    ``<role>: `` labels, and an earlier message only while the newer ones have fewer than
    ``PROMPT_TERMS`` words the store searches by (ADR 187).

    Why newest first: the store searches the query's first 12 words (``query_terms``). With the
    previous reply before the prompt, a reply of a dozen words took every place, and "how do we
    run the tests?" was searched as the reply's topic. Why the earlier message at all: a prompt
    such as "fix it" or "why?" says what it is about only through the reply before it; but not one
    that asks where the work was left ("where did we leave off?", ADR 222) or what the memory
    holds ("what do you remember?", ADR 223), which is about the sessions before this one, and
    which the store answers only when it says nothing else.

    Why no labels: the server's model reads who said what; as search words they would make every
    stored message of that role a lexical hit (each unit starts with its own role label),
    crowding out the units that share the real words. The same for the marks that stand for an
    image or open a tool call (the tool's name stays).
    """
    from hindsight_hooks.backends.local_activity import asks_where_we_left_off_now  # the store's own rules
    from hindsight_hooks.backends.local_known import asks_what_is_known_now
    from hindsight_hooks.backends.local_text import query_terms

    starts = [m.start() for m in _ROLE_LABEL.finditer(body)]
    if not starts or starts[0] != 0:  # a body cut to its tail starts inside a message
        starts.insert(0, 0)
    messages = [
        _PART_MARK.sub(lambda m: m.group(1) or "", _ROLE_LABEL.sub("", body[a:b])).strip()
        for a, b in zip(starts, [*starts[1:], len(body)], strict=True)
    ]
    picked: list[str] = []
    alone: bool | None = None  # whether the prompt is about the sessions before, read once if needed
    for text in reversed(messages):
        if not text:
            continue
        picked.append(text)
        if len(query_terms("\n".join(picked))) >= PROMPT_TERMS:
            break
        if alone is None:
            alone = asks_where_we_left_off_now(picked[0]) or asks_what_is_known_now(picked[0])
        if alone:
            break
    return "\n".join(picked)
