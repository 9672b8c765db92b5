"""``short_lived`` hosts (a fresh process per hook): agent_end queues durably and returns; a later
process delivers with ``start()`` + ``shutdown()``. Everything is read from the real files."""

from __future__ import annotations

from hindsight_hooks.hooks import Host, RecordingUI

from .hostkit import Project, exchange, isolated, local_project, markers

__all__ = ["isolated", "local_project"]  # fixtures, re-exported for pytest


def _short_lived_host(project: Project) -> Host:
    return Host(
        project.root,
        session_file=project.session_file("s1"),
        host_name="claude-code",
        ui=RecordingUI(),
        short_lived=True,
    )


def test_a_short_lived_agent_end_queues_and_delivers_nothing(local_project: Project) -> None:
    host = _short_lived_host(local_project)
    assert host.ctx.short_lived is True
    host.agent_end(exchange(1))
    assert len(local_project.queue_jobs()) == 1
    for marker in markers(1):
        assert local_project.unit_count(marker) == 0


def test_a_later_process_start_and_shutdown_delivers_what_short_lived_hooks_queued(local_project: Project) -> None:
    _short_lived_host(local_project).agent_end(exchange(1))
    second = _short_lived_host(local_project)  # the next hook: a fresh host on the same session
    second.agent_end(exchange(1) + exchange(2))
    assert len(local_project.queue_jobs()) >= 1
    worker = Host(local_project.root, session_file=local_project.session_file("s1"), host_name="claude-code")
    worker.start()
    worker.shutdown()
    assert local_project.queue_jobs() == []
    for n in (1, 2):
        for marker in markers(n):
            assert local_project.unit_count(marker) == 1


def test_an_ordinary_host_still_delivers_inline(local_project: Project) -> None:
    host = local_project.host("s1")
    assert host.ctx.short_lived is False
    host.agent_end(exchange(1))
    for marker in markers(1):
        assert local_project.unit_count(marker) == 1
