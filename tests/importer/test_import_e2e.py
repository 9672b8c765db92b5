"""The import commands end to end: real Host + plugin, real queue files, real SQLite store.

Each test runs the full hook path (``Host.start`` → ``/hindsight:import…``) against the
embedded ``LocalBackend`` and checks what landed in memory, in the queue and in the state
files — and, as often, what did *not*.
"""

from __future__ import annotations

import json
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hindsight_hooks.hooks import CommandResult, HostContext, RecordingUI
from hindsight_hooks.plugin.control.import_commands import ImportArgs, run_import_command
from hindsight_hooks.plugin.runtime import SessionRuntime

from .conftest import Project, install

CONFIRM = "This will enqueue historical session content for memory. Continue?"


def _bank(result: CommandResult) -> str:
    assert result.data is not None
    return str(result.data["documents"][0]["bank_id"])


def _units(open_backend: Callable[[], Any], bank: str) -> list[Any]:
    return open_backend().list_units(bank, 10_000, 0)


def _doc_ids(units: list[Any]) -> set[str]:
    return {u.document_id for u in units}


def _state_files(project: Project) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(project.state.iterdir()) if p.is_file()}


def test_import_current_session_then_recall_finds_its_decisions(
    project: Project, open_backend: Callable[[], Any]
) -> None:
    project.config("[import]\nturns_per_document = 1\n")
    session = install("decisions.jsonl", project.sessions, cwd=project.root)
    host, ui = project.host(session, answers=["Import"])
    with host:
        result = host.command("/hindsight:import")
        assert result.level == "info", result.text
        assert result.data is not None and result.data["counts"] == {
            "completed": 3,
            "queued": 0,
            "skipped": 0,
            "failed": 0,
        }
        # confirmed once, with the preview in the question
        assert len(ui.questions) == 1
        title, options = ui.questions[0]
        assert options == ["Import", "Cancel"]
        assert title.startswith("import preview: project bank ") and title.endswith(CONFIRM)
        assert "chunk-2-9-10" in title
        # announced, progress as notices, status importing → imported
        infos = ui.texts("info")
        assert any("action=import" in t and "branches=current branch" in t and "write=yes" in t for t in infos)
        assert [t.split(" document")[0] for t in infos if t.startswith("import: ")] == [
            "import: 1/3",
            "import: 2/3",
            "import: 3/3",
        ]
        shown = [text or "" for key, text in ui.status_history if key == "hindsight"]
        importing = next(i for i, t in enumerate(shown) if t.endswith("importing"))
        assert shown[importing + 1 :] and shown[importing + 1].endswith("imported")
        assert not any(t.endswith("import-failed") for t in shown)

        recalled = host.call_tool("hindsight_recall", {"query": "advisory lock export scheduler"})
        assert "pg_try_advisory" in recalled.text
        recalled = host.call_tool("hindsight_recall", {"query": "exports Sundays warehouse maintenance"})
        assert "warehouse maintenance window" in recalled.text

    bank = _bank(result)
    units = _units(open_backend, bank)
    assert _doc_ids(units) == {d["document_id"] for d in result.data["documents"]}
    assert all("import:historical" in u.tags and "imported:true" in u.tags for u in units)
    assert not any("sk-proj-9fK2mQ7xW4vB8nT1rL6pZ3yH5jD0cA" in u.text for u in units)
    assert project.queued_jobs() == []
    manifest = json.loads(project.manifest.read_text())
    assert set(manifest["imports"]) == {d["document_id"] for d in result.data["documents"]}
    checkpoint = json.loads(project.checkpoint.read_text())
    assert {d["status"] for d in checkpoint["documents"].values()} == {"completed"}
    for path in project.state.iterdir():
        if path.is_file() and path.name not in ("config.toml", ".gitignore"):
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, path.name


