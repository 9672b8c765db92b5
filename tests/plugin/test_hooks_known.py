""" "What do you remember?" is answered by what the user said to keep (ADR 223).

Through the ``Host`` harness on the embedded store (a real SQLite file): a session in which the user
states a convention, a decision and a preference among requests, each retained by ``agent_end``.
Before, the question found nothing (no stored message says "remember" or "know").
"""

from __future__ import annotations

from .hostkit import (
    Project,
    asked_the_next_day,
    assistant,
    isolated,
    local_project,
    user,
)

__all__ = ["isolated", "local_project"]  # fixtures, re-exported for pytest

TALK = [
    user("Add a health check endpoint to the API.", 1),
    assistant("Added GET /healthz returning 200.", 2),
    user("We use pnpm, never npm, in this repo.", 3),
    assistant("Noted: pnpm only.", 4),
    user("Let's go with Postgres 16 for the billing database.", 5),
    assistant("OK, Postgres 16 it is.", 6),
    user("I prefer small commits with conventional commit messages.", 7),
    assistant("Will do.", 8),
]


def test_a_new_session_asking_what_is_remembered_gets_what_was_said_to_keep(local_project: Project) -> None:
    greeted = (assistant("Hello! How can I help?", 20), user("what do you remember?", 21))
    items = asked_the_next_day(local_project, TALK, "conventional commit", *greeted)
    assert items == [
        "user: I prefer small commits with conventional commit messages.",
        "user: Let's go with Postgres 16 for the billing database.",
        "user: We use pnpm, never npm, in this repo.",
        "user: Add a health check endpoint to the API.",  # then what the last session was about
    ], items


def test_a_new_session_asking_for_its_preferences_gets_them_alone(local_project: Project) -> None:
    """ "What are my preferences?" (ADR 228): what the user said to keep, not what they worked on."""
    items = asked_the_next_day(local_project, TALK, "conventional commit", user("What are my preferences?", 21))
    assert items == [
        "user: I prefer small commits with conventional commit messages.",
        "user: Let's go with Postgres 16 for the billing database.",
        "user: We use pnpm, never npm, in this repo.",
    ], items
