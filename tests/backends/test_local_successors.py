"""What replaced a recalled decision, said in other words than the question (ADR 209), on a real
SQLite file: the change is found through the word it leaves behind, and put above what it replaced."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hindsight_hooks.backends.base import InContext, RecallRequest
from hindsight_hooks.backends.local import LocalBackend
from tests.backends.test_local_support import item, make
from tests.backends.test_local_time_spans import said

ASKED_ON = "2026-11-29T12:00:00Z"

# Trial V: a year of one repo's sessions; pnpm said six ways, other facts between, then a switch.
YEAR = (
    ("s0", "2025-12-01T10:00:00Z", "We use pnpm for this repo."),
    ("s1", "2026-01-10T10:00:00Z", "The API listens on port 8080."),
    ("s2", "2026-02-19T10:00:00Z", "Remember, pnpm, not npm, in this repo."),
    ("s3", "2026-04-01T10:00:00Z", "The frontend uses React 18."),
    ("s4", "2026-06-08T10:00:00Z", "Use pnpm, the lockfile is pnpm-lock.yaml."),
    ("s5", "2026-08-28T10:00:00Z", "Run pnpm install first; this repo uses pnpm."),
    ("s6", "2026-09-24T10:00:00Z", "pnpm is our package manager."),
    ("s7", "2026-10-21T10:00:00Z", "Install it with pnpm add, we use pnpm here."),
    ("s8", "2026-11-20T10:00:00Z", "We switched from pnpm to bun this week."),
)


def recall(backend: LocalBackend, question: str, **kw: object) -> list[str]:
    request = RecallRequest(query=question, query_timestamp=ASKED_ON, **kw)  # type: ignore[arg-type]
    return [hit.text for hit in backend.recall("b", request).hits]


@pytest.mark.parametrize(
    "question", ["which package manager do we use?", "how do I install deps in this repo?", "what's the lockfile?"]
)
def test_a_switch_that_says_none_of_the_questions_words_comes_above_what_it_replaced(
    tmp_path: Path, question: str
) -> None:
    """Before: "which package manager do we use?" got the six pnpm statements and React, never the
    switch to bun, which says neither "package" nor "manager"."""
    hits = recall(said(make(tmp_path), *YEAR), question, limit=8)
    assert hits[0] == "user: We switched from pnpm to bun this week."
    assert any("pnpm" in hit and "bun" not in hit for hit in hits[1:])  # what it replaced stays, below


@pytest.mark.parametrize(
    ("older", "change", "question"),
    [
        ("Our CI runs on Jenkins.", "Moved off Jenkins, builds are on Buildkite now.", "where does our CI run?"),
        ("The cache is Redis.", "Redis is out; Memcached from now on.", "what is the cache?"),
        ("Docs are built with Sphinx.", "We use MkDocs instead of Sphinx since Monday.", "how are the docs built?"),
        (
            "Alerts go to the Opsgenie rotation.",
            "We dropped Opsgenie, PagerDuty pages the on-call.",
            "where do alerts go?",
        ),
        ("Wir bauen die Doku mit Sphinx.", "Ab jetzt MkDocs statt Sphinx.", "womit bauen wir die Doku?"),
        # said as the decision is taken (ADR 211)
        ("The cache is Redis.", "Let's drop Redis, Memcached from now on.", "what is the cache?"),
        ("Our CI runs on Jenkins.", "We'll replace Jenkins with Buildkite next sprint.", "where does our CI run?"),
    ],
)
def test_each_way_of_naming_what_was_left_behind(tmp_path: Path, older: str, change: str, question: str) -> None:
    backend = said(make(tmp_path), ("a", "2026-03-02T10:00:00Z", older), ("b", "2026-10-05T10:00:00Z", change))
    assert recall(backend, question) == [f"user: {change}", f"user: {older}"]


def test_an_older_change_or_one_that_leaves_something_else_behind_is_not_brought_in(tmp_path: Path) -> None:
    backend = said(
        make(tmp_path),
        ("a", "2026-01-05T10:00:00Z", "We switched from Jenkins to GitHub Actions."),  # older than the hit
        ("b", "2026-05-05T10:00:00Z", "Our CI runs on GitHub Actions."),
        ("c", "2026-09-05T10:00:00Z", "We switched from npm to pnpm."),  # leaves behind a word the hit never says
    )
    assert recall(backend, "where does our CI run?") == ["user: Our CI runs on GitHub Actions."]


def test_a_question_about_a_period_asks_what_held_then(tmp_path: Path) -> None:
    """ "which package manager did we use in March?" is answered by what was said then (ADR 180)."""
    hits = recall(said(make(tmp_path), *YEAR), "which package manager did we use last spring?", limit=8)
    assert not any("bun" in hit for hit in hits)


def test_the_change_stays_in_its_bank_and_out_of_what_the_model_reads(tmp_path: Path) -> None:
    backend = said(make(tmp_path), ("a", "2026-03-02T10:00:00Z", "The cache is Redis."))
    turn = json.dumps([{"role": "user", "content": "Redis is out; Memcached from now on.", "timestamp": ASKED_ON}])
    backend.retain_batch("other", [item(turn, "x", source="auto")], operation_id="x")
    assert recall(backend, "what is the cache?") == ["user: The cache is Redis."]  # another bank's change

    said(backend, ("b", "2026-10-05T10:00:00Z", "Redis is out; Memcached from now on."))
    reads = InContext(document_id="b", messages=[{"role": "user", "content": "Redis is out; Memcached from now on."}])
    assert recall(backend, "what is the cache?", in_context=reads) == ["user: The cache is Redis."]


def test_the_limit_and_the_budget_still_hold(tmp_path: Path) -> None:
    backend = said(make(tmp_path), *YEAR)
    switch, replaced = "user: We switched from pnpm to bun this week.", "user: pnpm is our package manager."
    assert recall(backend, "which package manager do we use?", limit=1) == [switch]
    assert recall(backend, "which package manager do we use?", limit=2) == [switch, replaced]
    one = recall(said(make(tmp_path / "2"), *YEAR), "which package manager do we use?", limit=8, max_tokens=12)
    assert one == ["user: We switched from pnpm to bun this week."]


def test_what_a_hit_itself_gives_up_is_not_what_it_states(tmp_path: Path) -> None:
    """Found on the synthetic bench: "…use msgspec instead of writing our own" left "writing"
    behind, and every later "…instead of writing our own" about other services was put above it."""
    backend = said(
        make(tmp_path),
        ("a", "2026-03-02T10:00:00Z", "Ownership of the search indexer moved to Lena after the reorg."),
        ("b", "2026-04-02T10:00:00Z", "For the search indexer we decided to use msgspec instead of writing our own."),
        ("c", "2026-09-02T10:00:00Z", "For the rate limiter we decided to use orjson instead of writing our own."),
    )
    hits = recall(backend, "who is responsible for the search indexer?")
    assert not any("rate limiter" in hit for hit in hits)


def test_a_change_of_a_change_comes_above_it(tmp_path: Path) -> None:
    """pnpm → bun → deno: the second change names bun, which only the first change says."""
    backend = said(make(tmp_path), *YEAR, ("s9", "2026-11-26T10:00:00Z", "Bun broke our CI, we moved off bun to deno."))
    hits = recall(backend, "which package manager do we use?", limit=8)
    assert hits[:3] == [
        "user: Bun broke our CI, we moved off bun to deno.",
        "user: We switched from pnpm to bun this week.",
        "user: pnpm is our package manager.",
    ]
    assert len(hits) == len(set(hits)) <= 8


def test_the_switch_comes_first_with_the_semantic_extra_too(tmp_path: Path) -> None:
    from hindsight_hooks.backends.semantic import StaticEmbedder

    backend = said(LocalBackend(tmp_path / "memory.db", semantic=StaticEmbedder()), *YEAR)
    assert backend.wait_for_vectors(120)
    recall(backend, "warm the bank's vectors")  # a cold bank answers by words and reads its vectors
    assert backend.wait_for_vectors(120)
    hits = recall(backend, "which package manager do we use?", limit=8)
    assert "dense" in backend.last_search_mode
    assert hits[:2] == ["user: We switched from pnpm to bun this week.", "user: pnpm is our package manager."]


def test_a_change_written_after_a_recall_is_found_by_the_next(tmp_path: Path) -> None:
    """The marks a file holds are kept between recalls until the file changes."""
    backend = said(make(tmp_path), *YEAR[:-1])
    assert not any("bun" in hit for hit in recall(backend, "which package manager do we use?"))
    said(backend, YEAR[-1])
    assert recall(backend, "which package manager do we use?")[0] == "user: We switched from pnpm to bun this week."


def test_a_word_the_bank_says_everywhere_links_no_change(tmp_path: Path) -> None:
    """Found on the hooks bench (ADR 211): in a coding agent's bank "I replaced the type check"
    leaves "type" behind, and every hit saying "type" got that change put above it. A word said in
    more than 10 % of the bank's units (and more than 50) names no one decision; a rare one does."""
    chatter = [(f"c{i}", f"2026-0{1 + i % 8}-1{i % 9}T10:00:00Z", f"Note {i}: the type of field {i} is int.")
               for i in range(60)]  # fmt: skip
    backend = said(
        make(tmp_path),
        *chatter,
        ("h", "2026-09-01T10:00:00Z", "Type hints are checked by mypy in this repo."),
        ("x", "2026-10-01T10:00:00Z", "I replaced the type annotation on Foo with a Protocol."),
        ("m", "2026-10-02T10:00:00Z", "We dropped mypy, pyright checks the hints now."),
    )
    hits = recall(backend, "how are the hints checked?", limit=4)
    assert hits[:2] == [
        "user: We dropped mypy, pyright checks the hints now.",
        "user: Type hints are checked by mypy in this repo.",
    ]
    assert not any("Protocol" in hit for hit in hits)


