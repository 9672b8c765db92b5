"""The Codex rollout reader on real files written in Codex 0.169's shape (``codex_lines.py``)."""

from __future__ import annotations

import json
from pathlib import Path

from hindsight_hooks.hooks import message_text
from hindsight_hooks.importer.codex_session import read_transcript

from .codex_lines import CodexRollout

BLOCK = "<hindsight-memory>\nRelevant prior memory.\n1. user: We use Postgres 16 for the cache\n</hindsight-memory>"


def _rollout(tmp_path: Path) -> CodexRollout:
    return CodexRollout(tmp_path / "sessions" / "2026" / "11" / "24" / "rollout-x.jsonl", tmp_path)


def test_only_what_the_person_typed_and_the_replies_are_messages(tmp_path: Path) -> None:
    r = _rollout(tmp_path)
    r.harness("<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>")
    r.exchange("Which cache do we use?", "Postgres 16, as decided.", block=BLOCK)
    messages = read_transcript(r.path)
    assert [(m["role"], message_text(m)) for m in messages] == [
        ("user", "Which cache do we use?"),
        ("assistant", "Postgres 16, as decided."),
    ]
    assert "hindsight-memory" not in json.dumps(messages)  # the hook context is never read back


def test_tool_calls_join_the_reply_and_results_carry_the_tool_name(tmp_path: Path) -> None:
    r = _rollout(tmp_path)
    r.user("What do we remember about the cache?")
    r.reasoning("Look it up in memory first.")
    call = r.call("hindsight_recall", {"query": "cache"}, namespace="mcp__hindsight")
    r.output(call, "1. We use Postgres 16 for the cache")
    r.assistant("We use Postgres 16.")
    user, asked, result, answer = read_transcript(r.path)
    assert user["role"] == "user"
    assert asked["content"] == [
        {"type": "thinking", "thinking": "Look it up in memory first."},
        {"type": "toolCall", "id": call, "name": "mcp__hindsight__hindsight_recall", "arguments": {"query": "cache"}},
    ]
    assert result["role"] == "toolResult"
    assert result["toolCallId"] == call and result["toolName"] == "mcp__hindsight__hindsight_recall"
    assert message_text(result) == "1. We use Postgres 16 for the cache"
    assert message_text(answer) == "We use Postgres 16."


def test_ids_and_timestamps_are_stable_across_reads(tmp_path: Path) -> None:
    r = _rollout(tmp_path)
    r.exchange("first", "one")
    before = read_transcript(r.path)
    r.exchange("second", "two")
    after = read_transcript(r.path)
    assert after[:2] == before
    assert all(isinstance(m["id"], str) and isinstance(m["timestamp"], int) for m in after)


def test_a_compaction_summary_is_not_a_message_and_the_rollout_goes_on(tmp_path: Path) -> None:
    r = _rollout(tmp_path)
    r.exchange("alpha: use tabs", "ok alpha")
    r.compacted("Summary: the user chose tabs")
    r.exchange("beta: use spaces", "ok beta")
    texts = [message_text(m) for m in read_transcript(r.path)]
    assert texts == ["alpha: use tabs", "ok alpha", "beta: use spaces", "ok beta"]


def test_what_the_model_reads_now_starts_after_the_newest_compaction(tmp_path: Path) -> None:
    """Recall reads the rollout since its newest ``compacted`` line: what came before was replaced
    by the compaction, so the block must not leave it out (ADR 183)."""
    r = _rollout(tmp_path)
    r.exchange("alpha: use tabs", "ok alpha")
    r.compacted("Summary: the user chose tabs")
    r.exchange("beta: use spaces", "ok beta")
    r.compacted("Summary: tabs, then spaces")
    r.exchange("gamma: use both", "ok gamma")
    in_view = [message_text(m) for m in read_transcript(r.path, since_compaction=True)]
    assert in_view == ["gamma: use both", "ok gamma"]
    assert len(read_transcript(r.path)) == 6  # retain still reads the whole rollout


def test_a_rollback_takes_the_last_turns_back(tmp_path: Path) -> None:
    r = _rollout(tmp_path)
    r.exchange("keep this", "kept")
    r.exchange("drop this", "dropped")
    r.rollback(1)
    r.exchange("after the undo", "fine")
    texts = [message_text(m) for m in read_transcript(r.path)]
    assert texts == ["keep this", "kept", "after the undo", "fine"]


def test_the_tail_and_a_half_written_line(tmp_path: Path) -> None:
    r = _rollout(tmp_path)
    for n in range(200):
        r.exchange(f"question {n} " + "x" * 200, f"answer {n}")
    r.write_raw('{"timestamp": "2026-11-24T11:00:00.000Z", "type": "response_item", "payload": {"type": "mess')
    whole = read_transcript(r.path)
    assert len(whole) == 400
    tail = read_transcript(r.path, tail_bytes=8_000)
    assert 0 < len(tail) < 40
    assert tail == whole[-len(tail) :]


def test_user_items_without_provenance_fall_back_on_the_harness_openings(tmp_path: Path) -> None:
    r = _rollout(tmp_path)
    for text in (
        "<environment_context>\n<cwd>/x</cwd>\n</environment_context>",
        "# AGENTS.md instructions for /x",
        "hi",
    ):
        r.line("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
    assert [message_text(m) for m in read_transcript(r.path)] == ["hi"]
