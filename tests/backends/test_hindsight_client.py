"""HindsightBackend against ``httpx.MockTransport``: wire shapes, error mapping, timeouts, retries, abort.

Every request body checked here was checked by hand against hindsight-openapi-1.1.0.json;
``test_request_fields_exist_in_openapi`` keeps it that way mechanically.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hindsight_hooks import __version__
from hindsight_hooks.backends.base import (
    BackendError,
    BankSpec,
    MemoryBackend,
    MemoryHit,
    RecallRequest,
    ReflectRequest,
)
from hindsight_hooks.backends.hindsight import (
    HindsightBackend,
    HindsightError,
    parse_recall_payload,
    parse_retain_outcome,
)

BASE = "http://hindsight.test:8888"
OPENAPI = Path("/work/shared/spec/hindsight-openapi-1.1.0.json")
KEY = "hs-test-key-0123456789abcdef"

Handler = Callable[[httpx.Request], httpx.Response]


class Recorder:
    """A MockTransport handler that records every request and answers from a script."""

    def __init__(self, *responses: httpx.Response | Handler | Exception) -> None:
        self.responses = list(responses)
        self.requests: list[httpx.Request] = []
        self.times: list[float] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        self.times.append(time.monotonic())
        item = self.responses.pop(0) if len(self.responses) > 1 else self.responses[0]
        if isinstance(item, Exception):
            raise item
        if callable(item) and not isinstance(item, httpx.Response):
            return item(request)
        return item

    def body(self, i: int = -1) -> Any:
        return json.loads(self.requests[i].content)


def make(rec: Recorder, *, key: str = "", timeout_ms: int = 30000, **kw: Any) -> HindsightBackend:
    kw.setdefault("retry_base_ms", 10.0)
    kw.setdefault("retry_jitter_ms", 5.0)
    return HindsightBackend(BASE, key, timeout_ms=timeout_ms, transport=httpx.MockTransport(rec), **kw)


def ok(payload: Any = None, status: int = 200) -> httpx.Response:
    return httpx.Response(status, json=payload if payload is not None else {})


# ----------------------------------------------------------------------------- headers, repr


def test_headers_carry_user_agent_json_and_bearer_only_with_a_key() -> None:
    rec = Recorder(ok({"status": "healthy"}))
    make(rec, key=KEY).health()
    make(rec).health()
    with_key, without = rec.requests
    assert with_key.headers["authorization"] == f"Bearer {KEY}"
    assert "authorization" not in without.headers
    for r in (with_key, without):
        assert r.headers["user-agent"] == f"hindsight-hooks/{__version__}"
        assert r.headers["content-type"] == "application/json"
        assert str(r.url) == f"{BASE}/health"


def test_user_agent_version_is_configurable() -> None:
    rec = Recorder(ok())
    make(rec, user_agent_version="9.9.9").version()
    assert rec.requests[0].headers["user-agent"] == "hindsight-hooks/9.9.9"


def test_key_never_appears_in_repr_or_errors() -> None:
    echo = httpx.Response(401, json={"detail": f"bad Authorization: Bearer {KEY}"})
    rec = Recorder(echo)
    backend = make(rec, key=KEY)
    assert KEY not in repr(backend) and "api_key=set" in repr(backend)
    with pytest.raises(HindsightError) as ei:
        backend.recall("b", RecallRequest(query="q"))
    err = ei.value
    assert err.kind == "auth" and err.status == 401
    for text in (str(err), repr(err), err.detail, err.message):
        assert KEY not in text
    assert "[REDACTED]" in err.detail


def test_invalid_key_characters_are_refused_without_echoing_the_key() -> None:
    with pytest.raises(ValueError) as ei:
        HindsightBackend(BASE, "abc\ndef-secret")
    assert "def-secret" not in str(ei.value)
    with pytest.raises(ValueError):
        HindsightBackend("  ", KEY)


def test_satisfies_the_memory_backend_protocol() -> None:
    backend = make(Recorder(ok()))
    assert isinstance(backend, MemoryBackend)
    assert backend.name == "hindsight"
    assert issubclass(HindsightError, BackendError)


def test_base_url_path_prefix_and_trailing_slash_are_kept() -> None:
    rec = Recorder(ok())
    HindsightBackend("http://h.test/proxy/hs/", transport=httpx.MockTransport(rec)).health()
    assert str(rec.requests[0].url) == "http://h.test/proxy/hs/health"


# ----------------------------------------------------------------------------- banks


def test_path_segments_are_url_encoded() -> None:
    rec = Recorder(ok({"bank_id": "x", "config": {}, "overrides": {}}))
    backend = make(rec)
    backend.bank_exists("a b/c:d%")
    backend.get_document("bank", "hh-session:ab/cd")
    assert rec.requests[0].url.raw_path == b"/v1/default/banks/a%20b%2Fc%3Ad%25/config"
    assert rec.requests[1].url.raw_path == b"/v1/default/banks/bank/documents/hh-session%3Aab%2Fcd"


def test_bank_exists_maps_200_and_404_and_raises_on_others() -> None:
    backend = make(Recorder(ok({"bank_id": "b", "config": {}, "overrides": {}})))
    assert backend.bank_exists("b") is True
    backend = make(Recorder(httpx.Response(404, json={"detail": "Bank 'b' not found"})))
    assert backend.bank_exists("b") is False
    backend = make(Recorder(httpx.Response(403, json={"detail": "forbidden"})))
    with pytest.raises(HindsightError) as ei:
        backend.bank_exists("b")
    assert ei.value.kind == "auth"


def test_ensure_bank_existing_is_never_modified() -> None:
    rec = Recorder(ok({"bank_id": "b", "config": {}, "overrides": {}}))
    assert make(rec).ensure_bank("b", BankSpec(retain_mission="m")) is False
    assert [r.method for r in rec.requests] == ["GET"]


def test_ensure_bank_creates_with_missions_and_never_name() -> None:
    rec = Recorder(httpx.Response(404, json={"detail": "Bank 'b' not found"}), ok({"bank_id": "b"}))
    spec = BankSpec(
        retain_mission="RM",
        reflect_mission="FM",
        observations_mission="OM",
        retain_extraction_mode="verbatim",
        enable_observations=False,
        retain_structured_chunk_size=1234,
    )
    assert make(rec).ensure_bank("proj bank", spec) is True
    get, put = rec.requests
    assert (get.method, get.url.path) == ("GET", "/v1/default/banks/proj bank/config")
    assert (put.method, put.url.raw_path) == ("PUT", b"/v1/default/banks/proj%20bank")
    assert rec.body(1) == {
        "reflect_mission": "FM",
        "retain_mission": "RM",
        "observations_mission": "OM",
        "retain_extraction_mode": "verbatim",
        "enable_observations": False,
        "retain_structured_chunk_size": 1234,
    }


def test_ensure_bank_omits_blank_missions_and_unset_chunk_size() -> None:
    rec = Recorder(httpx.Response(404, json={"detail": "nope"}), ok())
    make(rec).ensure_bank("b", BankSpec(retain_mission="  "))
    assert rec.body(1) == {"retain_extraction_mode": "concise", "enable_observations": True}


def test_ensure_bank_put_failure_goes_to_the_caller() -> None:
    rec = Recorder(httpx.Response(404, json={"detail": "nope"}), httpx.Response(422, json={"detail": "bad mode"}))
    with pytest.raises(HindsightError) as ei:
        make(rec).ensure_bank("b", BankSpec())
    assert (ei.value.kind, ei.value.status, ei.value.operation) == ("permanent", 422, "Hindsight bank create")
    assert len(rec.requests) == 2  # the PUT is not retried


# ----------------------------------------------------------------------------- retain


def test_retain_body_is_the_wire_shape_with_none_omitted_and_extras_dropped() -> None:
    rec = Recorder(ok({"success": True, "items_count": 2, "async": True, "operation_id": "op-1"}))
    items = [
        {
            "content": "[1]",
            "context": "ctx",
            "document_id": "hh-session:1",
            "update_mode": "append",
            "timestamp": "unset",
            "tags": ["repo:a"],
            "metadata": {"k": "v"},
            "observation_scopes": [["repo:a"]],
            "entities": [{"text": "Alice"}],
            "strategy": None,
            "claim_token": "internal",
        },
        {"content": "x", "context": "c", "document_id": "d", "update_mode": "replace", "tags": None},
    ]
    out = make(rec).retain_batch("b", items, operation_id="op-1", async_=True)
    req = rec.requests[0]
    assert (req.method, req.url.path) == ("POST", "/v1/default/banks/b/memories")
    assert rec.body() == {
        "items": [
            {
                "content": "[1]",
                "context": "ctx",
                "timestamp": "unset",
                "document_id": "hh-session:1",
                "update_mode": "append",
                "tags": ["repo:a"],
                "metadata": {"k": "v"},
                "observation_scopes": [["repo:a"]],
                "entities": [{"text": "Alice"}],
            },
            {"content": "x", "context": "c", "document_id": "d", "update_mode": "replace"},
        ],
        "async": True,
        "operation_id": "op-1",
    }
    assert out.as_outcome() == {"items_count": 2, "operations": ["op-1"]}


def test_retain_sync_reads_usage_tokens() -> None:
    payload = {"success": True, "items_count": 1, "async": False, "operation_id": None, "usage": {"total_tokens": 15}}
    rec = Recorder(ok(payload))
    out = make(rec).retain_batch("b", [{"content": "x"}], operation_id="op", async_=False)
    assert rec.body()["async"] is False and rec.body()["operation_id"] == "op"
    assert out.as_outcome() == {"items_count": 1, "tokens": 15}


@pytest.mark.parametrize("status", [500, 502, 503, 429, 408])
def test_retain_is_never_retried_in_call(status: int) -> None:
    rec = Recorder(httpx.Response(status, text="busy"))
    with pytest.raises(HindsightError) as ei:
        make(rec).retain_batch("b", [{"content": "x"}], operation_id="op")
    assert ei.value.kind == "transient" and ei.value.status == status
    assert len(rec.requests) == 1


@pytest.mark.parametrize("response", [httpx.Response(200), httpx.Response(200, text="<html>ok</html>")])
def test_retain_with_an_empty_or_unreadable_body_is_a_delivery_with_empty_outcome(response: httpx.Response) -> None:
    out = make(Recorder(response)).retain_batch("b", [{"content": "x"}], operation_id="op")
    assert out.as_outcome() == {}


def test_retain_outcome_parsing_variants() -> None:
    out = parse_retain_outcome(
        {
            "itemsCount": 3,
            "operationId": "a",
            "id": "a",
            "operations": ["b", {"id": "c"}, {"operation_id": "d"}, {"x": 1}, 7],
            "operation_ids": ["d", "e"],
            "operationIds": ["f", None],
            "usage": {"total_tokens": 42},
        }
    )
    assert out.items_count == 3 and out.tokens == 42
    assert out.operation_ids == ["a", "b", "c", "d", "e", "f"]
    assert parse_retain_outcome(None).as_outcome() == {}
    assert parse_retain_outcome([1, 2]).as_outcome() == {}
    assert parse_retain_outcome({"items_count": True, "usage": "x"}).as_outcome() == {}


# ----------------------------------------------------------------------------- recall


def test_recall_request_minimal_omits_optional_fields() -> None:
    rec = Recorder(ok({"results": []}))
    make(rec).recall("b", RecallRequest(query="q", types=[], tag_groups=[]))
    assert rec.body() == {"query": "q", "budget": "mid", "max_tokens": 800}
    assert rec.requests[0].url.path == "/v1/default/banks/b/memories/recall"


def test_recall_request_full() -> None:
    rec = Recorder(ok({"results": []}))
    groups = [{"tags": ["repo:x"], "match": "any_strict"}, {"or": [{"tags": ["a"]}, {"tags": [], "match": "exact"}]}]
    req = RecallRequest(
        query="q",
        budget="high",
        max_tokens=0,
        types=["world", "observation"],
        tag_groups=groups,
        query_timestamp="2025-01-02T03:04:05.000Z",
        include_source_facts=True,
        max_source_facts_tokens=123,
        limit=5,
    )
    make(rec).recall("b", req)
    assert rec.body() == {
        "query": "q",
        "budget": "high",
        "max_tokens": 0,
        "types": ["world", "observation"],
        "query_timestamp": "2025-01-02T03:04:05.000Z",
        "include": {"source_facts": {"max_tokens": 123}},
        "tag_groups": groups,
    }


def test_recall_parses_hits_with_evidence() -> None:
    payload = {
        "results": [
            {
                "id": "u1",
                "text": "uses uv",
                "type": "observation",
                "tags": ["repo:a", 5],
                "mentioned_at": "2025-01-01T00:00:00Z",
                "document_id": "d1",
                "source_fact_ids": ["f1", "missing", "f2"],
                "scores": {"final": 0.5},
            }
        ],
        "source_facts": {"f1": {"id": "f1", "text": "fact one"}, "f2": {"text": "fact two"}},
    }
    hits = make(Recorder(ok(payload))).recall("b", RecallRequest(query="q")).hits
    assert hits == [
        MemoryHit(
            text="uses uv",
            id="u1",
            type="observation",
            tags=["repo:a"],
            mentioned_at="2025-01-01T00:00:00Z",
            document_id="d1",
            evidence=["fact one", "fact two"],
            score=0.5,
        )
    ]


def test_parse_recall_payload_shapes() -> None:
    assert [h.text for h in parse_recall_payload({"memories": [{"content": "c"}]})] == ["c"]
    assert [h.text for h in parse_recall_payload([{"text": "t", "content": "c"}, "bare"])] == ["t", "bare"]
    assert parse_recall_payload({"results": [{"id": 3, "x": [1]}]})[0].text == '{"id":3,"x":[1]}'
    assert parse_recall_payload({"results": [{"id": 3}]})[0].id == "3"
    assert parse_recall_payload({"results": "nope", "memories": None}) == []
    assert parse_recall_payload("text") == []
    assert parse_recall_payload(None) == []


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
_row = st.fixed_dictionaries(
    {},
    optional={
        "id": _json,
        "text": _json,
        "content": _json,
        "type": _json,
        "tags": _json,
        "source_fact_ids": st.lists(st.sampled_from(["f1", "f2", "zz"]), max_size=3) | _json,
        "scores": _json,
    },
)


@settings(max_examples=100, deadline=None)
@given(
    rows=st.lists(_row | _json, max_size=5),
    facts=st.dictionaries(st.sampled_from(["f1", "f2"]), _json, max_size=2),
    key=st.sampled_from(["results", "memories", None]),
)
def test_parse_recall_payload_never_raises_and_keeps_one_hit_per_row(
    rows: list[Any], facts: dict[str, Any], key: str | None
) -> None:
    payload: Any = rows if key is None else {key: rows, "source_facts": facts}
    hits = parse_recall_payload(payload)
    assert len(hits) == len(rows)
    for row, hit in zip(rows, hits, strict=True):
        assert isinstance(hit.text, str)
        assert all(isinstance(t, str) for t in hit.tags)
        assert all(isinstance(e, str) and e for e in hit.evidence)
        if isinstance(row, dict) and isinstance(row.get("text"), str):
            assert hit.text == row["text"]


# ----------------------------------------------------------------------------- reflect


def test_reflect_request_and_result() -> None:
    rec = Recorder(ok({"text": "  answer  ", "structured_output": {"a": 1}}))
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    req = ReflectRequest(
        query="q",
        budget="low",
        context="ctx",
        max_tokens=300,
        response_schema=schema,
        include_facts=True,
        tag_groups=[{"tags": ["repo:a"], "match": "any_strict"}],
    )
    res = make(rec).reflect("b", req)
    assert rec.requests[0].url.path == "/v1/default/banks/b/reflect"
    assert rec.body() == {
        "query": "q",
        "budget": "low",
        "context": "ctx",
        "max_tokens": 300,
        "response_schema": schema,
        "include": {"facts": {}},
        "tag_groups": [{"tags": ["repo:a"], "match": "any_strict"}],
    }
    assert res.text == "  answer  " and res.structured_output == {"a": 1}


def test_reflect_minimal_body_and_missing_text() -> None:
    rec = Recorder(ok({}))
    res = make(rec).reflect("b", ReflectRequest(query="q", context="  "))
    assert rec.body() == {"query": "q", "budget": "mid"}
    assert res.text == "" and res.structured_output is None


def test_reflect_422_naming_context_resends_once_with_context_in_the_query() -> None:
    deprecated = httpx.Response(
        422,
        json={"detail": [{"loc": ["body", "context"], "msg": "Extra inputs are not permitted", "input": "ctx text"}]},
    )
    rec = Recorder(deprecated, ok({"text": "fine"}))
    res = make(rec).reflect("b", ReflectRequest(query="what", context="ctx text", budget="low"))
    assert res.text == "fine"
    assert len(rec.requests) == 2
    assert rec.body(0)["context"] == "ctx text"
    assert rec.body(1) == {"query": "what\n\nAdditional context:\nctx text", "budget": "low"}


def test_reflect_422_twice_raises_and_does_not_loop() -> None:
    deprecated = httpx.Response(422, json={"detail": "field 'context' is not supported"})
    rec = Recorder(deprecated)
    with pytest.raises(HindsightError) as ei:
        make(rec).reflect("b", ReflectRequest(query="q", context="c"))
    assert ei.value.kind == "permanent" and len(rec.requests) == 2


def test_reflect_422_not_about_context_is_not_resent() -> None:
    other = httpx.Response(422, json={"detail": [{"loc": ["body", "budget"], "msg": "bad enum"}]})
    rec = Recorder(other)
    with pytest.raises(HindsightError):
        make(rec).reflect("b", ReflectRequest(query="q", context="c"))
    assert len(rec.requests) == 1
    rec = Recorder(httpx.Response(422, json={"detail": "context is wrong"}))
    with pytest.raises(HindsightError):  # no context was sent, so nothing to fold
        make(rec).reflect("b", ReflectRequest(query="q"))
    assert len(rec.requests) == 1


# ----------------------------------------------------------------------------- mental models, operations, documents


def test_mental_model_calls_use_the_openapi_paths() -> None:
    rec = Recorder(
        ok({"items": [{"id": "m1", "name": "M"}, "junk"], "total": 1, "limit": 100, "offset": 0}),
        ok({"mental_model_id": "m2", "operation_id": "op"}),
        ok({"id": "m2", "content": "x"}),
        ok({"operation_id": "op2", "status": "queued"}),
        ok({"operation_id": "op", "status": "completed"}),
        ok({"success": True, "memory_units_deleted": 2}),
    )
    backend = make(rec)
    assert backend.list_mental_models("b", detail="content") == [{"id": "m1", "name": "M"}]
    body = {
        "id": "m2",
        "name": "M2",
        "source_query": "q",
        "tags": ["repo:a"],
        "max_tokens": 800,
        "trigger": {"mode": "delta", "refresh_after_consolidation": True},
    }
    assert backend.create_mental_model("b", body)["mental_model_id"] == "m2"
    assert backend.get_mental_model("b", "m2")["content"] == "x"
    assert backend.refresh_mental_model("b", "m2")["operation_id"] == "op2"
    assert backend.get_operation("b", "op")["status"] == "completed"
    assert backend.delete_document("b", "hh-session:1")["memory_units_deleted"] == 2
    got = [(r.method, r.url.raw_path.decode()) for r in rec.requests]
    assert got == [
        ("GET", "/v1/default/banks/b/mental-models?detail=content"),
        ("POST", "/v1/default/banks/b/mental-models"),
        ("GET", "/v1/default/banks/b/mental-models/m2?detail=content"),
        ("POST", "/v1/default/banks/b/mental-models/m2/refresh"),
        ("GET", "/v1/default/banks/b/operations/op"),
        ("DELETE", "/v1/default/banks/b/documents/hh-session%3A1"),
    ]
    assert rec.body(1) == body


def test_list_memories_sends_only_set_query_params() -> None:
    rec = Recorder(ok({"items": [], "total": 0}))
    make(rec).list_memories("b", document_id="d1", limit=5)
    assert dict(rec.requests[0].url.params) == {"document_id": "d1", "limit": "5", "offset": "0"}


def test_wait_operation_polls_until_terminal() -> None:
    rec = Recorder(ok({"status": "pending"}), ok({"status": "processing"}), ok({"status": "completed"}))
    assert make(rec).wait_operation("b", "op", timeout_s=5, poll_s=0.01)["status"] == "completed"
    assert len(rec.requests) == 3


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, "permanent"),
        (401, "auth"),
        (403, "auth"),
        (404, "not_found"),
        (405, "permanent"),
        (408, "transient"),
        (409, "permanent"),
        (422, "permanent"),
        (425, "transient"),
        (429, "transient"),
        (500, "transient"),
        (502, "transient"),
        (503, "transient"),
        (504, "transient"),
        (302, "permanent"),
    ],
)
def test_status_to_kind(status: int, kind: str) -> None:
    rec = Recorder(httpx.Response(status, json={"detail": "boom"}))
    with pytest.raises(HindsightError) as ei:
        make(rec).recall("b", RecallRequest(query="q"))
    err = ei.value
    assert (err.kind, err.status, err.detail) == (kind, status, "boom")
    assert str(err) == err.message == "Hindsight recall failed: boom"


@pytest.mark.parametrize(
    ("response", "detail"),
    [
        (httpx.Response(400, json={"detail": "plain"}), "plain"),
        (httpx.Response(400, json={"message": "from message"}), "from message"),
        (httpx.Response(400, json={"detail": {"code": 7}}), '{"code":7}'),
        (httpx.Response(400, text="  raw body  "), "raw body"),
        (httpx.Response(502), "HTTP 502 Bad Gateway"),
        (httpx.Response(400, text='{"error": "x"}'), '{"error": "x"}'),
    ],
)
def test_error_detail_sources(response: httpx.Response, detail: str) -> None:
    with pytest.raises(HindsightError) as ei:
        make(Recorder(response)).retain_batch("b", [{"content": "x"}], operation_id="op")
    assert ei.value.detail == detail


def test_validation_error_detail_is_json_without_echoed_input() -> None:
    secret_text = "user said the launch code is swordfish"
    body = {"detail": [{"loc": ["body", "items", 0, "content"], "msg": "bad", "type": "t", "input": secret_text}]}
    with pytest.raises(HindsightError) as ei:
        make(Recorder(httpx.Response(422, json=body))).retain_batch("b", [{"content": secret_text}], operation_id="o")
    detail = ei.value.detail
    assert json.loads(detail) == [{"loc": ["body", "items", 0, "content"], "msg": "bad", "type": "t"}]
    assert "swordfish" not in str(ei.value)


def test_error_detail_is_redacted_and_bounded() -> None:
    body = {"detail": "token=ghp_abcdefghijklmnopqrstuvwxyz012345 " + "x" * 2000}
    with pytest.raises(HindsightError) as ei:
        make(Recorder(httpx.Response(500, json=body))).health()
    assert "ghp_abc" not in ei.value.detail
    assert len(ei.value.detail) <= 500


def test_connection_error_is_transient_without_status() -> None:
    rec = Recorder(httpx.ConnectError("[Errno 111] Connection refused"))
    with pytest.raises(HindsightError) as ei:
        make(rec).retain_batch("b", [{"content": "x"}], operation_id="op")
    err = ei.value
    assert (err.kind, err.status) == ("transient", None)
    assert str(err) == "Hindsight retain request failed: ConnectError: [Errno 111] Connection refused"


def test_transport_timeout_is_kind_timeout_with_seconds() -> None:
    rec = Recorder(httpx.ReadTimeout("timed out"))
    with pytest.raises(HindsightError) as ei:
        make(rec, timeout_ms=2500).retain_batch("b", [{"content": "x"}], operation_id="op")
    assert ei.value.kind == "timeout" and ei.value.status is None
    assert str(ei.value) == "Hindsight retain request timed out after 2.5s"


def test_non_json_success_is_an_error_for_reads() -> None:
    with pytest.raises(HindsightError) as ei:
        make(Recorder(httpx.Response(200, text="<html>"))).recall("b", RecallRequest(query="q"))
    assert ei.value.kind == "permanent" and ei.value.status == 200


def test_empty_2xx_body_reads_as_empty_dict() -> None:
    backend = make(Recorder(httpx.Response(204)))
    assert backend.health() == {}
    assert backend.recall("b", RecallRequest(query="q")).hits == []


# ----------------------------------------------------------------------------- timeouts


def _timeouts(request: httpx.Request) -> dict[str, float]:
    t = request.extensions["timeout"]
    return {k: t[k] for k in ("connect", "read", "write", "pool")}


def test_per_call_timeout_is_min_of_config_and_caller_budget() -> None:
    rec = Recorder(ok({"results": []}))
    backend = make(rec, timeout_ms=2000)
    backend.retain_batch("b", [{"content": "x"}], operation_id="op")
    backend.retain_batch("b", [{"content": "x"}], operation_id="op", timeout_s=0.5)
    backend.retain_batch("b", [{"content": "x"}], operation_id="op", timeout_s=60)
    backend.recall("b", RecallRequest(query="q"), timeout_s=0.75)
    values = [set(_timeouts(r).values()) for r in rec.requests]
    assert values[0] == {2.0}
    (second,) = values[1]
    assert 0.45 <= second <= 0.5
    assert values[2] == {2.0}
    (fourth,) = values[3]
    assert 0.7 <= fourth <= 0.75


def test_exhausted_budget_fails_without_a_request() -> None:
    rec = Recorder(ok())
    with pytest.raises(HindsightError) as ei:
        make(rec).retain_batch("b", [{"content": "x"}], operation_id="op", timeout_s=0)
    assert ei.value.kind == "timeout" and rec.requests == []


# ----------------------------------------------------------------------------- retries


def test_get_retries_transient_errors_then_succeeds_with_growing_delays() -> None:
    busy = httpx.Response(503, json={"detail": "busy"})
    rec = Recorder(busy, httpx.Response(429, json={"detail": "slow down"}), busy, ok({"status": "healthy"}))
    backend = make(rec, retry_base_ms=40.0, retry_jitter_ms=10.0)
    assert backend.health() == {"status": "healthy"}
    assert len(rec.requests) == 4
    gaps = [b - a for a, b in zip(rec.times, rec.times[1:], strict=False)]
    assert 0.04 <= gaps[0] < 0.2
    assert 0.08 <= gaps[1] < 0.3
    assert 0.16 <= gaps[2] < 0.5


def test_get_gives_up_after_three_retries() -> None:
    rec = Recorder(httpx.Response(500, json={"detail": "down"}))
    with pytest.raises(HindsightError) as ei:
        make(rec).version()
    assert ei.value.kind == "transient" and len(rec.requests) == 4


@pytest.mark.parametrize(
    "failure",
    [httpx.ConnectError("[Errno 111] Connection refused"), httpx.RemoteProtocolError("Server disconnected")],
)
def test_get_without_any_answer_is_not_retried(failure: Exception) -> None:
    """ADR 069: no answer is definitive for the call; only a server that answered "try again"
    (408/425/429/5xx) is retried in-call."""
    rec = Recorder(failure, ok({"status": "healthy"}))
    with pytest.raises(HindsightError) as ei:
        make(rec).health(timeout_s=5)
    assert (ei.value.kind, ei.value.status) == ("transient", None)
    assert len(rec.requests) == 1


@pytest.mark.parametrize("status", [404, 401, 422])
def test_get_does_not_retry_non_transient(status: int) -> None:
    rec = Recorder(httpx.Response(status, json={"detail": "no"}))
    with pytest.raises(HindsightError):
        make(rec).get_bank_config("b")
    assert len(rec.requests) == 1


def test_post_and_delete_are_never_retried() -> None:
    rec = Recorder(httpx.Response(503, json={"detail": "busy"}))
    backend = make(rec)
    for call in (
        lambda: backend.recall("b", RecallRequest(query="q")),
        lambda: backend.reflect("b", ReflectRequest(query="q")),
        lambda: backend.create_mental_model("b", {"name": "n", "source_query": "q"}),
        lambda: backend.delete_document("b", "d"),
    ):
        before = len(rec.requests)
        with pytest.raises(HindsightError):
            call()
        assert len(rec.requests) == before + 1


def test_retries_never_run_past_the_callers_deadline() -> None:
    rec = Recorder(httpx.Response(503, json={"detail": "busy"}))
    backend = make(rec, retry_base_ms=1000.0, retry_jitter_ms=500.0)
    start = time.monotonic()
    with pytest.raises(HindsightError) as ei:
        backend.health(timeout_s=0.5)
    assert time.monotonic() - start < 0.3
    assert ei.value.kind == "transient" and len(rec.requests) == 1


def test_default_backoff_is_one_second_plus_jitter() -> None:
    rec = Recorder(httpx.Response(503, json={"detail": "busy"}), ok({"status": "healthy"}))
    backend = HindsightBackend(BASE, transport=httpx.MockTransport(rec))
    backend.health(timeout_s=5)
    gap = rec.times[1] - rec.times[0]
    # 1 s + up to 0.5 s of jitter; the upper bound leaves room for a loaded machine's sleep
    # overshoot while still failing a first delay of 2 s (a doubling that starts one step late)
    assert 1.0 <= gap <= 1.9
    # the lower bound without a stopwatch: a caller with 0.99 s left gets no retry at all
    rec = Recorder(httpx.Response(503, json={"detail": "busy"}), ok({"status": "healthy"}))
    backend = HindsightBackend(BASE, transport=httpx.MockTransport(rec))
    with pytest.raises(HindsightError):
        backend.health(timeout_s=0.99)
    assert len(rec.requests) == 1


# ----------------------------------------------------------------------------- abort and abandonment


def test_signal_already_set_fails_before_any_request() -> None:
    rec = Recorder(ok())
    backend = make(rec)
    sig = threading.Event()
    sig.set()
    for call in (
        lambda: backend.recall("b", RecallRequest(query="q"), signal=sig),
        lambda: backend.reflect("b", ReflectRequest(query="q"), signal=sig),
    ):
        with pytest.raises(HindsightError) as ei:
            call()
        assert ei.value.kind == "aborted" and ei.value.status is None
        assert "request aborted" in str(ei.value)
    assert rec.requests == []


class Stall:
    """A handler that blocks until released (or 5 s), like a server still thinking."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.entered = threading.Event()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.entered.set()
        self.release.wait(5)
        return ok({"results": [{"text": "late"}]})


