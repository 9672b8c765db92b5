""" "When is the standup?" in a new session gets "the daily sync is at 9:30" (ADR 233).

Through the ``Host`` harness on the embedded store (a real SQLite file), retained by ``agent_end``.
Before, the question got no block: no memory says "standup".
"""

from __future__ import annotations

from .hostkit import Project, asked_the_next_day, assistant, isolated, local_project, user

__all__ = ["isolated", "local_project"]  # fixtures, re-exported for pytest

TALK = [
    user("Our daily sync is at 9:30, keep my mornings free before it.", 1),
    assistant("Noted.", 2),
    user("Bump the dashboard timeout to 30 seconds.", 3),
    assistant("Done, the dashboard timeout is 30 s now.", 4),
]


def test_a_word_no_memory_says_is_searched_by_its_other_words(local_project: Project) -> None:
    items = asked_the_next_day(local_project, TALK, "daily sync", user("When is the standup?", 21))
    assert items and items[0] == "user: Our daily sync is at 9:30, keep my mornings free before it.", items
