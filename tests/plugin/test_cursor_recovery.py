"""A lost retain cursor store, through ``Host`` and real files (issue 9 item 8, ADR-066).

A cursor store of the wrong JSON shape used to be overwritten silently and an unparsable one
paused retain until ``/hindsight:doctor --fix``; both then retained every session's whole
transcript again. Now the bad file is moved aside (never deleted), the user is told once, and
each session resumes after the last message the queue or the memory store proves retained.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hindsight_hooks.hooks import Message, RecordingUI
from hindsight_hooks.retain.cursor_recovery import json_arrays, proven_through

from .hostkit import (
    LOCAL_CONFIG,
    Project,
    closed_port_url,
    exchange,
    isolated,
    job_text,
    local_project,
    markers,
    merged,
)

__all__ = ["isolated", "local_project"]  # fixtures, re-exported for pytest

CURSORS = "retain-cursors.json"


def _retained_counts(project: Project, *ns: int) -> dict[str, int]:
    return {marker: project.unit_count(marker) for n in ns for marker in markers(n)}


def _three_turns(project: Project, session: str = "s1") -> list[Message]:
    t: list[Message] = []
    with project.host(session) as host:
        for n in (1, 2, 3):
            t += exchange(n)
            host.agent_end(t)
    return t


def _truncated(data: bytes) -> bytes:
    return data[: len(data) // 2]


BAD_STORES: dict[str, Callable[[bytes], bytes]] = {
    "an array": lambda _: b"[1,2,3]",
    "a string": lambda _: b'"x"',
    "sessions not an object": lambda _: b'{"sessions":[]}',
    "no sessions": lambda _: b'{"version":3}',
    "truncated": _truncated,
    "empty": lambda _: b"",
}


@pytest.mark.parametrize("kind", list(BAD_STORES))
def test_a_bad_store_is_kept_aside_and_nothing_is_retained_again(local_project: Project, kind: str) -> None:
    t = _three_turns(local_project)
    store = local_project.state / CURSORS
    bad = BAD_STORES[kind](store.read_bytes())
    store.write_bytes(bad)

    ui = RecordingUI()
    with local_project.host(ui=ui) as host:  # a restart: nothing of the old cursor is in memory
        t += exchange(4)
        host.agent_end(t)
        t += exchange(5)
        host.agent_end(t)

    assert set(_retained_counts(local_project, 1, 2, 3, 4, 5).values()) == {1}, "no message twice, none lost"
    aside = [p for p in local_project.state.iterdir() if p.name.startswith(f"{CURSORS}.corrupt-")]
    assert len(aside) == 1 and aside[0].read_bytes() == bad, "the bad file is kept, byte for byte"
    warnings = ui.texts("warning")
    assert len(warnings) == 1 and aside[0].name in warnings[0] and "unreadable" in warnings[0], ui.notices
    assert ui.texts("error") == []
    doc = json.loads(store.read_bytes())
    assert doc["recovered_from"] == aside[0].name and list(doc["sessions"]) != []


def test_other_sessions_of_the_lost_store_resume_where_they_were(local_project: Project) -> None:
    a = _three_turns(local_project, "a")
    b = _three_turns(local_project, "b")
    (local_project.state / CURSORS).write_bytes(b"[1,2,3]")
    with local_project.host("a") as host:
        host.agent_end(a)  # recovers the store and session a
    with local_project.host("b") as host:  # b's cursor was in the lost file too
        host.agent_end([*b, *exchange(9)])
    # each session's own turns once per session (the same texts were said in both sessions)
    assert set(_retained_counts(local_project, 1, 2, 3).values()) == {2}
    assert set(_retained_counts(local_project, 9).values()) == {1}


def test_after_doctor_fix_nothing_is_retained_again(local_project: Project) -> None:
    t = _three_turns(local_project)
    (local_project.state / CURSORS).write_text("{not json", encoding="utf-8")
    with local_project.host() as host:
        fixed = host.command("/hindsight:doctor --fix")
        assert "moved" in fixed.text, fixed.text
        assert not (local_project.state / CURSORS).exists()
        t += exchange(4)
        host.agent_end(t)
    assert set(_retained_counts(local_project, 1, 2, 3, 4).values()) == {1}


def test_with_the_turns_still_queued_the_queue_is_the_proof(tmp_path: Path, isolated: Path) -> None:
    """A server that refuses connections: nothing is delivered, the queue holds every turn."""
    config: dict[str, Any] = merged(
        LOCAL_CONFIG,
        {"backend": "hindsight", "hindsight": {"base_url": closed_port_url(), "timeout_ms": 500}},
    )
    project = Project(tmp_path / "repo", config)
    t = _three_turns(project)
    before = [job_text(job) for job in project.queue_jobs()]
    assert all(sum(m in text for text in before) == 1 for n in (1, 2, 3) for m in markers(n))
    (project.state / CURSORS).write_bytes(b'"x"')
    with project.host() as host:
        t += exchange(4)
        host.agent_end(t)
    after = [job_text(job) for job in project.queue_jobs()]
    for n in (1, 2, 3, 4):
        for marker in markers(n):
            assert sum(marker in text for text in after) == 1, marker


@pytest.mark.integration
def test_on_a_real_server_its_document_is_the_proof(
    tmp_path: Path, isolated: Path, hindsight_url: str, make_bank: Callable[..., str], hindsight_backend: Any
) -> None:
    bank = make_bank("hh-cursor-recovery")
    config: dict[str, Any] = {
        "backend": "hindsight",
        "hindsight": {"base_url": hindsight_url, "timeout_ms": 30000},
        "banks": {"project": {"bank_id": bank}},
        "retain": {"async": False},
        "notifications": {"startup": False},
    }
    project = Project(tmp_path / "repo", config)
    t = _three_turns(project)
    assert project.queue_jobs() == [], "every turn was delivered"
    (project.state / CURSORS).write_bytes(b"[1,2,3]")
    with project.host() as host:
        t += exchange(4)
        host.agent_end(t)
    assert project.queue_jobs() == []
    docs = hindsight_backend.list_documents(bank, timeout_s=30)["items"]
    assert len(docs) == 1
    text = hindsight_backend.get_document(bank, docs[0]["id"], timeout_s=30)["original_text"]
    for n in (1, 2, 3, 4):
        for marker in markers(n):
            assert text.count(marker) == 1, (marker, text.count(marker))


# -- the rule itself ------------------------------------------------------------------------------


def _project_plain(msg: Message) -> dict[str, Any] | None:
    return {k: msg[k] for k in ("role", "content", "timestamp") if k in msg}


def test_a_repeated_message_is_no_proof_and_the_unproven_tail_is_bounded() -> None:
    msgs: list[Message] = [
        {"role": "user", "content": "first", "timestamp": 1},
        {"role": "assistant", "content": "ok"},  # no timestamp: matched without one
        {"role": "user", "content": "second, never retained"},
        {"role": "assistant", "content": "ok"},  # the same as message 1: proves nothing
    ]
    retained = json.dumps([_project_plain(msgs[0]), {**msgs[1], "timestamp": "retain time"}], indent=2)
    assert proven_through(msgs, [retained], _project_plain) == 0  # not 3: that would lose message 2
    msgs[3] = {"role": "assistant", "content": "ok, done"}  # now "ok" is unique: it proves message 1
    assert proven_through(msgs, [retained], _project_plain) == 1
    assert proven_through(msgs, [], _project_plain) == -1


def test_store_texts_of_several_parts_are_all_read() -> None:
    parts = [json.dumps([{"a": 1}], indent=2), "not json at all", json.dumps([{"b": 2}, {"c": 3}])]
    assert list(json_arrays("\n\n".join(parts))) == [[{"a": 1}], [{"b": 2}, {"c": 3}]]
    assert list(json_arrays("\n".join(parts))) == [[{"a": 1}], [{"b": 2}, {"c": 3}]]
