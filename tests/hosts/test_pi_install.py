"""``hindsight-hooks install pi`` / ``uninstall pi`` as real CLI processes on real folders."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hindsight_hooks.hosts.pi_install import EXTENSION_FILES, MANIFEST, extension_source

CLI = Path(sys.executable).parent / "hindsight-hooks"


def run(tmp: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp / "home"),
        "PI_CODING_AGENT_DIR": str(tmp / "agent"),
        "XDG_CONFIG_HOME": str(tmp / "xdg-config"),
        "XDG_DATA_HOME": str(tmp / "xdg-data"),
    }
    return subprocess.run(
        [str(CLI), *args], cwd=cwd or tmp, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_install_copies_the_extension_and_records_this_python_then_is_idempotent(tmp_path: Path) -> None:
    first = run(tmp_path, "install", "pi")
    assert first.returncode == 0, first.stdout + first.stderr
    folder = tmp_path / "agent" / "extensions" / "hindsight"
    for name in EXTENSION_FILES:
        assert (folder / name).read_bytes() == (extension_source() / name).read_bytes()
    settings = json.loads((folder / "hindsight.json").read_text(encoding="utf-8"))
    assert settings["python"] == sys.executable
    assert settings["protocolVersion"] == 1
    stamp = (folder / "index.ts").stat().st_mtime_ns
    again = run(tmp_path, "install", "pi")
    assert again.returncode == 0
    assert "already installed" in again.stdout
    assert (folder / "index.ts").stat().st_mtime_ns == stamp


def test_project_scope_goes_to_the_projects_pi_extensions(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    done = run(tmp_path, "install", "pi", "--project", "--json", cwd=project)
    assert done.returncode == 0, done.stdout + done.stderr
    answer = json.loads(done.stdout)
    assert answer["folder"] == str(project / ".pi" / "extensions" / "hindsight")
    assert (project / ".pi" / "extensions" / "hindsight" / "index.ts").is_file()
    assert not (tmp_path / "agent" / "extensions").exists()


def test_a_hindsight_folder_that_is_not_ours_is_refused(tmp_path: Path) -> None:
    theirs = tmp_path / "agent" / "extensions" / "hindsight"
    theirs.mkdir(parents=True)
    (theirs / "index.ts").write_text("// someone else's\n", encoding="utf-8")
    done = run(tmp_path, "install", "pi")
    assert done.returncode == 1
    assert "not made by hindsight-hooks" in done.stdout
    assert (theirs / "index.ts").read_text(encoding="utf-8") == "// someone else's\n"
    assert run(tmp_path, "uninstall", "pi").returncode == 1


def test_uninstall_removes_exactly_what_install_wrote_and_keeps_edited_files(tmp_path: Path) -> None:
    assert run(tmp_path, "install", "pi").returncode == 0
    folder = tmp_path / "agent" / "extensions" / "hindsight"
    (folder / "settings.ts").write_text("// edited by the user\n", encoding="utf-8")
    (folder / "notes.txt").write_text("mine\n", encoding="utf-8")
    done = run(tmp_path, "uninstall", "pi")
    assert done.returncode == 0
    assert "settings.ts" in done.stdout
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt", "settings.ts"]
    assert not (folder / MANIFEST).exists()
    (folder / "notes.txt").unlink()
    (folder / "settings.ts").unlink()
    folder.rmdir()
    assert run(tmp_path, "install", "pi").returncode == 0
    assert run(tmp_path, "uninstall", "pi").returncode == 0
    assert not folder.exists()
    assert "nothing of ours" in run(tmp_path, "uninstall", "pi").stdout