def test_reimport_changes_nothing(project: Project, open_backend: Callable[[], Any]) -> None:
    project.config("[import]\nturns_per_document = 1\n")
    session = install("decisions.jsonl", project.sessions, cwd=project.root)
    host, ui = project.host(session, answers=["Import", "Import"])
    with host:
        first = host.command("/hindsight:import")
        bank = _bank(first)
        before_units = sorted((u.document_id, u.text) for u in _units(open_backend, bank))
        before_state = _state_files(project)
        again = host.command("/hindsight:import")
        preview = host.command("/hindsight:import --dry-run")
    assert again.level == "info" and "nothing new to import: 3 document(s) already imported" in again.text
    assert len(ui.questions) == 1  # nothing to confirm the second time
    assert project.queued_jobs() == []
    assert sorted((u.document_id, u.text) for u in _units(open_backend, bank)) == before_units
    after_state = _state_files(project)
    for name in ("import-manifest.json", "import-checkpoint.json", "retain-queue.jsonl"):
        assert after_state.get(name) == before_state.get(name), name
    assert preview.data is not None
    assert preview.data["summary"]["unchanged_manifest_entries"] == 3
    assert {(d["status"], d.get("skip_reason")) for d in preview.data["documents"]} == {("skipped", "already-imported")}

    # resume=false sends everything again: deterministic ids + replace → the same memory
    project.config("[import]\nturns_per_document = 1\nresume = false\n")
    host, _ = project.host(session)
    with host:
        forced = host.command("/hindsight:import --yes")
    assert forced.data is not None and forced.data["counts"]["completed"] == 3
    assert sorted((u.document_id, u.text) for u in _units(open_backend, bank)) == before_units


def test_preview_writes_nothing(project: Project, open_backend: Callable[[], Any]) -> None:
    session = install("decisions.jsonl", project.sessions, cwd=project.root)
    host, ui = project.host(session, answers=["Import"])
    with host:
        result = host.command("/hindsight:import --dry-run")
        as_json = host.command("/hindsight:import-current --preview --json")
    assert result.level == "info"
    assert result.data is not None and result.data["action"] == "preview"
    doc = result.data["documents"][0]
    assert doc["would_write"] is False and doc["status"] == "pending"
    assert (doc["raw_messages"], doc["projected_messages"], doc["dropped_tool_results"]) == (11, 9, 2)
    assert doc["update_mode"] == "replace" and doc["bytes"] > 1000
    summary = result.data["summary"]
    assert (summary["write"], summary["status"], summary["messages"], summary["documents"]) == ("no", "preview", 11, 1)
    assert "write=no" in result.text
    assert json.loads(as_json.text)["documents"] == result.data["documents"]
    assert ui.questions == []
    assert not project.queue_file.exists()
    assert not project.manifest.exists()
    assert not project.checkpoint.exists()
    assert _units(open_backend, doc["bank_id"]) == []


def test_cancel_or_no_answer_writes_nothing(project: Project, open_backend: Callable[[], Any]) -> None:
    session = install("decisions.jsonl", project.sessions, cwd=project.root)
    for answer in ("Cancel", None):
        host, ui = project.host(session, answers=[answer])
        with host:
            result = host.command("/hindsight:import")
        assert result.text == "import cancelled" and result.level == "info"
        assert len(ui.questions) == 1
        assert not project.queue_file.exists()
        assert not project.manifest.exists()
        assert not project.checkpoint.exists()
        assert result.data is not None
        assert _units(open_backend, result.data["scope"].split()[2]) == []


def test_session_from_another_project_is_refused_naming_both_paths(project: Project, tmp_path: Path) -> None:
    other = tmp_path / "billing-service"
    other.mkdir()
    foreign = install("decisions.jsonl", project.sessions, cwd=other, file_name="foreign.jsonl")
    host, ui = project.host(None)
    with host:
        result = host.command(f"/hindsight:import-file {foreign}")
    assert result.level == "error"
    assert str(other) in result.text and str(project.root) in result.text
    assert ui.questions == []
    assert not project.queue_file.exists() and not project.manifest.exists()
    # the current session itself is checked the same way
    host, _ = project.host(foreign)
    with host:
        current = host.command("/hindsight:import --yes")
    assert current.level == "error" and str(other) in current.text


