"""The injected-message predicate (docs/recall.md#injection) and the block stripper used by explicit retain."""

from __future__ import annotations

import copy
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from hindsight_hooks.retain.injected import (
    INJECTED_CUSTOM_TYPE,
    drop_injected,
    is_injected,
    strip_injected_blocks,
)

BLOCK = "<hindsight-memory>\nBank: p\n1. fact\n</hindsight-memory>"
OLD_BLOCK = "<hindsight_memories>fact</hindsight_memories>"


def test_custom_type_and_type_mark_a_message() -> None:
    assert INJECTED_CUSTOM_TYPE == "hindsight-recall"
    assert is_injected({"role": "user", "content": "anything", "customType": "hindsight-recall"})
    assert is_injected({"role": "custom", "content": "anything", "type": "hindsight-recall"})
    assert not is_injected({"role": "user", "content": "anything", "customType": "other"})


def test_string_content_starting_with_a_block_after_whitespace() -> None:
    assert is_injected({"role": "user", "content": BLOCK})
    assert is_injected({"role": "user", "content": " \n\t " + BLOCK})
    assert is_injected({"role": "user", "content": "\u00a0" + OLD_BLOCK})  # unicode whitespace
    assert is_injected({"role": "user", "content": "<hindsight-memory>unterminated"})


def test_first_text_part_decides_for_part_lists() -> None:
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    assert is_injected({"role": "user", "content": [image, {"type": "text", "text": "\n" + OLD_BLOCK}]})
    # Only the first text part counts: a block in a later part is ordinary content.
    second = {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": BLOCK}]}
    assert not is_injected(second)


def test_mentions_in_mid_text_are_ordinary_text() -> None:
    assert not is_injected({"role": "user", "content": f"what does {BLOCK} mean?"})
    assert not is_injected({"role": "user", "content": "<hindsight-memoryx>"})
    assert not is_injected({"role": "user", "content": "<HINDSIGHT-MEMORY>"})
    assert not is_injected({"role": "assistant", "content": [{"type": "toolCall", "name": "x", "arguments": {}}]})


def test_odd_shapes_are_not_injected() -> None:
    assert not is_injected({"role": "user"})
    assert not is_injected({"role": "user", "content": None})
    assert not is_injected({"role": "user", "content": ""})
    assert not is_injected({"role": "user", "content": [{"type": "text", "text": 5}]})
    assert not is_injected({"role": "user", "content": ["<hindsight-memory>"]})
    assert not is_injected("<hindsight-memory>")  # type: ignore[arg-type]


def test_drop_injected_keeps_order_and_does_not_touch_its_input() -> None:
    msgs = [
        {"role": "user", "content": "a"},
        {"role": "user", "content": BLOCK, "customType": "hindsight-recall"},
        {"role": "assistant", "content": [{"type": "text", "text": "b"}]},
        {"role": "user", "content": "  " + OLD_BLOCK},
        {"role": "user", "content": "c"},
    ]
    before = copy.deepcopy(msgs)
    out = drop_injected(msgs)
    assert out == [msgs[0], msgs[2], msgs[4]]
    assert out[0] is msgs[0]
    assert msgs == before
    assert drop_injected(iter(msgs)) == out


def test_strip_removes_complete_blocks_only() -> None:
    text = f"keep this\n{BLOCK}\nand this {OLD_BLOCK} end"
    assert strip_injected_blocks(text) == "keep this\n\nand this  end"
    # Unclosed or mismatched tags are not blocks we produced: untouched.
    assert strip_injected_blocks("a <hindsight-memory> b") == "a <hindsight-memory> b"
    assert (
        strip_injected_blocks("<hindsight-memory>x</hindsight_memories>") == "<hindsight-memory>x</hindsight_memories>"
    )
    assert strip_injected_blocks("no block at all") == "no block at all"
    assert strip_injected_blocks(BLOCK + BLOCK).strip() == ""


def test_strip_handles_nesting_and_reassembly() -> None:
    nested = "<hindsight-memory> outer <hindsight-memory> inner </hindsight-memory> tail </hindsight-memory>!"
    assert strip_injected_blocks(nested) == "!"
    # Removing the inner block must not leave a new complete block behind.
    split = "<hindsight-" + OLD_BLOCK + "memory>secret</hindsight-memory>ok"
    assert strip_injected_blocks(split) == "ok"
    # An unclosed tag of the other name inside a complete block goes with the block.
    assert strip_injected_blocks("<hindsight_memories><hindsight-memory></hindsight_memories>?") == "?"


_BLOCK_RE = re.compile(r"<(hindsight-memory|hindsight_memories)>.*?</\1>", re.DOTALL)
_pieces = st.sampled_from(
    ["<hindsight-memory>", "</hindsight-memory>", "<hindsight_memories>", "</hindsight_memories>", "x", "\n", " ", "é"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_pieces, max_size=14).map("".join))
def test_strip_leaves_no_complete_block(text: str) -> None:
    out = strip_injected_blocks(text)
    assert _BLOCK_RE.search(out) is None
    assert len(out) <= len(text)


@settings(max_examples=100, deadline=None)
@given(st.text())
def test_strip_is_identity_without_a_block(text: str) -> None:
    if _BLOCK_RE.search(text) is None:
        assert strip_injected_blocks(text) == text
