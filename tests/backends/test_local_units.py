"""Unit derivation without a model (docs/backends.md#embedded-store steps 2-3), pure and through the store."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from hindsight_hooks.backends.local_units import (
    MESSAGE_UNIT_CHARS,
    PLAIN_UNIT_CHARS,
    TOOL_VALUE_CHARS,
    derive_units,
    origin_of,
    shortened_arguments,
    split_text,
)
from hindsight_hooks.timefmt import normalize_timestamp
from tests.backends.test_local_support import item, make, raw


def test_transcript_array_gives_one_unit_per_message_with_text() -> None:
    messages = [
        {"role": "user", "content": "Fix the flaky login test", "timestamp": "2024-05-01T10:00:00.000Z"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "private reasoning"},
                {"type": "text", "text": "Looking at it."},
                {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"cmd": "pytest -k login"}},
                {"type": "toolCall", "id": "c2", "name": "noop", "arguments": {}},
            ],
        },
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "bash",
            "content": [{"type": "text", "text": "1 passed"}],
        },
        {"role": "user", "content": [{"type": "image", "mimeType": "image/png", "omitted": True}]},
        {"role": "branchSummary", "summary": "Tried retries first."},
        {"role": "bashExecution", "command": "git status", "output": "clean"},
    ]
    units, shape = derive_units(json.dumps(messages, indent=2))
    assert shape == "transcript"
    assert [u.content for u in units] == [
        "user: Fix the flaky login test",
        'assistant: Looking at it.\n[toolCall bash] {"cmd":"pytest -k login"}\n[toolCall noop]',
        "toolResult: 1 passed",
        "branchSummary: Tried retries first.",
        "bashExecution: $ git status\nclean",
    ]
    assert units[0].occurred_at == "2024-05-01T10:00:00.000Z"
    assert all("private reasoning" not in u.content for u in units)


def test_import_object_uses_its_messages() -> None:
    doc = {"source": "session-import", "session_file": "/x.jsonl", "messages": [{"role": "user", "content": "hi"}]}
    units, shape = derive_units(json.dumps(doc))
    assert shape == "import"
    assert [u.content for u in units] == ["user: hi"]


def test_long_message_is_split_at_paragraphs_and_each_piece_keeps_its_role() -> None:
    paragraphs = [f"paragraph {i} " + "word " * 150 for i in range(8)]
    units, _ = derive_units(json.dumps([{"role": "assistant", "content": "\n\n".join(paragraphs)}]))
    assert len(units) > 1
    assert all(len(u.content) <= MESSAGE_UNIT_CHARS for u in units)
    assert all(u.content.startswith("assistant: paragraph ") for u in units)
    rebuilt = "\n\n".join(u.content.removeprefix("assistant: ") for u in units)
    assert rebuilt == "\n\n".join(p.strip() for p in paragraphs)


def test_plain_content_is_one_unit_until_4000_chars() -> None:
    short = "A durable fact.\n\nWith two paragraphs."
    assert [u.content for u in derive_units(short)[0]] == [short]
    sections = [f"section {i}: " + "text " * 300 for i in range(5)]
    units, shape = derive_units("\n\n".join(sections))
    assert shape is None
    assert len(units) == 3 and all(len(u.content) <= PLAIN_UNIT_CHARS for u in units)
    assert "\n\n".join(u.content for u in units) == "\n\n".join(s.strip() for s in sections)


def test_json_that_is_not_messages_is_plain_content() -> None:
    for content in ("[1, 2, 3]", "[]", '{"messages": "nope"}', '[{"no_role": 1}]', "[not json"):
        units, shape = derive_units(content)
        assert shape is None
        assert [u.content for u in units] == [content]


def test_split_text_cuts_a_single_huge_paragraph_at_lines_then_spaces() -> None:
    text = "\n".join("line " + "z" * 30 for _ in range(10))
    pieces = split_text(text, 100)
    assert all(len(p) <= 100 for p in pieces)
    assert "\n".join(pieces) == text
    unbroken = "q" * 250
    assert split_text(unbroken, 100) == ["q" * 100, "q" * 100, "q" * 50]
    assert split_text("   ", 100) == []


def test_timestamps_normalise_or_fall_back() -> None:
    assert normalize_timestamp("2024-05-01T10:00:00Z") == "2024-05-01T10:00:00.000Z"
    assert normalize_timestamp("2024-05-01T12:00:00.25+02:00") == "2024-05-01T10:00:00.250Z"
    assert normalize_timestamp(1714557600000) == "2024-05-01T10:00:00.000Z"
    assert normalize_timestamp("unset") is None
    assert normalize_timestamp("yesterday") is None
    assert normalize_timestamp(True) is None


def test_origin_prefers_retain_source_then_shape() -> None:
    assert origin_of({"retain_source": "tool"}, "transcript") == "explicit"
    assert origin_of({"retain_source": "command"}, None) == "explicit"
    assert origin_of({"retain_source": "auto"}, None) == "transcript"
    assert origin_of({"retain_source": "import"}, None) == "import"
    assert origin_of({}, "import") == "import"
    assert origin_of(None, None) == "explicit"


def test_store_uses_message_units_dated_by_their_own_message(tmp_path: Path) -> None:
    """A unit is dated when its message was said, not when the item was delivered (ADR 174)."""
    backend = make(tmp_path)
    content = json.dumps([{"role": "user", "content": "ship the release notes", "timestamp": 1714557600000}])
    backend.retain_batch(
        "b", [item(content, "s", source="auto", timestamp="2024-06-01T00:00:00Z", context="ctx")], operation_id="1"
    )
    (unit,) = backend.list_units("b", 10, 0)
    assert unit.text == "user: ship the release notes"
    assert unit.created_at == "2024-05-01T10:00:00.000Z"
    from tests.backends.test_local_support import raw

    occurred, context = raw(backend.path).execute("SELECT occurred_at, context FROM units").fetchone()
    assert occurred == "2024-05-01T10:00:00.000Z" and context == "ctx"


# -- a tool call's long arguments (ADR 184) ----------------------------------------------------------


def _write_call(path: str, body: str) -> dict[str, object]:
    return {"type": "toolCall", "id": "w1", "name": "Write", "arguments": {"file_path": path, "content": body}}


FILE_BODY = "\n".join(f"def handler_{n}(request):\n    return cache.get(request.key)" for n in range(200))


def test_a_tool_calls_long_values_are_cut_and_its_short_ones_kept_whole() -> None:
    edits = [{"old_string": "a" * 500, "new_string": "b" * 500}, {"old_string": "x", "new_string": "y"}]
    calls = [
        _write_call("src/cache/store.py", FILE_BODY),
        {"type": "toolCall", "id": "e1", "name": "MultiEdit", "arguments": {"file_path": "a.py", "edits": edits}},
    ]
    units, _ = derive_units(json.dumps([{"role": "assistant", "content": calls}]))
    assert len(units) == 1  # a 10 kB file written is one unit, not five pieces of its code
    write_line, edit_line = units[0].content.removeprefix("assistant: ").split("\n")
    write = json.loads(write_line.removeprefix("[toolCall Write] "))
    assert write["file_path"] == "src/cache/store.py"
    assert write["content"] == FILE_BODY[:TOOL_VALUE_CHARS].rstrip() + "…"
    edit = json.loads(edit_line.removeprefix("[toolCall MultiEdit] "))
    assert edit["edits"] == [
        {"old_string": "a" * TOOL_VALUE_CHARS + "…", "new_string": "b" * TOOL_VALUE_CHARS + "…"},
        {"old_string": "x", "new_string": "y"},
    ]


def test_the_document_keeps_the_whole_call_and_recall_shows_the_short_one(tmp_path: Path) -> None:
    backend = make(tmp_path)
    try:
        said = [
            {"role": "user", "content": "Write the cache store module"},
            {"role": "assistant", "content": [_write_call("src/cache/store.py", FILE_BODY)]},
        ]
        backend.retain_batch("b", [item(json.dumps(said), "d1", source="auto")], operation_id="w")
        with raw(tmp_path / "memory.db") as conn:
            (text,) = conn.execute("SELECT text FROM document_parts WHERE document_id = 'd1'").fetchone()
            units = [row[0] for row in conn.execute("SELECT content FROM units ORDER BY rowid")]
        assert json.loads(text)[1]["content"][0]["arguments"]["content"] == FILE_BODY  # the document keeps it all
        assert len(units) == 2 and all(len(u) < 400 for u in units)
        from hindsight_hooks.backends.base import RecallRequest

        hits = backend.recall("b", RecallRequest(query="cache store handler", limit=8)).hits
        assert any("[toolCall Write]" in h.text and "…" in h.text for h in hits)
    finally:
        backend.close()


@settings(max_examples=60, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=400),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
        max_leaves=12,
    )
)
def test_shortened_arguments_keep_each_strings_start_and_are_stable(value: object) -> None:
    short = shortened_arguments(value)

    def strings(v: object) -> list[str]:
        if isinstance(v, str):
            return [v]
        if isinstance(v, list):
            return [s for x in v for s in strings(x)]
        if isinstance(v, dict):
            return [s for x in v.values() for s in strings(x)]
        return []

    for before, after in zip(strings(value), strings(short), strict=True):
        assert len(after) <= TOOL_VALUE_CHARS + 1
        assert after == before or (after.endswith("…") and before.startswith(after[:-1]))
    assert shortened_arguments(short) == short or any(len(s) > TOOL_VALUE_CHARS for s in strings(short))
