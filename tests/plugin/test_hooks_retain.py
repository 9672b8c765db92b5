"""Automatic retain through the ``Host`` harness only (docs/retain.md#order, docs/retain.md#cursor, docs/governance.md).

Each retained message becomes one unit in the embedded store, so "retained exactly once" is
read straight from the real SQLite file: one unit per marker. Hosts differ in what they hand to
``agent_end`` (the whole transcript, a window, only the new part), the plugin restarts between
runs, and session modes are set with the real slash commands.
"""

from __future__ import annotations

import hashlib
import json
import os

import pytest

from hindsight_hooks.hooks import Host, Message, RecordingUI

from .hostkit import (
    Project,
    assistant,
    exchange,
    injected_block,
    isolated,
    local_project,
    markers,
    statuses,
    user,
)

__all__ = ["isolated", "local_project"]  # fixtures, re-exported for pytest


def _assert_once(project: Project, *ns: int) -> None:
    for n in ns:
        for marker in markers(n):
            assert project.unit_count(marker) == 1, f"{marker} retained {project.unit_count(marker)} times"


def _assert_never(project: Project, *ns: int) -> None:
    for n in ns:
        for marker in markers(n):
            assert project.unit_count(marker) == 0, f"{marker} was retained"


# -- 2. overlapping transcripts, windows and restarts ------------------------------------------------


def test_overlapping_transcripts_and_restarts_retain_each_message_once(local_project: Project) -> None:
    t: list[Message] = []
    with local_project.host() as host:
        t += exchange(1)
        host.agent_end(t)
        t += exchange(2)
        host.agent_end(t)  # the whole transcript again, grown by one exchange
        host.agent_end(t)  # a retried agent_end: nothing new
    _assert_once(local_project, 1, 2)

    with local_project.host() as host:  # a restart: new process state, same session file
        host.agent_end(t)  # the resumed transcript, unchanged
        t += exchange(3)
        host.agent_end(t[-4:])  # a suffix window overlapping what was retained
        t += exchange(4)
        host.agent_end(exchange(4))  # a host that passes only the run's own messages
    with local_project.host() as host:
        t += exchange(5)
        host.agent_end(t)
    _assert_once(local_project, 1, 2, 3, 4, 5)
    docs = local_project.documents()
    assert len(docs) == 1 and docs[0][1].startswith("hh-session:"), "one live document per session"
    assert all(f"q{n}x" in docs[0][2] for n in range(1, 6)), "the document's text holds every appended run"
    assert local_project.queue_jobs() == []


def test_two_sessions_keep_separate_cursors(local_project: Project) -> None:
    shared = exchange(1)
    with local_project.host("a") as a, local_project.host("b") as b:
        a.agent_end(shared)
        b.agent_end(shared)  # another session holding identical messages retains them for itself
        a.agent_end([*shared, *exchange(2)])
    assert local_project.unit_count("q1x") == 2
    assert local_project.unit_count("q2x") == 1
    assert len(local_project.documents()) == 2


def test_an_edit_retains_just_the_edited_message(local_project: Project) -> None:
    t = [*exchange(1), *exchange(2), *exchange(3)]
    with local_project.host() as host:
        host.agent_end(t)
    edited = [dict(m) for m in t]
    edited[2] = user("turn question q2x about the parser, edited e2x", 2)  # same id u2, new content
    with local_project.host() as host:
        host.agent_end(edited)
    assert local_project.unit_count("e2x") == 1
    _assert_once(local_project, 1, 3)
    assert local_project.unit_count("r2x") == 1
    assert local_project.unit_count("q2x") == 2  # the original and its edit, each once


def test_branches_retain_the_new_branch_and_clamp_on_a_shorter_one(local_project: Project) -> None:
    base = exchange(1)
    with local_project.host() as host:
        host.agent_end([*base, *exchange(2), *exchange(3)])
        # the user rewinds to after exchange 1 and goes another way (new message ids)
        branch_b = [*base, user("branch question bq1 on parsing", 21), assistant("branch answer ba1", 21)]
        host.agent_end(branch_b)
        # a shorter branch from the same point replaces it
        branch_c = [*base, user("short branch cq1", 31)]
        host.agent_end(branch_c)
    with local_project.host() as host:  # restart, then the short branch grows: only its new reply
        host.agent_end([*branch_c, assistant("short branch reply ca1", 31)])
        host.agent_end([*branch_c, assistant("short branch reply ca1", 31), *exchange(4)])
    _assert_once(local_project, 1, 2, 3, 4)
    for text in ("bq1", "ba1", "cq1", "ca1"):
        assert local_project.unit_count(text) == 1, text


