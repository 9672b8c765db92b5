"""A unit that matches only the question's light verb goes after the units that say what it asks
about (ADR 205): the rule, and recall on a real SQLite file."""

from __future__ import annotations

from pathlib import Path

from hindsight_hooks.backends.local_rank import LIGHT_VERBS, Candidate, light_last, term_keys
from tests.backends.test_local_abbrev import DB_NOTES, found_in


def test_which_db_do_we_use_puts_the_database_first_and_the_note_that_uses_react_last(tmp_path: Path) -> None:
    """A user's trial (ADR 205): in a new bank "use" is not common, and "The frontend uses React"
    came first for "which db do we use?", by bm25's idf of "use" alone."""
    hits = found_in(tmp_path, DB_NOTES, "which db do we use?")
    assert hits[0] == DB_NOTES[0]
    assert hits[-1] == DB_NOTES[2]  # kept, after everything that says db or database
    assert set(hits) == {DB_NOTES[0], DB_NOTES[1], DB_NOTES[2], DB_NOTES[4]}


def test_a_unit_that_says_the_verb_and_the_subject_keeps_its_place(tmp_path: Path) -> None:
    texts = ["Logs go to Loki, dashboards in Grafana.", "We use Loki for logs.", "The frontend uses React with Vite."]
    hits = found_in(tmp_path, texts, "what do we use for logging?")
    assert set(hits[:2]) == set(texts[:2])  # both say logs
    assert hits[-1] == texts[2]


def candidate(rowid: int, matched: set[str], *, rank: float | None = -1.0, dense: float | None = None) -> Candidate:
    cand = Candidate(rowid=rowid, id=str(rowid), importance=0.5, created_at="", created_epoch=0.0, rank=rank)
    cand.matched, cand.dense = frozenset(matched), dense
    return cand


def test_only_lexical_units_far_from_the_question_are_moved() -> None:
    keys = term_keys(["db", "use"])
    use = next(iter(LIGHT_VERBS & keys[1]))
    ordered = [
        candidate(1, {use}),  # the verb only: moved
        candidate(2, {"db"}),
        candidate(3, {use}, dense=0.6),  # the verb only, but near by meaning (hybrid): stays
        candidate(4, set(), rank=None, dense=0.5),  # found by its vector alone: stays
        candidate(5, {use, "db"}),
    ]
    assert [c.rowid for c in light_last(ordered, keys, floor=0.4)] == [2, 3, 4, 5, 1]


def test_a_question_of_light_verbs_only_or_none_moves_nothing() -> None:
    ordered = [candidate(1, {"us"}), candidate(2, {"need"})]
    assert [c.rowid for c in light_last(ordered, term_keys(["use", "need"]))] == [1, 2]
    assert [c.rowid for c in light_last(ordered, term_keys(["db", "cache"]))] == [1, 2]
