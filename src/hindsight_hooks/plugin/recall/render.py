"""The injected recall block: quality filter (docs/recall.md#quality-filter), rendering (docs/recall.md#rendering),
escaping (docs/recall.md#escaping),
injection (docs/recall.md#injection) and the mental-models section (docs/recall.md#mental-models "Render").

Everything recalled is untrusted text written by past sessions (or by anyone who could write
to the bank), yet it lands inside the model's context. The block's structure — one
``<hindsight-memory>`` wrapper, ``Bank:`` headings and numbered items at column 0 — is
therefore produced only by this module, and recalled text is escaped so it can never close
the wrapper, open a new one, or forge a heading or an item (ADR-012).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from ...backends.base import MemoryHit, same_text_key
from ...hooks.messages import Message
from ...retain.injected import (
    BLOCK_CLOSE,
    BLOCK_HEADER,
    MODELS_CLOSE,
    MODELS_INTRO,
    MODELS_OPEN,
    MODELS_TRUNCATED,
)
from ...timefmt import days_said_twice, when_said
from .lookalikes import has_wrapper_tag, neutralise_tags

RECALL_CUSTOM_TYPE = "hindsight-recall"
MAX_EVIDENCE_LINES = 3
CONTINUATION_INDENT = "   "

PROVENANCE_PREFIXES = (
    "source:",
    "harness:",
    "repo:",
    "session:",
    "branch:",
    "document:",
    "import:",
    "imported:",
    "parent:",
    "forked:",
)
"""Tags we add for scoping and bookkeeping; they say nothing useful to the model, so they are hidden."""

MODELS_MIN_ENTRY_CHARS = 120
MODELS_MIN_SPARE_CHARS = 64


@dataclass
class BankBlock:
    """One bank's successful recall: the query sent and the hits it returned, best first."""

    bank_id: str
    query: str
    hits: list[MemoryHit] = field(default_factory=list)


# --- escaping (docs/recall.md#escaping) ---------------------------------------------------------------------------

# C0/C1 control characters except \t and \n (this removes \r, \v, \f, NEL and friends).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Unicode line/paragraph separators break lines for many readers: treat them as newlines.
_LINE_SEPARATORS = re.compile(r"[\u2028\u2029]")


def clean_control(text: str) -> str:
    """Drop control characters (keeping ``\\n`` and ``\\t``) and turn U+2028/U+2029 into ``\\n``."""
    return _LINE_SEPARATORS.sub("\n", _CONTROL.sub("", text))


def escape_recalled(text: str) -> str:
    """Make recalled text safe to place inside the block.

    - ``<`` of anything that looks like our wrapper or ``<mental_models>`` tag becomes ``&lt;``,
      look-alike spellings included (fullwidth or angle-bracket ``<``, Unicode dashes, invisible
      characters inside the tag, mixed case: :mod:`.lookalikes`, ADR-064);
    - control characters other than ``\\n``/``\\t`` are removed;
    - every newline is followed by three spaces, so no recalled line starts at column 0 and
      none can pose as a ``Bank:`` heading or a numbered item.
    """
    text = clean_control(text)
    text = neutralise_tags(text)
    return text.replace("\n", "\n" + CONTINUATION_INDENT)


# --- quality filter (docs/recall.md#quality-filter) -------------------------------------------------------------------

_CONTAMINATED = re.compile(
    r"customType[\"']?\s*:\s*[\"']hindsight-recall|last-recall\.json",
    re.IGNORECASE,
)


def _contaminated(text: str) -> bool:
    """An echo of our own block (its wrapper tag in any spelling, ADR-064) or of its snapshot."""
    return has_wrapper_tag(text) or _CONTAMINATED.search(text) is not None


