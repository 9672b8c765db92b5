"""The query vector of hybrid recall: terms weighed by their rarity in the bank (ADR 160), by hand."""

from __future__ import annotations

import math

import numpy as np

from hindsight_hooks.backends.local_query_vector import bank_query, idf, term_text, weighted_query


def test_idf_is_bm25s_kept_positive_and_a_word_the_bank_never_says_weighs_most() -> None:
    assert idf(0, 100) == math.log(100.5 / 0.5 + 1)
    assert idf(0, 100) > idf(1, 100) > idf(50, 100) > idf(100, 100) > 0
    assert idf(30, 10) == idf(30, 30)  # a capped count never exceeds the bank it came from


def test_terms_are_weighed_then_the_sum_is_normalised() -> None:
    rows = np.array([[3.0, 0.0], [0.0, 1.0]], dtype=np.float32)  # raw rows: lengths differ
    out = weighted_query(rows, [0, 0], 10)
    assert out is not None
    assert np.allclose(out, np.array([3.0, 1.0]) / math.sqrt(10))  # equal weights: the plain sum
    skewed = weighted_query(rows, [0, 10], 10)  # the second term in every unit
    assert skewed is not None
    w0, w1 = idf(0, 10), idf(10, 10)
    assert np.allclose(skewed, np.array([3 * w0, w1]) / math.hypot(3 * w0, w1))


def test_no_known_token_keeps_the_plain_vector() -> None:
    plain = np.array([0.6, 0.8], dtype=np.float32)
    zeros = np.zeros((2, 2), dtype=np.float32)
    assert weighted_query(zeros, [0, 1], 10) is None
    assert bank_query(plain, zeros, [0, 1], 10) is plain
    assert bank_query(plain, None, [], 10) is plain
    assert bank_query(plain, np.ones((1, 2), dtype=np.float32), [0], 0) is plain  # empty bank


def test_a_script_term_is_embedded_as_its_text() -> None:
    from hindsight_hooks.backends.local_text import query_terms

    terms = query_terms("東京 database 🚀")
    assert terms[0] != "東京"  # stored with its marker ...
    assert [term_text(t) for t in terms] == ["東京", "database", "🚀"]  # ... embedded as what it says
