"""``hindsight_hooks.sanitize``: what it changes, and that it changes nothing else."""

from __future__ import annotations

import json
from typing import Any

import orjson
from hypothesis import given
from hypothesis import strategies as st

from hindsight_hooks.sanitize import MAX_DEPTH, TOO_DEEP, sanitize, sanitize_if_needed, scrub_text

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=30,
)


def test_lone_surrogates_become_replacement_characters_and_pairs_are_joined() -> None:
    assert scrub_text("a\ud800b") == "a\ufffdb"
    assert scrub_text("\udc00") == "\ufffd"
    assert scrub_text("\ud83d\ude00") == "\U0001f600"  # a split pair is one character again
    clean = "plain é text"
    assert scrub_text(clean) is clean


def test_keys_values_and_tuples_are_scrubbed_and_the_result_encodes() -> None:
    value = {"k\ud800": ["x\udfff", ("t\ud801", 1)], "ok": {"deep": "fine"}}
    out = sanitize(value)
    assert out == {"k\ufffd": ["x\ufffd", ("t\ufffd", 1)], "ok": {"deep": "fine"}}
    assert out["ok"] is value["ok"], "unchanged parts are shared, not copied"
    orjson.dumps(out)


def test_nesting_beyond_the_limit_is_cut_with_a_marker_without_recursion() -> None:
    value: Any = "leaf"
    for _ in range(50_000):
        value = {"x": [value]}
    out = sanitize(value)
    depth, node = 0, out
    while isinstance(node, dict | list):
        node = node["x"] if isinstance(node, dict) else node[0]
        depth += 1
    assert depth == MAX_DEPTH and node == TOO_DEEP
    json.dumps(out)  # the recursive encoder copes now


def test_scrub_false_only_cuts_the_nesting() -> None:
    assert sanitize(["a\ud800", [[["b"]]]], 2, scrub=False) == ["a\ud800", [TOO_DEEP]]


@given(json_values)
def test_clean_json_is_returned_as_the_same_object(value: Any) -> None:
    assert sanitize(value) is value
    assert sanitize_if_needed(value) is value
