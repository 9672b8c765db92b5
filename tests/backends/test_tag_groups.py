"""Hindsight tag-group semantics (docs/identity-and-scope.md#scope-filters, docs/backends.md#embedded-store): the pure
evaluator.

Every row of the docs/backends.md#embedded-store table, the empty-list edge cases, composition, validation, and a
property test against a deliberately naive reference written here with set algebra.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hindsight_hooks.backends.tag_groups import (
    TagGroupError,
    match_leaf,
    match_tag_groups,
    validate_tag_groups,
)

UNTAGGED: list[str] = []
REPO = ["repo:x"]
BOTH = ["repo:x", "session:1"]
OTHER = ["repo:y"]


def leaf(tags: list[str], match: str) -> dict[str, Any]:
    return {"tags": tags, "match": match}


# (unit tags, leaf tags, match, expected)
TABLE = [
    # any: one of the tags, or untagged
    (REPO, ["repo:x", "repo:z"], "any", True),
    (OTHER, ["repo:x"], "any", False),
    (UNTAGGED, ["repo:x"], "any", True),
    # all: every tag, or untagged
    (BOTH, ["repo:x", "session:1"], "all", True),
    (REPO, ["repo:x", "session:1"], "all", False),
    (UNTAGGED, ["repo:x", "session:1"], "all", True),
    # any_strict: one of the tags; untagged never
    (REPO, ["repo:x", "repo:z"], "any_strict", True),
    (OTHER, ["repo:x"], "any_strict", False),
    (UNTAGGED, ["repo:x"], "any_strict", False),
    # all_strict: every tag; untagged never
    (BOTH, ["repo:x", "session:1"], "all_strict", True),
    (REPO, ["repo:x", "session:1"], "all_strict", False),
    (UNTAGGED, ["repo:x"], "all_strict", False),
    # exact: exactly the set
    (BOTH, ["session:1", "repo:x"], "exact", True),
    (BOTH, ["repo:x"], "exact", False),
    (REPO, ["repo:x", "session:1"], "exact", False),
    (UNTAGGED, ["repo:x"], "exact", False),
    # empty tag lists
    (REPO, [], "any", True),
    (UNTAGGED, [], "any", True),
    (REPO, [], "all", True),
    (UNTAGGED, [], "all", True),
    (REPO, [], "any_strict", False),
    (UNTAGGED, [], "any_strict", False),
    (REPO, [], "all_strict", True),
    (UNTAGGED, [], "all_strict", False),
    (UNTAGGED, [], "exact", True),
    (REPO, [], "exact", False),
]


@pytest.mark.parametrize(("unit", "tags", "match", "expected"), TABLE)
def test_every_rule_of_the_table(unit: list[str], tags: list[str], match: str, expected: bool) -> None:
    assert match_leaf(unit, tags, match) is expected
    assert match_tag_groups(unit, [leaf(tags, match)]) is expected


def test_groups_of_a_list_are_anded() -> None:
    groups = [leaf(["repo:x"], "any_strict"), leaf(["session:1"], "any_strict")]
    assert match_tag_groups(BOTH, groups)
    assert not match_tag_groups(REPO, groups)


def test_no_groups_match_everything() -> None:
    assert match_tag_groups(UNTAGGED, None)
    assert match_tag_groups(REPO, [])


def test_and_or_not_compose() -> None:
    shared = {"or": [leaf(["repo:x"], "any_strict"), leaf([], "exact")]}  # include_shared_observations
    assert match_tag_groups(REPO, [shared])
    assert match_tag_groups(UNTAGGED, [shared])
    assert not match_tag_groups(OTHER, [shared])
    not_session = {"not": leaf(["session:1"], "any_strict")}
    assert match_tag_groups(REPO, [not_session])
    assert not match_tag_groups(BOTH, [not_session])
    both = {"and": [leaf(["repo:x"], "any_strict"), not_session]}
    assert match_tag_groups(REPO, [both])
    assert not match_tag_groups(BOTH, [both])
    assert match_tag_groups(OTHER, [{"and": []}])
    assert not match_tag_groups(OTHER, [{"or": []}])
    assert match_tag_groups(OTHER, [{"not": {"or": []}}])


def test_match_defaults_to_any_strict_like_the_server() -> None:
    assert validate_tag_groups([{"tags": ["a", "a", "b"]}]) == [{"tags": ["a", "b"], "match": "any_strict"}]
    assert not match_tag_groups(UNTAGGED, [{"tags": ["a"]}])


@pytest.mark.parametrize(
    "bad",
    [
        "repo:x",
        [{"tags": "repo:x"}],
        [{"tags": [1]}],
        [{"tags": ["a"], "match": "some"}],
        [{"tags": ["a"], "and": []}],
        [{}],
        [{"and": {"tags": []}}],
        [{"not": [leaf(["a"], "any")]}],
        [{"tags": ["a"], "resolve": "loose"}],
        [42],
    ],
)
def test_malformed_filters_raise_instead_of_matching(bad: Any) -> None:
    with pytest.raises(TagGroupError):
        validate_tag_groups(bad)
    with pytest.raises(TagGroupError):
        match_tag_groups(REPO, bad)


def test_validation_error_names_the_path_not_the_tags() -> None:
    with pytest.raises(TagGroupError) as info:
        validate_tag_groups([leaf(["ok"], "any"), {"or": [{"tags": ["secret-tag"], "match": "nope"}]}])
    assert "tag_groups[1].or[0].match" in str(info.value)
    assert "secret-tag" not in str(info.value)


# -- property test against a reference ---------------------------------------------------------------

ALPHABET = ["a", "b", "c", "d"]


def reference_leaf(unit: frozenset[str], tags: frozenset[str], match: str) -> bool:
    if match == "any":
        return len(unit) == 0 or len(tags) == 0 or len(unit & tags) > 0
    if match == "all":
        return len(unit) == 0 or tags.issubset(unit)
    if match == "any_strict":
        return len(unit & tags) > 0
    if match == "all_strict":
        return len(unit) > 0 and tags.issubset(unit)
    assert match == "exact"
    return unit == tags


def reference_group(unit: frozenset[str], group: dict[str, Any]) -> bool:
    if "tags" in group:
        return reference_leaf(unit, frozenset(group["tags"]), group.get("match", "any_strict"))
    if "and" in group:
        results = [reference_group(unit, g) for g in group["and"]]
        return False not in results
    if "or" in group:
        results = [reference_group(unit, g) for g in group["or"]]
        return True in results
    return not reference_group(unit, group["not"])


def reference(unit: frozenset[str], groups: list[dict[str, Any]]) -> bool:
    return all(reference_group(unit, g) for g in groups)


leaves = st.builds(
    lambda tags, match: {"tags": tags, "match": match} if match else {"tags": tags},
    st.lists(st.sampled_from(ALPHABET), max_size=4),
    st.sampled_from(["any", "all", "any_strict", "all_strict", "exact", None]),
)
groups_strategy = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.builds(lambda xs: {"and": xs}, st.lists(inner, max_size=3)),
        st.builds(lambda xs: {"or": xs}, st.lists(inner, max_size=3)),
        st.builds(lambda x: {"not": x}, inner),
    ),
    max_leaves=6,
)
unit_tags = st.frozensets(st.sampled_from(ALPHABET))


@settings(max_examples=600, deadline=None)
@given(unit=unit_tags, groups=st.lists(groups_strategy, max_size=3))
def test_evaluator_agrees_with_reference(unit: frozenset[str], groups: list[dict[str, Any]]) -> None:
    assert match_tag_groups(sorted(unit), groups) is reference(unit, groups)
