""" "Which CI do we use?" in a new session gets the memory that names the tool (ADR 232).

Through the ``Host`` harness on the embedded store (a real SQLite file): a session in which the user
says which tools the project uses, among requests, retained by ``agent_end``. Before, "What UI
framework do we use?" got no block: no memory says "UI" or "framework".
"""

from __future__ import annotations

from .hostkit import Project, asked_the_next_day, assistant, isolated, local_project, user

__all__ = ["isolated", "local_project"]  # fixtures, re-exported for pytest

TALK = [
    user("The dashboard frontend is written in Svelte.", 1),
    assistant("Noted, Svelte for the dashboard.", 2),
    user("Builds and deploys go through GitHub Actions.", 3),
    assistant("Got it.", 4),
    user("Our API keys live in 1Password, vault 'Platform'. Never commit them.", 5),
    assistant("Understood.", 6),
    user("Bump the dashboard timeout to 30 seconds.", 7),
    assistant("Done, the dashboard timeout is 30 s now.", 8),
]


def test_a_question_for_a_kind_of_tool_gets_the_tool_named(local_project: Project) -> None:
    items = asked_the_next_day(local_project, TALK, "GitHub Actions", user("What UI framework do we use?", 21))
    assert items and items[0] == "user: The dashboard frontend is written in Svelte.", items
    assert "user: Builds and deploys go through GitHub Actions." not in items, items  # another kind


def test_where_the_secrets_are_stored_gets_the_secrets_manager_named(local_project: Project) -> None:
    """ADR 236: no memory says "secrets" or "stored"; the one that names 1Password answers."""
    items = asked_the_next_day(local_project, TALK, "GitHub Actions", user("Where are the secrets stored?", 21))
    assert items and items[0] == "user: Our API keys live in 1Password, vault 'Platform'. Never commit them.", items
