"""Import documents: content, hash, ids, tags, metadata, modes and profiles (docs/import.md "Document")."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from hindsight_hooks.importer.documents import (
    FORENSIC_WARNING,
    ImportScope,
    ImportSettings,
    build_session_documents,
)
from hindsight_hooks.importer.pi_session import parse_session
from hindsight_hooks.importer.quality import strict_drops

from .conftest import FIXTURES, install

SCOPE = ImportScope(host="Pi Agent", repo_key="widget-0123456789ab", cwd="/fallback", session_tags=("team:core",))


def _build(name: str, **settings: object):
    return build_session_documents(parse_session(FIXTURES / name), ImportSettings(**settings), SCOPE)  # type: ignore[arg-type]


def test_curated_document_matches_the_spec_layout() -> None:
    built = _build("decisions.jsonl")
    assert len(built.documents) == 1
    doc = built.documents[0]
    isid = "5f1d2c3a-7b8e-4c1d-9a0b-1c2d3e4f5a60"
    assert doc.document_id == f"hh-import:{isid}:leaf:a0000005:turns-12-bytes-80000:curated-turns-v1:chunk-0-0-10"
    body = json.loads(doc.content)
    assert list(body) == [
        "source",
        "session_file",
        "cwd",
        "session_id",
        "branch_leaf_id",
        "projection",
        "chunk_index",
        "message_range",
        "projected_message_count",
        "messages",
    ]
    assert body["source"] == "session-import"
    assert body["session_file"] == str((FIXTURES / "decisions.jsonl").resolve())
    assert body["cwd"] == "/home/dev/projects/widget"
    assert body["projection"] == "curated-turns-v1"
    assert body["message_range"] == {"start": 0, "end": 10}
    assert body["projected_message_count"] == len(body["messages"]) == doc.projected_count == 9
    assert doc.content == json.dumps(body, indent=2, ensure_ascii=False)  # indent 2
    assert doc.content_hash == hashlib.sha256(doc.content.encode()).hexdigest()
    assert doc.context == "Historical session import from decisions.jsonl, branch a0000005, chunk 0"
    assert doc.update_mode == "replace"
    assert doc.timestamp == "2025-06-10T09:21:14.000Z"
    assert doc.tags == [
        "source:pi-agent",
        "harness:pi-agent",
        "repo:widget-0123456789ab",
        f"session:{isid}",
        "team:core",
        "branch:a0000005",
        "import:historical",
        "imported:true",
        f"document:{doc.document_id}",
    ]
    assert doc.metadata == {
        "session_file": body["session_file"],
        "imported": "true",
        "cwd": "/home/dev/projects/widget",
        "session_id": isid,
        "branch_leaf_id": "a0000005",
        "import_mode": "curated",
        "projection_version": "curated-turns-v1",
        "import_profile": "turns-12-bytes-80000",
        "chunk_index": "0",
        "message_range_start": "0",
        "message_range_end": "10",
        "content_hash": doc.content_hash,
        "include_branches": "current-only",
        "tool_results": "errors-only",
        "session_timestamp": "2025-06-10T09:00:00.000Z",
        "source": "hindsight-hooks",
        "retain_source": "import",
    }


def test_curated_projection_errors_only_keeps_failures_and_drops_noise_fields() -> None:
    doc = _build("decisions.jsonl").documents[0]
    messages = json.loads(doc.content)["messages"]
    results = [m for m in messages if m["role"] == "toolResult"]
    assert len(results) == 1 and results[0]["isError"] is True  # the failed pytest run
    assert "lock still held after commit" in results[0]["content"]
    assert doc.dropped_tool_results == 2  # the successful rg and edit results
    text = doc.content
    assert "usage" not in text and "thinkingSignature" not in text and "Exports already run inside" not in text
    assert "sk-proj-9fK2mQ7xW4vB8nT1rL6pZ3yH5jD0cA" not in text  # redacted before hashing
    assert "Bearer [REDACTED]" in text


def test_redaction_can_be_switched_off_for_content() -> None:
    doc = _build("decisions.jsonl", redact=False).documents[0]
    assert "sk-proj-9fK2mQ7xW4vB8nT1rL6pZ3yH5jD0cA" in doc.content


def test_summary_and_content_policies() -> None:
    summary = _build("decisions.jsonl", tool_results="summary", summary_max_chars=20).documents[0]
    results = [m for m in json.loads(summary.content)["messages"] if m["role"] == "toolResult"]
    ok = [m for m in results if not m["isError"]]
    assert [m["content"] for m in ok] == ["src/scheduler/lock.p…", "Successfully replace…"]
    failed = [m for m in results if m["isError"]]
    assert len(failed) == 1 and failed[0]["content"].startswith('{"status":"ok"}')  # errors are never cut
    full = _build("decisions.jsonl", tool_results="content").documents[0]
    assert full.dropped_tool_results == 0
    assert "Successfully replaced text in config/export.toml." in full.content


def test_chunks_by_turns_with_inclusive_ranges() -> None:
    docs = _build("decisions.jsonl", turns_per_document=1).documents
    assert [(d.chunk_index, d.message_range) for d in docs] == [(0, (0, 5)), (1, (6, 8)), (2, (9, 10))]
    assert [d.document_id.rsplit(":", 1)[1] for d in docs] == ["chunk-0-0-5", "chunk-1-6-8", "chunk-2-9-10"]
    assert all(":turns-1-bytes-80000:curated-turns-v1:" in d.document_id for d in docs)
    assert [d.metadata["message_range_end"] for d in docs] == ["5", "8", "10"]
    assert "Sundays" in docs[2].content and "Sundays" not in docs[0].content


def test_injected_blocks_dropped_in_curated_and_raw_kept_in_forensic() -> None:
    curated = _build("injected.jsonl")
    raw = _build("injected.jsonl", mode="raw")
    forensic = _build("injected.jsonl", mode="forensic")
    for built in (curated, raw):
        content = built.documents[0].content
        assert "OLDRECALL" not in content
        assert "PGTRGM-0042" in content
        assert "I saw a <hindsight-memory> tag" in content  # a mention in mid-text is ordinary text
        assert built.warnings == []
    assert curated.documents[0].message_range == (1, 5)  # index 0 (the block) is gone, index 3 too
    assert curated.documents[0].injected_dropped == 2
    fdoc = forensic.documents[0]
    assert "OLDRECALL-ALPHA" in fdoc.content and "OLDRECALL-BETA" in fdoc.content
    assert forensic.warnings == [FORENSIC_WARNING]
    assert json.loads(fdoc.content)["projection"] == "forensic-raw-v1"
    assert json.loads(raw.documents[0].content)["projection"] == "raw-v1"
    # raw and forensic are one whole-branch document with the base id
    assert (
        fdoc.document_id
        == raw.documents[0].document_id
        == "hh-import:2a3b4c5d-6e7f-4a8b-9c0d-e1f2a3b4c5d6:leaf:i0000006"
    )
    assert fdoc.chunk_index is None and "chunk" not in fdoc.context and "chunk_index" not in fdoc.metadata


def test_raw_keeps_messages_as_stored_but_never_image_bytes(tmp_path: Path) -> None:
    path = tmp_path / "img.jsonl"
    path.write_text(
        json.dumps({"type": "session", "version": 3, "id": "img", "cwd": "/p"})
        + "\n"
        + json.dumps(
            {
                "type": "message",
                "id": "m1",
                "parentId": None,
                "message": {
                    "role": "user",
                    "timestamp": 1,
                    "content": [
                        {"type": "text", "text": "see screenshot"},
                        {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgoAAAANSUhEUg"},
                    ],
                },
            }
        )
        + "\n"
    )
    for mode in ("raw", "curated"):
        doc = build_session_documents(parse_session(path), ImportSettings(mode=mode), SCOPE).documents[0]
        assert "iVBORw0KGgo" not in doc.content
        assert '"omitted": true' in doc.content and "image/png" in doc.content


def test_all_leaves_one_document_set_per_leaf_tagged_forked() -> None:
    built = _build("branched.jsonl", include_branches="all-leaves")
    assert built.leaves == ["b0000004", "b0000009"]
    by_leaf = {d.leaf_id: d for d in built.documents}
    assert set(by_leaf) == {"b0000004", "b0000009"}
    for d in built.documents:
        assert "forked:true" in d.tags
        assert f"branch:{d.leaf_id}" in d.tags
        assert d.metadata["include_branches"] == "all-leaves"
    assert "BLUEHERON" in by_leaf["b0000004"].content and "GREENFINCH" not in by_leaf["b0000004"].content
    assert "GREENFINCH" in by_leaf["b0000009"].content and "BLUEHERON" not in by_leaf["b0000009"].content
    current = _build("branched.jsonl")
    assert [d.leaf_id for d in current.documents] == ["b0000009"]
    assert "forked:true" not in current.documents[0].tags
    assert "BLUEHERON" not in current.documents[0].content


def test_v1_linear_leaf_is_current() -> None:
    built = _build("v1_linear.jsonl")
    doc = built.documents[0]
    assert doc.leaf_id == "current"
    assert doc.document_id.startswith("hh-import:v1-legacy-0001:leaf:current:")
    assert built.bad_lines == 1
    assert "CLI-ARGPARSE" in doc.content and "CLI-MIRROR" in doc.content


def test_isid_sanitised_or_derived_from_path(tmp_path: Path) -> None:
    weird = install("v1_linear.jsonl", tmp_path, cwd="/p", id="team/alpha beta:1")
    doc = build_session_documents(parse_session(weird), ImportSettings(), SCOPE).documents[0]
    assert doc.session_id == "team-alpha-beta-1"
    no_id = install("v1_linear.jsonl", tmp_path, cwd="/p", file_name="noid.jsonl", id="")
    doc = build_session_documents(parse_session(no_id), ImportSettings(), SCOPE).documents[0]
    assert doc.session_id == hashlib.sha256(str(no_id.resolve()).encode()).hexdigest()[:16]


def test_parent_session_tag_and_fields(tmp_path: Path) -> None:
    parent = install("decisions.jsonl", tmp_path, cwd="/p")
    child = install("branched.jsonl", tmp_path, cwd="/p", parentSession=str(parent))
    doc = build_session_documents(parse_session(child), ImportSettings(), SCOPE).documents[0]
    assert "parent:5f1d2c3a-7b8e-4c1d-9a0b-1c2d3e4f5a60" in doc.tags
    assert doc.metadata["parent_session_id"] == "5f1d2c3a-7b8e-4c1d-9a0b-1c2d3e4f5a60"
    assert doc.metadata["parent_session_file"] == str(parent)
    body = json.loads(doc.content)
    assert body["parent_session_id"] == "5f1d2c3a-7b8e-4c1d-9a0b-1c2d3e4f5a60"


def test_same_file_same_documents_whenever_it_is_built() -> None:
    a = _build("noisy.jsonl", turns_per_document=2)
    b = _build("noisy.jsonl", turns_per_document=2)
    assert [(d.document_id, d.content_hash) for d in a.documents] == [
        (d.document_id, d.content_hash) for d in b.documents
    ]


def test_missing_message_timestamp_borrows_the_entry_time(tmp_path: Path) -> None:
    path = tmp_path / "nots.jsonl"
    path.write_text(
        json.dumps({"type": "session", "version": 3, "id": "nots", "cwd": "/p", "timestamp": "2025-01-01T00:00:00Z"})
        + "\n"
        + json.dumps(
            {
                "type": "message",
                "id": "m1",
                "parentId": None,
                "timestamp": "2025-01-02T03:04:05.678Z",
                "message": {"role": "user", "content": "no epoch here"},
            }
        )
        + "\n"
    )
    doc = build_session_documents(parse_session(path), ImportSettings(), SCOPE).documents[0]
    assert json.loads(doc.content)["messages"][0]["timestamp"] == "2025-01-02T03:04:05.678Z"


def test_a_session_without_any_time_leaves_its_messages_undated(tmp_path: Path) -> None:
    """ADR 207: no message time and no session time: before, every message got epoch 0."""
    path = tmp_path / "undated.jsonl"
    lines = [
        {"type": "session", "version": 3, "id": "undated", "cwd": "/p"},
        {"type": "message", "id": "m1", "parentId": None, "message": {"role": "user", "content": "we pick Kafka"}},
        {"type": "message", "id": "m2", "parentId": "m1", "message": {"role": "assistant", "content": "Kafka it is."}},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    built = build_session_documents(parse_session(path), ImportSettings(), SCOPE)
    doc = built.documents[0]
    assert [("timestamp" in m) for m in json.loads(doc.content)["messages"]] == [False, False]
    assert "1970" not in doc.content
    again = build_session_documents(parse_session(path), ImportSettings(), SCOPE).documents[0]
    assert again.content_hash == doc.content_hash  # still the same content whenever it is built


def test_strict_profile_drops_noise_but_keeps_failures_and_findings() -> None:
    compatible = _build("noisy.jsonl", tool_results="content").documents[0]
    strict = _build("noisy.jsonl", tool_results="content", quality_profile="strict").documents[0]
    parsed = parse_session(FIXTURES / "noisy.jsonl")
    drops = strict_drops(list(enumerate(parsed.branch("n0000018").messages)))
    reasons = {parsed.branch("n0000018").messages[i]["toolCallId"]: r for i, r in drops.items()}
    assert reasons == {"tc2": "noise", "tc3": "too-large", "tc4": "empty", "tc5": "noise", "tc6": "repeat"}
    assert "shard-0042" in compatible.content and "shard-0042" not in strict.content
    assert "Todos updated" in compatible.content and "Todos updated" not in strict.content
    assert "built in 1.2s" not in strict.content
    assert strict.content.count("nothing to commit") == 1  # the first git status stays, the repeat goes
    assert "test_auckland" in strict.content  # the failure
    assert "TZ-ROOTCAUSE: sign flipped" in strict.content  # a useful successful result
    assert strict.dropped_tool_results == 5 and compatible.dropped_tool_results == 0
    body = json.loads(strict.content)
    assert body["import_quality_profile"] == "strict"
    assert strict.metadata["import_quality_profile"] == "strict"
    assert "import_quality_profile" not in compatible.metadata


def test_empty_projection_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "only-results.jsonl"
    path.write_text(
        json.dumps({"type": "session", "version": 3, "id": "empty", "cwd": "/p"})
        + "\n"
        + json.dumps(
            {
                "type": "message",
                "id": "r1",
                "parentId": None,
                "message": {
                    "role": "toolResult",
                    "toolName": "bash",
                    "content": [{"type": "text", "text": "fine"}],
                    "isError": False,
                },
            }
        )
        + "\n"
    )
    curated = build_session_documents(parse_session(path), ImportSettings(), SCOPE).documents
    assert [(d.status, d.skip_reason) for d in curated] == [("skipped", "empty-curated-projection")]
    raw = build_session_documents(parse_session(path), ImportSettings(mode="raw"), SCOPE).documents
    assert [d.status for d in raw] == ["pending"]


def test_append_mode_when_replacing_is_off() -> None:
    doc = _build("decisions.jsonl", update_mode="append").documents[0]
    assert doc.update_mode == "append"