def test_subfolder_and_missing_cwd_belong_for_an_explicit_file(
    project: Project, open_backend: Callable[[], Any]
) -> None:
    sub = project.root / "services" / "api"
    sub.mkdir(parents=True)
    inside = install("v1_linear.jsonl", project.sessions, cwd=sub)
    no_cwd = install("injected.jsonl", project.sessions, cwd=None)
    host, _ = project.host(None)
    with host:
        a = host.command(f"/hindsight:import-file {inside} --yes")
        b = host.command(f"/hindsight:import-file {no_cwd} --yes")
    # v1_linear.jsonl has one torn line (line 5): imported with a warning that names it
    assert a.level == "warning" and "1 unparsable line(s) skipped (line 5)" in a.text, a.text
    assert b.level == "info", b.text
    texts = " ".join(u.text for u in _units(open_backend, _bank(a)))
    assert "CLI-ARGPARSE" in texts and "PGTRGM-0042" in texts
    assert "OLDRECALL" not in texts  # the persisted recall blocks never come back as memory


def test_branches_current_only_and_all_leaves(project: Project, open_backend: Callable[[], Any]) -> None:
    session = install("branched.jsonl", project.sessions, cwd=project.root)
    host, _ = project.host(session)
    with host:
        current = host.command("/hindsight:import --yes")
        bank = _bank(current)
        units = _units(open_backend, bank)
        assert "GREENFINCH" in " ".join(u.text for u in units)
        assert "BLUEHERON" not in " ".join(u.text for u in units)
        assert not any("forked:true" in u.tags for u in units)

        every = host.command("/hindsight:import --all-leaves --yes")
    assert every.data is not None
    leaves = {d["leaf_id"] for d in every.data["documents"]}
    assert leaves == {"b0000004", "b0000009"}
    assert every.data["counts"]["completed"] == 2  # the same id with another branch scope is re-sent
    units = _units(open_backend, bank)
    assert {u.document_id.split(":leaf:")[1].split(":")[0] for u in units} == {"b0000004", "b0000009"}
    assert all("forked:true" in u.tags for u in units)
    for u in units:
        leaf = u.document_id.split(":leaf:")[1].split(":")[0]
        assert f"branch:{leaf}" in u.tags
        if "BLUEHERON" in u.text:
            assert leaf == "b0000004"
        if "GREENFINCH" in u.text:
            assert leaf == "b0000009"
    assert any("BLUEHERON" in u.text for u in units) and any("GREENFINCH" in u.text for u in units)


def test_chat_transcript_goes_to_the_user_bank_and_is_refused_without_one(
    project: Project, open_backend: Callable[[], Any]
) -> None:
    chat = install("chat_gateway.jsonl", project.sessions, cwd=None)
    host, _ = project.host(None)
    with host:
        refused = host.command(f"/hindsight:import-file {chat} --yes")
    assert refused.level == "error" and "user bank" in refused.text and "cannot be proven" in refused.text
    assert not project.queue_file.exists()

    project.user_config('[banks.user]\nenabled = true\nbank_id = "hh-user-importer-test"\n')
    host, ui = project.host(None, answers=["Import"])
    with host:
        result = host.command(f"/hindsight:import-file {chat}")
        project_bank = host.command("/hindsight").data["banks"]["project"]  # type: ignore[index]
    assert result.level == "info", result.text
    assert "user bank hh-user-importer-test" in ui.questions[0][0]
    units = _units(open_backend, "hh-user-importer-test")
    assert len(_doc_ids(units)) == 1 and next(iter(_doc_ids(units))).startswith("hh-chat:")
    text = " ".join(u.text for u in units)
    assert "TZ-UTC-REPORTS" in text and "bullet lists" in text and "Thinking…" not in text
    assert all(set(u.tags) == {"source:pi", "import:chat", "imported:true"} for u in units)
    assert _units(open_backend, project_bank) == []


