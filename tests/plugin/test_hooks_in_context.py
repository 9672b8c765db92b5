"""The block leaves out what the model already reads this turn (ADR 183).

Through the ``Host`` harness only, on the embedded store (a real SQLite file): a session's own
earlier turns are in the messages the host sends, so the block shows memories from other sessions
in their place; a session that was compacted gets its early turns back from memory; and two
sessions asking the same thing in one process each get the block that fits their own messages.
"""

from __future__ import annotations

from .hostkit import Project, assistant, block_text, isolated, local_project, user, wait_until

__all__ = ["isolated", "local_project"]  # fixtures, re-exported for pytest

EARLIER = "Invoice numbers are never reused, settled at the kickoff qv1"
TODAY_Q = "Invoice numbers run sequentially per customer qv2"
TODAY_A = "Added: invoice numbers count up per customer qv3"
ASK = "what did we settle about invoices?"


def _seed_earlier_session(project: Project) -> None:
    project.configure({"local": {"semantic": "off"}}, replace=False)
    with project.host("kickoff") as host:
        host.agent_end([user(EARLIER, 1), assistant("Noted, qv0", 1)])
    assert project.unit_count("qv1") == 1


def test_the_sessions_own_turns_give_way_to_other_sessions_and_return_after_compaction(
    local_project: Project,
) -> None:
    _seed_earlier_session(local_project)
    with local_project.host("today") as host:
        turn = [user(TODAY_Q, 2), assistant(TODAY_A, 2)]
        host.agent_end(turn)
        assert wait_until(lambda: local_project.unit_count("qv3") == 1)

        block = block_text(host.context([*turn, user(ASK, 3)]))
        assert "qv1" in block  # the other session's memory is shown
        assert "qv2" not in block and "qv3" not in block  # this session's turns are right above it

        # the host compacted the session: its early turns are no longer sent, so memory brings them back
        compacted = [user("Summary so far: billing work on invoices.", 4), user(ASK + " (again)", 5)]
        block = block_text(host.context(compacted))
        assert "qv2" in block and "qv3" in block and "qv1" in block


def test_two_sessions_asking_the_same_in_one_process_get_their_own_block(local_project: Project) -> None:
    _seed_earlier_session(local_project)
    with local_project.host("today") as today:
        turn = [user(TODAY_Q, 2), assistant(TODAY_A, 2)]
        today.agent_end(turn)
        assert wait_until(lambda: local_project.unit_count("qv3") == 1)
        assert "qv2" not in block_text(today.context([*turn, user(ASK, 3)]))
        with local_project.host("other") as other:  # the same prompt, within the cache's lifetime
            block = block_text(other.context([user(ASK, 3)]))
        assert "qv2" in block and "qv3" in block and "qv1" in block