def quality_filter(blocks: list[BankBlock]) -> list[BankBlock]:
    """Drop blank items, echoes of our own block/snapshot, and duplicates across all banks.

    Duplicates are matched on lower-cased, whitespace-collapsed text; the first occurrence (in
    scope order) wins. Blocks are kept even when emptied, so the caller still knows which banks
    answered. The input is not mutated.
    """
    seen: set[str] = set()
    out: list[BankBlock] = []
    for block in blocks:
        kept: list[MemoryHit] = []
        for hit in block.hits:
            text = hit.text if isinstance(hit.text, str) else ""
            if not clean_control(text).strip() or _contaminated(text):
                continue
            key = same_text_key(text)
            if key in seen:
                continue
            seen.add(key)
            kept.append(hit)
        out.append(BankBlock(bank_id=block.bank_id, query=block.query, hits=kept))
    return out


# --- rendering (docs/recall.md#rendering) --------------------------------------------------------------------------


def visible_tags(tags: list[str]) -> list[str]:
    """Tags worth showing: provenance tags hidden, blanks dropped, duplicates removed."""
    out: list[str] = []
    for tag in tags:
        if not isinstance(tag, str):
            continue
        tag = tag.strip()
        if not tag or tag.startswith(PROVENANCE_PREFIXES) or tag in out:
            continue
        out.append(tag)
    return out


def _item_lines(number: int, hit: MemoryHit, timed_days: frozenset[str]) -> list[str]:
    line = f"{number}. {escape_recalled(hit.text.strip())}"
    tags = visible_tags(hit.tags)
    if tags:
        line += " [" + ", ".join(escape_recalled(t) for t in tags) + "]"
    said = when_said(hit.mentioned_at, timed_days)
    if said:
        line += f" ({said})"
    lines = [line]
    evidence = [e.strip() for e in hit.evidence if isinstance(e, str) and clean_control(e).strip()]
    for fact in evidence[:MAX_EVIDENCE_LINES]:
        lines.append(f"{CONTINUATION_INDENT}- evidence: {escape_recalled(fact)}")
    return lines


def renderable_hits(block: BankBlock, top_k: int) -> list[MemoryHit]:
    """The hits of ``block`` that appear in the render: non-blank ones, at most ``top_k``."""
    hits = [h for h in block.hits if isinstance(h.text, str) and clean_control(h.text).strip()]
    return hits[: max(0, top_k)]


def shown_hits(blocks: list[BankBlock], top_k: int) -> list[tuple[BankBlock, list[MemoryHit]]]:
    """Each block with the hits the render shows of it (:func:`renderable_hits`), read once: the
    days to time and the sections are both built from them."""
    return [(block, renderable_hits(block, top_k)) for block in blocks]


def timed_days_of(shown: list[tuple[BankBlock, list[MemoryHit]]]) -> frozenset[str]:
    """The days said twice among every item the block shows, across its banks (ADR 180)."""
    return days_said_twice(hit.mentioned_at for _, hits in shown for hit in hits)


def render_bank_section(bank_id: str, hits: list[MemoryHit], timed_days: frozenset[str]) -> str:
    """One bank's part of the block (``Bank:`` heading and the ``hits`` it shows), or ``""`` when it
    shows none. ``timed_days`` are the days whose items show their time (:func:`timed_days_of`)."""
    if not hits:
        return ""
    lines = [f"Bank: {escape_recalled(bank_id.strip())}"]
    for number, hit in enumerate(hits, start=1):
        lines.extend(_item_lines(number, hit, timed_days))
    return "\n".join(lines)


def render_block(blocks: list[BankBlock], *, top_k: int, mental_models: str = "") -> str:
    """The whole ``<hindsight-memory>`` block, or ``""`` when there is nothing to inject.

    ``blocks`` must already be in scope order (project, then user) and quality-filtered;
    ``mental_models`` is the output of :func:`render_mental_models` (already escaped).
    """
    shown = shown_hits(blocks, top_k)
    timed_days = timed_days_of(shown)
    sections = [s for s in (render_bank_section(b.bank_id, hits, timed_days) for b, hits in shown) if s]
    if not sections and not mental_models.strip():
        return ""
    lines = list(BLOCK_HEADER)
    if mental_models.strip():
        lines += ["", mental_models]
    for section in sections:
        lines += ["", section]
    lines.append(BLOCK_CLOSE)
    return "\n".join(lines)


