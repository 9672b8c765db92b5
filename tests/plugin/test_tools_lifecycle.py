"""The retain tools at the edges of a session, through ``Host`` only (issue 9, items 9 and 10).

After ``shutdown`` a tool call must not start a fresh session behind the host's back (it stored
the memory and reopened a store nothing closed): writes are refused with the spec's "queue is
closed" and reads say the session has ended. And a store that cannot be opened must not drop an
explicit memory: it is queued durably, like ``agent_end``'s turns, and the result says so.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hindsight_hooks.hooks import RecordingUI

from .hostkit import Project, exchange, isolated, job_text, local_project

__all__ = ["isolated", "local_project"]  # fixtures, re-exported for pytest


def _open_files_under(folder: Path) -> list[str]:
    """Paths under ``folder`` this process holds open (Linux ``/proc``)."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(folder)):
            found.append(target)
    return found


def test_after_shutdown_writes_are_refused_and_nothing_is_reopened(local_project: Project) -> None:
    host = local_project.host()
    with host:
        host.agent_end(exchange(1))
        stored = host.call_tool("hindsight_retain", {"items": [{"content": "before shutdown b1b"}]})
    assert "stored" in stored.text
    assert _open_files_under(local_project.state) == []
    jobs_before = local_project.queue_jobs()

    retain = host.call_tool("hindsight_retain", {"items": [{"content": "after shutdown z1z"}]})
    retain_global = host.call_tool("hindsight_retain_global", {"items": [{"content": "after shutdown z2z"}]})
    recall = host.call_tool("hindsight_recall", {"query": "before shutdown b1b"})
    reflect = host.call_tool("hindsight_reflect", {"query": "what happened"})
    host.agent_end([*exchange(1), *exchange(2)])
    for_model = host.context([*exchange(1), *exchange(2)])

    assert retain.is_error and retain.text == "Error: Hindsight retain queue is closed."
    assert retain_global.is_error and "closed" in retain_global.text
    for read in (recall, reflect):
        assert read.is_error and "session has ended" in read.text
    assert local_project.unit_count("z1z") == 0 and local_project.unit_count("z2z") == 0
    assert local_project.unit_count("q2x") == 0 and len(for_model) == 4
    assert local_project.queue_jobs() == jobs_before
    assert _open_files_under(local_project.state) == [], "no store or lock left open by a late call"

    host.start()  # a new session on the same context works again, and retains what was missed
    with host:
        host.agent_end([*exchange(1), *exchange(2)])
        again = host.call_tool("hindsight_retain", {"items": [{"content": "new session n1n"}]})
    assert "stored" in again.text
    assert local_project.unit_count("q2x") == 1 and local_project.unit_count("n1n") == 1


@pytest.mark.parametrize("kind", ["a directory", "a file of garbage"])
def test_an_unopenable_store_queues_the_memory_durably_and_says_so(local_project: Project, kind: str) -> None:
    if kind == "a directory":
        local_project.db.mkdir()
    else:
        local_project.db.write_bytes(b"this is not a SQLite database\n" * 200)
    ui = RecordingUI()
    with local_project.host(ui=ui) as host:
        host.agent_end(exchange(1))
        result = host.call_tool("hindsight_retain", {"items": [{"content": "explicit fact k7k about the parser"}]})
    # the write did not happen (an error result, docs/tools.md#hindsight_retain), but the memory is queued, not dropped
    assert result.text.startswith("1 memory queued."), result.text
    assert "store is unavailable" in result.text and "stays queued" in result.text
    assert result.details["queued"] is True and result.details["stored"] == 0
    assert any("k7k" in job_text(job) for job in local_project.queue_jobs()), "the memory is on disk"

    # the store is fixed: the next session delivers what was queued, the explicit memory included
    if kind == "a directory":
        local_project.db.rmdir()
    else:
        local_project.db.unlink()
    with local_project.host() as host:
        host.agent_end([*exchange(1), *exchange(2)])  # delivers the bank's queue, oldest first
    assert local_project.unit_count("k7k") == 1
    assert local_project.unit_count("q1x") == 1 and local_project.unit_count("q2x") == 1
