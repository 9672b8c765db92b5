"""A developer's short word no memory says is searched by its long form, and back (ADR 197): the
rule, and recall on real SQLite files."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hindsight_hooks.backends.base import RecallRequest
from hindsight_hooks.backends.local_abbrev import (
    LONG_TO_SHORT,
    SHORT_TO_LONG,
    counterparts,
    said_counterparts,
    with_counterparts,
)
from hindsight_hooks.backends.local_text import STOP_WORDS, query_terms, term_expression
from tests.backends.test_local_support import bank_of


def counter(said: dict[str, int], asked: list[list[str]] | None = None):  # type: ignore[no-untyped-def]
    def counts(terms: list[str]) -> list[int]:
        if asked is not None:
            asked.append(list(terms))
        return [said.get(t, 0) for t in terms]

    return counts


def test_each_word_knows_its_other_forms() -> None:
    assert counterparts("db") == ("database",)
    assert counterparts("database") == ("db",)
    assert counterparts("configuration") == ("config", "cfg", "conf")
    assert counterparts("auth") == ("authentication", "authorization")
    assert counterparts("cache") == ()


def test_only_a_word_no_unit_says_is_replaced_by_the_form_said_most() -> None:
    said = {"database": 4, "production": 2, "authorization": 1, "authentication": 5, "db": 0}
    counts = counter(said)
    assert with_counterparts(["db", "use", "prod"], counts) == ["database", "use", "production"]
    assert with_counterparts(["auth", "flow"], counts) == ["authentication", "flow"]  # said most
    assert with_counterparts(["database"], counts) == ["database"]  # said: as it is
    assert with_counterparts(["k8s"], counts) == ["k8s"]  # no form said either: as it is
    assert with_counterparts(["db", "database"], counts) == ["db", "database"]  # never twice


def test_a_prompt_without_a_word_of_the_table_costs_no_statement() -> None:
    asked: list[list[str]] = []
    counts = counter({"database": 3}, asked)
    assert with_counterparts(["cache", "ttl"], counts) == ["cache", "ttl"]
    assert asked == []
    assert with_counterparts(["cache", "db"], counts) == ["cache", "database"]
    assert asked == [["cache", "db"], ["database"]]  # the prompt's words, then the forms


def test_the_table_is_lower_case_query_words_and_phrases_fts5_can_search() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61')")
    conn.execute("INSERT INTO t VALUES ('renovate opens pull requests; the single sign-on page')")
    for short, longs in SHORT_TO_LONG.items():
        # a short form is one query word, never a stop word (it would never reach the search)
        assert query_terms(short) == [short], short
        for long in longs:
            assert long == long.lower() and short in LONG_TO_SHORT[long]
            assert long not in STOP_WORDS
            conn.execute("SELECT count(*) FROM t WHERE t MATCH ?", (term_expression(long),)).fetchone()
    found = conn.execute("SELECT count(*) FROM t WHERE t MATCH ?", (term_expression("pull requests"),)).fetchone()
    assert found == (1,)
    assert conn.execute("SELECT count(*) FROM t WHERE t MATCH ?", (term_expression("single sign on"),)).fetchone() == (
        1,
    )


FACTS = [
    "The production database is Postgres 16 on a managed RDS instance.",
    "We deploy the API to Kubernetes with Helm charts in the infra repository.",
    "Authentication uses OAuth with GitHub as the identity provider.",
    "The staging environment variables live in Doppler, not in .env files.",
    "Dependencies are pinned with uv lock; renovate opens pull requests weekly.",
]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # a user's trial (ADR 197): before, the first asked found only "Authentication uses …"
        # (through "use"), and each of the others found nothing
        ("which db do we use in prod?", FACTS[0]),
        ("how does auth work?", FACTS[2]),
        ("who updates the deps?", FACTS[4]),
        ("how many PRs?", FACTS[4]),  # a phrase: "pull requests"
        ("k8s version?", FACTS[1]),
    ],
)
def test_shop_talk_finds_the_memory_that_says_the_long_word(tmp_path: Path, query: str, expected: str) -> None:
    assert found_in(tmp_path, FACTS, query)[:1] == [expected]


def test_the_long_word_finds_the_memory_that_says_the_short_one(tmp_path: Path) -> None:
    texts = ["the db backups run nightly from the prod replica", "lunch is at noon"]
    assert found_in(tmp_path, texts, "which database?") == [texts[0]]


def test_a_word_the_bank_says_in_both_forms_finds_both(tmp_path: Path) -> None:
    """ADR 203: where one memory says "db" and another "database", "db" finds both (before, only
    the "db" one), and "database" too; the forms weigh alike."""
    texts = ["the db is on port 5432", "the database holds the orders", "lunch is at noon"]
    assert sorted(found_in(tmp_path, texts, "db")) == sorted(texts[:2])
    assert sorted(found_in(tmp_path, texts, "database")) == sorted(texts[:2])


# A user's trial (ADR 203, 205): a team's notes, "db" in two and "database" in the one that answers.
DB_NOTES = [
    "Our database is Postgres 16 on the managed cluster.",
    "The db migrations run nightly from the ops box.",
    "The frontend uses React with Vite.",
    "CI runs on GitHub Actions with three jobs.",
    "The db backup is copied to S3 every night.",
    "We deploy with Helm charts to the staging cluster.",
]


def test_which_db_finds_the_database_memory_among_the_db_notes(tmp_path: Path) -> None:
    """ADR 203: "which db do we use?" gave the two db notes and a note that "uses" React, never
    Postgres, with the extra or without."""
    assert DB_NOTES[0] in found_in(tmp_path, DB_NOTES, "which db do we use?")[:3]


def test_a_counterpart_is_searched_beside_its_word_only_where_the_bank_says_both() -> None:
    counts = counter({"db": 3, "database": 2, "deps": 1, "authentication": 4, "authorization": 0})
    assert said_counterparts(["db", "use"], counts) == {"database": "db"}
    assert said_counterparts(["deps"], counts) == {}  # "dependencies" is never said
    assert said_counterparts(["auth"], counts) == {"authentication": "auth"}  # only the form said
    assert said_counterparts(["db", "database"], counts) == {}  # both asked already


def test_a_prompt_without_a_word_of_the_table_costs_no_count_for_its_counterparts() -> None:
    asked: list[list[str]] = []
    assert said_counterparts(["cache", "ttl"], counter({"cache": 3}, asked)) == {}
    assert asked == []


def found_in(tmp_path: Path, texts: list[str], query: str) -> list[str]:
    """What ``query`` recalls from a real store whose bank holds each text as a memory of its own."""
    backend = bank_of(tmp_path, texts)
    try:
        return [h.text for h in backend.recall("b", RecallRequest(query=query)).hits]
    finally:
        backend.close()