def test_recall_returns_promptly_when_the_signal_is_set_mid_request() -> None:
    stall = Stall()
    backend = make(Recorder(stall))
    sig = threading.Event()
    set_at: list[float] = []

    def fire() -> None:
        set_at.append(time.monotonic())
        sig.set()

    try:
        threading.Timer(0.2, fire).start()
        with pytest.raises(HindsightError) as ei:
            backend.recall("b", RecallRequest(query="q"), timeout_s=10, signal=sig)
        returned = time.monotonic()
        assert stall.entered.is_set()
        assert ei.value.kind == "aborted"
        assert returned - set_at[0] < 0.15  # the stalled handler would have held it 5 s
    finally:
        stall.release.set()


def test_recall_returns_promptly_at_its_deadline() -> None:
    stall = Stall()
    backend = make(Recorder(stall))
    try:
        start = time.monotonic()
        with pytest.raises(HindsightError) as ei:
            backend.recall("b", RecallRequest(query="q"), timeout_s=0.3)
        elapsed = time.monotonic() - start
        assert ei.value.kind == "timeout"
        assert str(ei.value) == "Hindsight recall request timed out after 0.3s"
        assert 0.3 <= elapsed < 0.45  # the stalled handler would have held it 5 s
    finally:
        stall.release.set()