def test_project_session_discovery(project: Project, open_backend: Callable[[], Any], tmp_path: Path) -> None:
    folder = project.sessions
    current = install("injected.jsonl", folder, cwd=project.root, file_name="2025-06-12_current.jsonl")
    install("decisions.jsonl", folder, cwd=project.root)
    install("branched.jsonl", folder, cwd=project.root / "web")
    install("decisions.jsonl", folder, cwd=tmp_path / "elsewhere", file_name="foreign.jsonl", id="foreign-session")
    install("v1_linear.jsonl", folder, cwd=None, file_name="nocwd.jsonl")
    install("chat_gateway.jsonl", folder, cwd=None)
    (folder / "notes.txt").write_text("not a session")
    host, ui = project.host(current, answers=["Import"])
    with host:
        preview = host.command("/hindsight:import-project-sessions --dry-run")
        result = host.command("/hindsight:import-project-sessions")
    assert preview.data is not None and preview.data["summary"]["files"] == 3
    assert result.level == "warning", result.text  # some files were skipped, and say why
    assert len(ui.questions) == 1  # one confirmation for every file
    refused = {Path(r["file"]).name for r in result.data["refused"]}  # type: ignore[index]
    assert refused == {"foreign.jsonl", "nocwd.jsonl", "chat_gateway.jsonl"}
    assert "skipped" in result.text and "elsewhere" in result.text
    units = _units(open_backend, _bank(result))
    sessions = {u.document_id.split(":")[1] for u in units}
    assert sessions == {
        "2a3b4c5d-6e7f-4a8b-9c0d-e1f2a3b4c5d6",
        "5f1d2c3a-7b8e-4c1d-9a0b-1c2d3e4f5a60",
        "9c8b7a65-4d3e-4f21-8a0b-7c6d5e4f3a21",
    }
    assert "foreign-session" not in " ".join(u.document_id for u in units)


def test_strict_profile_keeps_noise_out_of_memory(project: Project, open_backend: Callable[[], Any]) -> None:
    project.config('[import]\ntool_results = "content"\nquality_profile = "strict"\n')
    session = install("noisy.jsonl", project.sessions, cwd=project.root)
    host, _ = project.host(session)
    with host:
        result = host.command("/hindsight:import --yes")
    text = " ".join(u.text for u in _units(open_backend, _bank(result)))
    assert "TZ-ROOTCAUSE" in text and "test_auckland" in text
    assert "shard-0042" not in text and "Todos updated" not in text and "built in 1.2s" not in text


def test_forensic_mode_keeps_injected_blocks_with_a_warning(project: Project, open_backend: Callable[[], Any]) -> None:
    project.config('[import]\nmode = "forensic"\n')
    session = install("injected.jsonl", project.sessions, cwd=project.root)
    host, _ = project.host(session)
    with host:
        preview = host.command("/hindsight:import --dry-run")
        result = host.command("/hindsight:import --yes")
    assert preview.level == "warning" and "forensic" in preview.text
    assert "forensic" in result.text
    text = " ".join(u.text for u in _units(open_backend, _bank(result)))
    assert "OLDRECALL-ALPHA" in text


def test_stale_and_identical_queued_jobs(project: Project, open_backend: Callable[[], Any], monkeypatch: Any) -> None:
    # A store that cannot be opened: its folder is a regular file. Deliveries fail for real.
    blocker = project.tmp / "blocker"
    blocker.write_text("a file where a folder should be")
    monkeypatch.setenv("HINDSIGHT_HOOKS_LOCAL__PATH", str(blocker / "memory.db"))
    session = install("decisions.jsonl", project.sessions, cwd=project.root)

    host, _ = project.host(session)
    with host:
        first = host.command("/hindsight:import --yes")
    assert first.level == "error" and first.data is not None
    assert first.data["counts"] == {"completed": 0, "queued": 1, "skipped": 0, "failed": 0}
    assert "stay queued" in first.text
    jobs = project.queued_jobs()
    assert len(jobs) == 1 and jobs[0]["source"] == "import"
    doc_id = jobs[0]["items"][0]["document_id"]
    entry = json.loads(project.checkpoint.read_text())["documents"][doc_id]
    assert entry["status"] == "queued" and entry["error"]
    assert "Successfully replaced" not in jobs[0]["items"][0]["content"]

    # The same document with other content: the queued copy is stale and is replaced.
    project.config('[import]\ntool_results = "content"\n')
    host, _ = project.host(session)
    with host:
        second = host.command("/hindsight:import --yes")
    jobs2 = project.queued_jobs()
    assert len(jobs2) == 1 and jobs2[0]["id"] != jobs[0]["id"]
    assert jobs2[0]["items"][0]["document_id"] == doc_id
    assert "Successfully replaced" in jobs2[0]["items"][0]["content"]
    assert "removed 1 stale queued import job" in second.text

    # Identical: nothing new is queued.
    host, _ = project.host(session)
    with host:
        host.command("/hindsight:import --yes")
    assert [j["id"] for j in project.queued_jobs()] == [jobs2[0]["id"]]

    # The store comes back: the queued job is delivered and the checkpoint says so. The runner
    # is driven through a bare SessionRuntime here: a Host's session_start would start its own
    # background flush of the due job, racing this import for it (that race is settled by
    # ``runner._settle``; this step checks the resume path itself).
    monkeypatch.setenv("HINDSIGHT_HOOKS_LOCAL__PATH", str(project.db))
    rt = SessionRuntime(HostContext(cwd=project.root, session_file=session, host_name="pi", ui=RecordingUI()))
    try:
        done = run_import_command(rt, "hindsight:import", ImportArgs(yes=True))
    finally:
        rt.close_quietly()
    assert done.level == "info", done.text
    assert done.data is not None and done.data["counts"]["completed"] == 1
    assert project.queued_jobs() == []
    units = _units(open_backend, _bank(done))
    assert _doc_ids(units) == {doc_id}
    assert "Successfully replaced" in " ".join(u.text for u in units)
    assert json.loads(project.checkpoint.read_text())["documents"][doc_id]["status"] == "completed"


