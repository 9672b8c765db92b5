""" "Which CI do we use?" finds the memory that names the tool (ADR 232)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hindsight_hooks.backends.local_kinds import MAX_TOOLS, _members, _table, asked_kinds, kind_members
from hindsight_hooks.backends.local_text import OTHER_LANGUAGE_WORDS, STOP_WORDS, fts_tokens
from hindsight_hooks.backends.semantic import StaticEmbedder
from tests.backends.test_local_support import make, retain_talks, with_vectors_in_memory
from tests.backends.test_local_support import recalled as recall

SVELTE = "user: The frontend is written in Svelte with TypeScript."
ACTIONS = "user: Deploys go through GitHub Actions to Fly.io every Friday."
RABBIT = "user: Orders go onto RabbitMQ and the worker picks them up."
POSTGRES = "user: We run Postgres 16 for the ledger."
TALKS = [
    ("2026-09-01T10:00:00Z", [("user", SVELTE[6:]), ("assistant", "Noted.")]),
    ("2026-09-08T10:00:00Z", [("user", ACTIONS[6:]), ("assistant", "Got it.")]),
    ("2026-09-15T10:00:00Z", [("user", RABBIT[6:]), ("assistant", "Understood.")]),
    ("2026-09-22T10:00:00Z", [("user", POSTGRES[6:]), ("assistant", "OK.")]),
    (
        "2026-10-01T10:00:00Z",
        [
            ("user", "Why does the cache warmer crash on startup?"),
            ("assistant", "An unclosed file handle in the retry loop; fixed in warmer.py."),
            ("user", "Bump the dashboard timeout to 30 seconds."),
            ("assistant", "Done, the dashboard timeout is 30 s now."),
        ],
    ),
]


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("what database do we use?", ["database"]),
        ("Which db in prod?", ["database"]),
        ("which CI do we use?", ["ci"]),
        ("what do we use for continuous integration?", ["ci"]),
        ("what's our hosting?", ["hosting"]),
        ("what is the hosting provider?", ["hosting"]),
        ("where do we host the API?", ["hosting"]),
        ("What UI framework is the dashboard in?", ["frontend"]),
        ("which message queue did we pick?", ["queue"]),
        ("do we have a cache?", ["cache"]),
        ("what kind of database is the ledger on?", ["database"]),
        ("Remind me which linter we settled on", ["lint"]),
        ("what is the backend written in?", ["language"]),
        ("what's our tech stack?", ["database", "frontend", "backend", "language"]),
        # ADR 236: the kind after "where" and its verb, and the question ends there
        ("where are the secrets stored?", ["secrets"]),
        ("Where do we keep secrets", ["secrets"]),
        ("where is our database now?", ["database"]),
        ("where's the message queue configured?", ["queue"]),
    ],
)
def test_a_question_that_asks_for_a_kind(question: str, kinds: list[str]) -> None:
    assert [kind for kind, _ in asked_kinds(question)] == kinds


ELSEWHERE = [
    "Welche Datenbank nutzen wir?", "Was für eine Datenbank nutzen wir?", "Quelle base de données utilisons-nous ?",
    "¿Qué base de datos usamos?", "Quale database usiamo?", "Qual banco de dados usamos?",
    "Welke database gebruiken we?", "Какую базу данных мы используем?", "Jakiej bazy danych używamy?",
    "Яку базу даних ми використовуємо?",
]  # fmt: skip


@pytest.mark.parametrize("question", ELSEWHERE)
def test_the_database_asked_for_in_the_other_languages(question: str) -> None:
    assert [kind for kind, _ in asked_kinds(question)] == ["database"]


@pytest.mark.parametrize(
    "question", ["Was nutzen wir für CI?", "¿Qué usamos para CI?", "Что мы используем для CI?", "Czego używamy do CI?"]
)
def test_a_kind_after_for_in_the_other_languages(question: str) -> None:
    assert [kind for kind, _ in asked_kinds(question)] == ["ci"]


@pytest.mark.parametrize(
    "question",
    [
        "why does the cache warmer crash?",  # mentions a kind, asks about something else
        "what is the cache warmer's timeout?",  # the kind's name is part of another name
        "fix the database migration",  # not a question
        "what changed in the database?",
        "which tests failed?",
        "who handles payments?",  # a person
        "what did the assistant say about the queue length?",
        "Warum stürzt der Cache-Warmer ab?",
        "Die Datenbank ist langsam.",
        "Welche Tests sind fehlgeschlagen?",
        "where did the cache go wrong?",  # ADR 236: asks about a failure, not a place
        "where is the database password stored?",  # the kind's name is part of another name
        "where are secrets leaked in this repo?",
    ],
)
def test_a_question_that_only_mentions_a_kind(question: str) -> None:
    assert asked_kinds(question) == []


def test_the_table_names_tools_the_index_can_find() -> None:
    """Every kind has names and tools; each tool is searched by tokens the index holds, none of them
    an English function word (it would match everything; "Jest" is Polish "is", which only a Polish
    bank says)."""
    table = _table()
    assert len(table) >= 40
    for kind, (names, tools) in table.items():
        assert names and tools, kind
        terms = _members(kind)
        assert terms and len(terms) <= len(tools), kind
        for term in terms:
            assert term == " ".join(fts_tokens(term)), (kind, term)
            assert term not in STOP_WORDS - OTHER_LANGUAGE_WORDS, (kind, term)


def test_the_tools_searched_are_those_the_bank_names_most() -> None:
    said = {"postgres": 40, "turso": 3, "sqlite": 0}  # "turso" is the table's last database
    counted: list[list[str]] = []

    def counts(terms: list[str]) -> list[int]:
        counted.append(terms)
        return [said.get(t, 1) for t in terms]

    tools = kind_members("what database do we use?", ["database", "use"], counts)
    assert len(counted) == 1  # one capped count for the kind's tools
    assert "sqlite" not in tools  # no unit names it
    assert tools["postgres"] == ("database",)  # a unit that names it says the kind's word
    assert len(tools) == MAX_TOOLS and "turso" in tools  # the most named first, then in the table's order
    assert "libsql" not in tools  # named once, as the eleven before it, and listed after them


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["why does the {} crash?", "fix the {} timeout", "the {} is slow", "restart the {}"]))
def test_a_question_that_asks_for_no_kind_counts_nothing(form: str) -> None:
    def counts(terms: list[str]) -> list[int]:
        raise AssertionError(f"counted {terms}")

    for kind in ("cache", "queue", "database", "pipeline", "linter"):
        question = form.format(kind)
        assert kind_members(question, [w for w in question.split() if w.isalpha()], counts) == {}


@pytest.mark.parametrize("semantic", [False, True], ids=["lexical", "hybrid"])
def test_the_memory_that_names_the_tool_is_found(tmp_path: Path, semantic: bool) -> None:
    """Before: each of these found nothing, or only the dashboard talk (the static model puts
    "what UI framework?" at cosine 0.02 from the Svelte memory)."""
    backend = retain_talks(make(tmp_path, semantic=StaticEmbedder()) if semantic else make(tmp_path), TALKS)
    if semantic:
        with_vectors_in_memory(backend, "svelte")
    assert recall(backend, "What UI framework do we use?")[:1] == [SVELTE]
    assert recall(backend, "what do we use for continuous integration?")[:1] == [ACTIONS]
    assert recall(backend, "which CI do we use?")[:1] == [ACTIONS]
    assert recall(backend, "what's our hosting provider?")[:1] == [ACTIONS]
    assert recall(backend, "where do we deploy?")[:1] == [ACTIONS]
    assert recall(backend, "which message queue do we use?")[:1] == [RABBIT]
    assert recall(backend, "what database is the ledger on?")[:1] == [POSTGRES]
    assert recall(backend, "Welche Datenbank nutzen wir?")[:1] == [POSTGRES]
    assert recall(backend, "Какую базу данных мы используем?")[:1] == [POSTGRES]
    assert recall(backend, "where is our message queue?")[:1] == [RABBIT]  # ADR 236
    # A question that only mentions a kind is searched by its words: no tool comes in.
    asked = recall(backend, "why does the cache warmer crash on startup?")
    assert "user: Why does the cache warmer crash on startup?" in asked[:2]
    assert not {SVELTE, ACTIONS, RABBIT, POSTGRES} & set(asked)


def test_a_long_prompt_is_read_at_its_ends() -> None:
    """A pasted file or log asks at its start or its end; what lies between is not read (each name
    there would be read with its surroundings)."""
    middle = " which database do we use? " + "the parser and the cache layer " * 200
    assert asked_kinds("fix the build: " + "x = 1\n" * 200 + middle + "y = 2\n" * 200) == []
    assert [kind for kind, _ in asked_kinds("log:\n" + "ok\n" * 2000 + "which db do we use?")] == ["database"]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300), st.sampled_from(["", "?", " which database do we use?", "Welche Datenbank?"]))
def test_any_text_is_read_without_error(text: str, tail: str) -> None:
    table = _table()
    for kind, name in asked_kinds(text + tail):
        assert kind in table
        assert isinstance(name, str)
