"""Query terms and the Python twin of FTS5's ``porter unicode61`` tokenizer, checked against SQLite."""

from __future__ import annotations

import random
import re
import sqlite3
import sys
from pathlib import Path

from hindsight_hooks.backends.local_text import (
    MAX_TERMS,
    StemFinder,
    fts_tokens,
    match_expression,
    porter_stem,
    query_terms,
    term_key,
)


def test_terms_are_lowercase_words_without_stop_words_or_single_chars() -> None:
    assert query_terms("How do I Deploy the Kafka cluster? x y Deploy") == ["deploy", "kafka", "cluster"]
    assert query_terms("the and of a") == []
    assert query_terms("___ __init__ foo_bar") == ["__init__", "foo_bar"]
    assert query_terms("Café naïve") == ["café", "naïve"]


def test_terms_are_distinct_as_the_porter_index_sees_them() -> None:
    # ADR 055: "scheduler" and "schedule" are one FTS5 term (stem "schedul"); the first spelling stays.
    assert query_terms("On what schedule does the export scheduler run?") == ["schedule", "export", "run"]
    assert query_terms("pinned pin tests test Deploying deployed") == ["pinned", "tests", "deploying"]
    # Multi-token terms compare by all their stems: "foo_bar" is not "foo".
    assert query_terms("foo_bar foo bar foo_bars") == ["foo_bar", "foo", "bar"]


def test_at_most_twelve_terms() -> None:
    words = [f"word{i}" for i in range(20)]
    assert query_terms(" ".join(words)) == words[:MAX_TERMS]


def test_match_expression_quotes_and_ors() -> None:
    assert match_expression(["alpha", "beta"]) == '"alpha" OR "beta"'


def _sqlite_stems(words: list[str]) -> dict[str, str]:
    """What SQLite's own porter tokenizer indexes for each single-token word."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61')")
    conn.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", list(enumerate(words, 1)))
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
    return {words[doc - 1]: term for term, doc in conn.execute("SELECT term, doc FROM v")}


def _stdlib_words(limit: int) -> list[str]:
    """Real English words (and identifiers) from the standard library's sources."""
    root = Path(sys.base_prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    words: set[str] = set()
    for path in sorted(root.glob("*.py"))[:80]:
        words.update(w for w in re.findall(r"[a-z]{2,29}", path.read_text(encoding="utf-8", errors="replace").lower()))
    ordered = sorted(words)
    return sorted(random.Random(1).sample(ordered, min(limit, len(ordered))))


def test_porter_twin_matches_sqlite_on_real_words() -> None:
    words = _stdlib_words(6000)
    assert len(words) > 2000
    expected = _sqlite_stems(words)
    mismatches = [(w, expected[w], porter_stem(w)) for w in words if porter_stem(w) != expected[w]]
    assert mismatches == []


SUFFIXES = (
    "ational tional enci anci izer logi bli alli entli eli ousli ization ation ator alism iveness fulness "
    "ousness aliti iviti biliti ical ness icate iciti ful ative alize al ance ence er ic able ible ant ement "
    "ment ent sion tion ion ou ism ate iti ous ive ize eed ed ing sses ies ss s y e ll at bl iz"
)


def test_porter_twin_matches_sqlite_on_suffix_edge_cases() -> None:
    rnd = random.Random(7)
    suffixes = SUFFIXES.split()
    letters = "aeiouyybcdlsstmnrzwxgip"
    words = set()
    for _ in range(12000):
        word = "".join(rnd.choice(letters) for _ in range(rnd.randint(1, 6)))
        word += "".join(rnd.choice(suffixes) for _ in range(rnd.randint(0, 2)))
        words.add(word)
    ordered = sorted(words)
    expected = _sqlite_stems(ordered)
    assert [w for w in ordered if porter_stem(w) != expected[w]] == []


def test_tokens_fold_case_and_diacritics_like_unicode61() -> None:
    assert fts_tokens("Café-Owner's naïve_flag 42") == ["cafe", "owner", "s", "naive", "flag", "42"]
    assert term_key("foo_bars") == ("foo", "bar")
    assert term_key("deploying") == term_key("deployed") == term_key("deploys") == ("deploi",)


def test_porter_keeps_all_but_the_last_char_as_a_prefix() -> None:
    """StemFinder relies on it: a token stemming to ``s`` starts with ``s[:-1]``."""
    words = _stdlib_words(6000)
    assert [w for w in words if not w.startswith(porter_stem(w)[:-1])] == []


def test_stem_finder_finds_only_wanted_stems() -> None:
    finder = StemFinder(frozenset({"deploi", "server", "happi"}))
    text = "We were Deploying two SERVERS; happy days, unhappy nights, deployment pending"
    assert finder.found(text) == frozenset({"deploi", "server", "happi"})
    assert finder.found("nothing relevant here") == frozenset()
    assert StemFinder(frozenset({"x"})).found("x marks the spot") == frozenset({"x"})