def count_items(blocks: list[BankBlock], top_k: int) -> int:
    """How many items the render shows (the ``n`` of the ``recalled:<n>`` status)."""
    return sum(len(renderable_hits(b, top_k)) for b in blocks)


# --- mental models (docs/recall.md#mental-models "Render") ------------------------------------------------------------


def _model_entry(model: dict[str, Any]) -> str | None:
    content = model.get("content")
    if not isinstance(content, str) or not clean_control(content).strip():
        return None
    name = model.get("name")
    if not isinstance(name, str) or not name.strip():
        name = str(model.get("id") or "mental model")
    heading = name.strip()
    refreshed = model.get("last_refreshed_at")
    if isinstance(refreshed, str) and refreshed.strip():
        heading += f" _(refreshed {refreshed.strip()})_"
    # Escaped as one text, not part by part: a tag could be spelt across the parts (a name ending
    # in "<", a content starting "hindsight-memory>"). The newline before the content is indented
    # like every other, so the content's first line cannot sit at column 0 either.
    return "# " + escape_recalled(f"{heading}\n{content.strip()}")


def _cut(text: str, limit: int) -> str:
    """At most ``limit`` chars, ending in ``…`` when cut (trailing whitespace is not kept before it,
    so the ellipsis never lands alone at column 0)."""
    if len(text) <= limit:
        return text
    return text[: max(0, limit - 1)].rstrip() + "…"


def render_mental_models(models: list[dict[str, Any]], max_render_chars: int) -> str:
    """The ``<mental_models>`` section, bounded by ``max_render_chars`` (``""`` when nothing fits).

    Each model gets ``max(120, inner // n)`` characters, where ``inner`` is what the budget
    leaves after the wrapper, the intro line, the separators and room for the truncation
    note. Models that no longer fit are dropped; any cut or drop appends the truncation note.
    A final hard cap cuts the inside, never the wrapper.
    """
    entries = [e for e in (_model_entry(m) for m in models if isinstance(m, dict)) if e is not None]
    overhead = len(MODELS_OPEN) + len(MODELS_INTRO) + len(MODELS_CLOSE) + 3  # three joining newlines
    if not entries or max_render_chars < overhead + MODELS_MIN_SPARE_CHARS:
        return ""
    inner_budget = max_render_chars - overhead
    note_reserve = len(MODELS_TRUNCATED) + 1
    avail = inner_budget - note_reserve
    count = len(entries)
    per_model = max(MODELS_MIN_ENTRY_CHARS, (avail - 2 * (count - 1)) // count)

    parts: list[str] = []
    used = 0
    truncated = False
    for entry in entries:
        cut = _cut(entry, per_model)
        truncated = truncated or cut != entry
        sep = 2 if parts else 0
        if used + sep + len(cut) > avail:
            if parts:
                truncated = True
                break
            cut = _cut(cut, max(1, avail))
            truncated = True
        parts.append(cut)
        used += sep + len(cut)
    inner = "\n\n".join(parts)
    if truncated:
        inner += "\n" + MODELS_TRUNCATED
    inner = _cut(inner, inner_budget)
    return "\n".join([MODELS_OPEN, MODELS_INTRO, inner, MODELS_CLOSE])


# --- injection (docs/recall.md#injection) --------------------------------------------------------------------------


def block_message(render: str, timestamp_ms: int) -> Message:
    """The ephemeral user message that carries the block (tagged so every reader can drop it)."""
    return {"role": "user", "content": render, "timestamp": timestamp_ms, "customType": RECALL_CUSTOM_TYPE}


def inject(
    messages: list[Message],
    render: str,
    timestamp_ms: int,
    position: Literal["append", "prepend"],
) -> list[Message]:
    """A new message list with the block placed per ``position``; the input is never mutated.

    ``append`` puts the block just before the final (user) message, so everything before it —
    the provider's cached prefix — stays byte-identical; with a single message the block comes
    first. An empty render injects nothing.
    """
    if not render:
        return list(messages)
    block = block_message(render, timestamp_ms)
    if position == "prepend" or len(messages) <= 1:
        return [block, *messages]
    return [*messages[:-1], block, messages[-1]]
