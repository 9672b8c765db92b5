""" "What changed?" is answered by the changes of mind the user stated (ADR 230).

Through the ``Host`` harness on the embedded store (a real SQLite file): a session in which the user
makes a decision, then changes another, among requests, each retained by ``agent_end``. Before, the
question found what says "change", not "we switched from npm to pnpm".
"""

from __future__ import annotations

from .hostkit import Project, assistant, block_items, block_text, isolated, local_project, user, wait_until

__all__ = ["isolated", "local_project"]  # fixtures, re-exported for pytest

TALK = [
    user("Add a health check endpoint to the API.", 1),
    assistant("Added GET /healthz returning 200; the change is in api/health.py.", 2),
    user("Let's use Redis for the session cache.", 3),
    assistant("Redis it is.", 4),
    user("We switched from npm to pnpm in this repo.", 5),
    assistant("Noted: pnpm from now on.", 6),
]


def test_a_new_session_asking_what_changed_gets_the_change_stated(local_project: Project) -> None:
    local_project.configure({"local": {"semantic": "off"}}, replace=False)
    with local_project.host("monday") as host:
        host.agent_end(TALK)
    assert wait_until(lambda: local_project.unit_count("pnpm in this repo") == 1)
    with local_project.host("tuesday") as host:
        block = block_text(host.context([user("What changed lately?", 21)]))
    items = block_items(block)
    assert items and items[0] == "user: We switched from npm to pnpm in this repo.", block
    assert "user: Add a health check endpoint to the API." not in items, block  # a request is no change
    assert "user: Let's use Redis for the session cache." not in items, block  # a decision kept, not changed
