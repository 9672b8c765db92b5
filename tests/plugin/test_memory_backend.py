"""The plugin on a backend registered by the test suite: hooks, commands and tools (ADR 140).

The in-memory backend (``memory_backend.py``) is put in the factory's registry under the name
the config selects, for the duration of one test. Nothing in the plugin knows it: every
decision comes from its ``Capabilities``. No SQLite file may appear, and what the plugin says
(status, doctor, tool results) follows the capabilities, not the configured name.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from hindsight_hooks.backends.factory import register_backend

from .hostkit import LOCAL_CONFIG, Project, exchange, injected_block, isolated, user
from .memory_backend import MEMORY_CAPS, MemoryData, memory_entry

__all__ = ["isolated"]  # fixture, re-exported for pytest


@pytest.fixture
def data() -> Iterator[MemoryData]:
    held = MemoryData()
    previous = register_backend("local", memory_entry(held))
    try:
        yield held
    finally:
        register_backend("local", previous)


@pytest.fixture
def project(tmp_path: Path, isolated: Path, data: MemoryData) -> Project:
    return Project(tmp_path / "repo", LOCAL_CONFIG)


def _project_bank(data: MemoryData) -> str:
    (bank,) = [b for b in data.banks if b.startswith("hh-project-")]
    return bank


def test_hooks_retain_into_it_and_recall_from_it(project: Project, data: MemoryData) -> None:
    with project.host("s1") as host:
        host.agent_end(exchange(1))
    bank = _project_bank(data)
    stored = "\n".join(data.texts(bank))
    assert "q1x" in stored and "r1x" in stored
    assert "retain" in data.calls
    assert not project.db.exists(), "the embedded store must not be opened"

    with project.host("s2") as host:
        prompt = user("what did we say about the parser question and its answer?", 8)
        for_model = host.context([*exchange(7, "warmup"), prompt])
    block = injected_block(for_model)
    assert block is not None, "memory recalled from the in-memory backend reaches the model"
    assert "q1x" in block["content"] and for_model[-1] == prompt
    assert "recall" in data.calls
    assert not project.db.exists()


def test_commands_describe_it_by_its_capabilities(project: Project, data: MemoryData) -> None:
    with project.host("s1") as host:
        status = host.command("/hindsight")
        doctor = host.command("/hindsight:doctor")
    assert "backend: memory in-memory" in status.text
    assert status.data is not None and status.data["backend"] == "memory"
    assert status.data["local_path"] == "in-memory"
    assert "backend=memory" in doctor.text
    assert "memory health healthy" in doctor.text
    assert "local store" not in doctor.text and "server" not in doctor.text
    assert "health" in data.calls


def test_tools_store_recall_reflect_and_edit_on_it(project: Project, data: MemoryData) -> None:
    with project.host("s1") as host:
        assert set(host.session_tools()) >= {"hindsight_retain", "hindsight_recall", "memory_edit"}
        stored = host.call_tool(
            "hindsight_retain", {"items": [{"content": "The staging database is Postgres 14."}], "async": False}
        )
        assert stored.text == "1 memory stored.", stored
        (unit_id,) = stored.details["ids"]
        bank = _project_bank(data)
        assert data.texts(bank) == ["The staging database is Postgres 14."]

        found = host.call_tool("hindsight_recall", {"query": "staging database"})
        assert "- The staging database is Postgres 14." in found.text
        assert "(id:" not in found.text, "hits without ranked ids are shown the server's way"

        answer = host.call_tool("hindsight_reflect", {"query": "which staging database?"})
        assert answer.text == "The staging database is Postgres 14."

        edited = host.call_tool("memory_edit", {"op": "update", "id": unit_id, "content": "Staging runs Postgres 16."})
        assert edited.details == {"status": "updated", "bank_id": bank}
        assert data.texts(bank) == ["Staging runs Postgres 16."]
        gone = host.call_tool("memory_edit", {"op": "forget", "id": unit_id})
        assert gone.details["status"] == "deleted" and data.texts(bank) == []
    assert not project.db.exists()


def test_a_backend_that_cannot_edit_gets_no_memory_edit(tmp_path: Path, isolated: Path) -> None:
    held = MemoryData()
    previous = register_backend("local", memory_entry(held, dataclasses.replace(MEMORY_CAPS, edit=False)))
    try:
        project = Project(tmp_path / "repo", LOCAL_CONFIG)
        with project.host("s1") as host:
            assert "memory_edit" not in host.session_tools()
            refused = host.call_tool("memory_edit", {"op": "forget", "id": "0123456789abcdef"})
    finally:
        register_backend("local", previous)
    assert refused.is_error and "only available" in refused.text
    assert "forget_unit" not in held.calls
