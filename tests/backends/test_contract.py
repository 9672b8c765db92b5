"""One contract, two backends: what the embedded store and a real Hindsight server must agree on.

Every test here runs twice, through the fixture ``backend`` parametrized over ``local`` (a
``LocalBackend`` on a temp file) and ``hindsight`` (``HindsightBackend`` against the real 1.1.0
test server, one fresh bank per use). The queue, hooks, commands and tools never ask which
backend is active, so any difference in these semantics would be a bug in one of them — or, for
the few listed at the end, a difference the spec sanctions (ADR 016).

Covered (docs/identity-and-scope.md#tags, docs/identity-and-scope.md#scope-filters, docs/backends.md#hindsight-server,
docs/backends.md#embedded-store): tag_groups semantics (the docs/backends.md#embedded-store table, and/or/not,
AND-ed lists, a property test against the table), project-scope isolation in one bank,
append/replace document semantics, bank isolation, effectively-once redelivery by
``operation_id``, max_tokens/budget, no-match queries, error kinds, ``ensure_bank``, reflect.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hindsight_hooks.backends.base import BackendError, RecallRequest, ReflectRequest
from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.backends.tag_groups import match_tag_groups

from .contract_support import (
    NONSENSE,
    REQUEST_TIMEOUT_S,
    ContractBackend,
    contract_spec,
    item,
    new_bank_id,
    op_id,
    words_of,
)

BACKENDS = ["local", "hindsight"]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ContractBackend]:
    """The backend under contract. The hindsight side FAILS (never skips) without a server."""
    if request.param == "local":
        store = LocalBackend(tmp_path / "memory.db")

        def make_local() -> str:
            bank_id = new_bank_id()
            assert store.ensure_bank(bank_id, contract_spec(), timeout_s=REQUEST_TIMEOUT_S) is True
            return bank_id

        local = ContractBackend("local", store, make_local, lambda _bank, _op: None, lambda _bank: None)
        yield local
        local.cleanup()
        store.close()
        return

    server = request.getfixturevalue("hindsight_backend")
    make_bank = request.getfixturevalue("make_bank")  # verbatim, observations off, deleted after

    def settle(bank_id: str, operation_id: str) -> None:
        status = server.wait_operation(bank_id, operation_id, timeout_s=REQUEST_TIMEOUT_S, poll_s=0.05)
        assert status.get("status") == "completed", status

    def forget(bank_id: str) -> None:
        with contextlib.suppress(BackendError):
            server.delete_bank(bank_id, timeout_s=REQUEST_TIMEOUT_S)

    remote = ContractBackend("hindsight", server, lambda: make_bank("hh-contract"), settle, forget)
    yield remote
    remote.cleanup()


# ----------------------------------------------------------------------------- banks and writes


def test_ensure_bank_is_true_on_creation_then_false(backend: ContractBackend) -> None:
    bank = backend.unused_bank_id()
    assert backend.impl.ensure_bank(bank, contract_spec(), timeout_s=REQUEST_TIMEOUT_S) is True
    assert backend.impl.ensure_bank(bank, contract_spec(), timeout_s=REQUEST_TIMEOUT_S) is False
    # An ensured bank with nothing in it answers a recall with no hits, not an error.
    assert backend.hits(bank, "zorblax") == []


def test_retain_reports_every_item_and_makes_it_recallable(backend: ContractBackend) -> None:
    bank = backend.bank()
    items = [
        item("The parser keeps zorblax tokens in a ring buffer.", "doc-1"),
        item("Release builds strip the quillfeather symbols.", "doc-2"),
        item("CI caches the brindlecove wheel directory.", "doc-3"),
    ]
    outcome = backend.retain(bank, items)
    assert outcome.items_count == 3
    assert any("zorblax" in t for t in backend.texts(bank, "zorblax"))
    assert any("quillfeather" in t for t in backend.texts(bank, "quillfeather symbols"))
    assert any("brindlecove" in t for t in backend.texts(bank, "brindlecove"))


# ----------------------------------------------------------------------------- tag groups

# Five units; the second word of each content is its marker.
TAGGED_UNITS: list[tuple[str, list[str]]] = [
    ("alpha", ["repo:a"]),
    ("beta", ["repo:b"]),
    ("gamma", []),
    ("delta", ["repo:a", "x"]),
    ("eps", ["x"]),
]
ALL_MARKERS = {m for m, _ in TAGGED_UNITS}


def _store_tagged(backend: ContractBackend, units: list[tuple[str, list[str]]]) -> str:
    bank = backend.bank()
    items = [item(f"zorblax {marker} lantern", f"doc-{marker}", tags=tags or None) for marker, tags in units]
    assert backend.retain(bank, items).items_count == len(units)
    return bank


def _leaf(tags: list[str], match: str) -> dict[str, Any]:
    return {"tags": tags, "match": match}


# (filter, expected markers), written from the docs/backends.md#embedded-store table by hand, not computed.
TAG_TABLE: list[tuple[str, list[dict[str, Any]], set[str]]] = [
    ("any_strict one tag", [_leaf(["repo:a"], "any_strict")], {"alpha", "delta"}),
    ("any_strict other repo", [_leaf(["repo:b"], "any_strict")], {"beta"}),
    ("any_strict two tags", [_leaf(["repo:a", "repo:b"], "any_strict")], {"alpha", "beta", "delta"}),
    ("any admits untagged", [_leaf(["repo:a"], "any")], {"alpha", "delta", "gamma"}),
    ("all admits untagged", [_leaf(["repo:a", "x"], "all")], {"delta", "gamma"}),
    ("all_strict", [_leaf(["repo:a", "x"], "all_strict")], {"delta"}),
    ("exact one tag", [_leaf(["repo:a"], "exact")], {"alpha"}),
    ("exact is order-free", [_leaf(["x", "repo:a"], "exact")], {"delta"}),
    ("exact empty = untagged only", [_leaf([], "exact")], {"gamma"}),
    ("empty any_strict matches none", [_leaf([], "any_strict")], set()),
    ("empty all matches all", [_leaf([], "all")], ALL_MARKERS),
    ("empty all_strict = every tagged unit", [_leaf([], "all_strict")], {"alpha", "beta", "delta", "eps"}),
    ("match defaults to any_strict", [{"tags": ["repo:a"]}], {"alpha", "delta"}),
    ("not", [{"not": _leaf(["repo:a"], "any_strict")}], {"beta", "gamma", "eps"}),
    (
        "shared observations (or with exact [])",
        [{"or": [_leaf(["repo:b"], "any_strict"), _leaf([], "exact")]}],
        {"beta", "gamma"},
    ),
    (
        "and with not",
        [{"and": [_leaf(["x"], "any"), {"not": _leaf(["repo:b"], "any")}]}],
        {"delta", "eps"},
    ),
    ("a list is AND-ed", [_leaf(["repo:a"], "any_strict"), _leaf(["x"], "all")], {"delta"}),
    (
        "nested or inside not",
        [{"not": {"or": [_leaf(["x"], "any_strict"), _leaf([], "exact")]}}],
        {"alpha", "beta"},
    ),
]


def test_tag_groups_follow_the_table(backend: ContractBackend) -> None:
    bank = _store_tagged(backend, TAGGED_UNITS)
    wrong = []
    for label, groups, expected in TAG_TABLE:
        got = words_of(backend.texts(bank, "zorblax lantern", tag_groups=groups), 1)
        if got != expected:
            wrong.append(f"{label}: expected {sorted(expected)}, got {sorted(got)}")
    assert not wrong, f"{backend.name}: " + "; ".join(wrong)
    # Without a filter every unit is a candidate.
    assert words_of(backend.texts(bank, "zorblax lantern"), 1) == ALL_MARKERS


def test_project_scope_isolates_two_repos_in_one_bank(backend: ContractBackend) -> None:
    """docs/identity-and-scope.md#scope-filters: the project filter ``any_strict repo:<key>`` sees its repo only — not
    the other
    repo's memories and not untagged ones — even when they share every word."""
    bank = backend.bank()
    backend.retain(
        bank,
        [
            item("Deploys use the zorblax canary ring (repo-a note).", "a-1", tags=["repo:a", "session:1"]),
            item("Deploys use the zorblax canary ring (repo-b note).", "b-1", tags=["repo:b", "session:2"]),
            item("Deploys use the zorblax canary ring (shared note).", "s-1"),
        ],
    )
    scope_a = [{"tags": ["repo:a"], "match": "any_strict"}]
    scope_b = [{"tags": ["repo:b"], "match": "any_strict"}]
    a_texts = backend.texts(bank, "zorblax canary ring deploys", tag_groups=scope_a)
    b_texts = backend.texts(bank, "zorblax canary ring deploys", tag_groups=scope_b)
    assert a_texts == ["Deploys use the zorblax canary ring (repo-a note)."]
    assert b_texts == ["Deploys use the zorblax canary ring (repo-b note)."]
    # include_shared_observations widens the scope to untagged memories, never to the other repo.
    shared = [{"or": [scope_a[0], {"tags": [], "match": "exact"}]}]
    got = set(backend.texts(bank, "zorblax canary ring deploys", tag_groups=shared))
    assert got == {
        "Deploys use the zorblax canary ring (repo-a note).",
        "Deploys use the zorblax canary ring (shared note).",
    }


