""" "What changed?" is answered by the changes of mind the user stated (ADR 230).

Through the ``Host`` harness on the embedded store (a real SQLite file): a session in which the user
makes a decision, then changes another, among requests, each retained by ``agent_end``. Before, the
question found what says "change", not "we switched from npm to pnpm".
"""

from __future__ import annotations

from .hostkit import Project, asked_the_next_day, assistant, isolated, local_project, user

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
    items = asked_the_next_day(local_project, TALK, "pnpm in this repo", user("What changed lately?", 21))
    assert items and items[0] == "user: We switched from npm to pnpm in this repo.", items
    assert "user: Add a health check endpoint to the API." not in items, items  # a request is no change
    assert "user: Let's use Redis for the session cache." not in items, items  # a decision kept, not changed
