"""Chat / gateway transcripts: kept kinds, text extraction, provenance, the document (docs/import.md)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from hindsight_hooks.importer.chat_transcript import build_chat_document, event_text, parse_chat

from .conftest import FIXTURES


def test_keeps_user_messages_replies_and_process_ends_only() -> None:
    t = parse_chat(FIXTURES / "chat_gateway.jsonl")
    assert [(m["role"], m["kind"]) for m in t.messages] == [
        ("user", "user_message"),
        ("assistant", "assistant_reply"),
        ("user", "user_message"),
        ("process", "process_end"),
    ]
    assert t.events == 7 and t.dropped_events == 3  # message_update, extension_ui_request, heartbeat
    texts = [m["text"] for m in t.messages]
    assert texts[1].endswith("(TZ-UTC-REPORTS).")  # from `reply`
    assert texts[2] == "Thanks, and I prefer bullet lists over tables in replies."  # from text parts
    assert texts[3].startswith("Run finished")  # from `message`
    assert "Thinking…" not in json.dumps(t.messages)


def test_text_field_order() -> None:
    assert event_text({"text": "a", "content": "b"}) == "a"
    assert event_text({"content": "b", "message": "c"}) == "b"
    assert event_text({"message": "c", "reply": "d"}) == "c"
    assert event_text({"reply": "d"}) == "d"
    assert (
        event_text({"content": [{"type": "text", "text": "p1"}, {"type": "image"}, {"type": "text", "text": "p2"}]})
        == "p1\np2"
    )
    assert event_text({"text": "   ", "reply": "r"}) == "r"
    assert event_text({"other": "x"}) is None


def test_document_for_the_user_bank() -> None:
    path = FIXTURES / "chat_gateway.jsonl"
    doc = build_chat_document(parse_chat(path), host="Telegram Bot", redact=True)
    assert doc.document_id == "hh-chat:" + hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    assert doc.update_mode == "replace"
    assert doc.tags == ["source:telegram-bot", "import:chat", "imported:true"]
    assert doc.metadata["channel"] == "telegram"
    assert doc.metadata["channel_id"] == "-100200300"
    assert doc.metadata["conversation_id"] == "conv-77"
    assert doc.metadata["thread_id"] == "t-5"
    assert doc.metadata["sessionId"] == "gw-session-1"
    assert doc.metadata["imported"] == "true" and doc.metadata["retain_source"] == "import"
    assert doc.metadata["content_hash"] == doc.content_hash == hashlib.sha256(doc.content.encode()).hexdigest()
    body = json.loads(doc.content)
    assert body["source"] == "chat-import" and body["message_count"] == 4


def test_injected_and_unparsable_lines(tmp_path: Path) -> None:
    path = tmp_path / "gw.jsonl"
    path.write_text(
        '{"type":"user_message","text":"<hindsight-memory>\\nold memory ECHO-ME\\n</hindsight-memory>"}\n'
        "not json at all\n"
        "[1,2,3]\n"
        '{"type":"assistant_reply"}\n'
        '{"type":"user_message","text":"real question"}\n'
    )
    t = parse_chat(path)
    assert [m["text"] for m in t.messages] == ["real question"]
    assert t.bad_lines == 2
    assert "ECHO-ME" not in build_chat_document(t, host="pi", redact=True).content