def test_corrupt_manifest_is_recreated_with_a_warning(project: Project) -> None:
    project.manifest.write_text("{ this is not json")
    session = install("v1_linear.jsonl", project.sessions, cwd=project.root)
    host, ui = project.host(session)
    with host:
        result = host.command("/hindsight:import --yes")
    assert result.data is not None and result.data["counts"]["completed"] == 1
    assert "corrupt" in result.text
    assert any("import manifest" in t and "corrupt" in t for t in ui.texts("warning"))
    assert len(list(project.state.glob("import-manifest.json.corrupt-*"))) == 1
    assert json.loads(project.manifest.read_text())["version"] == 1


def test_arguments_and_missing_sources(project: Project, tmp_path: Path) -> None:
    host, _ = project.host(None)
    with host:
        no_file = host.command("/hindsight:import")
        no_folder = host.command("/hindsight:import-project-sessions")
        bad_flag = host.command("/hindsight:import --everything")
        no_path = host.command("/hindsight:import-file")
        missing = host.command(f"/hindsight:import-file {tmp_path / 'nope.jsonl'}")
        completions = host.complete("/hindsight:import-file x --dr")
    assert no_file.level == "warning" and "no session file" in no_file.text
    assert no_folder.level == "warning" and "no session file" in no_folder.text
    assert bad_flag.level == "warning" and "usage: /hindsight:import " in bad_flag.text
    assert no_path.level == "warning" and "usage: /hindsight:import-file <path>" in no_path.text
    assert missing.level == "error" and "does not exist" in missing.text
    assert completions == ["/hindsight:import-file x --dry-run"]


def test_no_project_bank_is_an_error(project: Project) -> None:
    project.config("[banks.project]\nenabled = false\n")
    session = install("v1_linear.jsonl", project.sessions, cwd=project.root)
    host, _ = project.host(session)
    with host:
        result = host.command("/hindsight:import --yes")
    assert result.level == "error" and "no project bank" in result.text
    assert not project.queue_file.exists()


def test_imports_run_in_every_mode_and_ignore_next_opt_out(project: Project, open_backend: Callable[[], Any]) -> None:
    session = install("v1_linear.jsonl", project.sessions, cwd=project.root)
    host, _ = project.host(session)
    with host:
        assert host.command("/hindsight:mode ignored").level == "info"
        assert host.command("/hindsight:next-opt-out").level == "info"
        result = host.command("/hindsight:import --yes")
    assert result.level == "warning" and result.data is not None, result.text  # the fixture's torn line 5
    assert result.data["counts"]["completed"] == 1
    assert "CLI-ARGPARSE" in " ".join(u.text for u in _units(open_backend, _bank(result)))
