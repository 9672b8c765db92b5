"""Host-supplied data nothing can encode as it is (issue 9, items 6 and 7), through ``Host`` only.

A lone surrogate (``"\\ud800"``) is a valid Python string that UTF-8, orjson and SQLite all
refuse; a message nested thousands of levels deep overflows every recursive walker. Neither may
cost more than its own oddity: every turn is still retained and recalled, nothing escapes into
the host, and the odd part is stored as U+FFFD or as a clear "omitted" marker.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hindsight_hooks.hooks import Message, RecordingUI
from hindsight_hooks.sanitize import TOO_DEEP

from .hostkit import (
    Project,
    StubHindsight,
    assistant,
    exchange,
    injected_block,
    isolated,
    local_project,
    markers,
    stub_hindsight,
    user,
)

__all__ = ["isolated", "local_project", "stub_hindsight"]  # fixtures, re-exported for pytest


def _nested(depth: int, leaf: Any = "leaf") -> Any:
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


def test_a_lone_surrogate_costs_neither_that_turn_nor_the_later_ones(local_project: Project) -> None:
    ui = RecordingUI()
    bad = user("parser question q1x with a broken \ud800 character", 1)
    t: list[Message] = [bad]
    with local_project.host(ui=ui) as host:
        host.context(t)
        t.append(assistant("answer r1x about the parser", 1))
        host.agent_end(t)
        for n in (2, 3, 4):
            t.append(user(f"parser question q{n}x", n))
            for_model = host.context(t)
            t.append(assistant(f"answer r{n}x", n))
            host.agent_end(t)
        # recall on a broken prompt works, and finds what was stored (as a compacted session would:
        # the turns still in view are not shown again, ADR 183)
        for_model = host.context([user("the broken \ud800 parser question q1x again", 5)])
        block = injected_block(for_model)
    assert block is not None and "q1x" in str(block["content"])
    for n in (1, 2, 3, 4):
        for marker in markers(n):
            assert local_project.unit_count(marker) == 1, marker
    assert any("broken \ufffd character" in text for _, text in local_project.units())
    assert ui.texts("warning") == [] and ui.texts("error") == [], ui.notices


def test_lone_surrogates_in_tool_arguments_are_stored_as_replacement_characters(local_project: Project) -> None:
    with local_project.host() as host:
        stored = host.call_tool("hindsight_retain", {"items": [{"content": "fact z9z with \udc80 inside"}]})
        found = host.call_tool("hindsight_recall", {"query": "fact z9z \ud800"})
    assert not stored.is_error and "stored" in stored.text, stored.text
    assert not found.is_error and "fact z9z with \ufffd inside" in found.text, found.text


def test_a_transcript_nested_5000_deep_is_retained_with_the_depth_cut(local_project: Project) -> None:
    ui = RecordingUI()
    deep_user = user("deep question q1x", 1, details=_nested(5000))
    deep_reply = assistant("deep answer r1x", 1)
    deep_reply["content"] = [{"type": "text", "text": "deep answer r1x"}, {"type": "text", "text": _nested(5000)}]
    tool_result: Message = {
        "role": "toolResult",
        "toolName": "probe",
        "isError": True,
        "content": [{"type": "text", "text": "probe failed t1x"}],
        "details": _nested(5000),
        "timestamp": 1_700_000_001_700,
        "id": "t1",
    }
    odd_part: Message = {"role": "custom", "content": _nested(5000, "c1x"), "timestamp": 1_700_000_001_800, "id": "c1"}
    t = [deep_user, deep_reply, tool_result, odd_part]
    with local_project.host(ui=ui) as host:
        host.context(t[:1])
        host.agent_end(t)
        t += exchange(2)
        host.context(t[:-1])
        host.agent_end(t)
        found = host.call_tool("hindsight_recall", {"query": "deep question"})
    for marker in ("q1x", "r1x", "t1x", *markers(2)):
        assert local_project.unit_count(marker) == 1, marker
    assert any(TOO_DEEP in text for _, _, text in local_project.documents())
    assert ui.texts("warning") == [] and ui.texts("error") == [], ui.notices
    assert "q1x" in found.text


def test_deep_tool_arguments_are_refused_not_raised(local_project: Project) -> None:
    group: dict[str, Any] = {"tags": ["x"], "match": "any"}
    for _ in range(5000):
        group = {"not": group}
    with local_project.host() as host:
        result = host.call_tool("hindsight_recall", {"query": "anything", "tag_groups": [group]})
        nested_meta = host.call_tool(
            "hindsight_retain", {"items": [{"content": "x"}], "metadata": {"a": _nested(5000)}}
        )
    assert result.is_error and "invalid arguments" in result.text
    assert nested_meta.is_error and "invalid arguments" in nested_meta.text


def test_recalled_text_with_lone_surrogates_reaches_the_host_encodable(
    tmp_path: Path, isolated: Path, stub_hindsight: StubHindsight
) -> None:
    """A server's JSON may decode to lone surrogates: the block, the tool text and the snapshot
    carry U+FFFD instead, so the host can send them to its model and the snapshot is written."""
    stub_hindsight.memories = [{"text": "server memory \ud800 about the parser"}]
    config: dict[str, Any] = {
        "backend": "hindsight",
        "hindsight": {"base_url": stub_hindsight.url, "timeout_ms": 10000},
        "banks": {"project": {"bank_id": "hh-stub-bank"}},
        "recall": {"store_last_recall": True},
        "retain": {"enabled": False},
        "mental_models": {"enabled": False},
        "notifications": {"startup": False},
    }
    project = Project(tmp_path / "repo", config)
    ui = RecordingUI()
    with project.host(ui=ui) as host:
        block = injected_block(host.context([user("what about the parser", 1)]))
        found = host.call_tool("hindsight_recall", {"query": "parser"})
    assert block is not None
    for text in (str(block["content"]), found.text, (project.state / "last-recall.json").read_text(encoding="utf-8")):
        assert "server memory \ufffd about the parser" in text
        text.encode("utf-8")
    assert ui.notices == []
