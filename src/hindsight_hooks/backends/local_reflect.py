"""The local backend's reflect: recall plus a fixed "sandwich" layout, no LLM (docs/tools.md#hindsight_reflect).

The Hindsight server synthesises an answer; the embedded store can only arrange what recall
found, in a shape that puts the strongest facts first.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..timefmt import days_said_twice, when_said
from .base import MemoryHit

NO_REFLECTION = "No relevant information found to reflect on."
PREFIX = "Based on recalled memories:\n\n"
LINE_CHARS = 200


def reflect_query(query: str, context: str | None) -> str:
    """``<query>\\n\\nAdditional context:\\n<context trimmed>`` when context is not blank."""
    if context is not None and context.strip():
        return f"{query}\n\nAdditional context:\n{context.strip()}"
    return query


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= LINE_CHARS else flat[: LINE_CHARS - 1] + "…"


def sandwich_line(hit: MemoryHit, timed_days: frozenset[str] = frozenset()) -> str:
    """``- <content ≤200> (<YYYY-MM-DD or ?>, <source or unknown>, c:<score .1f>)``; the day is
    ``YYYY-MM-DD HH:MM UTC`` when it is one of ``timed_days`` (ADR 180)."""
    date = when_said(hit.said_at, timed_days) or "?"
    source = hit.source or "unknown"
    confidence = hit.score if hit.score is not None else (hit.importance or 0.0)
    return f"- {_preview(hit.text)} ({date}, {source}, c:{confidence:.1f})"


def sandwich(hits: Sequence[MemoryHit]) -> str:
    """The reflect text for hits already ordered by score; the no-information text when empty."""
    if not hits:
        return NO_REFLECTION
    top_n = 3 if len(hits) >= 4 else 1
    sections = (
        ("## Top Facts", hits[:top_n]),
        ("## Supporting Context", hits[top_n : top_n + 5]),
        ("## Recent Signals", hits[top_n + 5 : top_n + 8]),
    )
    timed_days = days_said_twice(h.said_at for _, chunk in sections for h in chunk)  # the hits shown
    lines: list[str] = []
    for title, chunk in sections:
        if not chunk:
            continue
        if lines:
            lines.append("")
        lines.append(title)
        lines.extend(sandwich_line(h, timed_days) for h in chunk)
    lines.append("")
    lines.append(f"_({len(hits)} memories retrieved)_")
    return PREFIX + "\n".join(lines)