def test_parallel_recalls_all_abort_together() -> None:
    stall = Stall()
    backend = make(Recorder(stall))
    sig = threading.Event()
    results: dict[str, float] = {}

    def run(bank: str) -> None:
        try:
            backend.recall(bank, RecallRequest(query="q"), timeout_s=10, signal=sig)
        except HindsightError as err:
            results[bank] = time.monotonic()
            assert err.kind == "aborted"

    threads = [threading.Thread(target=run, args=(f"b{i}",)) for i in range(3)]
    try:
        for t in threads:
            t.start()
        time.sleep(0.15)
        set_at = time.monotonic()
        sig.set()
        for t in threads:
            t.join(2)
        assert sorted(results) == ["b0", "b1", "b2"]
        assert max(results.values()) - set_at < 0.1
    finally:
        stall.release.set()


def test_signal_during_retry_backoff_aborts_promptly() -> None:
    rec = Recorder(httpx.Response(503, json={"detail": "busy"}))
    backend = make(rec, retry_base_ms=5000.0, retry_jitter_ms=0.0)
    sig = threading.Event()
    threading.Timer(0.1, sig.set).start()
    start = time.monotonic()
    with pytest.raises(HindsightError) as ei:
        backend._call("Hindsight health", "GET", "/health", retry=True, signal=sig)
    assert ei.value.kind == "aborted"
    assert time.monotonic() - start < 0.5


