"""Reciprocal rank fusion of lexical and vector candidates (ADR 117), by hand-computed values."""

from __future__ import annotations

from hindsight_hooks.backends.local_fusion import RRF_K, SHORT_TEXT_CHARS, fuse_scores, vector_key
from hindsight_hooks.backends.local_rank import Candidate, final_score

NOW = 1_700_000_000.0


def cand(rowid: int, rank: float | None, dense: float | None, importance: float = 0.5) -> Candidate:
    return Candidate(rowid=rowid, id=f"u{rowid}", importance=importance, created_at="", created_epoch=NOW,
                     rank=rank, dense=dense)  # fmt: skip


def test_each_list_contributes_by_rank_and_the_best_is_one() -> None:
    both = cand(1, rank=-5.0, dense=0.6)  # lexical 1st, vector 1st
    lexical = cand(2, rank=-3.0, dense=None)  # lexical 2nd only
    vector = cand(3, rank=None, dense=0.4)  # vector 2nd only
    fuse_scores([both, lexical, vector], NOW)
    best = 2 / (RRF_K + 1)
    assert both.score == final_score(0.8 * 1.0 + 0.2 * 0.5, NOW, NOW)
    assert lexical.score == final_score(0.8 * (1 / (RRF_K + 2)) / best + 0.1, NOW, NOW)
    assert vector.score == lexical.score  # 2nd in one list each


def test_cosines_below_the_floor_do_not_reorder_lexical_candidates() -> None:
    first = cand(1, rank=-5.0, dense=0.05)
    second = cand(2, rank=-4.0, dense=0.2)
    fuse_scores([first, second], NOW, floor=0.25)  # neither is found by its vector
    assert first.score > second.score
    fuse_scores([first, second], NOW, floor=0.0)  # without the floor the cosines would reorder them
    assert first.score == second.score


def test_age_weighs_only_when_asked_for() -> None:
    # Two units each first in one list: equal relevance. Without ``by_age`` the older is not
    # penalised (a question about three weeks of chat asks about all of them alike, ADR 160);
    # with it the docs/backends.md#embedded-store recency factor applies as before.
    old = cand(1, rank=-5.0, dense=None)
    old.created_epoch = NOW - 10 * 24 * 3600.0
    new = cand(2, rank=None, dense=0.6)
    fuse_scores([old, new], NOW, by_age=False)
    assert old.score == new.score == round(0.8 * 1.0 + 0.2 * 0.5, 4)
    fuse_scores([old, new], NOW, by_age=True)
    assert new.score == final_score(0.8 * 1.0 + 0.1, NOW, NOW) > old.score
    assert old.score == final_score(0.8 * 1.0 + 0.1, old.created_epoch, NOW)


def test_the_vector_order_discounts_short_texts_but_not_their_place_above_the_floor() -> None:
    greeting = cand(1, rank=None, dense=0.6)
    greeting.size = 22  # "Hi Kevin! How are you?": its vector is mostly the name's
    answer = cand(2, rank=None, dense=0.45)
    answer.size = 400
    assert vector_key(greeting) == 0.6 * 22 / (22 + SHORT_TEXT_CHARS)
    assert vector_key(cand(3, rank=None, dense=0.5)) == 0.5  # size unknown: the cosine as it is
    fuse_scores([greeting, answer], NOW, floor=0.25)
    assert answer.score > greeting.score > 0  # both found by their vector, the longer first
