"""A forget keeps out the past, not the future (ADR 173), through the real CLI in process.

The CLI keeps one stable session per project (``.hindsight/sessions/cli.jsonl``), so a
``memories forget session current`` leaves a tombstone on the very session every later
``hindsight-hooks retain`` writes in. What was retained before the forget stays gone; what is
retained after it, even the same text again, is stored, recalled, and reported as stored.
"""

from __future__ import annotations

import json

import pytest

from hindsight_hooks import cli

from ..plugin.cmdkit import Kit, local_kit_fixture  # noqa: F401  (fixtures)


def run(kit: Kit, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """The CLI as a person types it in the project: no ``--session-file``, the CLI's own session."""
    code = cli.main([*args, "--cwd", str(kit.root)])
    out, err = capsys.readouterr()
    return code, out, err


def test_retain_after_forgetting_the_cli_session_is_stored_and_recalled(
    local_kit: Kit, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(local_kit, capsys, "retain", "old fact one about the zookeeper ensemble")
    assert code == 0 and "1 memory stored." in out, err
    code, out, err = run(local_kit, capsys, "memories", "forget", "session", "current", "--yes")
    assert code == 0 and out.startswith("forgot 1 memories"), err
    assert local_kit.texts(local_kit.project_bank) == []

    code, out, err = run(local_kit, capsys, "retain", "brand new fact about kafka", "--json")
    assert code == 0, err
    details = json.loads(out)["details"]
    assert details["count"] == 1 and len(details["ids"]) == 1 and "forgotten" not in details, out
    assert local_kit.texts(local_kit.project_bank) == ["brand new fact about kafka"]
    code, out, err = run(local_kit, capsys, "recall", "kafka")
    assert code == 0 and "brand new fact about kafka" in out, out + err
    code, out, err = run(local_kit, capsys, "recall", "zookeeper ensemble")
    assert "old fact one" not in out  # what the forget covered stays gone


def test_the_exact_forgotten_text_retained_again_after_forget_by_id_is_stored(
    local_kit: Kit, capsys: pytest.CaptureFixture[str]
) -> None:
    fact = "The kafka broker listens on port 9092."
    code, out, err = run(local_kit, capsys, "retain", fact, "--json")
    assert code == 0, err
    (memory_id,) = json.loads(out)["details"]["ids"]
    code, out, err = run(local_kit, capsys, "memories", "forget", "id", memory_id, "--yes")
    assert code == 0 and out.startswith("forgot 1 memories"), err
    assert local_kit.texts(local_kit.project_bank) == []
    stones = json.loads((local_kit.state / "tombstones.json").read_text(encoding="utf-8"))["tombstones"]
    assert {s["kind"] for s in stones} == {"text"} and all(s["created_at"] for s in stones)

    code, out, err = run(local_kit, capsys, "retain", fact)
    assert code == 0 and out.strip() == "1 memory stored.", out + err
    assert local_kit.texts(local_kit.project_bank) == [fact]
    code, out, err = run(local_kit, capsys, "memories", "forget", "query", "port 9092", "--yes")
    assert code == 0 and out.startswith("forgot 1 memories"), err  # forgetting it again works too
    assert local_kit.texts(local_kit.project_bank) == []