# Random filters over a small tag alphabet, checked against the docs/backends.md#embedded-store table (tag_groups.py's
# pure
# evaluator). ``{tags: [], match: "any"}`` is left out: the server and the spec's table disagree
# on it (see test_spec_sanctioned_differences) and no caller of ours sends it.
ALPHABET = ["repo:a", "repo:b", "x"]
SUBSETS: list[tuple[str, list[str]]] = [
    (f"unit{mask}", [t for bit, t in enumerate(ALPHABET) if mask >> bit & 1]) for mask in range(2 ** len(ALPHABET))
]
MATCHES = ["any", "all", "any_strict", "all_strict", "exact"]

leaves = st.builds(
    _leaf, st.lists(st.sampled_from(ALPHABET), unique=True, max_size=3), st.sampled_from(MATCHES)
).filter(lambda g: g["tags"] or g["match"] != "any")
groups_strategy = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.builds(lambda gs: {"and": gs}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda gs: {"or": gs}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda g: {"not": g}, inner),
    ),
    max_leaves=4,
)


def test_random_tag_filters_agree_with_the_table(backend: ContractBackend) -> None:
    bank = _store_tagged(backend, SUBSETS)
    every = {marker for marker, _ in SUBSETS}
    assert words_of(backend.texts(bank, "zorblax lantern"), 1) == every

    @settings(max_examples=40, deadline=None, database=None)
    @given(st.lists(groups_strategy, min_size=1, max_size=2))
    def check(groups: list[dict[str, Any]]) -> None:
        expected = {marker for marker, tags in SUBSETS if match_tag_groups(tags, groups)}
        got = words_of(backend.texts(bank, "zorblax lantern", tag_groups=groups), 1)
        assert got == expected, f"{backend.name}: {groups}"

    check()


