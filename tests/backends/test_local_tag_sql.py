"""The SQL form of tag groups (used inside ranked queries) agrees with the pure evaluator and a reference."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hindsight_hooks.backends.base import RecallRequest
from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.backends.tag_groups import match_tag_groups
from tests.backends.test_local_support import item
from tests.backends.test_tag_groups import ALPHABET, groups_strategy, reference

SUBSETS = [frozenset(c) for n in range(len(ALPHABET) + 1) for c in itertools.combinations(ALPHABET, n)]


@pytest.fixture(scope="module")
def every_tag_set(tmp_path_factory: pytest.TempPathFactory) -> tuple[LocalBackend, dict[str, frozenset[str]]]:
    """One unit per subset of the alphabet (the empty set included), all sharing a search word."""
    backend = LocalBackend(Path(tmp_path_factory.mktemp("tagsql")) / "memory.db")
    items = [item(f"shared word unit {i}", f"d{i}", tags=sorted(tags)) for i, tags in enumerate(SUBSETS)]
    out = backend.retain_batch("b", items, operation_id="op")
    return backend, dict(zip(out.unit_ids, SUBSETS, strict=True))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(groups=st.lists(groups_strategy, max_size=3))
def test_sql_filter_agrees_with_reference(
    every_tag_set: tuple[LocalBackend, dict[str, frozenset[str]]], groups: list[dict[str, Any]]
) -> None:
    backend, tags_by_id = every_tag_set
    expected = {uid for uid, tags in tags_by_id.items() if reference(tags, groups)}
    listed = {h.id for h in backend.list_units("b", 100, 0, groups)}
    assert listed == expected
    assert {uid for uid, tags in tags_by_id.items() if match_tag_groups(tags, groups)} == expected


@pytest.mark.parametrize(
    ("groups", "count"),
    [
        ([{"tags": [], "match": "any"}], 16),
        ([{"tags": [], "match": "all"}], 16),
        ([{"tags": [], "match": "any_strict"}], 0),
        ([{"tags": [], "match": "all_strict"}], 15),
        ([{"tags": [], "match": "exact"}], 1),
        ([{"tags": ["a"], "match": "any"}], 9),
        ([{"tags": ["a", "b"], "match": "all"}], 5),
        ([{"tags": ["a", "b"], "match": "exact"}], 1),
        ([{"not": {"tags": ["a"], "match": "any_strict"}}], 8),
    ],
)
def test_recall_applies_the_filter_before_the_limit(
    every_tag_set: tuple[LocalBackend, dict[str, frozenset[str]]], groups: list[dict[str, Any]], count: int
) -> None:
    backend, tags_by_id = every_tag_set
    hits = backend.recall("b", RecallRequest(query="shared word", tag_groups=groups, limit=50, max_tokens=10_000)).hits
    assert len(hits) == count
    assert all(match_tag_groups(tags_by_id[h.id or ""], groups) for h in hits)
