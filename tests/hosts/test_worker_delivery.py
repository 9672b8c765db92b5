"""The delivery worker (a detached process, or the warm helper's thread) and a flush it finds running.

An agent stops its MCP server with SIGTERM and kills it a moment later (Codex: when ``exec``
exits); the server's shutdown flush is then killed holding its claim. Here a real child process
claims the queued job and hangs inside delivery, the worker starts, and the child is killed with
SIGKILL: the worker, waiting for that flush, delivers the job to the real SQLite store at once,
instead of leaving it claimed until the next session. A job in backoff is left to its time.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from hindsight_hooks.config_model import QueueConfig
from hindsight_hooks.hooks import Host, RecordingUI
from hindsight_hooks.hosts.helper import Helper
from hindsight_hooks.hosts.hookcmd import HookEvent
from hindsight_hooks.queue import RetainQueue
from hindsight_hooks.retain.delivery import DUE_WAIT_S
from hindsight_hooks.timefmt import iso_ms

from ..plugin.hostkit import LOCAL_CONFIG, Project, wait_until
from ..queue.conftest import FakeBackend

FORK = mp.get_context("fork")
TURN = [
    {"role": "user", "content": "Public plan: document the billing service"},
    {"role": "assistant", "content": "Noted."},
]


def _claim_and_hang(queue_path: str) -> None:
    """In a child: claim the queue's jobs (a flush with the default claim time limit, two
    minutes) and block inside the delivery of the first, like a server's flush cut off mid-way."""
    backend = FakeBackend()
    backend.on_call = lambda call: time.sleep(3600)
    RetainQueue(Path(queue_path), QueueConfig()).flush(backend)


def _queued(project: Project) -> Path:
    session = project.root / "sessions" / "s1.jsonl"
    Host(project.root, session_file=session, host_name="codex", ui=RecordingUI(), short_lived=True).agent_end(TURN)
    assert len(project.queue_jobs()) == 1
    return session


def _claimed_by_a_child(project: Project) -> Any:
    child = FORK.Process(target=_claim_and_hang, args=(str(project.queue_path),))
    child.start()
    assert wait_until(lambda: any(j.get("claim_token") for j in project.queue_jobs()), 30)
    return child


def _start_worker(how: str, project: Project, session: Path) -> Any:
    if how == "process":
        argv = ["-m", "hindsight_hooks.hosts.worker", "--cwd", str(project.root), "--host-name", "codex"]
        return subprocess.Popen(
            [sys.executable, *argv, "--session-file", str(session)],
            cwd=project.root,
            stdin=subprocess.DEVNULL,
        )
    hook = HookEvent("codex", "SessionEnd", {}, project.root, "s1", None, session)
    helper = Helper(project.root / "unused.sock")
    assert helper.deliver(hook)
    (thread,) = helper._work
    return thread


def _running(worker: Any) -> bool:
    return worker.poll() is None if isinstance(worker, subprocess.Popen) else bool(worker.is_alive())


def _delivered(project: Project) -> bool:
    return project.unit_count("document the billing") == 1 and project.queue_jobs() == []


@pytest.mark.parametrize("how", ["process", "helper"])
def test_the_worker_waits_for_a_running_flush_and_delivers_what_its_killed_claimant_left(
    tmp_path: Path, how: str
) -> None:
    project = Project(tmp_path / "repo", LOCAL_CONFIG)
    session = _queued(project)
    child = _claimed_by_a_child(project)
    worker = _start_worker(how, project, session)
    try:
        time.sleep(1.5)
        assert _running(worker), "the worker left while another flush held the job"
        assert project.unit_count("document the billing") == 0  # never sent twice at once
        assert child.pid is not None
        os.kill(child.pid, signal.SIGKILL)  # the claimant dies holding its claim
        child.join(10)
        assert wait_until(lambda: _delivered(project), 20), project.queue_jobs()
        assert wait_until(lambda: not _running(worker), 20)
    finally:
        if child.is_alive():
            child.kill()
            child.join(10)
        if isinstance(worker, subprocess.Popen) and worker.poll() is None:
            worker.kill()
            worker.wait(10)
    if isinstance(worker, subprocess.Popen):
        assert worker.returncode == 0


def test_the_worker_leaves_a_job_in_backoff_to_its_time(tmp_path: Path) -> None:
    project = Project(tmp_path / "repo", LOCAL_CONFIG)
    session = _queued(project)
    (job,) = project.queue_jobs()
    later = {**job, "attempts": 1, "next_attempt_at": iso_ms(time.time() + 3600), "last_error": "refused"}
    project.queue_path.write_text(json.dumps(later) + "\n", encoding="utf-8")
    worker = _start_worker("process", project, session)
    assert worker.wait(60) == 0
    assert project.unit_count("document the billing") == 0
    assert [j["id"] for j in project.queue_jobs()] == [job["id"]]
    assert project.queue_jobs()[0]["attempts"] == 1  # not tried again before its time


def test_the_worker_stops_waiting_for_a_flush_that_goes_on_and_sends_nothing_twice(tmp_path: Path) -> None:
    """A running flush (a long import, a slow server) is not sat out: the wait is bounded
    (``DUE_WAIT_S``), and the job stays with the flush that holds it."""
    project = Project(tmp_path / "repo", LOCAL_CONFIG)
    session = _queued(project)
    child = _claimed_by_a_child(project)
    try:
        (claimed,) = project.queue_jobs()
        worker = _start_worker("process", project, session)
        assert worker.wait(DUE_WAIT_S + 30) == 0  # left on its own, well before its 120 s limit
        assert child.is_alive()
        assert project.unit_count("document the billing") == 0
        assert project.queue_jobs() == [claimed]  # still the child's claim, untouched
    finally:
        assert child.pid is not None
        os.kill(child.pid, signal.SIGKILL)
        child.join(10)
