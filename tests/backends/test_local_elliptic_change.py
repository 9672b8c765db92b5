"""A user's elliptic change is searched with the words of the message it answers (ADR 206)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hindsight_hooks.backends.base import RecallRequest
from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.backends.local_windows import elliptic_change, neighbour_of
from tests.backends.test_local_recall_windows import append, contexts
from tests.backends.test_local_support import item, make

LATER = "2026-11-29T12:00:00Z"


@pytest.mark.parametrize(
    ("text", "answered", "elliptic"),
    [
        # changes that name only what the assistant offered
        ("Change of plan: GitHub Pages instead, it's free for us.",
         "The docs build uses most of the Netlify minutes; GitHub Pages hosting is free.", True),
        ("On second thought, pnpm for this repo.", "npm installs take 90 s here; pnpm would cut that.", True),
        # a statement of its own after an unrelated reply: it shares no word of a subject
        ("Ownership of the ledger api moved to Dara after the reorg.", "Added a changelog entry.", False),
        ("For the session store we decided to use pillow instead.", "Something else already uses that port.", False),
        # too short to be about anything but the message before it
        ("No, Postgres instead.", "I'd suggest MySQL for the orders service.", True),
        # shares words, but changes nothing
        ("GitHub Pages sounds good.", "GitHub Pages hosting is free.", False),
        # the change words themselves are no shared subject
        ("Change of plan: we stay on Jenkins.", "The metrics exporter changes look fine.", False),
    ],
)  # fmt: skip
def test_what_makes_a_change_elliptic(text: str, answered: str, elliptic: bool) -> None:
    assert elliptic_change(text, answered) is elliptic


def sessions(backend: LocalBackend, *said: tuple[str, str, list[tuple[str, str]]]) -> LocalBackend:
    """Each ``(session, time, [(role, text), …])`` retained as its own session, said then."""
    for op, when, msgs in said:
        turn = json.dumps([{"role": role, "content": text, "timestamp": when} for role, text in msgs])
        backend.retain_batch("b", [item(turn, op, source="auto", timestamp=when)], operation_id=op)
    return backend


def asked(backend: LocalBackend, query: str) -> list[str]:
    return [h.text for h in backend.recall("b", RecallRequest(query=query, query_timestamp=LATER)).hits]


DOCS = (
    ("a", "2026-11-10T10:00:00Z", [
        ("user", "Where should we host the docs?"),
        ("assistant", "Netlify fits: free tier, deploy previews for every pull request."),
        ("user", "Let's host the docs on Netlify."),
    ]),
    ("b", "2026-11-20T10:00:00Z", [
        ("user", "Netlify's build minutes ran out again."),
        ("assistant", "The docs build uses most of the Netlify minutes; GitHub Pages hosting is free for us."),
        ("user", "Change of plan: GitHub Pages instead, it's free for us."),
    ]),
    ("c", "2026-11-15T10:00:00Z", [("user", "The docs are written in MkDocs."), ("assistant", "Noted.")]),
)  # fmt: skip


def test_a_change_that_names_only_the_new_choice_is_found_and_ranks_above_the_old(tmp_path: Path) -> None:
    """A user's trial (ADR 206): "where do we host the docs?" found the Netlify pick and never the
    later "Change of plan: GitHub Pages instead", which says neither docs nor host."""
    hits = asked(sessions(make(tmp_path), *DOCS), "where do we host the docs?")
    change, pick = (
        "user: Change of plan: GitHub Pages instead, it's free for us.",
        "user: Let's host the docs on Netlify.",
    )
    assert change in hits and pick in hits
    assert hits.index(change) < hits.index(pick)


def test_a_take_back_that_shares_one_word_ranks_above_what_it_took_back(tmp_path: Path) -> None:
    backend = sessions(
        make(tmp_path),
        ("a", "2026-11-10T10:00:00Z", [("user", "We use npm for this repo, lockfile committed."), ("assistant", "OK")]),
        ("b", "2026-11-20T10:00:00Z", [
            ("user", "Installs are slow."),
            ("assistant", "npm installs take 90 s here; pnpm would cut that with its store."),
            ("user", "On second thought, pnpm for this repo."),
        ]),
    )  # fmt: skip
    hits = asked(backend, "which package manager do we use for this repo?")
    assert hits[:2] == [
        "user: On second thought, pnpm for this repo.",
        "user: We use npm for this repo, lockfile committed.",
    ]


def test_the_answered_message_is_read_back_when_the_change_comes_in_the_next_delta(tmp_path: Path) -> None:
    """Auto-retain delivers a session in deltas: the assistant's message in one, the user's change
    in the next; the append reads the message it answers back from the document."""
    backend = make(tmp_path)
    append(backend, "1", ("user", "Installs are slow."), ("assistant", "pnpm would cut the npm install time."))
    append(backend, "2", ("user", "On second thought, pnpm for this repo."), ("assistant", "Switching."))
    append(backend, "3", ("user", "The release notes are in CHANGES.md."))
    ctx = contexts(backend)
    assert neighbour_of(ctx["user: On second thought, pnpm for this repo."]) == "cut npm install time"
    assert neighbour_of(ctx["user: The release notes are in CHANGES.md."]) == ""  # no change: nothing


def test_a_one_word_change_answers_the_proposal_before_it(tmp_path: Path) -> None:
    """ "No, Postgres instead." names nothing but the new choice; it is about the orders service
    the assistant's proposal named, and ranks above the earlier MySQL statement."""
    backend = sessions(
        make(tmp_path),
        ("a", "2026-11-10T10:00:00Z", [("user", "Let's use MySQL for the orders service."), ("assistant", "OK")]),
        ("b", "2026-11-20T10:00:00Z", [
            ("user", "Which engine for the orders service, again?"),
            ("assistant", "I'd suggest MySQL for the orders service."),
            ("user", "No, Postgres instead."),
        ]),
    )  # fmt: skip
    hits = asked(backend, "which database do we use for the orders service?")
    change, older = "user: No, Postgres instead.", "user: Let's use MySQL for the orders service."
    assert change in hits and older in hits
    assert hits.index(change) < hits.index(older)