def test_a_switch_is_found_in_a_repo_whose_tool_calls_say_the_old_tool_everywhere(tmp_path: Path) -> None:
    """ADR 211's bound: a JS repo's sessions run ``pnpm test`` and ``pnpm install`` all the time,
    so "pnpm" is in more than 50 units and more than 3 % of them (here 58 of 674: the tool
    calls). The switch to bun must still come above "pnpm is our package manager"."""
    backend = make(tmp_path)
    op = 0
    for day in range(1, 29):
        for run in range(6):
            when = f"2026-10-{day:02d}T{9 + run:02d}:00:00Z"
            command = "pnpm test" if run in (0, 3) else f"node scripts/task{run}.js --step {day}"
            turn = [
                {"role": "user", "content": f"run task {run} for step {day}", "timestamp": when},
                {"role": "assistant", "timestamp": when,
                 "content": [{"type": "toolCall", "id": "1", "name": "bash", "arguments": {"command": command}}]},
                {"role": "toolResult", "content": f"ok: task {run} step {day} done", "timestamp": when},
                {"role": "assistant", "content": f"Task {run} for step {day} is done.", "timestamp": when},
            ]  # fmt: skip
            backend.retain_batch("b", [item(json.dumps(turn), f"d{day}-{run}", source="auto", timestamp=when)],
                                 operation_id=f"op{op}")  # fmt: skip
            op += 1
    said(backend, ("pm", "2026-09-24T10:00:00Z", "pnpm is our package manager."), YEAR[-1])
    hits = recall(backend, "which package manager do we use?", limit=8)
    assert hits[:2] == ["user: We switched from pnpm to bun this week.", "user: pnpm is our package manager."]
