"""A proposal is shown with the user's answer (ADR 219).

Through the ``Host`` harness on the embedded store (a real SQLite file): sessions in which the agent
proposes something and the user takes it or turns it down in a few words. Before, the block showed
the proposal and never the answer, which says none of the later question's words.
"""

from __future__ import annotations

import re

from .hostkit import Project, assistant, block_text, isolated, local_project, user, wait_until

__all__ = ["isolated", "local_project"]  # fixtures, re-exported for pytest

TALKS = (
    (
        ("user", "The unit tests take four minutes with jest, it's painful."),
        ("assistant", "I'd suggest moving the test runner to vitest: it reuses the Vite config. Want me to migrate?"),
        ("user", "yes, go ahead"),
        ("assistant", "Done: vitest.config.ts added, jest removed from package.json."),
    ),
    (
        ("user", "Can we lint faster?"),
        ("assistant", "We could replace eslint with biome. Shall I switch?"),
        ("user", "no, keep eslint for now"),
        ("assistant", "OK, it stays."),
    ),
)


def test_the_block_shows_what_the_user_answered_to_a_proposal(local_project: Project) -> None:
    local_project.configure({"local": {"semantic": "off"}}, replace=False)
    for n, talk in enumerate(TALKS):
        with local_project.host(f"session-{n}") as host:
            host.agent_end(
                [(user if role == "user" else assistant)(text, 10 * n + i) for i, (role, text) in enumerate(talk)]
            )
    assert wait_until(lambda: local_project.unit_count("biome") == 1)
    for question, proposal, answer in (
        ("what did we decide about biome?", TALKS[1][1][1], TALKS[1][2][1]),
        ("did we move to vitest?", TALKS[0][1][1], TALKS[0][2][1]),
    ):
        with local_project.host("today") as host:
            block = block_text(host.context([user(question, 999)]))
        items = re.findall(r"^\d+\. (user|assistant): (.*) \([^()]*\)$", block, re.M)  # the date left off
        assert ("assistant", proposal) in items, block
        assert items[items.index(("assistant", proposal)) + 1] == ("user", answer), block


def test_the_block_shows_the_choice_the_user_made_once_the_agent_had_looked(local_project: Project) -> None:
    """ADR 235: the choice comes two messages after the question, once the agent has looked; "What
    linter do we use?" (ADR 232 reads it as asking for the linter) and "remind me what we did" (ADR
    222's walk) both show it right after the question."""
    local_project.configure({"local": {"semantic": "off"}}, replace=False)
    talk = [
        user("Should we lint with biome or eslint?", 1),
        assistant("Let me check the repo's config first.", 2),
        assistant("There's an old .eslintrc but nothing in package.json runs it.", 3),
        user("ok, go with biome then", 4),
    ]
    with local_project.host("monday") as host:
        host.agent_end(talk)
    assert wait_until(lambda: local_project.unit_count("go with biome") == 1)
    for question in ("What linter do we use?", "Remind me what we did."):
        with local_project.host("today") as host:
            block = block_text(host.context([user(question, 999)]))
        items = re.findall(r"^\d+\. (user|assistant): (.*) \([^()]*\)$", block, re.M)
        asked = items.index(("user", "Should we lint with biome or eslint?"))
        assert items[asked + 1] == ("user", "ok, go with biome then"), block
