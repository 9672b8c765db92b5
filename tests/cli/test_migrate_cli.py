"""``hindsight-hooks migrate`` as a person runs it: a child process, a real store, no server needed
(a dry run contacts none; a server that is not there must stop the run with a way forward)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import hindsight_hooks
from hindsight_hooks.backends.local import LocalBackend

from ..chat.conftest import clean_env

SRC = str(Path(hindsight_hooks.__file__).resolve().parents[1])
RUN_CLI = "import sys; from hindsight_hooks.cli import main; sys.exit(main())"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def migrate(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = clean_env(tmp)
    env["PYTHONPATH"] = SRC
    project = tmp / "project"
    project.mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-c", RUN_CLI, "migrate", "--to", "hindsight", "--cwd", str(project), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "memory.db"
    backend = LocalBackend(path)
    try:
        for n in range(3):
            item = {"content": f"fact {n}", "document_id": f"doc-{n}", "update_mode": "replace", "tags": ["repo:r"]}
            backend.retain_batch("proj", [item], operation_id=f"op-{n}")
    finally:
        backend.close()
    return path


def test_without_a_server_url_it_is_a_usage_error(tmp_path: Path, store: Path) -> None:
    out = migrate(tmp_path, "--store", str(store))
    assert out.returncode == 2
    assert "pass --url or set hindsight.base_url" in out.stderr


def test_without_a_store_there_is_nothing_to_migrate(tmp_path: Path) -> None:
    out = migrate(tmp_path, "--url", "http://127.0.0.1:1", "--store", str(tmp_path / "none.db"))
    assert out.returncode == 1 and "no embedded store at" in out.stderr
    assert not (tmp_path / "none.db").exists()  # looking did not create one


def test_a_dry_run_counts_without_any_server(tmp_path: Path, store: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    out = migrate(tmp_path, "--url", url, "--store", str(store), "--dry-run", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["dry_run"] is True and data["memories"] == 3 and data["sent"] == 0
    assert [(b["bank_id"], b["memories"], b["documents"], b["to_send"]) for b in data["banks"]] == [("proj", 3, 3, 3)]
    text = migrate(tmp_path, "--url", url, "--store", str(store), "--dry-run")
    assert text.stdout.splitlines() == [f"would migrate to {url}", "proj: 3 memories in 3 documents; 3 to send"]


def test_a_server_that_is_not_there_stops_the_run_with_a_way_forward(tmp_path: Path, store: Path) -> None:
    out = migrate(tmp_path, "--url", f"http://127.0.0.1:{free_port()}", "--store", str(store), "--switch-config")
    assert out.returncode == 1
    assert "migration stopped:" in out.stderr and "run the same command again to continue" in out.stderr
    assert not (tmp_path / "project" / ".hindsight" / "config.toml").exists()  # nothing switched


def test_an_unknown_bank_is_named(tmp_path: Path, store: Path) -> None:
    out = migrate(tmp_path, "--url", "http://127.0.0.1:1", "--store", str(store), "--bank", "other", "--dry-run")
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.strip() == "error: no such bank in the embedded store: other"


def test_switch_config_with_credentials_in_the_url_stops_before_anything_is_sent(tmp_path: Path, store: Path) -> None:
    out = migrate(tmp_path, "--url", "http://bob:hunter22@127.0.0.1:1", "--store", str(store), "--switch-config")
    assert out.returncode == 2 and "user name or password" in out.stderr
    assert "hunter22" not in out.stderr + out.stdout
    assert not (tmp_path / "project" / ".hindsight").exists()
