"""An acknowledgement is shown as the user's statement it says back (ADR 215), on a real SQLite file."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hindsight_hooks.backends.base import RecallRequest
from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.backends.local_echo import ACK_STEMS, acknowledges, said_of_its_own
from hindsight_hooks.backends.local_time import content_stems
from hindsight_hooks.backends.semantic import StaticEmbedder
from tests.backends.test_local_support import item, make, with_vectors_in_memory

ASKED_ON = "2026-11-29T12:00:00Z"


@functools.cache
def _embedder() -> StaticEmbedder:
    """One model for the module: loading it is the slow part."""
    return StaticEmbedder()


def sessions(backend: LocalBackend, *turns: tuple[str, str]) -> LocalBackend:
    """Each ``(prompt, reply)`` retained as its own session: a user message and the assistant's reply."""
    for n, (prompt, reply) in enumerate(turns):
        when = f"2026-{n % 9 + 1:02d}-0{n % 7 + 1}T10:00:00Z"
        said = json.dumps(
            [{"role": "user", "content": prompt, "timestamp": when}, {"role": "assistant", "content": reply}]
        )
        backend.retain_batch("b", [item(said, f"s{n}", source="auto", timestamp=when)], operation_id=f"o{n}")
    return backend


def recall(backend: LocalBackend, question: str, **kw: object) -> list[str]:
    request = RecallRequest(query=question, query_timestamp=ASKED_ON, **kw)  # type: ignore[arg-type]
    return [hit.text for hit in backend.recall("b", request).hits]


@pytest.mark.parametrize(
    ("reply", "prompt"),
    [
        ("Noted: Fly.io via deploy.yml.", "Deploys go to Fly.io through the GitHub Actions workflow deploy.yml."),
        ("Got it, pnpm for the frontend.", "We use pnpm for the frontend, please remember that."),
        ("Okay, Postgres 16 on Neon.", "The database is Postgres 16 on Neon."),
        ("Noted: pytest with plain asserts, no unittest classes.", "For tests I prefer pytest with plain asserts."
         " Never unittest classes."),
        ("Understood, I'll keep that in mind.", "Releases are cut on Thursdays."),
        ("Verstanden, pnpm.", "Wir nutzen pnpm im Frontend."),
        # an agent's longer ways of saying it back
        ("Got it — I'll use pnpm for the frontend going forward.", "We use pnpm for the frontend."),
        ("Understood. I'll make sure to run the tests with pytest from now on.", "Always run the tests with pytest."),
        ("Sure! I'll remember that deploys go through deploy.yml on Fly.io.",
         "Deploys go to Fly.io through the GitHub Actions workflow deploy.yml."),
        ("Noted — I will keep that in mind for this repo.", "Releases are cut on Thursdays."),
    ],
)  # fmt: skip
def test_a_reply_that_only_says_its_prompt_back_acknowledges_it(reply: str, prompt: str) -> None:
    assert acknowledges(f"assistant: {reply}", f"user: {prompt}")


@pytest.mark.parametrize(
    ("reply", "prompt"),
    [
        # one word of its own makes it a statement
        ("Will do, with --frozen-lockfile.", "Please always use pnpm in this repo."),
        ("The weeknd!", "Who are you going to see tonight?"),
        # the answer to a question is no acknowledgement, and the question is no statement
        ("Yes, switch to bun.", "Should we switch from pnpm to bun?"),
        ("Understood: the cache uses SQLite so it works offline.", "The cache lives in SQLite, not Redis."),
        ("Got it, I'll set up pnpm workspaces for this project.", "We use pnpm for the frontend."),
        ("Let's go with Redis going forward.", "Redis is fast."),
        ("He is ill.", "He is out today."),  # "ill" is no "I'll"
    ],
)
def test_a_reply_that_adds_a_word_or_answers_a_question_does_not(reply: str, prompt: str) -> None:
    assert not acknowledges(f"assistant: {reply}", f"user: {prompt}")


YEAR = (
    ("Deploys go to Fly.io through the GitHub Actions workflow deploy.yml.", "Noted: Fly.io via deploy.yml."),
    ("Reminder: the package manager here is pnpm, not npm.", "Right, pnpm not npm."),
    ("The database is Postgres 16 on Neon.", "Okay, Postgres 16 on Neon."),
    ("Our staging deploy needs the FLY_STAGING app name set.", "Noted the FLY_STAGING app name."),
    ("How do staging deploys get their secrets?", "They read them from fly secrets, set per app."),
)


