"""Outages and shutdown through the ``Host`` harness only (docs/session-start.md step 4, docs/recall.md#gates,
docs/retain.md#delivery, docs/shutdown.md).

A server that is down must cost one bounded wait, not one per bank per turn; shutdown is bounded
by jobs and by time, reports leftovers once, and keeps them on disk for the next session. The
servers are real loopback sockets (one that never answers, a port with nothing listening), the
store a real SQLite file; counts and order are asserted rather than tight timings.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from hindsight_hooks.hooks import Message, RecordingUI

from .hostkit import (
    LOCAL_CONFIG,
    HangingServer,
    Project,
    assistant,
    closed_port_url,
    elapsed,
    exchange,
    hanging_server,
    isolated,
    job_text,
    merged,
    statuses,
    user,
    wait_until,
)

__all__ = ["hanging_server", "isolated"]  # fixtures, re-exported for pytest

USER_BANK = "hh-user-outage-test"


def _remote(url: str, **extra: object) -> dict[str, object]:
    return merged(
        {
            "backend": "hindsight",
            "hindsight": {"base_url": url},
            "queue": {"retry_base_ms": 60000},
            "mental_models": {"enabled": False},
            "notifications": {"startup": False},
        },
        dict(extra),
    )


def _user_bank(home: Path) -> None:
    """The user bank is the person's choice: only their own config file may name it (ADR-063)."""
    path = home / ".config" / "hindsight-hooks" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'[banks.user]\nenabled = true\nbank_id = "{USER_BANK}"\n', encoding="utf-8")


def _turn(host_transcript: list[Message], n: int) -> tuple[list[Message], list[Message]]:
    prompt = user(f"turn question q{n}x about the parser", n)
    return [*host_transcript, prompt], [*host_transcript, prompt, assistant(f"turn answer r{n}x done", n)]


# -- 5. a server that is down costs one bounded wait ------------------------------------------------------


def test_refused_server_costs_one_attempt_per_bank_for_the_whole_outage(tmp_path: Path, isolated: Path) -> None:
    _user_bank(isolated)
    project = Project(tmp_path / "repo", _remote(closed_port_url(), hindsight={"timeout_ms": 1000}))
    ui = RecordingUI()
    transcript: list[Message] = []
    with project.host(ui=ui) as host:
        for n in range(1, 7):
            for_model, transcript = _turn(transcript, n)
            assert host.context(for_model) == for_model, "the turn goes on without memory"
            host.agent_end(transcript)

    jobs = project.queue_jobs()
    assert {j["bank_id"] for j in jobs} == {j["bank_id"] for j in jobs[:1]}, "auto-retain writes the project bank only"
    # the failed start took the banks offline for the cooldown: deliveries queue without a
    # connection (ADR 069), so no retry is burned during the outage
    assert sum(j["attempts"] for j in jobs) == 0, "no delivery attempt while the banks are offline"
    everything = "\n".join(job_text(j) for j in jobs)
    for n in range(1, 7):
        assert everything.count(f"q{n}x") == 1 and everything.count(f"r{n}x") == 1, "every message queued once"
    assert project.dead_jobs() == []
    # recall: the failed start cooled both banks down; no turn waited on a recall
    assert "mem:recalling" not in statuses(ui)
    assert statuses(ui).count("mem:offline") >= 6
    warnings = ui.texts("warning")
    assert len(warnings) == len(set(warnings)), "each failure is reported once per streak"
    assert len([w for w in warnings if "could not reach memory bank" in w]) == 2, "one warning per bank at start"
    assert [w for w in warnings if "retain to bank" in w] == [], "the start's warning already said it"