def test_a_late_answer_after_abandonment_does_not_break_the_next_call() -> None:
    stall = Stall()
    rec = Recorder(stall, ok({"results": [{"text": "fresh"}]}))
    backend = make(rec)
    with pytest.raises(HindsightError):
        backend.recall("b", RecallRequest(query="q"), timeout_s=0.1)
    stall.release.set()
    assert [h.text for h in backend.recall("b", RecallRequest(query="q")).hits] == ["fresh"]


def test_close_then_reuse_reconnects_lazily() -> None:
    rec = Recorder(ok({"status": "healthy"}))
    backend = make(rec)
    backend.health()
    backend.close()
    backend.close()
    assert backend.health() == {"status": "healthy"}


# ----------------------------------------------------------------------------- OpenAPI conformance


def _schema(spec: dict[str, Any], ref: str) -> dict[str, Any]:
    node: Any = spec
    for part in ref.lstrip("#/").split("/"):
        node = node[part]
    assert isinstance(node, dict)
    return node


def _body_schema(spec: dict[str, Any], method: str, path: str) -> dict[str, Any]:
    content = spec["paths"][path][method.lower()]["requestBody"]["content"]["application/json"]["schema"]
    if "$ref" not in content:
        content = next(c for c in content["anyOf"] if "$ref" in c)
    return _schema(spec, content["$ref"])


