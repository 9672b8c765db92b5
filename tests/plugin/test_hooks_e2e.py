"""End to end through the ``Host`` harness: a decision retained in session 1 is injected into
session 2's first turn — on the embedded store and on the real Hindsight test server.

Session 1 queues the retain at ``agent_end`` and (on Hindsight, with coalesced delivery) only the
shutdown flush delivers it, so both halves of the retain path are on the way.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hindsight_hooks.hooks import RecordingUI

from .hostkit import LOCAL_CONFIG, Project, assistant, injected_block, isolated, statuses, user

__all__ = ["isolated"]  # fixture, re-exported for pytest

DECISION_PROMPT = "Let's settle it: which database backs the cache layer?"
DECISION = "Decision D-17: the cache layer uses PostgreSQL with a five minute TTL, not Redis."
QUESTION = "Which database did we pick for the cache layer, and why?"


def _session_one(project: Project, *, expect_queued_until_shutdown: bool) -> None:
    ui = RecordingUI()
    with project.host("s1", ui=ui) as host:
        first = [user(DECISION_PROMPT, 1)]
        assert injected_block(host.context(first)) is None, "a fresh bank has nothing to inject"
        host.agent_end([*first, assistant(DECISION, 1)])
        if expect_queued_until_shutdown:
            (job,) = project.queue_jobs()
            assert "D-17" in job["items"][0]["content"]
            assert statuses(ui)[-1] == "mem:retain-queued"
        else:
            assert statuses(ui)[-1] == "mem:retained"
    assert project.queue_jobs() == [], "delivered by session 1 at the latest by its shutdown flush"
    (receipt,) = project.receipts()
    assert receipt["document_id"].startswith("hh-session:") and receipt["source"] == "auto"
    assert "D-17" not in str(receipt), "receipts are content-free"
    assert [t for t in ui.texts("warning")] == []


def _session_two_first_turn(project: Project) -> str:
    ui = RecordingUI()
    with project.host("s2", ui=ui) as host:
        question = user(QUESTION, 100)
        for_model = host.context([question])
    block = injected_block(for_model)
    assert block is not None, f"nothing injected; status {statuses(ui)}"
    assert for_model[-1] == question and for_model[0] is block
    assert statuses(ui)[-1].startswith("mem:recalled:")
    return str(block["content"])


def test_decision_from_session_one_is_injected_in_session_two_on_the_embedded_store(
    tmp_path: Path, isolated: Path
) -> None:
    project = Project(tmp_path / "repo", LOCAL_CONFIG)
    _session_one(project, expect_queued_until_shutdown=False)
    content = _session_two_first_turn(project)
    assert "D-17" in content and "PostgreSQL" in content


@pytest.mark.integration
def test_decision_from_session_one_is_injected_in_session_two_on_hindsight(
    tmp_path: Path, isolated: Path, hindsight_url: str, make_bank: Callable[..., str]
) -> None:
    bank = make_bank("hh-hooks-e2e")
    config: dict[str, Any] = {
        "backend": "hindsight",
        "hindsight": {"base_url": hindsight_url, "timeout_ms": 30000},
        "banks": {"project": {"bank_id": bank}},
        # verbatim test banks store world facts; the default recall type (observation) needs an LLM
        "recall": {"types": []},
        # synchronous retain: session 2 must not race the server's background extraction
        "retain": {"async": False, "delivery": "coalesced"},
        "notifications": {"startup": False},
    }
    project = Project(tmp_path / "repo", config)
    _session_one(project, expect_queued_until_shutdown=True)
    content = _session_two_first_turn(project)
    assert "D-17" in content and "PostgreSQL" in content
    assert f"Bank: {bank}" in content
