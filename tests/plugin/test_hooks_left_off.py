""" "Where did we leave off?" is answered by the session before this one (ADR 222).

Through the ``Host`` harness on the embedded store (a real SQLite file): two sessions of work, each
retained by ``agent_end``. Before, the question found nothing (no stored message says "leave"), and
a new session started without the block that says where the last one stopped.
"""

from __future__ import annotations

from .hostkit import Project, assistant, block_items, block_text, isolated, local_project, user, wait_until

__all__ = ["isolated", "local_project"]  # fixtures, re-exported for pytest

MONDAY = [
    user("Set up the staging database backups.", 1),
    assistant("The nightly backup job now writes to the staging bucket.", 2),
    user("good, that's done then", 3),
]
TUESDAY = [
    user("Add rate limiting to the public API.", 11),
    assistant("I added a token bucket in api/limits.py; the burst traffic tests still fail.", 12),
    user("ok, we'll pick up the burst tests tomorrow", 13),
    assistant("Noted: the burst tests are left to fix.", 14),
]


def _retained(project: Project) -> Project:
    project.configure({"local": {"semantic": "off"}}, replace=False)
    for name, talk in (("monday", MONDAY), ("tuesday", TUESDAY)):
        with project.host(name) as host:
            host.agent_end(talk)
    assert wait_until(lambda: project.unit_count("burst tests are left") == 1)
    return project


def test_a_new_session_is_told_where_the_last_one_stopped(local_project: Project) -> None:
    with _retained(local_project).host("wednesday") as host:
        block = block_text(host.context([user("where did we leave off?", 21)]))
    assert block_items(block)[:5] == [
        "user: Add rate limiting to the public API.",
        "assistant: I added a token bucket in api/limits.py; the burst traffic tests still fail.",
        "user: ok, we'll pick up the burst tests tomorrow",
        "assistant: Noted: the burst tests are left to fix.",
        "user: Set up the staging database backups.",
    ], block


def test_asked_again_inside_a_session_it_is_about_the_one_before(local_project: Project) -> None:
    """The asking session's own messages are stored by its first ``agent_end``; the question is
    still about the sessions before it."""
    project = _retained(local_project)
    today = [user("Rename the helper in utils.py to parse_limits.", 21), assistant("Renamed; checks pass.", 22)]
    with project.host("wednesday") as host:
        host.agent_end(today)
        assert wait_until(lambda: project.unit_count("parse_limits") == 1)
        block = block_text(host.context([*today, user("where did we leave off?", 23)]))
    items = block_items(block)
    assert items[0] == "user: Add rate limiting to the public API.", block
    assert not any("parse_limits" in item for item in items), block


def test_whats_next_opening_a_session_is_told_how_the_last_one_ended(local_project: Project) -> None:
    with _retained(local_project).host("wednesday") as host:
        block = block_text(host.context([user("what's next?", 21)]))
    items = block_items(block)
    assert items[:4] == [
        "user: Add rate limiting to the public API.",
        "assistant: I added a token bucket in api/limits.py; the burst traffic tests still fail.",
        "user: ok, we'll pick up the burst tests tomorrow",
        "assistant: Noted: the burst tests are left to fix.",
    ], block
