"""Damaged input at the parser level: line numbers of skipped lines, a cut-off end, telling a
session with a broken header from a chat log, and discovery of a folder that is not there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hindsight_hooks.importer.chat_transcript import parse_chat
from hindsight_hooks.importer.pi_session import (
    MAX_REPORTED_LINES,
    EmptyFileError,
    SessionFormatError,
    parse_session,
    sniff,
)
from hindsight_hooks.importer.sources import ImportRefused, discover

HEADER = json.dumps({"type": "session", "version": 3, "id": "sid", "cwd": "/p"})


def _msg(i: int, parent: str | None) -> str:
    return json.dumps(
        {"type": "message", "id": f"m{i}", "parentId": parent, "message": {"role": "user", "content": f"text {i}"}}
    )


def test_bad_line_numbers_count_blank_lines_and_note_a_cut_off_end(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(
        (
            HEADER + "\n\n" + _msg(1, None) + "\n" + "{torn\n" + _msg(2, "m1") + "\n" + '{"type":"message","id":"m3"'
        ).encode()
    )
    parsed = parse_session(path)
    assert (parsed.bad.count, parsed.bad.numbers, parsed.bad.truncated_tail) == (2, [4, 6], True)
    assert parsed.bad.describe(path) == (
        f"{path}: 2 unparsable line(s) skipped (lines 4, 6); the last line is cut off "
        "(the file may have been truncated while it was being written)"
    )
    assert [m["content"] for m in parsed.branch("m2").messages] == ["text 1", "text 2"]


def test_many_bad_lines_keep_an_exact_count_and_the_first_numbers(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(HEADER + "\n" + "\n".join(["nope"] * 25) + "\n" + _msg(1, None) + "\n")
    parsed = parse_session(path)
    assert parsed.bad.count == 25 and parsed.bad.numbers == list(range(2, 2 + MAX_REPORTED_LINES))
    assert not parsed.bad.truncated_tail
    assert parsed.bad.describe(path).endswith(f"(lines {', '.join(str(n) for n in range(2, 12))}, …)")


def test_a_gap_in_the_tree_is_counted(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join([HEADER, _msg(1, None), "{broken", _msg(3, "m2"), _msg(4, "m3")]) + "\n")
    parsed = parse_session(path)
    assert parsed.dangling() == 1
    assert parsed.current_leaf() == "m4"
    assert [m["content"] for m in parsed.branch("m4").messages] == ["text 3", "text 4"]
    assert parsed.leaves() == ["m1", "m4"]  # the part before the gap is still reachable as a leaf


def test_sniff_tells_sessions_chat_logs_and_damage_apart(tmp_path: Path) -> None:
    def file(name: str, text: str) -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    assert sniff(file("session.jsonl", HEADER + "\n" + _msg(1, None) + "\n")) == "session"
    assert sniff(file("future.jsonl", '{"type":"session","version":9}\n')) == "session"  # parse_session says why
    assert sniff(file("chat.jsonl", '{"type":"user_message","text":"hi"}\n')) == "chat"
    assert sniff(file("torn-chat.jsonl", 'not json\n{"type":"user_message","text":"hi"}\n')) == "chat"
    with pytest.raises(EmptyFileError):
        sniff(file("empty.jsonl", "\n \n"))
    damaged = file("damaged.jsonl", '{"type":"sess\n' + _msg(1, None) + "\n")
    with pytest.raises(SessionFormatError, match="line 1 should be the session header but is damaged"):
        sniff(damaged)
    garbage = file("garbage.jsonl", "\n\nsecret-token-abc not json\n[1, 2]\n")
    with pytest.raises(SessionFormatError, match="line 3 is not valid JSON") as info:
        sniff(garbage)
    assert "secret-token-abc" not in str(info.value)


def test_chat_log_bad_lines_have_numbers(tmp_path: Path) -> None:
    path = tmp_path / "gw.jsonl"
    path.write_bytes(b'{"type":"user_message","text":"one"}\n\nnot json\n[1]\n{"type":"assistant_reply","text":"tw')
    t = parse_chat(path)
    assert [m["text"] for m in t.messages] == ["one"]
    assert (t.bad_lines, t.bad.numbers, t.bad.truncated_tail) == (3, [3, 4, 5], True)


def test_discovery_of_a_missing_folder_is_empty_not_an_error(tmp_path: Path) -> None:
    found = discover(tmp_path / "nowhere", tmp_path, tmp_path)
    assert found.missing and found.accepted == [] and found.refused == [] and found.candidates == 0
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")
    with pytest.raises(ImportRefused, match="cannot list"):
        discover(not_a_folder, tmp_path, tmp_path)
