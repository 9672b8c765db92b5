"""The first prompt in a project that has no memory yet is quiet, in every command-hook host.

A command-hook host starts one process per event, so recall runs before anything has created
the project's bank. An unknown bank holds no memories: the answer is "nothing to add", never a
"recall failed" notice on the user's very first prompt.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .hookproc import HookRunner

EVENTS = {"claude-code": "UserPromptSubmit", "codex": "UserPromptSubmit", "gemini": "BeforeAgent"}


@pytest.mark.parametrize("host", sorted(EVENTS))
def test_first_prompt_in_a_new_project_gives_no_notice(tmp_path: Path, host: str) -> None:
    home = tmp_path / "home"
    project = tmp_path / "project"
    home.mkdir()
    project.mkdir()
    runner = HookRunner(home, helper=False)
    try:
        payload = {
            "session_id": "first",
            "transcript_path": str(tmp_path / "none.jsonl"),
            "cwd": str(project),
            "prompt": "what did we decide about the cache?",
            "hook_event_name": EVENTS[host],
        }
        result = runner.run(EVENTS[host], payload, host=host, cwd=project)
    finally:
        runner.close()
    assert result.returncode == 0
    answer = result.answer
    assert "recall failed" not in str(answer) and "does not exist" not in str(answer), answer
    assert "hindsight-memory" not in str(answer), "nothing is stored, so nothing is injected"