@pytest.mark.parametrize("semantic", [False, True], ids=["lexical", "hybrid"])
def test_the_block_shows_each_statement_once_in_the_users_words(tmp_path: Path, semantic: bool) -> None:
    """Before: "Noted: Fly.io via deploy.yml." and its prompt took two places, and so did each pair.
    With the ``[semantic]`` extra the rule runs after the fusion, the same."""
    backend = sessions(make(tmp_path, semantic=_embedder()) if semantic else make(tmp_path), *YEAR)
    if semantic:
        with_vectors_in_memory(backend, "deploy")
    hits = recall(backend, "how do we deploy to staging?", limit=8)
    assert not semantic or "dense" in backend.last_search_mode
    assert "user: Deploys go to Fly.io through the GitHub Actions workflow deploy.yml." in hits
    assert "user: Our staging deploy needs the FLY_STAGING app name set." in hits
    assert not [hit for hit in hits if hit.startswith(("assistant: Noted", "assistant: Right", "assistant: Okay"))]
    # a reply that says something of its own stays, and so does the question it answers
    assert "assistant: They read them from fly secrets, set per app." in hits
    assert len(hits) == len(set(hits))


def test_an_acknowledgement_ranked_first_gives_its_place_to_the_statement(tmp_path: Path) -> None:
    """The short reply outranks its longer prompt (bm25 favours the shorter text): with one place,
    the user's statement is shown in it; found by a word only the reply says, the statement is read
    from the file."""
    backend = sessions(make(tmp_path), YEAR[0], YEAR[2])
    assert recall(backend, "Fly.io", limit=1) == [f"user: {YEAR[0][0]}"]
    assert recall(backend, "noted", limit=1) == [f"user: {YEAR[0][0]}"]


def test_an_acknowledgement_whose_statement_is_gone_is_shown_itself(tmp_path: Path) -> None:
    """The user's statement forgotten (``memory_edit``) or no longer valid: the reply is all there is."""
    backend = sessions(make(tmp_path), YEAR[0], YEAR[2])
    request = RecallRequest(query="Fly.io deploy.yml", query_timestamp=ASKED_ON)
    statement = next(hit for hit in backend.recall("b", request).hits if hit.text.startswith("user: Deploys"))
    assert statement.id is not None
    assert backend.invalidate_unit("b", statement.id)
    assert recall(backend, "Fly.io deploy.yml") == [f"assistant: {YEAR[0][1]}"]
    assert backend.forget_unit("b", statement.id)
    assert recall(backend, "Fly.io deploy.yml") == [f"assistant: {YEAR[0][1]}"]


def test_a_reply_longer_than_an_acknowledgement_is_shown_as_itself(tmp_path: Path) -> None:
    """Over ``ACK_MAX_CHARS`` a reply is not looked up, even when it only says its prompt back."""
    prompt = "The nightly export job writes invoices, refunds, payouts and ledger rows to the warehouse. " * 4
    reply = "Noted: " + prompt.strip()
    assert acknowledges(f"assistant: {reply}", f"user: {prompt}")
    backend = sessions(make(tmp_path), (prompt.strip(), reply))
    assert f"assistant: {reply}" in recall(backend, "nightly export warehouse")


_WORDS = st.sampled_from(
    [
        "Noted", "noted:", "got", "it", "we", "use", "uses", "using", "pnpm", "PNPM", "Postgres", "16", "on",
        "Neon", "deploys", "deploy", "deployed", "Fly.io", "classes", "class", "running", "run", "ran",
        "général", "generale", "Straße", "strasse", "東京サーバー", "東京", "🚀", "I'll", "we've", "ok,",
        "relational", "relate", "happiness", "happy", "agreed", "verstanden", "понял", "база", "данных",
        "actually", "after", "all", "scratch", "that", "on", "second", "thought", "never", "mind",
        "going", "forward", "from", "now", "I", "will", "for", "this", "project", "future", "make", "sure", "to",
    ]
)  # fmt: skip
_TEXT = st.lists(_WORDS, min_size=0, max_size=10).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(reply=_TEXT, prompt=_TEXT, asks=st.booleans())
@example(reply="actually", prompt="", asks=False)  # its first run: the shortcut read "actually", the stems do not
def test_the_first_word_shortcut_never_changes_what_acknowledges_says(reply: str, prompt: str, asks: bool) -> None:
    """A stem whose beginning the prompt does not hold is not one of its stems (Porter keeps a
    token's stem but its last letter): the shortcut answers as the whole comparison would."""
    prompt = prompt + ("?" if asks else "")
    whole = "?" not in prompt and content_stems(said_of_its_own(reply)) - ACK_STEMS <= content_stems(prompt)
    assert acknowledges(f"assistant: {reply}", f"user: {prompt}") == whole


def test_an_acknowledgement_of_a_long_message_is_shown_as_itself(tmp_path: Path) -> None:
    """A pasted log is no statement to put where "Got it." stood (``STATEMENT_MAX_CHARS``)."""
    log = " ".join(f"worker {n} restarted after the cache timeout" for n in range(40))
    backend = sessions(make(tmp_path), (log, "Got it, the cache timeout restarted the worker."))
    hits = recall(backend, "cache timeout worker", limit=2)
    assert "assistant: Got it, the cache timeout restarted the worker." in hits
