"""Parsing Pi session files into a tree: headers, leaves, branches, bad lines (docs/import.md "Parsing")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hindsight_hooks.importer.pi_session import (
    LINEAR_LEAF_ID,
    SessionFormatError,
    parse_session,
    read_header,
)

from .conftest import FIXTURES


def _texts(messages: list[dict]) -> str:
    return json.dumps(messages)


def test_v3_branch_crosses_non_message_entries() -> None:
    parsed = parse_session(FIXTURES / "decisions.jsonl")
    assert parsed.header.version == 3
    assert parsed.header.cwd == "/home/dev/projects/widget"
    assert parsed.leaves() == ["a0000005"]
    assert parsed.current_leaf() == "a0000005"
    branch = parsed.branch("a0000005")
    # 11 messages: the model change, thinking-level change and compaction in the parent
    # chain are crossed, and contribute nothing.
    assert [m["role"] for m in branch.messages] == [
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "toolResult",
        "assistant",
        "user",
        "assistant",
        "toolResult",
        "user",
        "assistant",
    ]
    assert "Sundays" in _texts(branch.messages[-2:])


def test_branched_session_has_two_leaves_and_separate_branches() -> None:
    parsed = parse_session(FIXTURES / "branched.jsonl")
    assert parsed.leaves() == ["b0000004", "b0000009"]
    assert parsed.current_leaf() == "b0000009"  # the last message in file order; the label after it is not one
    abandoned = _texts(parsed.branch("b0000004").messages)
    kept = _texts(parsed.branch("b0000009").messages)
    assert "BLUEHERON" in abandoned and "GREENFINCH" not in abandoned
    assert "GREENFINCH" in kept and "BLUEHERON" not in kept
    # the shared prefix is in both
    assert "Where should the login session cache live?" in abandoned
    assert "Where should the login session cache live?" in kept


def test_v1_file_is_one_linear_branch_and_bad_lines_are_counted() -> None:
    parsed = parse_session(FIXTURES / "v1_linear.jsonl")
    assert parsed.header.version == 1
    assert parsed.linear
    assert parsed.bad_lines == 1  # the torn line
    assert parsed.leaves() == [LINEAR_LEAF_ID]
    assert parsed.current_leaf() == LINEAR_LEAF_ID
    msgs = parsed.branch(LINEAR_LEAF_ID).messages
    assert [m["role"] for m in msgs] == ["user", "assistant", "user", "assistant"]
    with pytest.raises(KeyError):
        parsed.branch("a0000001")


def test_header_rules(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    with pytest.raises(SessionFormatError, match="empty"):
        parse_session(empty)
    not_session = tmp_path / "chat.jsonl"
    not_session.write_text('{"type":"user_message","text":"hi"}\n')
    with pytest.raises(SessionFormatError, match="not a Pi session"):
        parse_session(not_session)
    assert read_header(not_session) is None
    future = tmp_path / "v4.jsonl"
    future.write_text('{"type":"session","version":4,"id":"x","cwd":"/"}\n')
    with pytest.raises(SessionFormatError, match="unsupported session version 4"):
        parse_session(future)
    odd = tmp_path / "odd.jsonl"
    odd.write_text('{"type":"session","version":"secret-marker-x","id":"x","cwd":"/"}\n')
    with pytest.raises(SessionFormatError) as info:
        parse_session(odd)
    assert "secret-marker-x" not in str(info.value) and "not a number" in str(info.value)
    leading_blank = tmp_path / "blank-first.jsonl"
    leading_blank.write_text('\n\n{"type":"session","version":2,"id":"s","cwd":"/p","parentSession":"/x/p.jsonl"}\n')
    header = parse_session(leading_blank).header
    assert (header.version, header.id, header.cwd, header.parent_session) == (2, "s", "/p", "/x/p.jsonl")


def test_error_messages_never_quote_content(tmp_path: Path) -> None:
    secret_first_line = tmp_path / "s.jsonl"
    secret_first_line.write_text('{"type":"note","text":"password=hunter2-very-secret"}\n')
    with pytest.raises(SessionFormatError) as info:
        parse_session(secret_first_line)
    assert "hunter2" not in str(info.value)


def _write(tmp_path: Path, entries: list[dict]) -> Path:
    path = tmp_path / "s.jsonl"
    lines = [json.dumps({"type": "session", "version": 3, "id": "sid", "cwd": "/p"})]
    lines += [json.dumps(e) for e in entries]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_cycle_and_dangling_parent_do_not_hang(tmp_path: Path) -> None:
    entries = [
        {"type": "message", "id": "a", "parentId": "b", "message": {"role": "user", "content": "A"}},
        {"type": "message", "id": "b", "parentId": "a", "message": {"role": "assistant", "content": "B"}},
        {"type": "message", "id": "c", "parentId": "missing", "message": {"role": "user", "content": "C"}},
    ]
    parsed = parse_session(_write(tmp_path, entries))
    assert parsed.leaves() == ["c"]  # a and b are each other's message descendant
    assert [m["content"] for m in parsed.branch("c").messages] == ["C"]
    assert [m["content"] for m in parsed.branch("a").messages] == ["B", "A"]


def test_entries_without_ids_in_a_tree_file_are_unlinked(tmp_path: Path) -> None:
    entries = [
        {"type": "message", "id": "a", "parentId": None, "message": {"role": "user", "content": "A"}},
        {"type": "message", "message": {"role": "assistant", "content": "orphan"}},
        {"type": "message", "id": "b", "parentId": "a", "message": {"role": "assistant", "content": "B"}},
        {"type": "message", "id": "x", "parentId": "a", "message": "not an object"},
    ]
    parsed = parse_session(_write(tmp_path, entries))
    assert parsed.unlinked_entries == 1
    assert parsed.bad_lines == 1
    assert parsed.leaves() == ["b"]
    assert [m["content"] for m in parsed.branch("b").messages] == ["A", "B"]


# -- property: leaves and branches of arbitrary trees --------------------------------------------


@st.composite
def trees(draw: st.DrawFn) -> list[tuple[str, int | None, bool]]:
    """Entries ``(id, parent index or None, is_message)``; parents always come earlier."""
    n = draw(st.integers(min_value=1, max_value=25))
    out: list[tuple[str, int | None, bool]] = []
    for i in range(n):
        parent = None if i == 0 else draw(st.one_of(st.none(), st.integers(min_value=0, max_value=i - 1)))
        out.append((f"e{i}", parent, draw(st.booleans())))
    return out


@settings(max_examples=150, deadline=None)
@given(trees())
def test_property_leaves_and_branches_follow_the_tree(tmp_path_factory: pytest.TempPathFactory, tree: list) -> None:
    tmp = tmp_path_factory.mktemp("tree")
    entries = []
    for ident, parent, is_msg in tree:
        pid = tree[parent][0] if parent is not None else None
        if is_msg:
            entries.append(
                {"type": "message", "id": ident, "parentId": pid, "message": {"role": "user", "content": ident}}
            )
        else:
            entries.append({"type": "model_change", "id": ident, "parentId": pid, "provider": "p", "modelId": "m"})
    parsed = parse_session(_write(tmp, entries))

    def ancestors(i: int) -> list[int]:
        chain = []
        cur: int | None = i
        while cur is not None:
            chain.append(cur)
            cur = tree[cur][1]
        return chain[::-1]

    messages = [i for i, (_, _, m) in enumerate(tree) if m]
    expected_leaves = [tree[i][0] for i in messages if not any(i in ancestors(j)[:-1] for j in messages if j != i)]
    assert parsed.leaves() == expected_leaves
    if messages:
        assert parsed.current_leaf() == tree[messages[-1]][0]
    for leaf in expected_leaves:
        idx = next(i for i, t in enumerate(tree) if t[0] == leaf)
        path = [tree[i][0] for i in ancestors(idx) if tree[i][2]]
        assert [m["content"] for m in parsed.branch(leaf).messages] == path
