"""docs/identity-and-scope.md#scope-filters: (incl. exact folding) and
docs/identity-and-scope.md#observation-scopes observation scopes."""

from __future__ import annotations

from typing import Any

import pytest

from hindsight_hooks.config_model import Config
from hindsight_hooks.governance import identity as ident

PROJECT = [{"tags": ["repo:k-1"], "match": "any_strict"}]


def test_project_scope() -> None:
    assert ident.project_scope_groups("k-1") == PROJECT


def test_user_scope_default_substitutes_host() -> None:
    cfg = Config()
    assert ident.user_scope_groups(cfg, "Claude Code") == [
        {"tags": ["source:claude-code", "harness:claude-code"], "match": "any_strict"}
    ]


def test_user_scope_empty_list_means_no_filter() -> None:
    cfg = Config()
    cfg.scope.user_scope_tags = []
    assert ident.user_scope_groups(cfg, "pi") == []
    cfg.scope.include_shared_observations = True
    assert ident.user_scope_groups(cfg, "pi") == []


def test_include_shared_observations_wraps_in_or() -> None:
    cfg = Config()
    cfg.scope.user_scope_tags = ["source:<host>", "team:x", "team:x"]
    cfg.scope.include_shared_observations = True
    assert ident.user_scope_groups(cfg, "pi") == [
        {"or": [{"tags": ["source:pi", "team:x"], "match": "any_strict"}, {"tags": [], "match": "exact"}]}
    ]


def test_tools_without_tags_send_scope_then_caller_groups() -> None:
    caller = [{"tags": ["a"], "match": "all"}]
    assert ident.compose_tool_groups(PROJECT, None, None, caller) == [*PROJECT, *caller]
    assert ident.compose_tool_groups(PROJECT, [], "exact", None) == PROJECT


@pytest.mark.parametrize("match", [None, "any", "all", "any_strict", "all_strict"])
def test_tools_with_tags_add_a_leaf(match: str | None) -> None:
    caller = [{"not": {"tags": ["z"], "match": "any"}}]
    out = ident.compose_tool_groups(PROJECT, ["a", "b", "a"], match, caller)
    assert out == [*PROJECT, {"tags": ["a", "b"], "match": match or "any_strict"}, *caller]


def test_exact_folds_scope_and_caller_leaf() -> None:
    caller = [{"tags": ["q"], "match": "any"}]
    out = ident.compose_tool_groups(PROJECT, ["x", "repo:k-1", "y"], "exact", caller)
    assert out == [{"tags": ["repo:k-1", "x", "y"], "match": "exact"}, *caller]


def test_exact_folds_into_the_shared_observations_or() -> None:
    cfg = Config()
    cfg.scope.include_shared_observations = True
    scope = ident.user_scope_groups(cfg, "pi")
    out = ident.compose_tool_groups(scope, ["pref"], "exact", None)
    assert out == [{"tags": ["source:pi", "harness:pi", "pref"], "match": "exact"}]


def test_exact_without_scope_is_one_exact_leaf() -> None:
    assert ident.compose_tool_groups([], ["a"], "exact", None) == [{"tags": ["a"], "match": "exact"}]
    assert ident.compose_tool_groups(None, ["a"], "exact", [{"tags": ["b"], "match": "any"}]) == [
        {"tags": ["a"], "match": "exact"},
        {"tags": ["b"], "match": "any"},
    ]


def test_compose_never_mutates_its_inputs() -> None:
    scope: list[dict[str, Any]] = [{"tags": ["repo:k"], "match": "any_strict"}]
    caller: list[dict[str, Any]] = [{"tags": ["c"], "match": "any"}]
    ident.compose_tool_groups(scope, ["t"], "exact", caller)
    assert scope == [{"tags": ["repo:k"], "match": "any_strict"}]
    assert caller == [{"tags": ["c"], "match": "any"}]


VALUES = {
    "repoKey": "r-1",
    "sessionId": "s1",
    "cwdHash": "c1",
    "projectBankId": "pb",
    "bankId": "ub",
    "hostName": "pi",
}


def test_default_observation_scopes_expand() -> None:
    assert ident.expand_observation_scopes(Config().observations.scopes, VALUES) == [["harness:pi"], ["repo:r-1"]]


def test_every_placeholder_expands_and_groups_dedupe_first_kept() -> None:
    scopes = [
        ["repo:{repoKey}", "s:{sessionId}"],
        ["c:{cwdHash}", "p:{projectBankId}", "b:{bankId}", "h:{hostName}"],
        ["repo:{repoKey}", "s:{sessionId}"],
        ["literal"],
        ["literal"],
    ]
    assert ident.expand_observation_scopes(scopes, VALUES) == [
        ["repo:r-1", "s:s1"],
        ["c:c1", "p:pb", "b:ub", "h:pi"],
        ["literal"],
    ]


def test_bank_id_follows_the_target() -> None:
    scopes = [["bank:{bankId}"]]
    assert ident.expand_observation_scopes(scopes, {**VALUES, "bankId": "project-x"}) == [["bank:project-x"]]
    assert ident.expand_observation_scopes(scopes, {**VALUES, "bankId": "user-y"}) == [["bank:user-y"]]


@pytest.mark.parametrize(
    ("scopes", "fragment"),
    [
        ([], "non-empty"),
        ([[]], "scopes[0]"),
        ([["ok"], ["x:{nope}"]], "{nope}"),
        ([["  "]], "non-empty string"),
        ([["a", 3]], "scopes[0][1]"),
        ("not a list", "non-empty"),
    ],
)
def test_invalid_observation_scopes(scopes: Any, fragment: str) -> None:
    with pytest.raises(ValueError, match=None) as info:
        ident.validate_observation_scopes(scopes)
    assert fragment in str(info.value)
    with pytest.raises(ValueError):
        ident.expand_observation_scopes(scopes, VALUES)


def test_empty_placeholder_value_is_invalid() -> None:
    with pytest.raises(ValueError, match="projectBankId"):
        ident.expand_observation_scopes([["p:{projectBankId}"]], {**VALUES, "projectBankId": ""})
