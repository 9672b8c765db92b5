"""Shared set-up for the import tests: a real project folder, real session files, a real store.

Fixture sessions in ``tests/fixtures/sessions`` are hand-written Pi JSONL; their header ``cwd``
is a placeholder, so ``install`` copies a fixture and points its header at the test project
(the only field rewritten). The memory store is the real ``LocalBackend`` SQLite file.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hindsight_hooks.hooks import Host, RecordingUI
from hindsight_hooks.plugin.core import HindsightPlugin

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sessions"


def fixture_lines(name: str) -> list[str]:
    return (FIXTURES / name).read_text(encoding="utf-8").splitlines()


def install(name: str, dest: Path, *, cwd: Path | str | None, file_name: str | None = None, **header: Any) -> Path:
    """Copy fixture ``name`` to ``dest``; the header's cwd becomes ``cwd`` (``None`` removes it)."""
    lines = fixture_lines(name)
    head = json.loads(lines[0])
    if head.get("type") == "session":
        if cwd is None:
            head.pop("cwd", None)
        else:
            head["cwd"] = str(cwd)
        head.update(header)
        lines[0] = json.dumps(head, separators=(",", ":"))
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / (file_name or name)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@dataclass
class Project:
    """A git repository with a project config selecting the embedded store."""

    root: Path
    sessions: Path
    db: Path
    tmp: Path

    @property
    def state(self) -> Path:
        return self.root / ".hindsight"

    @property
    def queue_file(self) -> Path:
        return self.state / "retain-queue.jsonl"

    @property
    def manifest(self) -> Path:
        return self.state / "import-manifest.json"

    @property
    def checkpoint(self) -> Path:
        return self.state / "import-checkpoint.json"

    def config(self, text: str) -> None:
        (self.state / "config.toml").write_text('backend = "local"\n' + text, encoding="utf-8")

    def user_config(self, text: str) -> None:
        """The user's own config file: the only place that may name the user bank (ADR-063)."""
        path = self.tmp / "xdg-config" / "hindsight-hooks" / "config.toml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def host(self, session_file: Path | None, answers: list[str | None] | None = None) -> tuple[Host, RecordingUI]:
        ui = RecordingUI(answers=answers)
        return Host(self.root, session_file=session_file, plugins=[HindsightPlugin()], ui=ui, host_name="pi"), ui

    def queued_jobs(self) -> list[dict[str, Any]]:
        if not self.queue_file.exists():
            return []
        return [json.loads(line) for line in self.queue_file.read_text().splitlines() if line.strip()]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Project]:
    root = tmp_path / "widget"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".hindsight").mkdir(mode=0o700)
    (root / ".hindsight" / "config.toml").write_text('backend = "local"\n', encoding="utf-8")
    db = tmp_path / "data" / "memory.db"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # where Claude Code and Codex keep sessions
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("HINDSIGHT_HOOKS_LOCAL__PATH", str(db))
    for var in ("HINDSIGHT_BASE_URL", "HINDSIGHT_API_KEY", "HINDSIGHT_API_KEY_REF"):
        monkeypatch.delenv(var, raising=False)
    yield Project(root=root, sessions=tmp_path / "sessions", db=db, tmp=tmp_path)


@pytest.fixture
def open_backend(project: Project) -> Iterator[Callable[[], Any]]:
    """Open the project's real store (a fresh ``LocalBackend`` on the same file)."""
    from hindsight_hooks.backends.local import LocalBackend

    opened: list[Any] = []

    def make() -> Any:
        backend = LocalBackend(project.db)
        opened.append(backend)
        return backend

    yield make
    for backend in opened:
        backend.close()
