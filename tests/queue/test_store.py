"""Queue files (docs/queue.md#files, docs/queue.md#job-schema): tolerant/strict readers, durable appends, quarantine,
rewrites, summarize."""

from __future__ import annotations

import base64
import os
import stat
from pathlib import Path

import orjson
import pytest

from hindsight_hooks.queue.errors import MalformedQueueError, QueueError
from hindsight_hooks.queue.jobs import dumps_line
from hindsight_hooks.queue.store import (
    append_durably,
    quarantine,
    read_strict,
    read_tolerant,
    rewrite,
    summarize,
)

from .conftest import T0, job


def test_missing_file_reads_as_empty(tmp_path: Path) -> None:
    snap = read_tolerant(tmp_path / "nope.jsonl")
    assert snap.jobs == [] and snap.malformed_lines == [] and snap.ident is None
    assert read_strict(tmp_path / "nope.jsonl") == []


def test_tolerant_reader_keeps_order_skips_blank_and_reports_malformed(tmp_path: Path) -> None:
    a, b = job(marker="a"), job(marker="b")
    path = tmp_path / "q.jsonl"
    path.write_bytes(dumps_line(a) + b"\n\n   \n{broken\n" + dumps_line(b) + b"\n" + b'{"id":"torn"')
    snap = read_tolerant(path)
    assert [j["id"] for j in snap.jobs] == [a["id"], b["id"]]
    assert snap.malformed_lines == [b"{broken", b'{"id":"torn"']
    with pytest.raises(MalformedQueueError, match=r"malformed queue file .*q\.jsonl: 2 invalid line\(s\)"):
        read_strict(path)


def test_append_adds_newline_before_a_torn_fragment(tmp_path: Path) -> None:
    path = tmp_path / "dead.jsonl"
    path.write_bytes(b'{"id":"half')
    append_durably(path, dumps_line(job()) + b"\n")
    lines = path.read_bytes().split(b"\n")
    assert lines[0] == b'{"id":"half'
    assert orjson.loads(lines[1])["bank_id"] == "bank-a"


def test_created_files_are_private(tmp_path: Path) -> None:
    path = tmp_path / "state" / "dead.jsonl"
    append_durably(path, b"x\n")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    rewrite(tmp_path / "state" / "q.jsonl", [b"a"])
    assert stat.S_IMODE(os.stat(tmp_path / "state" / "q.jsonl").st_mode) == 0o600


def test_quarantine_records_each_line_and_base64_for_non_utf8(tmp_path: Path) -> None:
    target = tmp_path / "q.jsonl.malformed.jsonl"
    quarantine(target, [b"{bad", b"\xff\xfe\x00raw"], tmp_path / "q.jsonl", T0)
    records = [orjson.loads(x) for x in target.read_bytes().splitlines()]
    assert records[0] == {
        "quarantined_at": "2023-11-14T22:13:20.000Z",
        "source_queue": str(tmp_path / "q.jsonl"),
        "line": "{bad",
    }
    assert records[1]["line_encoding"] == "base64"
    assert base64.b64decode(records[1]["line"]) == b"\xff\xfe\x00raw"


def test_rewrite_is_atomic_and_leaves_no_temp_files(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_bytes(b"old\n")
    ino_before = os.stat(path).st_ino
    ident, size = rewrite(path, [b"one", b"two"])
    assert path.read_bytes() == b"one\ntwo\n" and size == 8
    assert ident[1] == os.stat(path).st_ino != ino_before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["q.jsonl"]


def test_reading_a_directory_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.mkdir()
    with pytest.raises(QueueError, match="cannot read retain queue file"):
        read_tolerant(path)
    with pytest.raises(QueueError, match="cannot"):
        append_durably(path, b"x\n")


def test_summarize_never_raises(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    assert summarize(path) == {"path": str(path), "valid": 0, "malformed": 0, "error": None}
    path.write_bytes(dumps_line(job()) + b"\nnope\n")
    assert summarize(path) == {"path": str(path), "valid": 1, "malformed": 1, "error": None}
    os.unlink(path)
    path.mkdir()
    out = summarize(path)
    assert out["valid"] == 0 and "cannot read" in out["error"]