def _template(spec: dict[str, Any], method: str, path: str) -> str:
    """The OpenAPI path template a concrete request path matches (literal segments win)."""
    parts = path.split("/")
    best: tuple[int, str] | None = None
    for tpl, ops in spec["paths"].items():
        tparts = tpl.split("/")
        if len(tparts) != len(parts) or method.lower() not in ops:
            continue
        if all(t == p or (t.startswith("{") and t.endswith("}")) for t, p in zip(tparts, parts, strict=True)):
            literal = sum(1 for t in tparts if not t.startswith("{"))
            if best is None or literal > best[0]:
                best = (literal, tpl)
    assert best is not None, (method, path)
    return best[1]


def test_request_fields_exist_in_openapi() -> None:
    """Every path we call exists with that method, and every body field we send is in its schema."""
    spec = json.loads(OPENAPI.read_text())
    rec = Recorder(lambda r: ok({}))
    backend = make(rec)
    backend.health()
    backend.version()
    backend.get_bank_config("b")
    backend.bank_stats("b")
    backend._call("Hindsight bank create", "PUT", "/v1/default/banks/b", body={})
    full_spec = BankSpec("r", "f", "o", "verbatim", False, 100)
    from hindsight_hooks.backends.hindsight_wire import bank_create_body, recall_body, reflect_body, retain_body

    bodies: dict[tuple[str, str], dict[str, Any]] = {
        ("PUT", "/v1/default/banks/{bank_id}"): bank_create_body(full_spec),
        ("POST", "/v1/default/banks/{bank_id}/memories"): retain_body(
            [
                {
                    "content": "c",
                    "context": "x",
                    "timestamp": "unset",
                    "document_id": "d",
                    "update_mode": "append",
                    "tags": ["t"],
                    "metadata": {"a": "b"},
                    "observation_scopes": "per_tag",
                    "entities": [{"text": "E", "type": "T"}],
                    "strategy": "s",
                }
            ],
            "op",
            True,
        ),
        ("POST", "/v1/default/banks/{bank_id}/memories/recall"): recall_body(
            RecallRequest(
                query="q", types=["world"], tag_groups=[{"tags": ["a"]}], query_timestamp="t", include_source_facts=True
            )
        ),
        ("POST", "/v1/default/banks/{bank_id}/reflect"): reflect_body(
            ReflectRequest(
                query="q",
                context="c",
                max_tokens=10,
                response_schema={},
                include_facts=True,
                tag_groups=[{"tags": ["a"]}],
            )
        ),
    }
    for (method, path), body in bodies.items():
        schema = _body_schema(spec, method, path)
        assert set(body) <= set(schema["properties"]), (path, set(body) - set(schema["properties"]))
    item_schema = _schema(spec, "#/components/schemas/MemoryItem")
    item = bodies[("POST", "/v1/default/banks/{bank_id}/memories")]["items"][0]
    assert set(item) <= set(item_schema["properties"])
    assert "name" not in bodies[("PUT", "/v1/default/banks/{bank_id}")]
    include = _schema(spec, "#/components/schemas/IncludeOptions")["properties"]
    assert "source_facts" in include
    mm = _body_schema(spec, "POST", "/v1/default/banks/{bank_id}/mental-models")["properties"]
    assert {"id", "name", "source_query", "tags", "max_tokens", "trigger"} <= set(mm)
    backend.list_mental_models("b")
    backend.create_mental_model("b", {"name": "n", "source_query": "q"})
    backend.get_mental_model("b", "m2")
    backend.refresh_mental_model("b", "m2")
    backend.get_operation("b", "op")
    backend.list_memories("b")
    backend.list_documents("b")
    backend.get_document("b", "d")
    backend.delete_document("b", "d")
    backend.delete_bank("b")
    backend.retain_batch("b", [{"content": "c"}], operation_id="op")
    backend.recall("b", RecallRequest(query="q"))
    backend.reflect("b", ReflectRequest(query="q"))
    for r in rec.requests:
        tpl = _template(spec, r.method, r.url.path)
        params = {p["name"] for p in spec["paths"][tpl][r.method.lower()].get("parameters", []) if p["in"] == "query"}
        assert set(r.url.params.keys()) <= params, (tpl, set(r.url.params.keys()) - params)


def test_close_during_an_inflight_recall_never_leaks_a_closed_client() -> None:
    stall = Stall()
    rec = Recorder(stall, ok({"results": [{"text": "next"}]}))
    backend = make(rec)
    box: list[Any] = []
    worker = threading.Thread(target=lambda: box.append(backend.recall("b", RecallRequest(query="q"), timeout_s=5)))
    worker.start()
    assert stall.entered.wait(2)
    backend.close()
    stall.release.set()
    worker.join(5)
    assert [h.text for h in box[0].hits] == ["late"]
    for _ in range(3):  # the lane that was busy across close() is discarded, not reused
        assert [h.text for h in backend.recall("b", RecallRequest(query="q"), timeout_s=5).hits] == ["next"]


def test_errors_survive_pickling() -> None:
    import pickle

    err = HindsightError("Hindsight recall", "timeout", "request timed out after 1s", None, message="m")
    back = pickle.loads(pickle.dumps(err))
    assert (back.operation, back.kind, back.detail, back.status, str(back)) == (
        "Hindsight recall",
        "timeout",
        "request timed out after 1s",
        None,
        "m",
    )
