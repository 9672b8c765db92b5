"""The last-recall snapshot (docs/recall.md#status-and-snapshot): rule, contents, redaction, atomic 0600 write."""

from __future__ import annotations

import json
import os
import stat
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from hindsight_hooks.backends.base import MemoryHit
from hindsight_hooks.plugin.recall.render import BankBlock, render_block
from hindsight_hooks.plugin.recall.snapshot import write_snapshot

WHEN = datetime(2025, 3, 4, 5, 6, 7, 891000, tzinfo=UTC)
SECRETS = [
    "sk-ant-abcdefghijklmnopqrstu",
    "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ012345",
    "AKIAABCDEFGHIJKLMNOP",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijklmnop",
]


def _good_blocks() -> list[BankBlock]:
    return [
        BankBlock(
            "proj",
            "project query",
            [
                MemoryHit(
                    text="uses uv", id="m1", type="observation", tags=["repo:x", "python"], mentioned_at="2025-01-01"
                ),
                MemoryHit(text="second"),
                MemoryHit(text="third (beyond top_k)"),
            ],
        ),
        BankBlock("user", "user query", []),
    ]


FAILURE = {
    "bank_id": "user",
    "query": "user query",
    "error": "connect refused",
    "kind": "transient",
    "tag_groups": None,
}


def _read(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def test_contents_shape(tmp_path: Path) -> None:
    path = tmp_path / "last-recall.json"
    blocks = _good_blocks()
    rendered = render_block(blocks, top_k=2)
    assert write_snapshot(
        path, created_at=WHEN, blocks=blocks, failures=[FAILURE], rendered=rendered, store_failures=False, top_k=2
    )
    doc = _read(path)
    assert list(doc) == ["created_at", "query", "rendered", "blocks", "failed", "failures"]
    assert doc["created_at"] == "2025-03-04T05:06:07.891Z"
    assert doc["query"] == "project query"
    assert doc["rendered"] == rendered
    assert doc["failed"] == 1
    assert doc["failures"] == [
        {"bank_id": "user", "query": "user query", "error": "connect refused", "kind": "transient"}
    ]
    proj, user = doc["blocks"]
    assert proj == {
        "bank_id": "proj",
        "query": "project query",
        "rendered": "Bank: proj\n1. uses uv [python] (2025-01-01)\n2. second",
        "memory_count": 2,
        "results": [
            {
                "id": "m1",
                "text": "uses uv",
                "type": "observation",
                "tags": ["repo:x", "python"],
                "mentioned_at": "2025-01-01",
            },
            {"text": "second"},
        ],
    }
    assert user == {"bank_id": "user", "query": "user query", "rendered": "", "memory_count": 0, "results": []}


def test_no_failures_key_when_nothing_failed_and_query_fallbacks(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    assert write_snapshot(path, created_at=1_700_000_000_123, blocks=[], failures=[], rendered="", store_failures=False)
    doc = _read(path)
    assert "failures" not in doc
    assert doc["query"] == ""
    assert doc["failed"] == 0
    assert doc["created_at"] == "2023-11-14T22:13:20.123Z"
    assert write_snapshot(path, created_at=WHEN, blocks=[], failures=[FAILURE], rendered="", store_failures=True)
    assert _read(path)["query"] == "user query"


@pytest.mark.parametrize(
    ("rendered", "failures", "store_failures", "written"),
    [
        ("block", [], False, True),
        ("block", [FAILURE], False, True),  # partial failure with a render
        ("", [], False, True),  # nothing matched, nothing failed
        ("", [FAILURE], False, False),  # every bank failed: keep the good snapshot
        ("", [FAILURE], True, True),  # ...unless failures are opted in
    ],
)
def test_overwrite_rule(
    tmp_path: Path, rendered: str, failures: list[dict[str, Any]], store_failures: bool, written: bool
) -> None:
    path = tmp_path / "last-recall.json"
    good = render_block(_good_blocks(), top_k=2)
    assert write_snapshot(
        path, created_at=WHEN, blocks=_good_blocks(), failures=[], rendered=good, store_failures=False
    )
    before = path.read_bytes()
    result = write_snapshot(
        path, created_at=WHEN, blocks=[], failures=failures, rendered=rendered, store_failures=store_failures
    )
    assert result is written
    assert (path.read_bytes() != before) is written


def test_file_is_private_and_write_is_atomic(tmp_path: Path) -> None:
    folder = tmp_path / "state" / "nested"
    path = folder / "last-recall.json"
    old_umask = os.umask(0)
    try:
        assert write_snapshot(
            path, created_at=WHEN, blocks=_good_blocks(), failures=[], rendered="x", store_failures=False
        )
        path.chmod(0o644)  # a rewrite must restore 0600
        assert write_snapshot(
            path, created_at=WHEN, blocks=_good_blocks(), failures=[], rendered="y", store_failures=False
        )
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert sorted(p.name for p in folder.iterdir()) == ["last-recall.json"]  # no temp files left


def test_secrets_are_redacted_everywhere(tmp_path: Path) -> None:
    path = tmp_path / "last-recall.json"
    blocks = [
        BankBlock(
            "proj",
            f"query with {SECRETS[0]}",
            [MemoryHit(text=f"deploy key {SECRETS[1]}", tags=[f"t:{SECRETS[2]}"], id=SECRETS[3])],
        )
    ]
    failures = [
        {"bank_id": "user", "query": f"q {SECRETS[0]}", "error": f"Authorization: Bearer {SECRETS[3]}", "kind": "auth"}
    ]
    rendered = render_block(blocks, top_k=8) + f"\npassword={SECRETS[2]}"
    assert write_snapshot(
        path, created_at=WHEN, blocks=blocks, failures=failures, rendered=rendered, store_failures=False
    )
    raw = path.read_text(encoding="utf-8")
    for secret in SECRETS:
        assert secret not in raw
    assert "REDACTED" in raw
    assert json.loads(raw)["failed"] == 1


def test_write_failure_raises_and_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "last-recall.json"
    target.mkdir()  # a directory where the file should be: os.replace fails
    with pytest.raises(OSError):
        write_snapshot(target, created_at=WHEN, blocks=[], failures=[], rendered="x", store_failures=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["last-recall.json"]