# ----------------------------------------------------------------------------- documents


def test_append_keeps_one_document_and_applies_the_latest_tags_to_all_its_units(backend: ContractBackend) -> None:
    bank = backend.bank()
    first = item("quillfeather first turn about caching", "hh-session:s1", mode="append", tags=["repo:a", "t:one"])
    second = item("quillfeather second turn about logging", "hh-session:s1", mode="append", tags=["repo:a", "t:two"])
    backend.retain(bank, [first])
    backend.retain(bank, [second])
    hits = backend.hits(bank, "quillfeather turn caching logging")
    doc_hits = [h for h in hits if h.document_id == "hh-session:s1"]
    assert {h.text for h in doc_hits} == {first["content"], second["content"]}
    assert all(set(h.tags) == {"repo:a", "t:two"} for h in doc_hits), [h.tags for h in doc_hits]
    # The first call's tag set is gone from every unit of the document.
    assert backend.hits(bank, "quillfeather", tag_groups=[{"tags": ["t:one"], "match": "any_strict"}]) == []
    two = backend.texts(bank, "quillfeather", tag_groups=[{"tags": ["t:two"], "match": "any_strict"}])
    assert set(two) == {first["content"], second["content"]}


def test_replace_drops_the_old_content(backend: ContractBackend) -> None:
    bank = backend.bank()
    backend.retain(bank, [item("vexillum retries use oldmarker backoff", "hh-explicit:r", tags=["t:r"])])
    assert any("oldmarker" in t for t in backend.texts(bank, "oldmarker"))
    backend.retain(bank, [item("vexillum retries use newmarker backoff", "hh-explicit:r", tags=["t:r"])])
    assert not any("oldmarker" in t for t in backend.texts(bank, "vexillum oldmarker newmarker backoff"))
    doc = [h.text for h in backend.hits(bank, "vexillum retries backoff") if h.document_id == "hh-explicit:r"]
    assert doc == ["vexillum retries use newmarker backoff"]


