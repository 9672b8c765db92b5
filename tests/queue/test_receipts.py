"""Receipts (docs/retain.md#receipts): one per delivered item, newest first, deduplicated, capped, content-free."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import orjson

from hindsight_hooks.queue.receipts import (
    CONTEXT_LIMIT,
    MAX_RECEIPTS,
    TRUNCATED,
    bounded_context,
    read_receipts,
    record_deliveries,
    record_receipts,
)

from .conftest import T0


def delivered(job_id: str, bank: str, docs: list[str], context: str = "ctx") -> dict[str, Any]:
    return {
        "queue_job_id": job_id,
        "bank_id": bank,
        "source": "auto",
        "outcome": {"items_count": len(docs), "operations": [f"op-{job_id}"]},
        "items": [{"document_id": d, "update_mode": "append", "context": context, "tags": ["t"]} for d in docs],
    }


def test_one_receipt_per_item_newest_first(tmp_path: Path) -> None:
    path = tmp_path / "s" / "retain-receipts.json"
    record_receipts(path, [delivered("j1", "b", ["d1", "d2"]), delivered("j2", "b", ["d3"])], T0)
    receipts = read_receipts(path)
    assert [r["document_id"] for r in receipts] == ["d3", "d2", "d1"]
    first = receipts[0]
    assert set(first) == {
        "created_at",
        "bank_id",
        "document_id",
        "queue_job_id",
        "update_mode",
        "source",
        "context",
        "tags",
        "operation_ids",
        "outcome",
    }
    assert first["operation_ids"] == ["op-j2"] and first["outcome"]["items_count"] == 1
    data = orjson.loads(path.read_bytes())
    assert data["version"] == 1
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_deduplicated_by_bank_and_document_and_capped(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    record_receipts(path, [delivered("old", "b", ["same"])], T0)
    record_receipts(path, [delivered("new", "b", ["same"]), delivered("x", "other", ["same"])], T0 + 1)
    receipts = read_receipts(path)
    assert [(r["bank_id"], r["queue_job_id"]) for r in receipts] == [("other", "x"), ("b", "new")]
    record_receipts(path, [delivered(f"j{i}", "b", [f"d{i}"]) for i in range(80)], T0 + 2)
    receipts = read_receipts(path)
    assert len(receipts) == MAX_RECEIPTS and receipts[0]["document_id"] == "d79"


def test_context_is_redacted_and_bounded(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    secret = "password=hunter2hunter2 " + "y" * 2000
    record_deliveries(path, [delivered("j", "b", ["d"], context=secret)])
    text = read_receipts(path)[0]["context"]
    assert "hunter2" not in text
    assert len(text) == CONTEXT_LIMIT + len(TRUNCATED) and text.endswith(TRUNCATED)
    assert bounded_context(text) == text  # bounding twice does not stack markers


def test_corrupt_file_reads_as_empty_and_is_repaired(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    for junk in (b"{nope", b"[]", b'{"receipts": 3}'):
        path.write_bytes(junk)
        assert read_receipts(path) == []
    record_receipts(path, [delivered("j", "b", ["d"])], T0)
    assert len(read_receipts(path)) == 1
