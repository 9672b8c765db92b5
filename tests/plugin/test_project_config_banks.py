"""A committed project config cannot read another project's memory (issue 9 item 3, ADR-063).

Two projects share one embedded store file (the default ``$XDG_DATA_HOME`` path), as every
project of one user does. Project A retains a memory; project B's ``.hindsight/config.toml``
then names A's bank as its user bank (with ``user_scope_tags = []``, or the default tags,
which match every memory written by the same host). What B's model sees through ``context``
and the ``hindsight_recall`` tool is checked, and the warning the user is shown. The same
keys in the user's own config file do work: the test is not vacuous.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hindsight_hooks.hooks import RecordingUI

from .hostkit import Project, exchange, isolated, merged, to_toml, user

__all__ = ["isolated"]  # fixture, re-exported for pytest

SHARED_STORE: dict[str, Any] = {"backend": "local", "notifications": {"startup": False}}
SECRET = "zanzibar-q1x"


def _project_a(tmp_path: Path) -> tuple[Project, str]:
    """Project A retains one exchange carrying ``SECRET``; returns it and its bank id."""
    a = Project(tmp_path / "alpha", SHARED_STORE)
    with a.host("a1") as host:
        turn = exchange(1)
        turn[0]["content"] = f"the launch code is {SECRET} for the parser"
        host.agent_end(turn)
        bank = host.command("/hindsight").data["banks"]["project"]  # type: ignore[index]
    assert isinstance(bank, str) and bank.startswith("hh-project-alpha-")
    return a, bank


def _b_sees(b: Project) -> tuple[str, str, RecordingUI]:
    """B's context block (or "") and recall tool text for a query aimed at A's memory."""
    ui = RecordingUI()
    with b.host("b1", ui=ui) as host:
        for_model = host.context([user(f"what is the launch code {SECRET} for the parser?", 2)])
        block = "\n".join(str(m.get("content")) for m in for_model if m.get("customType") == "hindsight-recall")
        tool = host.call_tool("hindsight_recall", {"query": f"launch code {SECRET} parser", "bank": "all"}).text
    return block, tool, ui


@pytest.mark.parametrize("tags", [[], None], ids=["no-filter", "default-tags"])
def test_project_file_cannot_name_another_projects_bank_as_user_bank(
    tmp_path: Path, isolated: Path, tags: list[str] | None
) -> None:
    _, bank_a = _project_a(tmp_path)
    extra: dict[str, Any] = {"banks": {"user": {"enabled": True, "bank_id": bank_a}}}
    if tags is not None:
        extra["scope"] = {"user_scope_tags": tags, "include_shared_observations": True}
    b = Project(tmp_path / "bravo", merged(SHARED_STORE, extra))

    block, tool, ui = _b_sees(b)

    assert SECRET not in block
    assert SECRET not in tool
    warnings = "\n".join(ui.texts("warning"))
    config_file = str(b.state / "config.toml")
    for key in ("banks.user.bank_id", "banks.user.enabled"):
        assert f"{config_file}: {key}: " in warnings
    if tags is not None:
        assert f"{config_file}: scope.user_scope_tags: " in warnings
        assert f"{config_file}: scope.include_shared_observations: " in warnings
    assert "set it in your user config" in warnings


def test_project_file_naming_another_bank_as_its_own_reads_only_its_own_repo(tmp_path: Path, isolated: Path) -> None:
    """``banks.project.bank_id`` stays allowed (a team's shared bank): reads keep the repo filter."""
    _, bank_a = _project_a(tmp_path)
    b = Project(tmp_path / "bravo", merged(SHARED_STORE, {"banks": {"project": {"bank_id": bank_a}}}))

    block, tool, _ = _b_sees(b)

    assert SECRET not in block
    assert SECRET not in tool


def test_the_same_keys_in_the_user_config_do_reach_the_bank(tmp_path: Path, isolated: Path) -> None:
    """The user may name any bank they like from their own config file."""
    _, bank_a = _project_a(tmp_path)
    user_file = isolated / ".config" / "hindsight-hooks" / "config.toml"
    user_file.parent.mkdir(parents=True)
    user_file.write_text(
        to_toml({"banks": {"user": {"enabled": True, "bank_id": bank_a}}, "scope": {"user_scope_tags": []}}),
        encoding="utf-8",
    )
    b = Project(tmp_path / "bravo", SHARED_STORE)

    block, tool, ui = _b_sees(b)

    assert SECRET in block
    assert SECRET in tool
    assert ui.texts("warning") == []


def test_a_project_file_may_still_turn_the_user_bank_off(tmp_path: Path, isolated: Path) -> None:
    """Narrowing is fine: ``enabled = false`` and ``include_shared_observations = false`` are kept."""
    _, bank_a = _project_a(tmp_path)
    user_file = isolated / ".config" / "hindsight-hooks" / "config.toml"
    user_file.parent.mkdir(parents=True)
    user_file.write_text(
        to_toml({"banks": {"user": {"enabled": True, "bank_id": bank_a}}, "scope": {"user_scope_tags": []}}),
        encoding="utf-8",
    )
    off = {"banks": {"user": {"enabled": False}}, "scope": {"include_shared_observations": False}}
    b = Project(tmp_path / "bravo", merged(SHARED_STORE, off))

    block, tool, ui = _b_sees(b)

    assert SECRET not in block
    assert SECRET not in tool
    assert ui.texts("warning") == []
