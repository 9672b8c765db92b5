"""Manifest and checkpoint files: shape, atomic private writes, corrupt files set aside (docs/import.md)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from hindsight_hooks.importer.checkpoint import Checkpoint, make_run_id
from hindsight_hooks.importer.documents import ImportScope, ImportSettings, build_session_documents
from hindsight_hooks.importer.manifest import Manifest, entry_for
from hindsight_hooks.importer.pi_session import parse_session

from .conftest import FIXTURES


def _docs(**settings: object):
    scope = ImportScope(host="pi", repo_key="widget-0123456789ab", cwd="/p")
    return build_session_documents(
        parse_session(FIXTURES / "decisions.jsonl"), ImportSettings(**settings), scope
    ).documents  # type: ignore[arg-type]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_run_id_replaces_whitespace() -> None:
    rid = make_run_id("hh-project-x", "sid", "current-only", "curated", "replace", "/tmp/my sessions/a\tb.jsonl")
    assert rid == "hh-import:hh-project-x:sid:current-only:curated:replace:/tmp/my_sessions/a_b.jsonl"


def test_manifest_records_entries_in_a_private_file(tmp_path: Path) -> None:
    settings = ImportSettings(turns_per_document=1)
    docs = _docs(turns_per_document=1)
    path = tmp_path / "state" / "import-manifest.json"
    m = Manifest(path)
    assert m.imports() == {} and not path.exists()
    m.record([entry_for(d, "bank-a", settings) for d in docs[:2]])
    data = json.loads(path.read_text())
    assert data["version"] == 1 and set(data["imports"]) == {d.document_id for d in docs[:2]}
    entry = data["imports"][docs[1].document_id]
    assert {
        k: entry[k] for k in ("bank_id", "content_hash", "leaf_id", "chunk_index", "message_range", "update_mode")
    } == {
        "bank_id": "bank-a",
        "content_hash": docs[1].content_hash,
        "leaf_id": "a0000005",
        "chunk_index": 1,
        "message_range": {"start": 6, "end": 8},
        "update_mode": "replace",
    }
    assert entry["projection_version"] == "curated-turns-v1" and entry["import_profile"] == "turns-1-bytes-80000"
    assert "import_quality_profile" not in entry
    assert _mode(path) == 0o600 and _mode(path.parent) == 0o700
    assert _mode(Path(str(path) + ".lock")) == 0o600
    again = Manifest(path)
    assert again.unchanged(docs[0], "bank-a", settings)
    assert not again.unchanged(docs[0], "bank-b", settings)
    assert not again.unchanged(docs[2], "bank-a", settings)
    assert not again.unchanged(docs[0], "bank-a", ImportSettings(turns_per_document=1, include_branches="all-leaves"))
    # a second writer keeps the first one's entries
    Manifest(path).record([entry_for(docs[2], "bank-a", settings)])
    assert len(json.loads(path.read_text())["imports"]) == 3


def test_corrupt_manifest_is_set_aside_and_recreated(tmp_path: Path) -> None:
    path = tmp_path / "import-manifest.json"
    path.write_text('{"version": 1, "imports": [oops')
    reader = Manifest(path)
    assert reader.imports() == {}
    assert reader.warnings and "corrupt" in reader.warnings[0]
    assert path.read_text().startswith('{"version": 1, "imports": [oops')  # reading moved nothing
    docs = _docs()
    writer = Manifest(path)
    writer.record([entry_for(docs[0], "b", ImportSettings())])
    assert any("recreated" in w for w in writer.warnings)
    kept = list(tmp_path.glob("import-manifest.json.corrupt-*"))
    assert len(kept) == 1 and kept[0].read_text().startswith('{"version": 1, "imports": [oops')
    assert list(json.loads(path.read_text())["imports"]) == [docs[0].document_id]


def test_wrong_version_counts_as_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "import-manifest.json"
    path.write_text(json.dumps({"version": 2, "imports": {}}))
    assert Manifest(path).imports() == {}
    assert Manifest(path).unchanged(_docs()[0], "b", ImportSettings()) is False


def _header(run_id: str) -> dict:
    return {
        "run_id": run_id,
        "source_file": "/s.jsonl",
        "bank_id": "b",
        "session_id": "sid",
        "cwd": "/p",
        "include_branches": "current-only",
        "import_mode": "curated",
        "tool_results": "errors-only",
        "import_quality_profile": None,
        "update_mode": "replace",
    }


def test_checkpoint_resumes_the_same_run_only(tmp_path: Path) -> None:
    path = tmp_path / "import-checkpoint.json"
    docs = _docs(turns_per_document=1)
    cp = Checkpoint.load(path, _header("run-1"), resume=True)
    assert not cp.resumed and not path.exists()
    cp.set_status(docs[0], "completed")
    cp.set_status(docs[1], "queued", error="Authorization: Bearer sk-proj-9fK2mQ7xW4vB8nT1rL6pZ3yH5jD0cA refused")
    cp.set_status(docs[2], "skipped", skip_reason="empty-curated-projection")
    cp.save()
    assert _mode(path) == 0o600
    data = json.loads(path.read_text())
    assert data["version"] == 1 and data["run_id"] == "run-1" and "import_quality_profile" not in data
    assert {k: data[k] for k in ("source_file", "bank_id", "session_id", "update_mode")} == {
        "source_file": "/s.jsonl",
        "bank_id": "b",
        "session_id": "sid",
        "update_mode": "replace",
    }
    entry = data["documents"][docs[1].document_id]
    assert entry["status"] == "queued" and "sk-proj" not in entry["error"]
    assert data["documents"][docs[2].document_id]["skip_reason"] == "empty-curated-projection"

    same = Checkpoint.load(path, _header("run-1"), resume=True)
    assert same.resumed and same.document(docs[0].document_id)["status"] == "completed"
    assert same.data["started_at"] == data["started_at"]
    other = Checkpoint.load(path, _header("run-2"), resume=True)
    assert not other.resumed and other.document(docs[0].document_id) is None
    no_resume = Checkpoint.load(path, _header("run-1"), resume=False)
    assert not no_resume.resumed and no_resume.document(docs[0].document_id) is None


def test_corrupt_checkpoint_is_set_aside_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "import-checkpoint.json"
    path.write_text(json.dumps({"version": 1, "run_id": "r", "documents": {"x": {"status": "exploded"}}}))
    cp = Checkpoint.load(path, _header("r"), resume=True)
    assert cp.warning and "corrupt" in cp.warning
    assert not cp.resumed and cp.data["documents"] == {}
    assert len(list(tmp_path.glob("import-checkpoint.json.corrupt-*"))) == 1
