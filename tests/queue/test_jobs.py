"""Job schema (docs/queue.md#job-schema): the writer's strict checks and the reader's minimal validity rule."""

from __future__ import annotations

import uuid
from typing import Any

import orjson
import pytest

from hindsight_hooks.queue.jobs import (
    InvalidJobError,
    check_new_job,
    dumps_line,
    is_valid_job,
    loads_line,
    new_job,
    normalize_item,
)
from hindsight_hooks.timefmt import iso_ms, parse_iso

from .conftest import T0, item


def test_new_job_has_uuid4_id_iso_ms_created_at_and_zero_attempts() -> None:
    job = new_job("bank-a", "tool", [item()], False, now=T0 + 0.1234)
    assert uuid.UUID(job["id"]).version == 4
    assert job["created_at"] == "2023-11-14T22:13:20.123Z"
    assert job["attempts"] == 0
    assert job["async"] is False
    assert job["source"] == "tool"
    assert list(job) == ["id", "bank_id", "created_at", "source", "async", "items", "attempts"]


def test_new_job_ids_are_unique() -> None:
    ids = {new_job("b", "auto", [item()], True)["id"] for _ in range(200)}
    assert len(ids) == 200


def test_item_keys_are_put_in_canonical_order_and_none_dropped() -> None:
    raw = {
        "metadata": {"k": "v"},
        "update_mode": "replace",
        "document_id": "d",
        "tags": None,
        "context": "c",
        "content": "x",
        "timestamp": "unset",
    }
    assert list(normalize_item(raw)) == ["content", "context", "timestamp", "document_id", "update_mode", "metadata"]


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"content": 1}, "content"),
        ({"context": None}, "context"),
        ({"document_id": ""}, "document_id"),
        ({"update_mode": "merge"}, "update_mode"),
        ({"tags": "a"}, "tags"),
        ({"tags": ["a", 1]}, "tags"),
        ({"metadata": {"k": 1}}, "metadata"),
        ({"observation_scopes": "bogus"}, "observation_scopes"),
        ({"observation_scopes": [["a"], "b"]}, "observation_scopes"),
        ({"entities": [{"text": "x", "kind": "y"}]}, "entities"),
        ({"strategy": 3}, "strategy"),
        ({"timestamp": 12}, "timestamp"),
        ({"surprise": "x"}, "unknown"),
    ],
)
def test_bad_items_are_refused_naming_the_field_not_the_content(patch: dict[str, Any], message: str) -> None:
    bad = {**item("secret transcript text"), **patch}
    with pytest.raises(InvalidJobError) as info:
        new_job("b", "auto", [bad], True)
    assert message in str(info.value)
    assert "secret transcript text" not in str(info.value)


def test_valid_optional_fields_are_accepted() -> None:
    it = item(
        observation_scopes=[["harness:x"], ["repo:y"]],
        entities=[{"text": "Alice", "type": "person"}, {"text": "Bob"}],
        strategy="s",
        timestamp="2024-01-01T00:00:00.000Z",
    )
    assert normalize_item(it)["entities"][1] == {"text": "Bob"}
    assert normalize_item({**it, "observation_scopes": "per_tag"})["observation_scopes"] == "per_tag"


@pytest.mark.parametrize(
    ("bank", "source", "items"),
    [("", "auto", [item()]), ("b", "robot", [item()]), ("b", "auto", [])],
)
def test_new_job_refuses_bad_job_fields(bank: str, source: str, items: list[dict[str, Any]]) -> None:
    with pytest.raises(InvalidJobError):
        new_job(bank, source, items, True)


def test_check_new_job_refuses_delivery_state_and_attempts() -> None:
    job = new_job("b", "auto", [item()], True)
    with pytest.raises(InvalidJobError, match="delivery state"):
        check_new_job({**job, "claim_token": "x"})
    with pytest.raises(InvalidJobError, match="attempts"):
        check_new_job({**job, "attempts": 2})
    with pytest.raises(InvalidJobError, match="unknown"):
        check_new_job({**job, "extra": 1})
    with pytest.raises(InvalidJobError, match="async"):
        check_new_job({**job, "async": "yes"})


def test_reader_validity_rule() -> None:
    good = new_job("b", "auto", [item()], True)
    assert is_valid_job(good)
    # Optional fields the writer would refuse do not make a line unreadable: it stays deliverable.
    assert is_valid_job({**good, "items": [{**good["items"][0], "tags": "not-a-list"}], "source": "elsewhere"})
    bads: list[object] = [
        [],
        "x",
        {**good, "id": ""},
        {**good, "bank_id": 3},
        {**good, "attempts": -1},
        {**good, "attempts": True},
        {**good, "attempts": "0"},
        {**good, "items": []},
        {**good, "items": [{**good["items"][0], "update_mode": "upsert"}]},
        {**good, "items": [{"content": "c", "context": "c"}]},
    ]
    for bad in bads:
        assert not is_valid_job(bad), bad


def test_lines_round_trip_and_never_contain_newlines() -> None:
    job = new_job("b", "auto", [item("line1\nline2 — ünïcode")], True)
    line = dumps_line(job)
    assert b"\n" not in line
    assert loads_line(line) == job
    assert loads_line(b"{not json") is None
    assert loads_line(orjson.dumps({"id": "x"})) is None


def test_unserialisable_content_is_a_clear_error() -> None:
    job = new_job("b", "auto", [item()], True)
    job["items"][0]["content"] = "\ud800"  # a lone surrogate cannot be UTF-8
    with pytest.raises(InvalidJobError, match="not serialisable"):
        dumps_line(job)


def test_iso_round_trip_and_tolerant_parse() -> None:
    assert parse_iso(iso_ms(T0 + 0.5)) == pytest.approx(T0 + 0.5)
    assert iso_ms(T0 + 0.9996).endswith(".000Z")  # rounding carries into the seconds
    assert parse_iso("2024-01-01T00:00:00+02:00") == pytest.approx(1704060000.0)
    for bad in (None, "", "yesterday", 12, "2024-13-01T00:00:00Z"):
        assert parse_iso(bad) is None
