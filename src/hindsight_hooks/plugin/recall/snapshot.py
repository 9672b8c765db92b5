"""The optional ``last-recall.json`` snapshot (docs/recall.md#status-and-snapshot).

It lets a person see exactly what the last automatic recall asked and injected. It is a
debugging aid, so it must never make things worse: it is redacted, written atomically
(0600), never fed back to the model or retained, and a recall where every bank failed does
not replace a good snapshot unless failures were explicitly opted in
(``store_last_recall_failures``).
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from ...backends.base import MemoryHit
from ...fsutil import atomic_write_text, ensure_private_dir
from ...governance.redact import redact_value
from ...sanitize import sanitize
from ...timefmt import iso_utc
from .render import BankBlock, render_bank_section, shown_hits, timed_days_of

_FAILURE_KEYS = ("bank_id", "query", "error", "kind", "tag_groups")


def should_write(rendered: str, failed: int, store_failures: bool) -> bool:
    """The overwrite rule: write a non-empty render, a failure-free recall, or failures when opted in."""
    return bool(rendered) or failed == 0 or store_failures


def _result(hit: MemoryHit) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if hit.id is not None:
        out["id"] = hit.id
    out["text"] = hit.text
    if hit.type is not None:
        out["type"] = hit.type
    if hit.tags:
        out["tags"] = list(hit.tags)
    if hit.mentioned_at is not None:
        out["mentioned_at"] = hit.mentioned_at
    return out


def _failure(failure: dict[str, Any]) -> dict[str, Any]:
    return {k: failure[k] for k in _FAILURE_KEYS if failure.get(k) is not None}


def build_snapshot(
    *,
    created_at: datetime | int | float | str,
    blocks: list[BankBlock],
    failures: list[dict[str, Any]],
    rendered: str,
    top_k: int | None = None,
) -> dict[str, Any]:
    """The snapshot document, redacted. ``top_k`` limits each bank to what the block showed."""
    limit = top_k if top_k is not None else max((len(b.hits) for b in blocks), default=0)
    if blocks:
        query = blocks[0].query
    elif failures:
        query = str(failures[0].get("query") or "")
    else:
        query = ""
    shown_per_block = shown_hits(blocks, limit)
    timed_days = timed_days_of(shown_per_block)
    doc: dict[str, Any] = {
        "created_at": iso_utc(created_at),
        "query": query,
        "rendered": rendered,
        "blocks": [
            {
                "bank_id": block.bank_id,
                "query": block.query,
                "rendered": render_bank_section(block.bank_id, shown, timed_days),
                "memory_count": len(shown),
                "results": [_result(h) for h in shown],
            }
            for block, shown in shown_per_block
        ],
        "failed": len(failures),
    }
    if failures:
        doc["failures"] = [_failure(f) for f in failures]
    redacted: dict[str, Any] = redact_value(doc)
    return redacted


def write_snapshot(
    path: Path,
    *,
    created_at: datetime | int | float | str,
    blocks: list[BankBlock],
    failures: list[dict[str, Any]],
    rendered: str,
    store_failures: bool,
    top_k: int | None = None,
) -> bool:
    """Write the snapshot if the overwrite rule allows it; returns whether it was written.

    Raises ``OSError`` when the write itself fails (the caller warns; the block is still
    injected). The message of such an error names the path only, never content.
    """
    if not should_write(rendered, len(failures), store_failures):
        return False
    doc = build_snapshot(created_at=created_at, blocks=blocks, failures=failures, rendered=rendered, top_k=top_k)
    # A server may hand back text with lone surrogates (a JSON "\ud800" escape decodes to one):
    # UTF-8 cannot hold them, so they become U+FFFD rather than fail the write.
    text = json.dumps(sanitize(doc), ensure_ascii=False, indent=2, default=str) + "\n"
    path = Path(path)
    ensure_private_dir(path.parent)
    atomic_write_text(path, text)
    return True