def test_corrupt_cursor_is_moved_aside_and_next_opt_out_still_skips_one_run(local_project: Project) -> None:
    """An unreadable cursor no longer pauses retain (ADR-066): it is kept aside, the opt-out
    run is skipped and consumed, and later runs retain only what is new."""
    ui = RecordingUI()
    with local_project.host(ui=ui) as host:
        host.agent_end(exchange(1))
        cursor_file = local_project.state / "retain-cursors.json"
        cursor_file.write_text("{not json", encoding="utf-8")
        assert host.command("/hindsight:next-opt-out").level == "info"
        host.agent_end([*exchange(1), *exchange(2)])  # skipped: the opt-out run
        assert _session(host)["next_retain"] == "normal", "the mark succeeded, so the opt-out is consumed"
        host.agent_end([*exchange(1), *exchange(2), *exchange(3)])
        assert statuses(ui)[-1] == "mem:retained"
    _assert_once(local_project, 1, 3)
    _assert_never(local_project, 2)
    aside = [p for p in local_project.state.iterdir() if p.name.startswith("retain-cursors.json.corrupt-")]
    assert [p.read_text(encoding="utf-8") for p in aside] == ["{not json"], "a corrupt cursor is never overwritten"
    assert len([t for t in ui.texts("warning") if "unreadable" in t]) == 1


# -- 3. session modes and next-opt-out --------------------------------------------------------------------


def _session(host: Host) -> dict[str, object]:
    result = host.command("/hindsight:session")
    assert result.level in ("info", "warning"), result.text
    assert isinstance(result.data, dict)
    return result.data


def _run(host: Host, line: str) -> None:
    result = host.command(line)
    assert result.level == "info", f"{line}: {result.text}"


MODE_CASES = [
    # commands, auto recall, auto retain
    ([], True, True),
    (["/hindsight:next-opt-out"], True, False),
    (["/hindsight:mode read-only"], True, False),
    (["/hindsight:mode ignored"], False, False),
    (["/hindsight:retain off"], True, False),
    (["/hindsight:mode read-only", "/hindsight:next-opt-out"], True, False),
    (["/hindsight:mode ignored", "/hindsight:next-opt-out"], False, False),
    (["/hindsight:retain off", "/hindsight:next-opt-out"], True, False),
    (["/hindsight:retain off", "/hindsight:mode read-only", "/hindsight:mode normal"], True, False),
    (["/hindsight:mode ignored", "/hindsight:mode normal"], True, True),
    (["/hindsight:mode read-only", "/hindsight:mode normal", "/hindsight:next-opt-out"], True, False),
]


@pytest.mark.parametrize(
    ("commands", "recalls", "retains"), MODE_CASES, ids=[" ; ".join(c) or "normal" for c, *_ in MODE_CASES]
)
def test_modes_decide_recall_and_retain_and_next_opt_out_is_consumed_once(
    local_project: Project, commands: list[str], recalls: bool, retains: bool
) -> None:
    with local_project.host("seed") as seed:
        seed.agent_end(exchange(1))
    ui = RecordingUI()
    opted_out = "/hindsight:next-opt-out" in commands
    with local_project.host("s2", ui=ui) as host:
        for line in commands:
            _run(host, line)
        prompt = user("remind me of the parser question and answer", 2)
        before = len(statuses(ui))

        for_model = host.context([prompt])

        assert (injected_block(for_model) is not None) is recalls
        if not recalls:
            assert for_model == [prompt]
            assert statuses(ui)[before:] == [], "a hook whose feature is off makes no status calls"
        assert _session(host)["next_retain"] == ("off" if opted_out else "normal"), "recall leaves the flag pending"

        run1 = [prompt, assistant("reply r2x", 2)]
        host.agent_end(run1)
        assert local_project.unit_count("r2x") == (1 if retains else 0)
        assert _session(host)["next_retain"] == "normal", "the flag is consumed by the run it skipped"
        skipped_notices = [t for t in ui.texts("info") if "skipped" in t]
        assert len(skipped_notices) == (1 if opted_out else 0)

        # back to normal with retain on: later runs retain only what is new, never the skipped run
        _run(host, "/hindsight:mode normal")
        _run(host, "/hindsight:retain on")
        host.agent_end([*run1, *exchange(3)])
        host.agent_end([*run1, *exchange(3), *exchange(4)])
    assert local_project.unit_count("r2x") == (1 if retains else 0)
    _assert_once(local_project, 1, 3, 4)
    assert len([t for t in ui.texts("info") if "skipped" in t]) == (1 if opted_out else 0), "consumed once"


