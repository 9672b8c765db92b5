"""Which file is which (by content), and where Claude Code keeps a folder's sessions (ADR-110).

The folder names below are the ones the real Claude Code 2.1.197 created when run (``claude -p``
against the scripted model server, ``$HOME`` in tmp) in each of these folders; they pin our
reading of its rule, including a path longer than its 200-character limit (cut, then a hash)
and characters outside the Basic Multilingual Plane (two UTF-16 units, two dashes).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hindsight_hooks.importer.claude_sources import project_slug, projects_dir
from hindsight_hooks.importer.formats import CHAT, CLAUDE_CODE, CODEX, PI_SESSION, detect_format
from hindsight_hooks.importer.pi_session import EmptyFileError, SessionFormatError

from ..hosts.claude_lines import ClaudeSession
from .conftest import FIXTURES

LONG = "/tmp/h13/" + "/".join(f"segment-of-a-long-path-{i:02d}" for i in range(9)) + "/caf\u00e9 \U0001f600 x"

SEEN = {
    "/tmp/h13/My.Proj_dir x": "-tmp-h13-My-Proj-dir-x",
    "/tmp/h13/caf\u00e9 \U0001f600 x": "-tmp-h13-caf-----x",
    LONG: (
        "-tmp-h13-segment-of-a-long-path-00-segment-of-a-long-path-01-segment-of-a-long-path-02-segment-of-a-long-"
        "path-03-segment-of-a-long-path-04-segment-of-a-long-path-05-segment-of-a-long-path-06-segment-o-vix18e"
    ),
}


@pytest.mark.parametrize("folder", sorted(SEEN))
def test_slugs_are_the_folder_names_the_real_claude_code_made(folder: str) -> None:
    assert project_slug(folder) == SEEN[folder]


def test_the_projects_folder_follows_claude_config_dir_then_home() -> None:
    assert projects_dir({"HOME": "/home/ana"}) == Path("/home/ana/.claude/projects")
    assert projects_dir({"HOME": "/home/ana", "CLAUDE_CONFIG_DIR": "/cfg/claude"}) == Path("/cfg/claude/projects")


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_formats_are_told_apart_by_content_whatever_the_name(tmp_path: Path) -> None:
    pi = _write(tmp_path / "a.txt", (FIXTURES / "decisions.jsonl").read_text().splitlines())
    chat = _write(tmp_path / "b.jsonl", (FIXTURES / "chat_gateway.jsonl").read_text().splitlines())
    claude = ClaudeSession(tmp_path / "session.log", tmp_path)
    claude.housekeeping()  # Claude Code's first lines carry no uuid
    claude.turn("hello", "hi")
    torn = _write(tmp_path / "torn.jsonl", ['{"parentUuid": null, "sess', *claude.path.read_text().splitlines()])
    codex = _write(
        tmp_path / "rollout.jsonl",
        [
            json.dumps({"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"cwd": "/"}}),
            json.dumps({"timestamp": "2026-01-01T00:00:01Z", "type": "response_item", "payload": {"type": "message"}}),
        ],
    )
    found = {p.name: detect_format(p) for p in (pi, chat, claude.path, torn, codex)}
    assert found == {
        "a.txt": PI_SESSION,
        "b.jsonl": CHAT,
        "session.log": CLAUDE_CODE,
        "torn.jsonl": CLAUDE_CODE,
        "rollout.jsonl": CODEX,
    }


def test_empty_and_unreadable_files_are_errors_not_guesses(tmp_path: Path) -> None:
    empty = _write(tmp_path / "empty.jsonl", [])
    empty.write_text("\n\n")
    with pytest.raises(EmptyFileError):
        detect_format(empty)
    with pytest.raises(SessionFormatError, match="line 1"):
        detect_format(_write(tmp_path / "junk.jsonl", ["not json", "neither"]))
    damaged_pi = (FIXTURES / "decisions.jsonl").read_text().splitlines()
    damaged_pi[0] = damaged_pi[0][:20]
    with pytest.raises(SessionFormatError, match="should be the session header"):
        detect_format(_write(tmp_path / "pi.jsonl", damaged_pi))