def test_banks_never_see_each_other(backend: ContractBackend) -> None:
    bank_a, bank_b = backend.bank(), backend.bank()
    # Same document id, same words, one marker each: only the bank tells them apart.
    backend.retain(bank_a, [item("zorblax harbour ledger amberfrost", "hh-explicit:same", tags=["repo:a"])])
    backend.retain(bank_b, [item("zorblax harbour ledger cobaltmoss", "hh-explicit:same", tags=["repo:a"])])
    in_b = backend.texts(bank_b, "zorblax harbour ledger amberfrost")
    assert in_b == ["zorblax harbour ledger cobaltmoss"]
    assert backend.texts(bank_a, "cobaltmoss") == []
    assert backend.texts(bank_b, "amberfrost") == []
    # Replacing the document in one bank leaves the other bank's document alone.
    backend.retain(bank_a, [item("zorblax harbour ledger driftwood", "hh-explicit:same", tags=["repo:a"])])
    assert backend.texts(bank_b, "zorblax harbour ledger") == ["zorblax harbour ledger cobaltmoss"]
    assert backend.texts(bank_a, "zorblax harbour ledger") == ["zorblax harbour ledger driftwood"]


def test_redelivery_with_the_same_operation_id_is_applied_once(backend: ContractBackend) -> None:
    """docs/backends.md#hindsight-server/docs/design.md#crash-safety: the queue resends a job with its id as
    ``operation_id``; with async delivery
    (the default) the resend must not store the job twice — an append would show it."""
    bank = backend.bank()
    job_id = op_id()
    payload = [item("kestrelwing turn one notes", "hh-session:dup", mode="append", tags=["repo:a"])]
    first = backend.retain_async(bank, payload, operation_id=job_id)
    backend.settle(bank, job_id)
    again = backend.retain_async(bank, payload, operation_id=job_id)
    backend.settle(bank, job_id)
    assert first.items_count == again.items_count == 1
    assert backend.texts(bank, "kestrelwing") == ["kestrelwing turn one notes"]


# ----------------------------------------------------------------------------- budgets and misses


def test_max_tokens_bounds_the_results(backend: ContractBackend) -> None:
    bank = backend.bank()
    markers = ["saffron", "umber", "cerise", "viridian", "ochre"]
    backend.retain(
        bank,
        [item(f"zorblax palette note {m}: keep the swatch sizes stable across themes", f"doc-{m}") for m in markers],
    )
    large = backend.texts(bank, "zorblax palette swatch", max_tokens=4096)
    small = backend.texts(bank, "zorblax palette swatch", max_tokens=20)
    tiny = backend.texts(bank, "zorblax palette swatch", max_tokens=1)
    assert words_of(large, 3) == {f"{m}:" for m in markers}
    assert 1 <= len(small) < len(large)
    assert len(tiny) == 1  # at least one result whenever something matches and max_tokens >= 1
    assert set(small) <= set(large) and set(tiny) <= set(small)
    for budget in ("low", "mid", "high"):
        assert any("saffron" in t for t in backend.texts(bank, "zorblax saffron", budget=budget)), budget


def test_a_query_that_matches_nothing_returns_no_hits(backend: ContractBackend) -> None:
    bank = backend.bank()
    backend.retain(bank, [item("zorblax lantern stays lit", "doc-1"), item("quillfeather stays dry", "doc-2")])
    assert backend.hits(bank, NONSENSE) == []
    assert backend.hits(bank, NONSENSE, tag_groups=[{"tags": ["repo:a"], "match": "any"}]) == []


# ----------------------------------------------------------------------------- errors


def test_recall_on_an_unknown_bank_is_not_found(backend: ContractBackend) -> None:
    """Hindsight answers 404 → ``not_found``; the queue/status read that kind as "re-ensure the
    bank" (docs/queue.md#retries). A store that silently answered "no memories" would hide a wrong bank id."""
    bank = backend.unused_bank_id()
    with pytest.raises(BackendError) as caught:
        backend.impl.recall(bank, RecallRequest(query="zorblax"), timeout_s=REQUEST_TIMEOUT_S)
    assert caught.value.kind == "not_found"


