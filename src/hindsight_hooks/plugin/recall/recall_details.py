"""The recall tool's memories as structured data (``ToolResult.details["memories"]``).

The tool's text is written for a model; a script (``hindsight-hooks recall --json``) or a host's
UI needs the same memories as fields it can read without parsing bullets: id (what
``memory_edit`` takes), text, bank, tags, and whatever score and time the backend gave.
"""

from __future__ import annotations

from typing import Any

from ...backends.base import MemoryHit


def memory_records(
    hits: list[MemoryHit], per_bank: list[tuple[str, list[MemoryHit] | None, str | None]]
) -> list[dict[str, Any]]:
    """One record per shown hit, in the order shown, each naming the bank it came from."""
    bank_of = {id(h): bank for bank, bank_hits, _ in per_bank for h in bank_hits or ()}
    records = []
    for h in hits:
        record: dict[str, Any] = {"id": h.id, "text": h.text, "bank": bank_of.get(id(h)), "tags": list(h.tags)}
        for key in ("type", "score", "importance", "created_at", "mentioned_at", "document_id", "source"):
            value = getattr(h, key)
            if value is not None:
                record[key] = value
        records.append(record)
    return records
