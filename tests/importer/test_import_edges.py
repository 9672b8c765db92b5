"""The import commands at their edges: missing and empty folders, bad paths, damaged and cut-off
session files, foreign sessions, and the docs/import.md confirmation declined.

Everything runs through the real ``Host`` + plugin on the embedded store; "nothing written" is
checked on disk (no queue, manifest or checkpoint file, no stored unit) and "nothing lost" by
comparing the source file's bytes before and after.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hindsight_hooks.hooks import CommandResult, Host

from ..chat.conftest import SCRIPT, clean_env, write_project
from .conftest import Project, fixture_lines, install

CONFIRM = "This will enqueue historical session content for memory. Continue?"
IMPORT_COMMANDS = ("import", "import-current", "import-file", "import-project-sessions")


def _project_bank(host: Host) -> str:
    data = host.command("/hindsight").data
    assert data is not None
    return str(data["banks"]["project"])


def _texts(open_backend: Callable[[], Any], bank: str) -> str:
    return " ".join(u.text for u in open_backend().list_units(bank, 10_000, 0))


def _assert_nothing_written(project: Project, open_backend: Callable[[], Any], *banks: str) -> None:
    assert not project.queue_file.exists()
    assert not project.manifest.exists()
    assert not project.checkpoint.exists()
    for bank in banks:
        assert open_backend().list_units(bank, 10, 0) == [], bank


def _write_lines(path: Path, lines: list[str], *, newline_at_end: bool = True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + ("\n" if newline_at_end else ""), encoding="utf-8")
    return path


def _session_lines(project: Project, name: str = "decisions.jsonl") -> list[str]:
    """A fixture's lines with the header's cwd pointed at the test project."""
    lines = fixture_lines(name)
    head = json.loads(lines[0])
    head["cwd"] = str(project.root)
    return [json.dumps(head), *lines[1:]]


# -- discovery: a missing or empty folder is "no sessions found", a warning -----------------------


def test_missing_and_empty_sessions_folder_say_no_sessions_found(
    project: Project, open_backend: Callable[[], Any]
) -> None:
    current = project.sessions / "current.jsonl"  # the folder does not exist yet
    host, ui = project.host(current, answers=["Import"])
    with host:
        bank = _project_bank(host)
        missing = host.command("/hindsight:import-project-sessions")
        missing_preview = host.command("/hindsight:import-project-sessions --dry-run")
        missing_json = host.command("/hindsight:import-project-sessions --json")
        project.sessions.mkdir()
        empty = host.command("/hindsight:import-project-sessions --yes")
        (project.sessions / "notes.txt").write_text("not a session")
        only_other_files = host.command("/hindsight:import-project-sessions")
    folder = str(project.sessions)
    for result in (missing, missing_preview):
        assert result.level == "warning", result.text
        assert result.text == f"no sessions found in {folder} (the folder does not exist)"
    assert json.loads(missing_json.text) == {
        "action": "import",
        "status": "no-sessions",
        "folder": folder,
        "refused": [],
    }
    for result in (empty, only_other_files):
        assert (result.level, result.text) == ("warning", f"no sessions found in {folder}")
    assert ui.questions == []  # nothing to confirm
    _assert_nothing_written(project, open_backend, bank)


def test_folder_with_only_foreign_or_damaged_sessions_names_each_file(
    project: Project, open_backend: Callable[[], Any], tmp_path: Path
) -> None:
    other = tmp_path / "billing-service"
    other.mkdir()
    install("decisions.jsonl", project.sessions, cwd=other, file_name="foreign.jsonl")
    damaged = _session_lines(project)
    damaged[0] = damaged[0][:25]  # the header line torn in half
    _write_lines(project.sessions / "damaged.jsonl", damaged)
    _write_lines(project.sessions / "garbage.jsonl", ["\x00\x01 not json", "still not json"])
    host, ui = project.host(project.sessions / "current.jsonl", answers=["Import"])
    with host:
        bank = _project_bank(host)
        result = host.command("/hindsight:import-project-sessions")
    assert result.level == "warning"
    lines = result.text.splitlines()
    assert lines[0] == f"no sessions of this project found in {project.sessions}"
    by_file = {Path(r["file"]).name: r["reason"] for r in result.data["refused"]}  # type: ignore[index]
    assert set(by_file) == {"foreign.jsonl", "damaged.jsonl", "garbage.jsonl"}
    assert str(other) in by_file["foreign.jsonl"] and str(project.root) in by_file["foreign.jsonl"]
    assert "line 1" in by_file["damaged.jsonl"] and "damaged" in by_file["damaged.jsonl"]
    assert "line 1" in by_file["garbage.jsonl"]
    assert all(any(name in line for line in lines[1:]) for name in by_file)
    assert ui.questions == []
    _assert_nothing_written(project, open_backend, bank)


def test_cli_import_project_sessions_without_a_sessions_folder(tmp_path: Path) -> None:
    root = write_project(tmp_path / "fresh")
    env = clean_env(tmp_path)
    for argv in ([], ["--dry-run"], ["--json"]):
        done = subprocess.run(
            [str(SCRIPT), "import-project-sessions", *argv],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, (argv, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr and "Error" not in done.stderr
        folder = root / ".hindsight" / "sessions"
        if argv == ["--json"]:
            assert json.loads(done.stdout)["status"] == "no-sessions"
        else:
            assert f"no sessions found in {folder}" in done.stdout
    assert not (root / ".hindsight" / "retain-queue.jsonl").exists()


# -- bad paths ------------------------------------------------------------------------------------------


def test_bad_paths_are_clear_errors_or_warnings(project: Project, open_backend: Callable[[], Any]) -> None:
    empty = project.sessions / "empty.jsonl"
    _write_lines(empty, [], newline_at_end=False)
    blank = _write_lines(project.sessions / "blank.jsonl", ["", "   "])
    host, _ = project.host(empty)
    with host:
        bank = _project_bank(host)
        folder = host.command(f"/hindsight:import-file {project.sessions} --yes")
        missing = host.command("/hindsight:import-file no/such/file.jsonl --yes")
        empty_file = host.command(f"/hindsight:import-file {empty} --yes")
        blank_file = host.command(f"/hindsight:import-file {blank} --yes")
        empty_current = host.command("/hindsight:import --yes")
    assert folder.level == "error" and "is a folder, not a file" in folder.text and str(project.sessions) in folder.text
    assert missing.level == "error" and f"{project.root / 'no/such/file.jsonl'} does not exist" in missing.text
    for result, path in ((empty_file, empty), (blank_file, blank), (empty_current, empty)):
        assert (result.level, result.text) == ("warning", f"{path} is empty: nothing to import")
    _assert_nothing_written(project, open_backend, bank)


# -- damaged and cut-off session files --------------------------------------------------------------------


def test_cut_off_last_line_imports_the_rest_and_names_the_line(
    project: Project, open_backend: Callable[[], Any]
) -> None:
    lines = _session_lines(project)
    lines[-1] = lines[-1][: len(lines[-1]) // 2]  # a crash while the last entry was being written
    path = _write_lines(project.sessions / "cut.jsonl", lines, newline_at_end=False)
    before = path.read_bytes()
    host, _ = project.host(None)
    with host:
        bank = _project_bank(host)
        preview = host.command(f"/hindsight:import-file {path} --dry-run")
        result = host.command(f"/hindsight:import-file {path} --yes")
    expected = f"{path}: 1 unparsable line(s) skipped (line {len(lines)})"
    for res in (preview, result):
        assert res.level == "warning", res.text
        assert expected in res.text and "the last line is cut off" in res.text
    assert result.data is not None and result.data["counts"]["completed"] == 1
    text = _texts(open_backend, bank)
    assert "never run on Sundays" in text  # the line before the cut
    assert "advisory lock" in text  # the start of the session
    assert "skips Sundays" not in text  # the cut-off entry itself
    assert path.read_bytes() == before  # the source file is never modified
    assert sorted(p.name for p in path.parent.iterdir()) == ["cut.jsonl"]


def test_damaged_middle_line_cuts_the_branch_and_all_leaves_recovers_it(
    project: Project, open_backend: Callable[[], Any]
) -> None:
    lines = _session_lines(project)
    assert '"id":"u0000002"' in lines[9]
    lines[9] = '{"type":"message","id":"u0000002","parentId":"a00'  # line 10 damaged
    path = _write_lines(project.sessions / "gap.jsonl", lines)
    before = path.read_bytes()
    host, _ = project.host(None)
    with host:
        bank = _project_bank(host)
        current = host.command(f"/hindsight:import-file {path} --yes")
        text_current = _texts(open_backend, bank)
        every = host.command(f"/hindsight:import-file {path} --all-leaves --yes")
    assert current.level == "warning"
    assert f"{path}: 1 unparsable line(s) skipped (line 10)" in current.text
    assert "points to a parent that is not in the file" in current.text and "--all-leaves" in current.text
    assert "export retries = 7 attempts" in text_current and "never run on Sundays" in text_current
    assert "Decision: use PostgreSQL advisory locks" not in text_current  # before the gap: not on this branch
    assert every.level == "warning" and every.data is not None
    assert every.data["counts"]["completed"] == 2, every.text
    assert "Decision: use PostgreSQL advisory locks" in _texts(open_backend, bank)  # nothing lost
    assert path.read_bytes() == before


def test_damaged_header_is_refused_not_imported_as_a_chat_log(
    project: Project, open_backend: Callable[[], Any]
) -> None:
    project.user_config('[banks.user]\nenabled = true\nbank_id = "hh-user-edges"\n')
    lines = _session_lines(project)
    lines[0] = lines[0][:30]
    damaged = _write_lines(project.sessions / "damaged.jsonl", lines)
    garbage = _write_lines(project.sessions / "garbage.jsonl", ["", "%%% not json", "neither is this"])
    host, ui = project.host(None, answers=["Import", "Import"])
    with host:
        bank = _project_bank(host)
        a = host.command(f"/hindsight:import-file {damaged}")
        b = host.command(f"/hindsight:import-file {garbage}")
    assert a.level == "error"
    assert a.text.startswith(f"{damaged}: line 1 should be the session header but is damaged")
    assert b.level == "error" and b.text.startswith(f"{garbage}: line 2 is not valid JSON")
    assert "scheduler" not in a.text and "%%%" not in b.text and "neither is" not in b.text  # no content quoted
    assert ui.questions == []
    _assert_nothing_written(project, open_backend, bank, "hh-user-edges")


# -- other projects --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["import", "import-current", "import-file"])
def test_foreign_session_is_refused_by_every_command(
    project: Project, open_backend: Callable[[], Any], tmp_path: Path, command: str
) -> None:
    other = tmp_path / "billing-service"
    other.mkdir()
    foreign = install("decisions.jsonl", project.sessions, cwd=other, file_name="foreign.jsonl")
    host, ui = project.host(foreign, answers=["Import"])
    arg = f" {foreign}" if command == "import-file" else ""
    with host:
        bank = _project_bank(host)
        result = host.command(f"/hindsight:{command}{arg} --yes")
    assert result.level == "error"
    assert str(other) in result.text and str(project.root) in result.text
    assert ui.questions == []
    _assert_nothing_written(project, open_backend, bank)


# -- the docs/import.md confirmation -----------------------------------------------------------------------------------


@pytest.mark.parametrize("command", IMPORT_COMMANDS)
@pytest.mark.parametrize("answer", ["Cancel", None])
def test_declining_the_confirmation_writes_nothing(
    project: Project, open_backend: Callable[[], Any], command: str, answer: str | None
) -> None:
    session = install("decisions.jsonl", project.sessions, cwd=project.root)
    host, ui = project.host(session, answers=[answer])
    arg = f" {session}" if command == "import-file" else ""
    with host:
        bank = _project_bank(host)
        result: CommandResult = host.command(f"/hindsight:{command}{arg}")
    assert (result.text, result.level) == ("import cancelled", "info")
    assert result.data is not None and result.data["cancelled"] is True
    assert len(ui.questions) == 1
    title, options = ui.questions[0]
    assert options == ["Import", "Cancel"]
    assert title.startswith("import preview: ") and title.endswith("\n\n" + CONFIRM)
    assert "write=no" in title and "leaf=" in title
    _assert_nothing_written(project, open_backend, bank)
    # accepting afterwards imports for real
    host, ui = project.host(session, answers=["Import"])
    with host:
        done = host.command(f"/hindsight:{command}{arg}")
    assert done.level == "info" and done.data is not None and done.data["counts"]["completed"] == 1, done.text
    assert "advisory lock" in _texts(open_backend, bank)