INVALID_ITEMS: list[tuple[str, dict[str, Any]]] = [
    ("empty content", item("", "doc-bad")),
    ("blank content", item("  \n\t ", "doc-bad")),
    ("unknown update_mode", item("zorblax fine content", "doc-bad", mode="overwrite")),
]


@pytest.mark.parametrize(("label", "bad"), INVALID_ITEMS, ids=[label for label, _ in INVALID_ITEMS])
def test_an_invalid_item_is_permanent_and_the_batch_stores_nothing(
    backend: ContractBackend, label: str, bad: dict[str, Any]
) -> None:
    bank = backend.bank()
    good = item("brindlecove survives only if the whole batch is valid", "doc-good")
    with pytest.raises(BackendError) as caught:
        backend.retain(bank, [good, bad])
    assert caught.value.kind == "permanent", label
    assert backend.hits(bank, "brindlecove") == []


INVALID_RECALLS: list[tuple[str, RecallRequest]] = [
    ("unknown match mode", RecallRequest(query="zorblax", tag_groups=[{"tags": ["repo:a"], "match": "sometimes"}])),
    ("group without tags/and/or/not", RecallRequest(query="zorblax", tag_groups=[{"match": "any"}])),
    ("query_timestamp not ISO", RecallRequest(query="zorblax", query_timestamp="yesterday")),
]


@pytest.mark.parametrize(("label", "request_"), INVALID_RECALLS, ids=[label for label, _ in INVALID_RECALLS])
def test_an_invalid_recall_is_permanent(backend: ContractBackend, label: str, request_: RecallRequest) -> None:
    bank = backend.bank()
    backend.retain(bank, [item("zorblax lantern", "doc-1", tags=["repo:a"])])
    with pytest.raises(BackendError) as caught:
        backend.impl.recall(bank, request_, timeout_s=REQUEST_TIMEOUT_S)
    assert caught.value.kind == "permanent", label


# ----------------------------------------------------------------------------- reflect


def test_reflect_returns_text(backend: ContractBackend) -> None:
    bank = backend.bank()
    backend.retain(bank, [item("The team prefers zorblax fixtures over mocks.", "doc-1", tags=["repo:a"])])
    plain = backend.impl.reflect(bank, ReflectRequest(query="What does the team prefer for zorblax fixtures?"))
    scoped = backend.impl.reflect(
        bank,
        ReflectRequest(
            query="What does the team prefer for zorblax fixtures?",
            budget="low",
            tag_groups=[{"tags": ["repo:a"], "match": "any_strict"}],
        ),
        timeout_s=REQUEST_TIMEOUT_S,
    )
    for result in (plain, scoped):
        assert isinstance(result.text, str) and result.text.strip()


# ----------------------------------------------------------------------------- sanctioned differences

# Where the spec itself makes the embedded store differ from the 1.1.0 server, pin both sides,
# so a change on either one is noticed and ADR 016 is revisited. None is reachable through our
# callers (ADR 016 says why).


def test_spec_sanctioned_differences(backend: ContractBackend) -> None:
    bank = _store_tagged(backend, TAGGED_UNITS)
    local = backend.name == "local"
    # 1. {tags: [], match: "any"}: docs/backends.md#embedded-store's table says "every unit"; the server means "untagged
    # only".
    empty_any = words_of(backend.texts(bank, "zorblax lantern", tag_groups=[_leaf([], "any")]), 1)
    assert empty_any == (ALL_MARKERS if local else {"gamma"})
    # 2. max_tokens=0: docs/backends.md#embedded-store "always at least one"; the server returns none.
    zero = backend.hits(bank, "zorblax lantern", max_tokens=0)
    assert len(zero) == (1 if local else 0)
    # 3. A query without word characters: docs/backends.md#embedded-store "no terms → no results"; the server refuses it
    # (422).
    if local:
        assert backend.hits(bank, "?! ...") == []
    else:
        with pytest.raises(BackendError) as caught:
            backend.hits(bank, "?! ...")
        assert caught.value.kind == "permanent"
