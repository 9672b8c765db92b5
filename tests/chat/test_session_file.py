"""The chat transcript file: Pi session JSONL v3, appended as the conversation goes."""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path

import pytest

from hindsight_hooks.chat.session_file import SessionFile, SessionFileError, new_session_path, read_session
from hindsight_hooks.hooks import assistant_message, user_message

ISO_MS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def lines_of(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_header_then_linked_message_entries(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    sf = SessionFile.create(path, tmp_path)
    msgs = [user_message("hello"), assistant_message("hi there"), user_message("bye")]
    ids = [sf.append(m) for m in msgs]
    sf.close()

    rows = lines_of(path)
    header = rows[0]
    assert header["type"] == "session" and header["version"] == 3
    assert re.fullmatch(r"[0-9a-f-]{36}", str(header["id"]))
    assert ISO_MS.match(str(header["timestamp"]))
    assert header["cwd"] == str(tmp_path.absolute())
    entries = rows[1:]
    assert [e["id"] for e in entries] == ids
    assert all(re.fullmatch(r"[0-9a-f]{8}", str(i)) for i in ids)
    assert [e["parentId"] for e in entries] == [None, ids[0], ids[1]]
    assert all(e["type"] == "message" and ISO_MS.match(str(e["timestamp"])) for e in entries)
    assert [e["message"] for e in entries] == msgs
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_each_message_is_on_disk_before_the_next_is_written(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    sf = SessionFile.create(path, tmp_path)
    sf.append(user_message("first"))
    assert len(lines_of(path)) == 2  # no buffering: a crash now keeps the first message
    sf.append(user_message("second"))
    assert len(lines_of(path)) == 3
    sf.close()


def test_resume_continues_the_chain_and_returns_the_branch(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    sf = SessionFile.create(path, tmp_path)
    first = sf.append(user_message("one"))
    sf.append(assistant_message("two"))
    sf.close()

    resumed, parsed = SessionFile.open(path, tmp_path)
    assert parsed is not None
    assert parsed.messages[0]["content"] == "one"
    assert len(parsed.messages) == 2
    new_id = resumed.append(user_message("three"))
    resumed.close()
    rows = lines_of(path)
    assert rows[-1]["id"] == new_id and rows[-1]["parentId"] == rows[-2]["id"]
    assert new_id != first
    assert len(read_session(path).messages) == 3


def test_resume_follows_the_last_branch_only(tmp_path: Path) -> None:
    path = tmp_path / "tree.jsonl"
    rows = [
        {"type": "session", "version": 3, "id": "abc", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": str(tmp_path)},
        {"type": "message", "id": "a", "parentId": None, "message": user_message("root", 1)},
        {"type": "message", "id": "b", "parentId": "a", "message": assistant_message("abandoned", 2)},
        {"type": "model_change", "id": "c", "parentId": "a"},
        {"type": "message", "id": "d", "parentId": "c", "message": assistant_message("kept", 3)},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\nnot json\n", encoding="utf-8")
    parsed = read_session(path)
    texts = [m["content"] if isinstance(m["content"], str) else m["content"][0]["text"] for m in parsed.messages]
    assert texts == ["root", "kept"]
    assert parsed.bad_lines == 1
    assert parsed.last_id == "d"


@pytest.mark.parametrize(
    "content",
    ['{"role": "user", "content": "not a session"}\n', '{"type":"session","version":1}\n', "garbage\n"],
)
def test_a_file_that_is_not_a_resumable_session_is_refused_and_left_alone(tmp_path: Path, content: str) -> None:
    path = tmp_path / "other.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(SessionFileError) as err:
        SessionFile.open(path, tmp_path)
    assert str(path) in str(err.value)
    assert path.read_text(encoding="utf-8") == content


def test_secrets_are_redacted_on_disk(tmp_path: Path) -> None:
    secret = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2"
    path = tmp_path / "s.jsonl"
    sf = SessionFile.create(path, tmp_path)
    sf.append(user_message(f"my key is {secret} please keep it"))
    sf.close()
    text = path.read_text(encoding="utf-8")
    assert secret not in text
    assert "please keep it" in text


def test_new_session_path_is_private_and_unique(tmp_path: Path) -> None:
    a = new_session_path(tmp_path)
    b = new_session_path(tmp_path)
    assert a != b
    assert a.parent == tmp_path / ".hindsight" / "sessions"
    assert stat.S_IMODE(a.parent.stat().st_mode) == 0o700
    assert (tmp_path / ".hindsight" / ".gitignore").exists()
    assert a.suffix == ".jsonl"