def test_hanging_server_costs_one_bounded_wait_not_one_per_bank_per_turn(
    tmp_path: Path, isolated: Path, hanging_server: HangingServer
) -> None:
    _user_bank(isolated)
    project = Project(
        tmp_path / "repo",
        _remote(
            hanging_server.url,
            hindsight={"timeout_ms": 1000},
            recall={"timeout_ms": 1000},
            retain={"flush_timeout_ms": 1000, "shutdown_flush_timeout_ms": 300},
        ),
    )
    ui = RecordingUI()
    host = project.host(ui=ui)
    with elapsed() as t_start:
        host.start()
    assert hanging_server.accepted == 1, "the second bank is not ensured against a server that just hung"
    assert t_start[0] < 1.0 + 1.5

    transcript: list[Message] = []
    for_model, transcript = _turn(transcript, 1)
    host.context(for_model)
    host.agent_end(transcript)  # the bank is offline after the start's timeout: queued, not sent
    after_first_turn = hanging_server.accepted
    assert after_first_turn == 1

    with elapsed() as t_later:
        for n in range(2, 6):
            for_model, transcript = _turn(transcript, n)
            assert host.context(for_model) == for_model
            host.agent_end(transcript)
    assert hanging_server.accepted == after_first_turn, "later turns send nothing to the dead server"
    # paying per bank per turn would cost 4 turns x (1 s recall + 1 s delivery); we pay ~nothing
    assert t_later[0] < 3.0
    host.shutdown()
    jobs = project.queue_jobs()
    assert sum(j["attempts"] for j in jobs) == 0
    assert hanging_server.accepted == 1, "shutdown does not wait on a bank that is offline either"
    assert "mem:recalling" not in statuses(ui)


# -- 7. shutdown: bounded by jobs and time, leftovers reported once and kept ----------------------------


def _queue_without_a_store(project: Project, runs: int) -> None:
    """A session whose store cannot be opened: every auto-retain is queued durably, none delivered."""
    (project.state / "blocked").write_text("a file where the store's folder should be", encoding="utf-8")
    project.configure(merged(LOCAL_CONFIG, {"local": {"path": ".hindsight/blocked/memory.db"}}))
    ui = RecordingUI()
    transcript: list[Message] = []
    with project.host(ui=ui) as host:
        for n in range(1, runs + 1):
            transcript = [*transcript, *exchange(n)]
            host.agent_end(transcript)
    assert len(project.queue_jobs()) == runs
    assert statuses(ui)[-1] == "mem:offline"
    assert len([w for w in ui.texts("warning") if "unavailable" in w]) == 1
    assert ui.texts("error") == [], "session_start and every hook fail open: no exception reached the host"


def test_shutdown_flush_is_bounded_by_jobs_and_keeps_the_rest_on_disk(tmp_path: Path, isolated: Path) -> None:
    project = Project(tmp_path / "repo", LOCAL_CONFIG)
    _queue_without_a_store(project, 3)

    # the store is fixed; the next session's startup flush takes one job, its shutdown one more
    project.configure(merged(LOCAL_CONFIG, {"retain": {"periodic_flush_max_jobs": 1, "shutdown_flush_max_jobs": 1}}))
    ui = RecordingUI()
    host = project.host("s2", ui=ui)
    host.start()
    host.shutdown()  # at once: shutdown waits for the startup flush instead of racing it
    (left,) = project.queue_jobs()
    assert "q3x" in job_text(left) and left["attempts"] == 0
    for n in (1, 2):
        assert project.unit_count(f"q{n}x") == 1 and project.unit_count(f"r{n}x") == 1
    assert project.unit_count("q3x") == 0
    leftovers = [w for w in ui.texts("warning") if "still queued" in w]
    assert len(leftovers) == 1 and "1 still queued" in leftovers[0] and "stay on disk" in leftovers[0]
    host.shutdown()  # a second shutdown does not report again
    assert len([w for w in ui.texts("warning") if "still queued" in w]) == 1

    ui3 = RecordingUI()
    with project.host("s3", ui=ui3):
        pass
    assert project.queue_jobs() == []
    for n in (1, 2, 3):
        assert project.unit_count(f"q{n}x") == 1 and project.unit_count(f"r{n}x") == 1
    assert ui3.texts("warning") == []


def test_shutdown_with_three_queued_jobs_and_max_two_sends_two_and_keeps_the_third(
    tmp_path: Path, isolated: Path
) -> None:
    """docs/shutdown.md step 2, exactly: only the shutdown flush runs (retain is off in this session, so no timer
    and no startup flush), and it stops at ``shutdown_flush_max_jobs``."""
    project = Project(tmp_path / "repo", LOCAL_CONFIG)
    _queue_without_a_store(project, 3)
    project.configure(merged(LOCAL_CONFIG, {"retain": {"enabled": False, "shutdown_flush_max_jobs": 2}}))
    ui = RecordingUI()
    with project.host("s2", ui=ui):
        assert len(project.queue_jobs()) == 3, "nothing is delivered before shutdown"
    (left,) = project.queue_jobs()
    assert "q3x" in job_text(left) and left["attempts"] == 0
    assert [project.unit_count(f"q{n}x") for n in (1, 2, 3)] == [1, 1, 0]
    (warning,) = ui.texts("warning")
    assert "2 sent, 1 still queued" in warning and "stay on disk" in warning