def test_explicit_retain_off_survives_read_only_to_normal(local_project: Project) -> None:
    with local_project.host() as host:
        _run(host, "/hindsight:retain off")
        _run(host, "/hindsight:mode read-only")
        _run(host, "/hindsight:mode normal")
        facts = _session(host)
        assert (facts["mode"], facts["retain"], facts["recall"]) == ("normal", "off", "on")
        host.agent_end(exchange(1))
    with local_project.host() as host:  # the mode lives in the session meta: it survives a restart
        assert _session(host)["retain"] == "off"
        host.agent_end([*exchange(1), *exchange(2)])
    _assert_never(local_project, 1, 2)


def test_next_opt_out_survives_a_restart_until_a_run_consumes_it(local_project: Project) -> None:
    with local_project.host() as host:
        host.agent_end(exchange(1))
        _run(host, "/hindsight:next-opt-out")
    t = [*exchange(1), *exchange(2)]
    with local_project.host() as host:
        assert _session(host)["next_retain"] == "off"
        host.agent_end(t)
        assert _session(host)["next_retain"] == "normal"
        host.agent_end([*t, *exchange(3)])
    _assert_once(local_project, 1, 3)
    _assert_never(local_project, 2)


def test_failed_closed_session_meta_turns_memory_off_with_one_warning(local_project: Project) -> None:
    with local_project.host("seed") as seed:
        seed.agent_end(exchange(1))
    # docs/identity-and-scope.md#session-and-document-ids: the sid is hash16 of the absolute session file;
    # docs/governance.md#session-meta: an unknown mode fails closed
    sid = hashlib.sha256(os.path.abspath(local_project.session_file("s1")).encode()).hexdigest()[:16]
    meta = local_project.state / "session-meta" / f"{sid}.json"
    meta.parent.mkdir(parents=True, exist_ok=True)
    meta.write_text(json.dumps({"mode": "bogus"}), encoding="utf-8")
    ui = RecordingUI()
    with local_project.host("s1", ui=ui) as host:
        prompt = user("the parser question?", 5)
        assert host.context([prompt]) == [prompt]
        host.agent_end([prompt, assistant("reply r5x", 5)])
        assert _session(host)["failed_closed"] is True
    assert local_project.unit_count("r5x") == 0
    assert len([t for t in ui.texts("warning") if str(meta) in t]) == 1


def test_a_refused_enqueue_keeps_the_cursor_so_nothing_is_lost(local_project: Project) -> None:
    """docs/retain.md#order step 7: the queue refuses the job (back-pressure); the cursor stays, a later run retains
    it."""
    local_project.configure({"queue": {"max_active_bytes": 200}}, replace=False)
    ui = RecordingUI()
    with local_project.host(ui=ui) as host:
        host.agent_end(exchange(1))
        host.agent_end([*exchange(1), *exchange(2)])
    assert statuses(ui)[-1] == "mem:retain-failed"
    assert len([t for t in ui.texts("warning") if "could not queue" in t]) == 1, "one warning per streak"
    _assert_never(local_project, 1, 2)

    local_project.configure({"queue": {"max_active_bytes": 67108864}}, replace=False)
    with local_project.host() as host:
        host.agent_end([*exchange(1), *exchange(2), *exchange(3)])
    _assert_once(local_project, 1, 2, 3)
