""" "When is the standup?" finds "Daily sync is at 9:30" (ADR 233)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hindsight_hooks.backends.local_abbrev import SHORT_TO_LONG
from hindsight_hooks.backends.local_synonyms import MAX_FORMS, SYNONYMS, with_synonyms
from hindsight_hooks.backends.local_text import query_terms
from hindsight_hooks.backends.semantic import StaticEmbedder
from tests.backends.test_local_support import make, retain_talks, with_vectors_in_memory
from tests.backends.test_local_support import recalled as recall

SYNC = "user: Daily sync is at 9:30 every morning."
TOKEN = "user: The API token lives in the vault under ops/api."
BOSS = "user: Dana is my boss."
MACHINE = "user: New machines need brew bundle and the dotfiles repo."
TALKS = [
    ("2026-09-01T10:00:00Z", [("user", SYNC[6:]), ("assistant", "Noted.")]),
    ("2026-09-08T10:00:00Z", [("user", TOKEN[6:]), ("assistant", "Got it.")]),
    ("2026-09-15T10:00:00Z", [("user", BOSS[6:]), ("assistant", "Understood.")]),
    ("2026-09-22T10:00:00Z", [("user", MACHINE[6:]), ("assistant", "OK.")]),
]


def counting(said: dict[str, int]) -> tuple[list[list[str]], Callable[[list[str]], list[int]]]:
    counted: list[list[str]] = []

    def counts(terms: list[str]) -> list[int]:
        counted.append(list(terms))
        return [said.get(t, 0) for t in terms]

    return counted, counts


def test_a_word_no_unit_says_is_searched_by_the_other_words_the_bank_says() -> None:
    counted, counts = counting({"daily": 4, "sync": 9, "time": 30})
    words, alternates = with_synonyms(["time", "standup"], counts)
    assert words == ["time", "daily"]  # the first said, in the table's order
    assert alternates == {"sync": "daily"}  # searched beside it, counted as it
    assert len(counted) == 2  # the table's words of the prompt, then their other words


def test_a_word_the_bank_says_is_searched_as_it_is() -> None:
    _, counts = counting({"standup": 2, "sync": 9})
    assert with_synonyms(["standup", "time"], counts) == (["standup", "time"], {})


def test_a_prompt_without_a_word_of_the_table_costs_no_count() -> None:
    def counts(terms: list[str]) -> list[int]:
        raise AssertionError(f"counted {terms}")

    assert with_synonyms(["parser", "timeout"], counts) == (["parser", "timeout"], {})


def test_the_table() -> None:
    """Each key is a query term as the store reads one, none a short word of ADR 197's table (that
    rule reads it first), and no key lists itself; at most ``MAX_FORMS`` forms are searched."""
    assert MAX_FORMS >= 1
    for word, forms in SYNONYMS.items():
        assert query_terms(word) == [word], word
        assert word not in SHORT_TO_LONG, word
        assert forms and word not in forms, word


@pytest.mark.parametrize("semantic", [False, True], ids=["lexical", "hybrid"])
def test_the_memory_said_in_other_words_is_found(tmp_path: Path, semantic: bool) -> None:
    """Before: each found nothing (no shared word; the static model puts these pairs at 0.19–0.25)."""
    backend = retain_talks(make(tmp_path, semantic=StaticEmbedder()) if semantic else make(tmp_path), TALKS)
    if semantic:
        with_vectors_in_memory(backend, "sync")
    assert recall(backend, "what time is the standup?")[:1] == [SYNC]
    assert recall(backend, "where are the credentials?")[:1] == [TOKEN]
    assert recall(backend, "who is my manager?")[:1] == [BOSS]
    assert recall(backend, "how do I set up my laptop?")[:1] == [MACHINE]


def test_a_bank_that_says_the_word_is_searched_by_it(tmp_path: Path) -> None:
    backend = retain_talks(
        make(tmp_path),
        [
            ("2026-09-01T10:00:00Z", [("user", "The standup moved to 10:00."), ("assistant", "Noted.")]),
            ("2026-09-02T10:00:00Z", [("user", "Sync the package mirror nightly."), ("assistant", "Done.")]),
        ],
    )
    got = recall(backend, "when is the standup?")
    assert got[:1] == ["user: The standup moved to 10:00."]
    assert "user: Sync the package mirror nightly." not in got


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from([*SYNONYMS, "parser", "timeout", "sync", "daily", "token"]), max_size=8, unique=True),
    st.dictionaries(st.sampled_from(sorted({f for forms in SYNONYMS.values() for f in forms} | set(SYNONYMS))),
                    st.integers(0, 3)),
)  # fmt: skip
def test_only_unsaid_words_are_replaced_by_forms_the_bank_says(words: list[str], said: dict[str, int]) -> None:
    _, counts = counting(said)
    out, alternates = with_synonyms(words, counts)
    for word in words:
        if said.get(word, 0) > 0 or word not in SYNONYMS:
            assert word in out  # a word the bank says, or one the table lacks, is searched as it is
    for word in out:
        assert word in words or (said.get(word, 0) > 0 and any(word in SYNONYMS.get(w, ()) for w in words))
    for form, head in alternates.items():
        assert said.get(form, 0) > 0 and head in out and form not in out
