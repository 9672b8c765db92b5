"""The Gemini CLI session reader on real files written in Gemini CLI 0.61's shape (``gemini_lines.py``)."""

from __future__ import annotations

import json
from pathlib import Path

from hindsight_hooks.hooks import message_text
from hindsight_hooks.hosts.gemini_transcript import COMMAND_MARKER, read_transcript

from .gemini_lines import GeminiSession

BLOCK = "<hindsight-memory>\nRelevant prior memory.\n1. user: We use Postgres 16 for the cache\n</hindsight-memory>"


def _session(tmp_path: Path) -> GeminiSession:
    return GeminiSession(tmp_path / "chats" / "session-2026-11-24T10-00-a4591f55.jsonl", tmp_path)


def _texts(path: Path) -> list[tuple[str, str]]:
    return [(m["role"], message_text(m)) for m in read_transcript(path)]


def test_the_typed_prompt_is_read_and_the_hook_context_never(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.exchange("Which cache do we use?", "Postgres 16.", context=BLOCK)
    messages = read_transcript(s.path)
    assert [(m["role"], message_text(m)) for m in messages] == [
        ("user", "Which cache do we use?"),
        ("assistant", "Postgres 16."),
    ]
    dumped = json.dumps(messages)
    assert "hindsight-memory" not in dumped and "hook_context" not in dumped and "session_context" not in dumped


def test_a_hook_context_part_without_display_content_is_cut(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.record(
        "user",
        [
            {"text": "plain prompt"},
            {"text": "<hook_context>&lt;hindsight-memory&gt;x&lt;/hindsight-memory&gt;</hook_context>"},
        ],
    )
    assert _texts(s.path) == [("user", "plain prompt")]


def test_a_tool_turn_is_one_reply_with_its_result(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.user("What do we remember about the cache?")
    s.tool_turn("mcp_hindsight_hindsight_recall", {"query": "cache"}, "1. We use Postgres 16")
    s.reply("We use Postgres 16.")
    user, call, result, answer = read_transcript(s.path)
    assert call["role"] == "assistant"
    assert call["content"][0]["type"] == "toolCall" and call["content"][0]["arguments"] == {"query": "cache"}
    assert result["role"] == "toolResult" and result["toolName"] == "mcp_hindsight_hindsight_recall"
    assert message_text(result) == "1. We use Postgres 16"
    assert message_text(answer) == "We use Postgres 16."
    assert user["role"] == "user"


def test_rewind_takes_messages_back(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.exchange("keep this", "kept")
    dropped = s.user("drop this")
    s.reply("dropped")
    s.rewind_to(dropped["id"])
    s.exchange("instead this", "fine")
    assert [t for _, t in _texts(s.path)] == ["keep this", "kept", "instead this", "fine"]


def test_after_a_compression_the_summary_is_dropped_and_kept_messages_keep_their_ids(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.exchange("alpha: use tabs", "ok alpha")
    kept_user = s.user("beta: use spaces")
    kept_reply = s.reply("ok beta")
    before = read_transcript(s.path)
    s.compress("<state_snapshot>\nThe user chose tabs.\n</state_snapshot>", [kept_user, kept_reply])
    after = read_transcript(s.path)
    assert after == before[2:]


def test_our_command_output_and_its_reply_and_the_clis_notes_are_dropped(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.record("user", [{"text": "/hindsight:mode read-only"}])
    s.record("user", [{"text": f"{COMMAND_MARKER}\nmode: read-only\n\nShow the user the output above."}])
    s.reply("```\nmode: read-only\n```")
    s.info("Switched model")
    s.exchange("a real prompt", "a real reply")
    assert _texts(s.path) == [("user", "a real prompt"), ("assistant", "a real reply")]


def test_a_legacy_json_file_and_a_half_written_line(tmp_path: Path) -> None:
    legacy = tmp_path / "session-old.json"
    records = [
        {"id": "1", "timestamp": "2026-01-01T00:00:00Z", "type": "user", "content": "old prompt"},
        {"id": "2", "timestamp": "2026-01-01T00:00:01Z", "type": "gemini", "content": "old reply"},
    ]
    legacy.write_text(
        json.dumps({"sessionId": "x", "projectHash": "y", "messages": records}, indent=2), encoding="utf-8"
    )
    assert [t for _, t in _texts(legacy)] == ["old prompt", "old reply"]

    s = _session(tmp_path)
    s.exchange("whole", "line")
    s.write_raw('{"id": "z", "type": "gem')
    assert [t for _, t in _texts(s.path)] == ["whole", "line"]
