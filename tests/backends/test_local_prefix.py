"""A query word no memory says is searched by its beginning (ADR 185): the rule, its agreement with
SQLite's own prefix queries, and recall on real SQLite files."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hindsight_hooks.backends.base import RecallRequest
from hindsight_hooks.backends.local_prefix import prefix_term, with_prefixes
from hindsight_hooks.backends.local_text import StemFinder, term_expression, term_key
from tests.backends.test_local_support import bank_of, item, make


@pytest.mark.parametrize(
    ("term", "prefix"),
    [
        ("postgrse", "postg*"),  # stem "postgrs": 7 letters, keep 5
        ("kubernets", "kubern*"),  # stem "kubernet": keep 6
        ("déploie", "deplo*"),  # folded and stemmed first: "deploi"
        ("sitzung", "sitzu*"),
        ("verwenden", "verwend*"),
        ("databse", "datab*"),
        ("pnmp", None),  # too short to guess from
        ("v1234567", None),  # not all letters
        ("foo_barbaz", None),  # two tokens
    ],
)
def test_the_prefix_of_a_word(term: str, prefix: str | None) -> None:
    assert prefix_term(term) == prefix


def test_only_words_no_unit_says_are_replaced_and_only_by_a_prefix_that_matches() -> None:
    said = {"postgres": 3, "postg*": 3, "deplo*": 0}
    counts = lambda terms: [said.get(t, 0) for t in terms]  # noqa: E731
    assert with_prefixes(["postgres"], counts) == ["postgres"]  # every word said: untouched
    assert with_prefixes(["postgrse", "version"], counts) == ["postg*", "version"]
    assert with_prefixes(["deploie"], counts) == ["deploie"]  # the prefix matches nothing either
    assert with_prefixes(["postgrse", "postgrses"], counts) == ["postg*", "postgrses"]  # one prefix once


def test_words_that_could_not_be_widened_are_not_counted() -> None:
    asked: list[list[str]] = []

    def counts(terms: list[str]) -> list[int]:
        asked.append(terms)
        return [0] * len(terms)

    assert with_prefixes(["cache", "ttl", "v1234567"], counts) == ["cache", "ttl", "v1234567"]
    assert asked == []  # short words and digits: no statement at all
    assert with_prefixes(["cache", "postgrse"], counts) == ["cache", "postgrse"]
    assert asked == [["postgrse"], ["postg*"]]  # only the long word, then its prefix


WORDS = st.text(alphabet="abcdeilmnorstuyéü", min_size=1, max_size=12)


@settings(max_examples=150, deadline=None)
@given(
    words=st.lists(WORDS, min_size=1, max_size=6), query=st.text(alphabet="abcdeilmnorstuyéü", min_size=6, max_size=12)
)
def test_the_finder_agrees_with_sqlite_on_prefix_matches(words: list[str], query: str) -> None:
    """The coverage rule must count a prefix term as matched exactly when FTS5 matched it."""
    prefix = prefix_term(query)
    if prefix is None:
        return
    text = " ".join(words)
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61')")
    conn.execute("INSERT INTO t VALUES (?)", (text,))
    by_sqlite = conn.execute("SELECT count(*) FROM t WHERE t MATCH ?", (term_expression(prefix),)).fetchone()[0] == 1
    keys = frozenset(term_key(prefix))
    assert (prefix in StemFinder(keys).found(text)) == by_sqlite, (text, prefix)


FACTS = [
    "We run Postgres 16 for the main database.",
    "The staging cluster is on Kubernetes 1.29.",
    "Les déploiements se font uniquement le mardi.",
    "Wir verwenden Redis als Cache für die Sitzungen.",
    "Use pnpm, not npm.",
]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("postgrse version", FACTS[0]),
        ("which databse?", FACTS[0]),
        ("kubernetis", FACTS[1]),  # a slip at the end of the word
        ("quand est-ce qu'on déploie ?", FACTS[2]),
        ("Sitzung", FACTS[3]),
    ],
)
def test_typos_and_inflections_find_their_memory_by_words(tmp_path: Path, query: str, expected: str) -> None:
    backend = bank_of(tmp_path, FACTS)
    try:
        hits = [h.text for h in backend.recall("b", RecallRequest(query=query)).hits]
        assert hits[:1] == [expected]
    finally:
        backend.close()


def test_a_word_no_unit_starts_like_finds_nothing_and_said_words_are_not_widened(tmp_path: Path) -> None:
    backend = make(tmp_path)
    try:
        backend.retain_batch("b", [item("the categorical split is done", "d0")], operation_id="o0")
        backend.retain_batch("b", [item("a category of its own", "d1")], operation_id="o1")
        assert backend.recall("b", RecallRequest(query="zxqvbnm flurbish")).hits == []
        # "category" is said: it is searched as itself, not as "categ…", so "categorical" is not found
        assert [h.text for h in backend.recall("b", RecallRequest(query="category")).hits] == ["a category of its own"]
    finally:
        backend.close()
