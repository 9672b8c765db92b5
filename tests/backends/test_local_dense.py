"""The in-memory vector search of the embedded store (ADR 117, ADR 170): int8 rows, sign-bit planes."""

from __future__ import annotations

import numpy as np
import pytest

from hindsight_hooks.backends.local_dense import RESCORE, DenseIndex, _BankMatrix

DIM = 256


def _unit_rows(n: int, seed: int) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((n, DIM))
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_a_bank_larger_than_the_rescore_set_finds_each_stored_vector_first() -> None:
    rows = _unit_rows(3 * RESCORE, seed=3)
    bank = _BankMatrix(DIM)
    half = len(rows) // 2  # two loads: the matrix and its bit planes grow in between
    bank.add(list(range(1, half + 1)), rows[:half].astype(np.float16))
    bank.add(list(range(half + 1, len(rows) + 1)), rows[half:].astype(np.float16))
    index = DenseIndex()
    for at in (0, half - 1, half, len(rows) - 1):
        best = index.top(bank, rows[at].astype(np.float32), 5)
        assert best[0][0] == at + 1
        assert best[0][1] == pytest.approx(1.0, abs=0.003)


def test_cosines_from_int8_rows_stay_within_a_few_thousandths_of_float32() -> None:
    rows = _unit_rows(2000, seed=5)
    queries = _unit_rows(20, seed=6).astype(np.float32)
    bank = _BankMatrix(DIM)
    bank.add(list(range(1, 2001)), rows.astype(np.float16))
    index = DenseIndex()
    for query in queries:
        got = index.similarity(bank, query, list(range(1, 2001)))
        exact = rows.astype(np.float16).astype(np.float32) @ query
        assert max(abs(got[i + 1] - max(0.0, float(exact[i]))) for i in range(2000)) < 0.003


def test_a_re_embedded_unit_replaces_its_row_and_its_sign_bits() -> None:
    rows = _unit_rows(2 * RESCORE, seed=8)
    bank = _BankMatrix(DIM)
    bank.add(list(range(1, len(rows) + 1)), rows.astype(np.float16))
    target = rows[10].astype(np.float32)
    bank.add([500], rows[10:11].astype(np.float16))  # unit 500's text changed to unit 11's
    best = DenseIndex().top(bank, target, 2)
    assert {rowid for rowid, _ in best} == {11, 500}
    assert bank.count == len(rows)


def test_the_background_is_the_mean_cosine_with_the_banks_rows_after_adds_and_replacements() -> None:
    """ADR 200: the sum kept beside the matrix follows every add and every re-embedded row."""
    rows = _unit_rows(300, seed=11)
    bank = _BankMatrix(DIM)
    bank.add(list(range(1, 201)), rows[:200].astype(np.float16))
    bank.add(list(range(201, 301)), rows[200:].astype(np.float16))
    bank.add([7, 250], rows[:2].astype(np.float16))  # two units re-embedded
    index = DenseIndex()
    for query in _unit_rows(5, seed=12).astype(np.float32):
        every = index.similarity(bank, query, list(range(1, 301)))  # clamped at 0: recompute unclamped
        exact = float((bank.dequantized() @ query).mean())
        assert index.background(bank, query) == pytest.approx(exact, abs=1e-4)
        assert len(every) == 300
    small = _BankMatrix(DIM)
    small.add(list(range(1, 20)), rows[:19].astype(np.float16))
    assert index.background(small, _unit_rows(1, seed=1)[0].astype(np.float32)) == 0.0  # too few to tell
