"""The embedded store is asked what the prompt asks, whatever the reply before it said (ADR 187).

Through the ``Host`` harness on the embedded store (a real SQLite file). The default query is the
last two messages, the reply and the prompt; the store searches its first 12 words, so a reply of a
dozen words used to take every place and the prompt was not searched at all.
"""

from __future__ import annotations

from .hostkit import Project, assistant, block_text, isolated, local_project, user, wait_until

__all__ = ["isolated", "local_project"]  # fixtures, re-exported for pytest

TESTS = "Tests run with make check, pytest first and then mypy qz1"
BILLING = "The billing export happens nightly at two qz2"
REPLY = (
    "Sure, I refactored the billing module, moved the invoices into a separate table, added indexes "
    "on customer id and created a migration script for the old rows. Anything else?"
)


def _seed(project: Project) -> None:
    project.configure({"local": {"semantic": "off"}}, replace=False)
    with project.host("earlier") as host:
        host.agent_end([user(TESTS, 1), assistant("Noted qz0", 1), user(BILLING, 2), assistant("Noted qz9", 2)])
    assert wait_until(lambda: project.unit_count("qz2") == 1)


def test_the_second_prompt_of_a_session_is_searched_by_its_own_words(local_project: Project) -> None:
    _seed(local_project)
    with local_project.host("today") as host:
        turn = [user("refactor the billing module please", 3), assistant(REPLY, 3)]
        block = block_text(host.context([*turn, user("how do we run the tests?", 4)]))
    assert "qz1" in block  # before ADR 187: the reply's words were searched, and the block was billing's
    assert "qz2" not in block


def test_a_prompt_that_says_little_is_searched_with_the_reply_before_it(local_project: Project) -> None:
    _seed(local_project)
    with local_project.host("today") as host:
        turn = [user("what runs at night?", 3), assistant("The billing export, every night.", 3)]
        block = block_text(host.context([*turn, user("why?", 4)]))
    assert "qz2" in block  # "why?" has no word to search by: the reply's words stand in for it


def test_a_follow_up_time_question_after_a_long_reply_reads_its_time(local_project: Project) -> None:
    """ADR 210: "what about yesterday?" has one search word, so the reply before it is searched too,
    after it; the store read the query's time from its end, the reply's, and found none."""
    import time

    local_project.configure({"local": {"semantic": "off"}}, replace=False)
    day_ms, now_ms = 86_400_000, int(time.time() * 1000)
    said = [
        ("The deploy pipeline signs every image with cosign qb1", now_ms - 40 * day_ms),
        ("The deploy pipeline runs the smoke tests in staging first qb2", now_ms - day_ms),
        ("The deploy pipeline pages the release owner when it fails qb3", now_ms - 5 * day_ms),
    ]
    with local_project.host("earlier") as host:
        turns = [
            message
            for n, (text, when) in enumerate(said, start=1)
            for message in (user(text, n, timestamp=when), assistant("Noted qb0", n, timestamp=when + 500))
        ]
        host.agent_end(turns)
    assert wait_until(lambda: all(local_project.unit_count(f"qb{i}") == 1 for i in (1, 2, 3)))
    reply = "The deploy pipeline signs every image with cosign before it pushes it to the registry. " * 5
    with local_project.host("today") as host:
        turn = [user("what did we agree about the deploy pipeline?", 10), assistant(reply, 10)]
        block = block_text(host.context([*turn, user("what about yesterday?", 11)]))
    assert "qb2" in block
    assert block.index("qb2") < min(block.index(tag) for tag in ("qb1", "qb3") if tag in block)


def test_a_switch_said_in_other_words_is_in_the_block_above_what_it_replaced(local_project: Project) -> None:
    """ADR 209 through the `Host`: the switch says neither "package" nor "manager"."""
    local_project.configure({"local": {"semantic": "off"}}, replace=False)
    with local_project.host("spring") as host:
        host.agent_end([user("pnpm is our package manager qc1", 1), assistant("Noted qc0", 1)])
    with local_project.host("autumn") as host:
        host.agent_end([user("We switched from pnpm to bun this week qc2", 5), assistant("Noted qc9", 5)])
    assert wait_until(lambda: local_project.unit_count("qc1") == 1 and local_project.unit_count("qc2") == 1)
    with local_project.host("today") as host:
        block = block_text(host.context([user("which package manager do we use?", 9)]))
    assert "qc1" in block and "qc2" in block
    assert block.index("qc2") < block.index("qc1")
