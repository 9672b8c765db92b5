"""docs/backends.md#embedded-store ranking on real SQLite files: score formula, order, coverage, budget, types, recency,
scope."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hindsight_hooks.backends.base import BackendError, RecallRequest
from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.timefmt import iso_from_epoch
from tests.backends.test_local_support import T0, T0_ISO, Clock, item, make, raw

HOUR = 3600.0


def recall(backend: LocalBackend, query: str, **kw: object) -> list[tuple[str, float | None]]:
    result = backend.recall("b", RecallRequest(query=query, **kw))  # type: ignore[arg-type]
    return [(h.text, h.score) for h in result.hits]


@pytest.fixture
def scored(tmp_path: Path) -> LocalBackend:
    """Three kafka units whose bm25 order is A < C < B (A best)."""
    backend = make(tmp_path, Clock(T0))
    backend.retain_batch(
        "b",
        [
            item("kafka kafka", "a", source="tool", timestamp=T0_ISO),
            item(
                "kafka is only one word among many other words in this much longer sentence about brokers",
                "b",
                source="auto",
                timestamp=iso_from_epoch(T0 - 72 * HOUR),
            ),
            item("kafka topic retention notes", "c", source="import", timestamp=iso_from_epoch(T0 - 24 * HOUR)),
        ],
        operation_id="op",
    )
    return backend


def test_score_formula_by_hand(scored: LocalBackend) -> None:
    ranks = dict(
        raw(scored.path).execute(
            "SELECT u.document_id, bm25(units_fts, 1.0, 0.5) FROM units_fts JOIN units u ON u.rowid = units_fts.rowid "
            "WHERE units_fts MATCH '\"kafka\"'"
        )
    )
    assert ranks["a"] < ranks["c"] < ranks["b"]  # the premise: A is the best lexical match, B the worst
    hits = dict(recall(scored, "kafka"))
    # A: fts 1, importance .75, age 0   → (0.8·1 + 0.2·0.75)·(0.7 + 0.3·1)
    assert hits["kafka kafka"] == 0.95
    # B: fts 0, importance .65, age 72h → (0.2·0.65)·(0.7 + 0.3·e^-1) = 0.13·0.810364 = 0.105347
    long_b = "kafka is only one word among many other words in this much longer sentence about brokers"
    assert hits[long_b] == 0.1053
    # C: fts from the real ranks, importance .65, age 24h
    fts_c = 1 - (ranks["c"] - ranks["a"]) / (ranks["b"] - ranks["a"])
    expected_c = round((0.8 * fts_c + 0.2 * 0.65) * (0.7 + 0.3 * math.exp(-24 / 72)), 4)
    assert hits["kafka topic retention notes"] == expected_c
    # the order is by score, but for "kafka kafka": it says only the question's word (ADR 186)
    assert [t for t, _ in recall(scored, "kafka")] == ["kafka topic retention notes", long_b, "kafka kafka"]


def test_hits_carry_what_the_tools_render(scored: LocalBackend) -> None:
    top = next(h for h in scored.recall("b", RecallRequest(query="kafka")).hits if h.text == "kafka kafka")
    assert top.id and len(top.id) == 16
    assert (top.type, top.source, top.importance, top.created_at, top.document_id) == (
        "world",
        "tool",
        0.75,
        T0_ISO,
        "a",
    )


def test_query_timestamp_moves_the_recency_reference(scored: LocalBackend) -> None:
    long_b = "kafka is only one word among many other words in this much longer sentence about brokers"
    hits = dict(recall(scored, "kafka", query_timestamp=iso_from_epoch(T0 - 72 * HOUR)))
    assert hits[long_b] == 0.13  # age 0 at the reference → recency 1
    assert hits["kafka kafka"] == 0.95  # newer than the reference: age counts as 0
    with pytest.raises(BackendError) as info:
        recall(scored, "kafka", query_timestamp="last tuesday")
    assert info.value.kind == "permanent"


def test_without_query_timestamp_age_comes_from_the_clock(tmp_path: Path) -> None:
    clock = Clock(T0)
    backend = make(tmp_path, clock)
    backend.retain_batch("b", [item("ageing fact", "d", timestamp=T0_ISO)], operation_id="op")
    assert recall(backend, "ageing") == [("ageing fact", 0.95)]
    clock.now = T0 + 72 * HOUR
    assert recall(backend, "ageing") == [("ageing fact", round(0.95 * (0.7 + 0.3 * math.exp(-1)), 4))]


def test_ties_break_by_newer_created_at_then_id(tmp_path: Path) -> None:
    backend = make(tmp_path, Clock(T0))
    stamps = [iso_from_epoch(T0 - h * HOUR) for h in (5, 1, 1)]
    # Distinct texts of equal length and term counts (equal bm25); identical texts would be one hit (ADR 055).
    texts = ["same words alpha", "same words bravo", "same words delta"]
    out = backend.retain_batch(
        "b",
        [item(t, f"d{i}", timestamp=ts) for i, (t, ts) in enumerate(zip(texts, stamps, strict=True))],
        operation_id="op",
    )
    old_id, new_a, new_b = out.unit_ids
    # Seen from before all of them, every unit has recency 1 and the same fts/importance → equal scores.
    hits = backend.recall("b", RecallRequest(query="same words", query_timestamp=iso_from_epoch(T0 - 10 * HOUR))).hits
    assert len({h.score for h in hits}) == 1
    assert [h.id for h in hits] == [*sorted([new_a, new_b]), old_id]


def test_coverage_drops_units_matching_under_a_quarter_of_the_terms(tmp_path: Path) -> None:
    backend = make(tmp_path)
    backend.retain_batch(
        "b",
        [
            item("we were deploying the new server image", "two"),
            item("see you tonight", "one"),
            item("rollback quickly if servers fail while deployed", "four"),
        ],
        operation_id="op",
    )
    query = "deployed servers quickly tonight rollback"  # 5 terms: a unit must cover ≥ 2 (stems count)
    texts = [t for t, _ in recall(backend, query)]
    assert set(texts) == {"we were deploying the new server image", "rollback quickly if servers fail while deployed"}
    assert [t for t, _ in recall(backend, "tonight plans")] == ["see you tonight"]  # < 3 terms: no coverage rule
    backend.rank_window = 1  # force the pruned path, where coverage is computed from the unit text
    assert {t for t, _ in recall(backend, query)} == set(texts)


def test_coverage_counts_only_the_terms_the_bank_holds(tmp_path: Path) -> None:
    # Four of the nine terms occur in no unit of the bank (names the store never heard): no unit
    # can cover them, so they must not raise the bar (ADR 160). Counted, the deploy note covered
    # 2/9 < 25 % and was dropped; among the five the bank holds it covers 2/5.
    backend = make(tmp_path)
    backend.retain_batch(
        "b",
        [
            item("we were deploying the new server image", "two"),
            item("see you tonight", "one"),
            item("rollback quickly if it fails", "two more"),
        ],
        operation_id="op",
    )
    query = "deployed servers tonight rollback quickly kestrel zanzibar quokka ocelot"
    kept = {"we were deploying the new server image", "rollback quickly if it fails"}  # "tonight" alone: 1/5, cut
    assert {t for t, _ in recall(backend, query)} == kept
    backend.rank_window = 1  # the pruned path: the search's own match counts say which terms the bank holds
    assert {t for t, _ in recall(backend, query)} == kept


COMMON_WORD_NOTES = [f"We use {tool} for {part}." for tool in ("ruff", "httpx", "rich", "attrs", "click")
                     for part in ("logging", "parsing", "retries", "tests")]  # fmt: skip
DATABASE_NOTES = ["The main database is Postgres 16 on the db-1 host.", "Database migrations run before deploy."]


def test_a_word_the_bank_says_everywhere_does_not_fill_the_recall(tmp_path: Path) -> None:
    """A user's trial (ADR 181): "which database do we use?" gave the two database notes, then
    filled the limit with notes that say only "use". Two terms were under the count rule's
    three, and "use" alone was half of them; by rarity it carries almost none of the question."""
    backend = make(tmp_path)
    notes = COMMON_WORD_NOTES + DATABASE_NOTES
    backend.retain_batch("b", [item(t, f"d{i}") for i, t in enumerate(notes)], operation_id="op")
    assert {t for t, _ in recall(backend, "which database do we use?")} == set(DATABASE_NOTES)
    # Where the rarer word is what the unit says, both words are said: everything that matches stays.
    logging = {t for t, _ in recall(backend, "what do we use for logging?", limit=10)}
    assert logging == {t for t in COMMON_WORD_NOTES if "logging" in t}


def test_two_terms_of_like_rarity_each_keep_their_units(tmp_path: Path) -> None:
    """The weighted bar drops only what a rare word's company would crowd out: with two words
    each said as often, a unit saying one of them covers half the weight and stays."""
    backend = make(tmp_path)
    notes = ["the cron fires nightly", "the cron log rotates", "review the schedule", "schedule the release"]
    backend.retain_batch("b", [item(t, f"d{i}") for i, t in enumerate(notes)], operation_id="op")
    assert {t for t, _ in recall(backend, "cron schedule")} == set(notes)


@pytest.mark.parametrize(
    ("matches", "units", "common"),
    [
        ((2, 20), 22, (False, True)),  # "use" in 20 of 22 units, "database" in 2
        ((3, 800), 10_000, (False, True)),  # a word in 8 % of a year's units
        ((3, 2001), 50_000, (False, True)),  # a count the search capped is at least that common
        ((3, 5), 10, (False, False)),  # no more matches than the recall returns: nothing crowds it
        ((100, 120), 1_000, (False, False)),  # about as rare as each other
        ((0, 40), 100, (False, False)),  # the rarest term the bank holds sets the bar, not an unsaid one
    ],
)
def test_which_terms_are_common(matches: tuple[int, int], units: int, common: tuple[bool, bool]) -> None:
    from hindsight_hooks.backends.local_rank import common_terms

    assert common_terms(matches, units, limit=8) == common


def test_repeated_stem_counts_once_for_coverage(tmp_path: Path) -> None:
    # Four spellings of one stem are one term (ADR 055): "schedule cron" has 2 terms, so no coverage
    # cut, and a unit saying only "cron" stays. Counted as 5 terms, it covered 1/5 < 25 % and was dropped.
    backend = make(tmp_path)
    backend.retain_batch(
        "b", [item("the nightly cron fires at two", "c"), item("schedule review", "s")], operation_id="op"
    )
    query = "schedule scheduler scheduled scheduling cron"
    assert {t for t, _ in recall(backend, query)} == {"the nightly cron fires at two", "schedule review"}


def test_identical_shown_text_is_one_hit_and_the_limit_fills_with_others(tmp_path: Path) -> None:
    # A transcript repeats routine lines; each copy is its own unit with the same bm25. Recall must
    # not spend its limit on copies that docs/recall.md#quality-filter would drop anyway (same key: case and spacing
    # ignored).
    backend = make(tmp_path, Clock(T0))
    copies = ["deploy finished and green", "Deploy  finished and GREEN", "deploy finished and green"]
    others = ["the deploy of the ledger failed twice", "rollback after the deploy"]
    backend.retain_batch(
        "b",
        [item(t, f"c{i}", timestamp=iso_from_epoch(T0 - i * HOUR)) for i, t in enumerate(copies)]
        + [item(t, f"o{i}", timestamp=iso_from_epoch(T0 - 100 * HOUR)) for i, t in enumerate(others)],
        operation_id="op",
    )
    hits = backend.recall("b", RecallRequest(query="deploy", limit=3, query_timestamp=T0_ISO)).hits
    assert hits[0].text == "deploy finished and green"  # the best-placed copy (newest) is kept
    assert sorted(h.text for h in hits[1:]) == sorted(others)
    assert len({" ".join(h.text.lower().split()) for h in hits}) == 3


def test_budget_takes_while_tokens_fit_and_always_one(tmp_path: Path) -> None:
    backend = make(tmp_path)
    body = "budget word " + "x" * 27  # + one digit: 40 distinct chars = 10 estimated tokens (ADR 055)
    backend.retain_batch("b", [item(f"{body}{i}", f"d{i}") for i in range(5)], operation_id="op")
    assert len(recall(backend, "budget", max_tokens=25)) == 2
    assert len(recall(backend, "budget", max_tokens=30)) == 3
    assert len(recall(backend, "budget", max_tokens=0)) == 1
    assert len(recall(backend, "budget", max_tokens=1000, limit=4)) == 4


def test_default_limit_is_eight(tmp_path: Path) -> None:
    backend = make(tmp_path)
    backend.retain_batch("b", [item(f"limit fact {i}", f"d{i}") for i in range(20)], operation_id="op")
    assert len(recall(backend, "limit fact", max_tokens=10_000)) == 8
    wider = LocalBackend(backend.path, recall_limit=12)
    assert len(wider.recall("b", RecallRequest("limit", max_tokens=9999)).hits) == 12


def test_types_filter_and_observation_widening(tmp_path: Path) -> None:
    backend = make(tmp_path)
    backend.retain_batch(
        "b",
        [item("typed world fact", "w", source="tool"), item("typed experience", "e", source="auto")],
        operation_id="1",
    )
    assert [t for t, _ in recall(backend, "typed", types=["world"])] == ["typed world fact"]
    assert [t for t, _ in recall(backend, "typed", types=["experience"])] == ["typed experience"]
    assert len(recall(backend, "typed", types=["observation"])) == 2
    assert len(recall(backend, "typed", types=["world", "observation"])) == 2
    assert len(recall(backend, "typed", types=[])) == 2
    assert recall(backend, "typed", types=["opinion"]) == []


def test_no_lexical_hit_no_result(tmp_path: Path) -> None:
    backend = make(tmp_path)
    backend.retain_batch("b", [item(f"recent unrelated note {i}", f"d{i}") for i in range(5)], operation_id="op")
    assert recall(backend, "zebra") == []
    assert recall(backend, "the and of it") == []
    assert recall(backend, "") == []


def test_tag_groups_scope_recall(tmp_path: Path) -> None:
    backend = make(tmp_path)
    backend.retain_batch(
        "b",
        [
            item("scope fact for repo x", "x", tags=["repo:x", "session:1"]),
            item("scope fact for repo y", "y", tags=["repo:y"]),
            item("scope fact shared", "s", tags=[]),
        ],
        operation_id="op",
    )
    project = [{"tags": ["repo:x"], "match": "any_strict"}]
    assert [t for t, _ in recall(backend, "scope fact", tag_groups=project)] == ["scope fact for repo x"]
    shared = [{"or": [{"tags": ["repo:x"], "match": "any_strict"}, {"tags": [], "match": "exact"}]}]
    assert {t for t, _ in recall(backend, "scope fact", tag_groups=shared)} == {
        "scope fact for repo x",
        "scope fact shared",
    }
    exact = [{"tags": ["session:1", "repo:x"], "match": "exact"}]
    assert [t for t, _ in recall(backend, "scope fact", tag_groups=exact)] == ["scope fact for repo x"]
    with pytest.raises(BackendError) as info:
        recall(backend, "scope", tag_groups=[{"tags": ["x"], "match": "fuzzy"}])
    assert info.value.kind == "permanent"


# -- bounded candidate search -------------------------------------------------------------------------


def test_rare_old_term_is_found_when_common_terms_flood_the_bank(tmp_path: Path) -> None:
    clock = Clock(T0)
    backend = make(tmp_path, clock)
    backend.retain_batch("b", [item("the zookeeper quorum decision from long ago", "old")], operation_id="0")
    backend.retain_batch(
        "b", [item(f"decision log entry {i} about routine work", f"d{i}") for i in range(300)], operation_id="1"
    )
    backend.rank_window = 20
    hits = recall(backend, "zookeeper decision")
    assert backend.last_search_mode in ("pruned", "pruned+window")
    assert hits[0][0] == "the zookeeper quorum decision from long ago"
    assert len(hits) == 8


def test_scoped_recall_in_a_big_shared_bank_still_finds_matches(tmp_path: Path) -> None:
    backend = make(tmp_path)
    backend.retain_batch(
        "b", [item(f"widget note {i} for repo b", f"b{i}", tags=["repo:b"]) for i in range(3)], operation_id="0"
    )
    backend.retain_batch(
        "b", [item(f"widget note {i} for repo a", f"a{i}", tags=["repo:a"]) for i in range(400)], operation_id="1"
    )
    backend.rank_window = 25
    hits = recall(backend, "widget", tag_groups=[{"tags": ["repo:b"], "match": "any_strict"}])
    assert backend.last_search_mode == "window"
    assert sorted(t for t, _ in hits) == [f"widget note {i} for repo b" for i in range(3)]


def test_windows_merge_in_bm25_order(tmp_path: Path) -> None:
    """When every window gets scanned, the windowed search ranks exactly like the full one."""
    backend = make(tmp_path)
    backend.retain_batch(
        "b",
        [item(f"alpha item {i} " + "beta " * (i % 5) + "filler " * (i % 7), f"d{i}") for i in range(60)],
        operation_id="op",
    )
    exact = recall(backend, "beta", max_tokens=10_000)
    assert backend.last_search_mode == "exact"
    backend.rank_window = 20
    assert recall(backend, "beta", max_tokens=10_000) == exact
    assert backend.last_search_mode == "window"


def test_budget_scales_how_many_matches_get_ranked(tmp_path: Path) -> None:
    backend = make(tmp_path)
    backend.retain_batch("b", [item(f"budget depth note {i}", f"d{i}") for i in range(30)], operation_id="op")
    backend.rank_window = 20
    recall(backend, "depth", budget="high")  # 2 × 20 ≥ 30 matches
    assert backend.last_search_mode == "exact"
    recall(backend, "depth", budget="mid")
    assert backend.last_search_mode == "window"
    recall(backend, "depth", budget="low")
    assert backend.last_search_mode == "window"


def test_kept_term_counts_follow_a_growing_bank_and_the_budget(tmp_path: Path) -> None:
    """Counts kept between recalls (ADR 172) equal fresh ones after appends, across the cap, and
    for a larger budget's cap; the recall's results are the same as without them."""
    from hindsight_hooks.backends.local_query import CandidateSearch, Filters, TermCounts
    from hindsight_hooks.backends.local_schema import slot_range

    backend = make(tmp_path)
    backend.retain_batch("b", [item(f"cache alpha note {i}", f"a{i}") for i in range(15)], operation_id="0")
    conn = raw(backend.path)
    slot = conn.execute("SELECT slot FROM banks WHERE bank_id = 'b'").fetchone()[0]
    lo, _ = slot_range(slot)
    kept = TermCounts()
    terms = ["cach", "alpha", "beta", "note"]

    def counts(window: int, store: TermCounts | None) -> list[int]:
        top = conn.execute("SELECT max(rowid) FROM units WHERE rowid >= ?", (lo,)).fetchone()[0]
        search = CandidateSearch(conn, lo, top, Filters("b", T0_ISO), window=window, counts=store)
        return search._capped_counts(terms, lo, top)

    assert counts(20, kept) == counts(20, None) == [15, 15, 0, 15]
    for n, text in enumerate(["cache beta note", "cache alpha beta note", "cache beta"]):
        backend.retain_batch("b", [item(f"{text} {i}", f"n{n}-{i}") for i in range(4)], operation_id=f"{n + 1}")
        assert counts(20, kept) == counts(20, None)
    assert counts(20, kept) == [21, 19, 12, 21]  # capped at window + 1
    assert counts(40, kept) == counts(40, None) == [27, 19, 12, 23]  # a larger cap recounts what was capped
    backend.rank_window = 15  # the pruned search, whose choice of terms reads the counts
    recall(backend, "alpha beta gamma")
    backend.retain_batch("b", [item(f"gamma beta {i}", f"g{i}") for i in range(6)], operation_id="9")
    with_kept = recall(backend, "alpha beta gamma")
    assert backend.last_search_mode.startswith("pruned")
    backend._term_counts = TermCounts()
    assert recall(backend, "alpha beta gamma") == with_kept != []


def test_abort_signal_stops_recall(scored: LocalBackend) -> None:
    import threading

    signal = threading.Event()
    signal.set()
    with pytest.raises(BackendError) as info:
        scored.recall("b", RecallRequest(query="kafka"), signal=signal)
    assert info.value.kind == "aborted"


def test_ranked_query_walks_fts_in_rank_order(tmp_path: Path) -> None:
    """The plan the bounded search relies on: the matches are ranked in a co-routine that is the
    outer loop, so filters run in rank order only until LIMIT; nothing sorts after the filters."""
    from hindsight_hooks.backends.local_query import CandidateSearch, Filters, tag_groups_sql

    backend = make(tmp_path)
    backend.retain_batch("b", [item("plan check", "d", tags=["t"])], operation_id="op")
    conn = raw(backend.path)
    tag_sql, tag_params = tag_groups_sql([{"tags": ["t"], "match": "any_strict"}])
    search = CandidateSearch(conn, 0, 1 << 50, Filters("b", T0_ISO, ["world"], tag_sql, tag_params))
    plan = conn.execute(
        "EXPLAIN QUERY PLAN " + search._ranked_sql, ['"plan"', 0, 1 << 50, 200, "b", T0_ISO, "world", "t", 5]
    ).fetchall()
    coroutine = next(row[0] for row in plan if row[3] == "CO-ROUTINE f")
    outer = [row[3] for row in plan if row[1] == 0]
    assert outer[:2] == ["CO-ROUTINE f", "SCAN f"]
    assert any(row[1] == coroutine and row[3].startswith("SCAN units_fts VIRTUAL TABLE") for row in plan)
    assert all(row[1] == coroutine for row in plan if "TEMP B-TREE" in row[3]), "only the matches are sorted"


def test_ranked_rows_equal_fts5s_own_rank_order_under_filters(tmp_path: Path) -> None:
    """The bm25 co-routine returns exactly what FTS5's ``ORDER BY rank`` returns: same rows (the
    filters counted before LIMIT), same order, same ranks — also when the filters pass too few of
    the best matches it keeps at first (``rare``: one unit in ten), so it ranks them all again.
    Packed into one JSON value (ADR 177) they are the same rows again."""
    from hindsight_hooks.backends.local_query import CandidateSearch, Filters, tag_groups_sql

    backend = make(tmp_path)
    words = ["kafka", "broker", "topic", "lag", "consumer", "offset", "replica", "leader"]
    items = [
        item(
            " ".join(words[(i * k) % 8] for k in range(1, 2 + i % 7)) + f" n{i}",
            f"d{i}",
            tags=[f"t{i % 3}"] + (["rare"] if i % 10 == 0 else []),
        )
        for i in range(400)
    ]
    backend.retain_batch("b", items, operation_id="op")
    conn = raw(backend.path)
    found = {"t1": 0, "rare": 0}
    for tag in ("t1", "rare"):
        tag_sql, tag_params = tag_groups_sql([{"tags": [tag], "match": "any_strict"}])
        search = CandidateSearch(conn, 0, 1 << 50, Filters("b", T0_ISO, None, tag_sql, tag_params))
        for expr in ['"kafka" OR "lag"', '"broker" OR "offset" OR "leader"', '"replica"']:
            fast = search._ranked(expr, 0, 1 << 50, 30)
            params = [expr, 0, 1 << 50, "b", T0_ISO, *tag_params, 30]
            reference = conn.execute(search._ranked_by_fts_sql, params).fetchall()
            assert len(fast) == (30 if tag == "t1" else len(reference))
            assert [r[0] for r in fast] == [r[0] for r in reference]
            assert [r[-1] for r in fast] == pytest.approx([r[-1] for r in reference])
            search.packed = True  # the rows as one JSON value, as a hybrid recall's helper reads them
            packed = search._ranked(expr, 0, 1 << 50, 30)
            search.packed = False
            assert [(r[0], r[1], r[3], r[4]) for r in packed] == [(r[0], r[1], r[3], r[4]) for r in fast]
            assert [(r[2], r[5]) for r in packed] == [pytest.approx((r[2], r[5]), rel=1e-12) for r in fast]
            found[tag] += len(fast)
    assert found["rare"] > 0


def test_packed_rows_of_a_damaged_file_fall_back_to_plain_rows(tmp_path: Path) -> None:
    """A file written by something else may hold an infinite importance (past its CHECK) or a
    BLOB where text belongs: JSON can say neither. The packed statement (ADR 177) then gives way
    to the plain one, which returns the rows as they are, instead of failing the recall."""
    from hindsight_hooks.backends.local_query import CandidateSearch, Filters

    backend = make(tmp_path)
    backend.retain_batch("b", [item(f"kafka broker note {i}", f"d{i}") for i in range(40)], operation_id="op")
    conn = raw(backend.path)
    conn.execute("PRAGMA ignore_check_constraints = ON")
    rowids = [r[0] for r in conn.execute("SELECT rowid FROM units ORDER BY rowid LIMIT 2")]
    search = CandidateSearch(conn, 0, 1 << 50, Filters("b", T0_ISO))
    for damage, params in (
        ("UPDATE units SET importance = 9e999 WHERE rowid = ?", [rowids[0]]),
        ("UPDATE units SET created_at = x'00ff' WHERE rowid = ?", [rowids[1]]),
    ):
        conn.execute(damage, params)
        search.packed = False
        plain = search._ranked('"kafka"', 0, 1 << 50, 50)
        search.packed = True
        assert search._ranked('"kafka"', 0, 1 << 50, 50) == plain
        assert len(plain) == 40


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.text(max_size=80))
def test_any_query_text_is_safe(scored: LocalBackend, query: str) -> None:
    hits = scored.recall("b", RecallRequest(query=query)).hits
    assert all(h.text.startswith("kafka") for h in hits)


def test_a_planned_search_ranks_as_an_unplanned_one_and_plans_once(tmp_path: Path) -> None:
    """A hybrid recall reads what decides the ranking first (``plan``, ADR 227): whether all the
    terms' matches fit one window. Planned or not, ``run`` returns the same rows in the same mode,
    for terms whose matches overlap (they fit: every term is ranked) and for terms that do not
    (the rarest are); a copy for another connection plans nothing again."""
    from hindsight_hooks.backends.local_query import CandidateSearch, Filters

    backend = make(tmp_path)
    shared = [item(f"garden tomatoes water note {i}", f"g{i}") for i in range(60)]
    apart = [item(f"{'kafka' if i % 2 else 'broker'} note {i}", f"k{i}") for i in range(120)]
    backend.retain_batch("b", [*shared, *apart], operation_id="op")
    conn = raw(backend.path)
    for terms, mode in ((["garden", "tomatoes", "water"], "exact"), (["kafka", "broker"], "pruned")):
        plain = CandidateSearch(conn, 0, 1 << 50, Filters("b", T0_ISO), window=70)
        planned = CandidateSearch(conn, 0, 1 << 50, Filters("b", T0_ISO), window=70)
        planned.plan(terms)
        assert list(planned._fits.values()) == [mode == "exact"]
        other = raw(backend.path)
        statements: list[str] = []
        other.set_trace_callback(statements.append)
        on_its_own = planned.on(other)
        for search in (plain, planned, on_its_own):
            result = search.run(terms, 40, 8)
            assert result.mode == mode
            assert [r[0] for r in result.rows] == [r[0] for r in plain.run(terms, 40, 8).rows]
        assert not [s for s in statements if "OFFSET" in s]  # whether they fit was not read again
