"""HindsightBackend against the REAL Hindsight 1.1.0 test server (scripts/hindsight-test-server).

Each test works in its own uniquely named bank (``make_bank``), created ``verbatim`` with
observations off unless it says otherwise, so the mock LLM cannot put words in our mouth.
Server facts these tests pin down are recorded in ADR 010 and ADR 013.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from hindsight_hooks.backends.base import BankSpec, RecallRequest, ReflectRequest
from hindsight_hooks.backends.hindsight import HindsightBackend, HindsightError

from .relay import SwitchableRelay

pytestmark = pytest.mark.integration

MakeBank = Callable[..., str]


def op_id() -> str:
    return str(uuid.uuid4())


def item(content: str, doc: str, mode: str = "replace", tags: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"content": content, "context": "hindsight-hooks test", "document_id": doc}
    out["update_mode"] = mode
    if tags is not None:
        out["tags"] = tags
    out.update(extra)
    return out


def texts(backend: HindsightBackend, bank: str, query: str, **kw: Any) -> list[str]:
    return [h.text for h in backend.recall(bank, RecallRequest(query=query, **kw), timeout_s=30).hits]


def units(backend: HindsightBackend, bank: str, doc: str | None = None) -> list[dict[str, Any]]:
    items = backend.list_memories(bank, document_id=doc, limit=500, timeout_s=30)["items"]
    assert isinstance(items, list)
    return items


def wait_done(backend: HindsightBackend, bank: str, operation: str) -> None:
    status = backend.wait_operation(bank, operation, timeout_s=30, poll_s=0.05)
    assert status["status"] == "completed", status


# ----------------------------------------------------------------------------- service and banks


def test_health_and_version(hindsight_backend: HindsightBackend) -> None:
    health = hindsight_backend.health(timeout_s=10)
    assert health["status"] == "healthy" and health["database"] == "connected"
    version = hindsight_backend.version(timeout_s=10)
    assert version["api_version"] == "1.1.0"
    assert isinstance(version["features"], dict)


def test_bank_missions_are_set_at_creation_and_never_modified(
    hindsight_backend: HindsightBackend, make_bank: MakeBank
) -> None:
    bank = make_bank(
        retain_mission="RM: keep decisions",
        reflect_mission="FM: help the agent",
        observations_mission="OM: find patterns",
        retain_structured_chunk_size=2048,
    )
    overrides = hindsight_backend.get_bank_config(bank, timeout_s=10)["overrides"]
    assert overrides["retain_mission"] == "RM: keep decisions"
    assert overrides["reflect_mission"] == "FM: help the agent"
    assert overrides["observations_mission"] == "OM: find patterns"
    assert overrides["retain_extraction_mode"] == "verbatim"
    assert overrides["enable_observations"] is False
    assert overrides["retain_structured_chunk_size"] == 2048
    assert hindsight_backend.bank_exists(bank, timeout_s=10) is True
    # An existing bank is never modified, whatever spec we hold now.
    assert hindsight_backend.ensure_bank(bank, BankSpec(retain_mission="other"), timeout_s=10) is False
    after = hindsight_backend.get_bank_config(bank, timeout_s=10)["overrides"]
    assert after == overrides


def test_unknown_bank_is_not_found_for_reads_but_retain_auto_creates_it(hindsight_backend: HindsightBackend) -> None:
    bank = f"hh-test-never-{uuid.uuid4().hex[:10]}"
    assert hindsight_backend.bank_exists(bank, timeout_s=10) is False
    with pytest.raises(HindsightError) as ei:
        hindsight_backend.recall(bank, RecallRequest(query="anything"), timeout_s=10)
    err = ei.value
    assert (err.kind, err.status) == ("not_found", 404)
    assert bank in err.detail and str(err) == f"Hindsight recall failed: {err.detail}"
    with pytest.raises(HindsightError) as ei:
        hindsight_backend.get_bank_config(bank, timeout_s=10)
    assert ei.value.kind == "not_found"
    # Quirk (ADR 010/013): retain does not 404, it creates the bank with server defaults, so
    # the queue must ensure a bank (with our missions) BEFORE its first delivery.
    try:
        hindsight_backend.retain_batch(bank, [item("auto created", "d")], operation_id=op_id(), async_=False)
        assert hindsight_backend.bank_exists(bank, timeout_s=10) is True
        overrides = hindsight_backend.get_bank_config(bank, timeout_s=10)["overrides"]
        assert "retain_mission" not in overrides
    finally:
        hindsight_backend.delete_bank(bank, timeout_s=10)


# ----------------------------------------------------------------------------- retain


def test_retain_sync(hindsight_backend: HindsightBackend, make_bank: MakeBank) -> None:
    bank = make_bank()
    out = hindsight_backend.retain_batch(
        bank,
        [item("The build uses uv and ruff.", "doc-sync", tags=["repo:a"], metadata={"source": "hindsight-hooks"})],
        operation_id=op_id(),
        async_=False,
        timeout_s=30,
    )
    assert out.items_count == 1 and out.operation_ids == []
    assert isinstance(out.tokens, int) and out.tokens > 0
    (unit,) = units(hindsight_backend, bank, "doc-sync")
    assert unit["text"] == "The build uses uv and ruff."
    assert unit["tags"] == ["repo:a"] and unit["metadata"] == {"source": "hindsight-hooks"}


def test_retain_async_acknowledges_with_our_operation_id(
    hindsight_backend: HindsightBackend, make_bank: MakeBank
) -> None:
    bank = make_bank()
    operation = op_id()
    items = [item("Async fact one about kestrels.", "doc-1"), item("Async fact two about ospreys.", "doc-2")]
    out = hindsight_backend.retain_batch(bank, items, operation_id=operation, async_=True, timeout_s=30)
    assert out.as_outcome() == {"items_count": 2, "operations": [operation]}
    wait_done(hindsight_backend, bank, operation)
    assert sorted(u["document_id"] for u in units(hindsight_backend, bank)) == ["doc-1", "doc-2"]
    assert texts(hindsight_backend, bank, "kestrels") == ["Async fact one about kestrels."]


def test_async_redelivery_with_the_same_operation_id_does_not_duplicate(
    hindsight_backend: HindsightBackend, make_bank: MakeBank
) -> None:
    bank = make_bank()
    operation = op_id()
    batch = [item("Pelicans nest on the east pier.", "hh-session:redeliver", "append", tags=["repo:a"])]
    first = hindsight_backend.retain_batch(bank, batch, operation_id=operation, async_=True)
    again = hindsight_backend.retain_batch(bank, batch, operation_id=operation, async_=True)  # while pending
    wait_done(hindsight_backend, bank, operation)
    late = hindsight_backend.retain_batch(bank, batch, operation_id=operation, async_=True)  # after completion
    assert first.operation_ids == again.operation_ids == late.operation_ids == [operation]
    time.sleep(0.3)  # a duplicate, if the server made one, would be queued by now
    doc = hindsight_backend.get_document(bank, "hh-session:redeliver", timeout_s=10)
    assert doc["original_text"] == "Pelicans nest on the east pier."
    assert len(units(hindsight_backend, bank)) == 1


def test_sync_redelivery_is_at_least_once_for_append(hindsight_backend: HindsightBackend, make_bank: MakeBank) -> None:
    """The server ignores operation_id for sync retain: a resent append is applied twice.
    ADR 013 records how we live with it (async by default; replace is naturally idempotent)."""
    bank = make_bank()
    operation = op_id()
    batch = [item("Herons fish at dawn.", "hh-session:sync", "append")]
    hindsight_backend.retain_batch(bank, batch, operation_id=operation, async_=False)
    hindsight_backend.retain_batch(bank, batch, operation_id=operation, async_=False)
    doc = hindsight_backend.get_document(bank, "hh-session:sync", timeout_s=10)
    assert doc["original_text"] == "Herons fish at dawn.\nHerons fish at dawn."
    replace = [item("Replace mode is idempotent.", "hh-explicit:s:1", "replace")]
    for _ in range(2):
        hindsight_backend.retain_batch(bank, replace, operation_id=op_id(), async_=False)
    doc = hindsight_backend.get_document(bank, "hh-explicit:s:1", timeout_s=10)
    assert doc["original_text"] == "Replace mode is idempotent."
    assert len(units(hindsight_backend, bank, "hh-explicit:s:1")) == 1


def test_append_keeps_one_document_and_applies_the_latest_full_tag_and_metadata_set(
    hindsight_backend: HindsightBackend, make_bank: MakeBank
) -> None:
    bank = make_bank()
    doc = "hh-session:append"
    first = item("Turn one: we chose SQLite.", doc, "append", tags=["repo:a", "session:s1"], metadata={"turn": "1"})
    second = item(
        "Turn two: we added FTS5.", doc, "append", tags=["repo:a", "session:s1", "mode:x"], metadata={"turn": "2"}
    )
    hindsight_backend.retain_batch(bank, [first], operation_id=op_id(), async_=False)
    hindsight_backend.retain_batch(bank, [second], operation_id=op_id(), async_=False)
    documents = hindsight_backend.list_documents(bank, timeout_s=10)["items"]
    assert [d["id"] for d in documents] == [doc]
    got = hindsight_backend.get_document(bank, doc, timeout_s=10)
    assert got["original_text"] == "Turn one: we chose SQLite.\nTurn two: we added FTS5."
    assert sorted(got["tags"]) == ["mode:x", "repo:a", "session:s1"]
    rows = units(hindsight_backend, bank, doc)
    assert len(rows) >= 2
    for row in rows:
        assert sorted(row["tags"]) == ["mode:x", "repo:a", "session:s1"]
        assert row["metadata"] == {"turn": "2"}


def test_replace_replaces_the_document(hindsight_backend: HindsightBackend, make_bank: MakeBank) -> None:
    bank = make_bank()
    doc = "hh-explicit:s:replace"
    hindsight_backend.retain_batch(bank, [item("Old: deploys use Fabric.", doc)], operation_id=op_id(), async_=False)
    hindsight_backend.retain_batch(bank, [item("New: deploys use Ansible.", doc)], operation_id=op_id(), async_=False)
    assert [u["text"] for u in units(hindsight_backend, bank, doc)] == ["New: deploys use Ansible."]
    assert texts(hindsight_backend, bank, "deploys use Fabric") == ["New: deploys use Ansible."]


def test_delete_document(hindsight_backend: HindsightBackend, make_bank: MakeBank) -> None:
    bank = make_bank()
    doc = "hh-import:s:leaf:a/b"  # ':' and '/' must survive as one encoded path segment
    hindsight_backend.retain_batch(bank, [item("Imported fact.", doc)], operation_id=op_id(), async_=False)
    assert hindsight_backend.get_document(bank, doc, timeout_s=10)["id"] == doc
    out = hindsight_backend.delete_document(bank, doc, timeout_s=10)
    assert out["success"] is True and out["memory_units_deleted"] == 1
    with pytest.raises(HindsightError) as ei:
        hindsight_backend.delete_document(bank, doc, timeout_s=10)
    assert ei.value.kind == "not_found"


# ----------------------------------------------------------------------------- recall


def test_tag_groups_any_strict_isolates_two_repos_in_one_bank(
    hindsight_backend: HindsightBackend, make_bank: MakeBank
) -> None:
    bank = make_bank()
    hindsight_backend.retain_batch(
        bank,
        [
            item("Repo alpha builds with make targets.", "a1", tags=["repo:alpha-1", "source:pi"]),
            item("Repo beta builds with cargo targets.", "b1", tags=["repo:beta-2", "source:pi"]),
            item("Untagged builds with bazel targets.", "u1"),
        ],
        operation_id=op_id(),
        async_=False,
    )
    scope_a = [{"tags": ["repo:alpha-1"], "match": "any_strict"}]
    scope_b = [{"tags": ["repo:beta-2"], "match": "any_strict"}]
    assert texts(hindsight_backend, bank, "builds with targets", tag_groups=scope_a) == [
        "Repo alpha builds with make targets."
    ]
    assert texts(hindsight_backend, bank, "builds with targets", tag_groups=scope_b) == [
        "Repo beta builds with cargo targets."
    ]
    # The other repo's exact words do not leak through the filter.
    assert texts(hindsight_backend, bank, "cargo", tag_groups=scope_a) == []
    everything = texts(hindsight_backend, bank, "builds with targets")
    assert len(everything) == 3


def test_user_bank_scope_tags_and_shared_observation_form(
    hindsight_backend: HindsightBackend, make_bank: MakeBank
) -> None:
    bank = make_bank("hh-test-user")
    hindsight_backend.retain_batch(
        bank,
        [
            item("Prefers terse commit messages.", "p1", tags=["source:pi", "harness:pi"]),
            item("Prefers verbose commit messages.", "p2", tags=["source:other", "harness:other"]),
            item("Shared commit messages guidance.", "p3"),
        ],
        operation_id=op_id(),
        async_=False,
    )
    group = {"tags": ["harness:pi"], "match": "any_strict"}
    assert texts(hindsight_backend, bank, "commit messages", tag_groups=[group]) == ["Prefers terse commit messages."]
    shared = [{"or": [group, {"tags": [], "match": "exact"}]}]
    assert sorted(texts(hindsight_backend, bank, "commit messages", tag_groups=shared)) == [
        "Prefers terse commit messages.",
        "Shared commit messages guidance.",
    ]


def test_types_filter(hindsight_backend: HindsightBackend, make_bank: MakeBank) -> None:
    bank = make_bank()
    operation = op_id()
    hindsight_backend.retain_batch(bank, [item("Verbatim facts are world facts.", "t1")], operation_id=operation)
    wait_done(hindsight_backend, bank, operation)
    hits = hindsight_backend.recall(bank, RecallRequest(query="verbatim facts", types=["world"]), timeout_s=10).hits
    assert [(h.text, h.type) for h in hits] == [("Verbatim facts are world facts.", "world")]
    assert texts(hindsight_backend, bank, "verbatim facts", types=["experience"]) == []
    assert texts(hindsight_backend, bank, "verbatim facts", types=["observation"]) == []
    assert texts(hindsight_backend, bank, "verbatim facts", types=[]) == ["Verbatim facts are world facts."]


def test_budgets_options_and_hit_fields(hindsight_backend: HindsightBackend, make_bank: MakeBank) -> None:
    bank = make_bank()
    hindsight_backend.retain_batch(
        bank,
        [item("Budget test: the cache TTL is 60 seconds.", "doc-b", tags=["repo:a"])],
        operation_id=op_id(),
        async_=False,
    )
    for budget in ("low", "mid", "high"):
        req = RecallRequest(
            query="cache TTL",
            budget=budget,  # type: ignore[arg-type]
            max_tokens=200,
            query_timestamp="2030-01-01T00:00:00Z",
            include_source_facts=True,
            max_source_facts_tokens=256,
            tag_groups=[{"tags": ["repo:a"], "match": "any_strict"}],
        )
        (hit,) = hindsight_backend.recall(bank, req, timeout_s=10).hits
        assert hit.text == "Budget test: the cache TTL is 60 seconds."
        assert hit.id and hit.type == "world" and hit.tags == ["repo:a"]
        assert hit.document_id == "doc-b" and hit.mentioned_at
        assert hit.evidence == []  # source facts belong to observations; there are none here


def test_recall_with_observations_bank_accepts_source_facts(
    hindsight_backend: HindsightBackend, make_bank: MakeBank
) -> None:
    bank = make_bank(enable_observations=True)
    operation = op_id()
    hindsight_backend.retain_batch(
        bank, [item("Observed: the team reviews every PR twice.", "o1", tags=["repo:a"])], operation_id=operation
    )
    wait_done(hindsight_backend, bank, operation)
    deadline = time.monotonic() + 20
    observed: list[Any] = []
    while time.monotonic() < deadline:
        req = RecallRequest(query="reviews every PR", types=["observation"], include_source_facts=True)
        observed = hindsight_backend.recall(bank, req, timeout_s=10).hits
        if observed:
            break
        time.sleep(0.2)
    assert observed, "consolidation produced no observation within 20 s"
    assert all(h.type == "observation" for h in observed)
    assert any("reviews every PR twice" in e for h in observed for e in h.evidence)


# ----------------------------------------------------------------------------- reflect and mental models


def test_reflect_with_the_mock_llm(hindsight_backend: HindsightBackend, make_bank: MakeBank) -> None:
    bank = make_bank()
    hindsight_backend.retain_batch(bank, [item("Reflect fact.", "r1")], operation_id=op_id(), async_=False)
    res = hindsight_backend.reflect(
        bank,
        ReflectRequest(query="What do we know?", context="Post-retain reflection", include_facts=True, max_tokens=300),
        timeout_s=30,
    )
    assert res.text == "mock response" and res.structured_output is None  # 1.1.0 still accepts context
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}}
    res = hindsight_backend.reflect(bank, ReflectRequest(query="q", response_schema=schema), timeout_s=30)
    assert isinstance(res.structured_output, dict) and "answer" in res.structured_output


def test_mental_model_created_and_read_back(hindsight_backend: HindsightBackend, make_bank: MakeBank) -> None:
    bank = make_bank()
    # A model over an empty bank refreshes to "" (outcome content_preserved_no_new_facts).
    hindsight_backend.retain_batch(
        bank, [item("Convention: tabs, not spaces.", "c1", tags=["repo:abc"])], operation_id=op_id(), async_=False
    )
    body = {
        "id": "project-conventions-abc",
        "name": "Project Conventions",
        "source_query": "What are the explicit project conventions for style, build, testing and release?",
        "tags": ["repo:abc"],
        "max_tokens": 800,
        "trigger": {"mode": "delta", "refresh_after_consolidation": True},
    }
    created = hindsight_backend.create_mental_model(bank, body, timeout_s=30)
    assert created["mental_model_id"] == "project-conventions-abc"
    wait_done(hindsight_backend, bank, created["operation_id"])
    model = hindsight_backend.get_mental_model(bank, "project-conventions-abc", timeout_s=10)
    assert model["name"] == "Project Conventions" and model["tags"] == ["repo:abc"]
    assert model["max_tokens"] == 800 and model["trigger"]["mode"] == "delta"
    assert model["content"].strip() == "mock response" and model["last_refreshed_at"]
    listed = hindsight_backend.list_mental_models(bank, detail="metadata", timeout_s=10)
    assert [m["id"] for m in listed] == ["project-conventions-abc"] and listed[0].get("content") is None
    with_content = hindsight_backend.list_mental_models(bank, detail="content", timeout_s=10)
    assert with_content[0]["content"].strip() == "mock response"
    refresh = hindsight_backend.refresh_mental_model(bank, "project-conventions-abc", timeout_s=10)
    wait_done(hindsight_backend, bank, refresh["operation_id"])
    with pytest.raises(HindsightError) as ei:  # create-only: a second create is refused
        hindsight_backend.create_mental_model(bank, body, timeout_s=10)
    assert (ei.value.kind, ei.value.status) == ("permanent", 409)
    with pytest.raises(HindsightError) as ei:
        hindsight_backend.get_mental_model(bank, "missing-model", timeout_s=10)
    assert ei.value.kind == "not_found"


def test_unknown_operation_reads_as_status_not_found(hindsight_backend: HindsightBackend, make_bank: MakeBank) -> None:
    bank = make_bank()
    assert hindsight_backend.get_operation(bank, op_id(), timeout_s=10)["status"] == "not_found"


# ----------------------------------------------------------------------------- error mapping


def test_invalid_payload_is_422_permanent_without_echoing_content(
    hindsight_backend: HindsightBackend, make_bank: MakeBank
) -> None:
    bank = make_bank()
    marker = "the launch code is swordfish-7781"
    with pytest.raises(HindsightError) as ei:
        hindsight_backend.retain_batch(bank, [item(marker, "d", "merge")], operation_id=op_id())
    err = ei.value
    assert (err.kind, err.status) == ("permanent", 422)
    detail = json.loads(err.detail)
    assert any(e["loc"][-1] == "update_mode" for e in detail)
    assert "swordfish" not in str(err) and "swordfish" not in repr(err)
    with pytest.raises(HindsightError) as ei:
        hindsight_backend.recall(bank, RecallRequest(query="x", budget="huge"), timeout_s=10)  # type: ignore[arg-type]
    assert (ei.value.kind, ei.value.status) == ("permanent", 422)


def test_operation_id_must_be_a_uuid(hindsight_backend: HindsightBackend, make_bank: MakeBank) -> None:
    bank = make_bank()
    with pytest.raises(HindsightError) as ei:
        hindsight_backend.retain_batch(bank, [item("x", "d")], operation_id="job-1")
    assert (ei.value.kind, ei.value.status) == ("permanent", 422)
    assert "operation_id" in ei.value.detail


def test_same_operation_id_in_another_bank_is_409_permanent(
    hindsight_backend: HindsightBackend, make_bank: MakeBank
) -> None:
    first, second = make_bank(), make_bank()
    operation = op_id()
    hindsight_backend.retain_batch(first, [item("one", "d")], operation_id=operation)
    with pytest.raises(HindsightError) as ei:
        hindsight_backend.retain_batch(second, [item("two", "d")], operation_id=operation)
    assert (ei.value.kind, ei.value.status) == ("permanent", 409)


def test_wrong_key_is_not_an_auth_failure_on_an_open_server(hindsight_url: str, make_bank: MakeBank) -> None:
    """The test server runs without auth, so a key is simply ignored: the header is harmless."""
    backend = HindsightBackend(hindsight_url, "hs-wrong-key-0123456789")
    try:
        assert backend.bank_exists(make_bank(), timeout_s=10) is True
    finally:
        backend.close()


@pytest.fixture
def forwarder(hindsight_url: str) -> Iterator[SwitchableRelay]:
    relay = SwitchableRelay(hindsight_url)
    yield relay
    relay.close()


def test_server_gone_mid_way_is_a_transient_transport_error(forwarder: SwitchableRelay, make_bank: MakeBank) -> None:
    bank = make_bank()
    backend = HindsightBackend(forwarder.url, retry_base_ms=10, retry_jitter_ms=5)
    try:
        assert backend.health(timeout_s=10)["status"] == "healthy"
        backend.retain_batch(bank, [item("before the outage", "d")], operation_id=op_id(), async_=False)
        assert backend.recall(bank, RecallRequest(query="outage"), timeout_s=10).hits
        forwarder.close()
        for call in (
            lambda: backend.retain_batch(bank, [item("during", "d2")], operation_id=op_id(), timeout_s=5),
            lambda: backend.recall(bank, RecallRequest(query="outage"), timeout_s=5),
            lambda: backend.health(timeout_s=5),
        ):
            with pytest.raises(HindsightError) as ei:
                call()
            assert (ei.value.kind, ei.value.status) == ("transient", None)
            assert "request failed:" in str(ei.value)
    finally:
        backend.close()