def test_shutdown_flush_is_bounded_by_time_against_a_hanging_server(
    tmp_path: Path, isolated: Path, hanging_server: HangingServer
) -> None:
    project = Project(
        tmp_path / "repo",
        _remote(
            hanging_server.url,
            banks={"user": {"enabled": False}},
            hindsight={"timeout_ms": 3000},
            queue={"retry_base_ms": 1},
            retain={"flush_timeout_ms": 300, "shutdown_flush_timeout_ms": 500},
            # no offline cooldown (ADR 069): every delivery here really goes to the server
            recall={"failure_cooldown_ms": 1},
        ),
    )
    ui = RecordingUI()
    host = project.host(ui=ui)
    host.start()
    with elapsed() as t_end:
        host.agent_end(exchange(1))
    assert t_end[0] < 0.3 + 1.5, "agent_end's delivery is clipped to retain.flush_timeout_ms"
    (job,) = project.queue_jobs()
    assert job["attempts"] == 1
    time.sleep(0.05)  # the 1 ms backoff and the 1 ms offline cooldown are over

    with elapsed() as t_stop:
        host.shutdown()
    # each request is clipped to the time left: ~0.5 s (+0.5 s slack), never the 3 s request cap
    assert 0.4 <= t_stop[0] < 0.5 + 1.0
    (job,) = project.queue_jobs()
    assert job["attempts"] == 2 and "dead_lettered_at" not in job
    assert "q1x" in job_text(job)
    leftovers = [w for w in ui.texts("warning") if "still queued" in w]
    assert len(leftovers) == 1 and "stay on disk" in leftovers[0]


def test_startup_flush_and_immediate_shutdown_never_crash_or_lose_jobs(tmp_path: Path, isolated: Path) -> None:
    """Regression: shutdown used to close SQLite under a still-running startup flush.

    A child process (a crash must not take pytest down) queues jobs with no usable store, then
    repeatedly starts a session whose startup flush delivers them and shuts it down at once.
    """
    project = Project(tmp_path / "repo", LOCAL_CONFIG)
    _queue_without_a_store(project, 16)
    project.configure(merged(LOCAL_CONFIG, {"retain": {"periodic_flush_max_jobs": 1, "shutdown_flush_max_jobs": 1}}))
    script = textwrap.dedent(
        """
        import sys
        from hindsight_hooks.hooks import Host, RecordingUI
        root = sys.argv[1]
        for i in range(8):
            ui = RecordingUI()
            host = Host(root, session_file=f"{root}/sessions/r{i}.jsonl", ui=ui)
            host.start()
            host.shutdown()
            errors = [t for t in ui.texts() if "failed" in t]
            assert not errors, errors
        print("ok")
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, str(project.root)], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "ok"
    assert project.queue_jobs() == [] and project.dead_jobs() == []
    for n in range(1, 17):
        assert project.unit_count(f"q{n}x") == 1, f"q{n}x"


@pytest.mark.integration
def test_periodic_flush_delivers_coalesced_retains_even_in_an_ignored_session(
    tmp_path: Path, isolated: Path, hindsight_url: str, make_bank: Callable[..., str]
) -> None:
    bank = make_bank("hh-hooks-periodic")
    project = Project(
        tmp_path / "repo",
        {
            "backend": "hindsight",
            "hindsight": {"base_url": hindsight_url},
            "banks": {"project": {"bank_id": bank}},
            "retain": {"delivery": "coalesced", "flush_interval_ms": 150, "async": False},
            "mental_models": {"enabled": False},
            "notifications": {"startup": False},
        },
    )
    ui = RecordingUI()
    with project.host(ui=ui) as host:
        host.agent_end(exchange(1))
        assert statuses(ui)[-1] == "mem:retain-queued"
        # the timer only drains jobs already accepted, so it runs in an ignored session too
        assert host.command("/hindsight:mode ignored").level == "info"
        # receipts are written just after the queue commit: wait for both, not only the queue
        delivered = wait_until(lambda: project.queue_jobs() == [] and len(project.receipts()) == 1, timeout_s=15.0)
        assert delivered, "the timer delivered the job and wrote its receipt"
        host.agent_end([*exchange(1), *exchange(2)])  # ignored: nothing new is queued
        assert project.queue_jobs() == []
    assert ui.texts("warning") == []
