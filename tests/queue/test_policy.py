"""Failure classes and backoff (docs/queue.md#retries), and outcome parsing (docs/queue.md#outcomes)."""

from __future__ import annotations

import random

import pytest

from hindsight_hooks.backends.base import BackendError, RetainOutcome
from hindsight_hooks.queue.outcome import as_retain_outcome, parse_outcome, sum_outcomes
from hindsight_hooks.queue.policy import (
    APPEND_UNSUPPORTED,
    DEAD_LETTER_SUFFIX,
    Failure,
    apply_failure,
    backoff_ms,
    classify,
    is_due,
)
from hindsight_hooks.timefmt import iso_ms

from .conftest import T0, job, make_cfg


@pytest.mark.parametrize(
    ("kind", "status", "expected", "reensure"),
    [
        ("transient", None, "transient", False),
        ("timeout", None, "transient", False),
        ("aborted", None, "transient", False),
        ("not_found", 404, "transient", True),
        ("permanent", 404, "transient", True),
        ("permanent", 408, "transient", False),
        ("permanent", 425, "transient", False),
        ("permanent", 429, "transient", False),
        ("permanent", 500, "transient", False),
        ("permanent", 503, "transient", False),
        ("auth", 401, "auth", False),
        ("permanent", 403, "auth", False),
        ("auth", None, "auth", False),
        ("transient", 400, "permanent", False),
        ("permanent", 409, "permanent", False),
        ("permanent", 422, "permanent", False),
        ("permanent", None, "permanent", False),
    ],
)
def test_classification_table(kind: str, status: int | None, expected: str, reensure: bool) -> None:
    failure = classify(BackendError("retain", kind, "detail", status))  # type: ignore[arg-type]
    assert (failure.kind, failure.reensure) == (expected, reensure)


def test_other_exceptions_are_transient() -> None:
    assert classify(ConnectionResetError("peer reset")).kind == "transient"
    assert classify(ValueError("bug")).message == "ValueError: bug"


def test_422_naming_append_gets_the_upgrade_message() -> None:
    assert (
        classify(BackendError("retain", "permanent", "update_mode must be replace", 422)).message == APPEND_UNSUPPORTED
    )
    assert classify(BackendError("retain", "permanent", "tags invalid", 422)).message == "retain failed: tags invalid"


def test_backoff_formula() -> None:
    cfg = make_cfg(retry_base_ms=2000, retry_max_ms=600000)
    assert backoff_ms(1, cfg, 0.0) == 2000
    assert backoff_ms(3, cfg, 0.2) == pytest.approx(8000 * 1.2)
    assert backoff_ms(40, cfg, 0.0) == 600000
    assert backoff_ms(10**6, cfg, 0.0) == 600000  # no overflow for absurd attempt counts


def test_apply_failure_records_everything_and_clears_the_claim() -> None:
    cfg = make_cfg(max_attempts=5)
    j = {**job(), "claimed_at": iso_ms(T0), "claim_token": "tok"}
    dead = apply_failure(j, Failure("transient", "boom"), T0 + 10, cfg, random.Random(1))
    assert not dead
    assert j["attempts"] == 1 and j["last_error"] == "boom" and j["last_error_kind"] == "transient"
    assert j["first_failed_at"] == j["last_attempt_at"] == iso_ms(T0 + 10)
    assert "claim_token" not in j and "claimed_at" not in j
    assert not is_due(j, T0 + 10) and is_due(j, T0 + 10 + 2.5)
    apply_failure(j, Failure("transient", "again"), T0 + 20, cfg, random.Random(1))
    assert j["first_failed_at"] == iso_ms(T0 + 10)


def test_dead_letter_rule() -> None:
    cfg = make_cfg(max_attempts=2, dead_letter_after_ms=1000)
    j = job()
    assert not apply_failure(j, Failure("permanent", "no"), T0, cfg)  # attempts below the limit
    assert apply_failure(j, Failure("permanent", "no"), T0, cfg)
    assert j["last_error"] == "no" + DEAD_LETTER_SUFFIX and j["dead_lettered_at"] == iso_ms(T0)
    t = job()
    assert not apply_failure(t, Failure("transient", "x"), T0, cfg)
    assert not apply_failure(t, Failure("auth", "x"), T0 + 0.5, cfg)  # limit reached, but failing < 1 s
    assert apply_failure(t, Failure("auth", "x"), T0 + 1.0, cfg)


def test_parse_outcome_variants() -> None:
    body = {
        "items_count": 3,
        "operation_id": "a",
        "operationId": "b",
        "id": "a",
        "operations": ["c", {"id": "d"}, {"operation_id": "e"}, 5, {}],
        "operation_ids": ["b", "f"],
        "operationIds": ["g"],
        "usage": {"total_tokens": 11},
    }
    out = parse_outcome(body)
    assert out.items_count == 3 and out.tokens == 11
    assert out.operation_ids == ["a", "b", "c", "d", "e", "f", "g"]
    assert parse_outcome({"itemsCount": 2}).items_count == 2
    empties: list[object] = [None, "", [], {"items_count": "3", "usage": "x"}, {"items_count": True}]
    for empty in empties:
        assert parse_outcome(empty).as_outcome() == {}
    assert as_retain_outcome(RetainOutcome(items_count=1)).items_count == 1


def test_sum_outcomes() -> None:
    total = sum_outcomes(
        [
            RetainOutcome(items_count=1, operation_ids=["a"]),
            RetainOutcome(tokens=4, operation_ids=["a", "b"]),
            RetainOutcome(),
        ]
    )
    assert total == {"items_count": 1, "operations": ["a", "b"], "tokens": 4}
    assert sum_outcomes([]) == {}
