"""The ``config`` subcommand, run as the real console script, and the subcommand registry."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from hindsight_hooks import cli
from hindsight_hooks.config import config_keys

SCRIPT = Path(sys.executable).parent / "hindsight-hooks"
SECRET = "sk-test-abcdefghijklmnop"


def run_cli(tmp_path: Path, *args: str, extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    assert SCRIPT.exists(), f"console script missing: {SCRIPT} (run .venv/bin/pip install -e .)"
    env = {
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "PYTHONUTF8": "1",
        **(extra_env or {}),
    }
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=60, check=False)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    cwd = tmp_path / "proj"
    (cwd / ".hindsight").mkdir(parents=True)
    (cwd / ".hindsight" / "config.toml").write_text(
        f'[hindsight]\nbase_url = "http://repo:1"\napi_key = "{SECRET}"\n[recall]\nmax_tokens = -3\n'
    )
    user = tmp_path / "xdg" / "hindsight-hooks" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('[recall]\nbudget = "high"\n')
    return cwd


def test_config_json_as_console_script(tmp_path: Path, project: Path) -> None:
    proc = run_cli(tmp_path, "config", "--json", "--cwd", str(project), extra_env={"HINDSIGHT_API_KEY": SECRET})
    assert proc.returncode == 0, proc.stderr
    assert SECRET not in proc.stdout
    data = json.loads(proc.stdout)
    assert set(data["values"]) == set(config_keys())
    assert data["values"]["hindsight.api_key"] == {"value": "***", "source": "env"}
    assert data["values"]["hindsight.base_url"] == {"value": "http://repo:1", "source": "project"}
    assert data["values"]["recall.budget"] == {"value": "high", "source": "user"}
    assert data["values"]["recall.max_tokens"] == {"value": 800, "source": "default"}
    assert data["values"]["retain.async"] == {"value": True, "source": "default"}
    assert data["error"] is None
    project_file = str(project / ".hindsight" / "config.toml")
    assert any(w.startswith(f"{project_file}: hindsight.api_key:") for w in data["warnings"])
    assert any(w.startswith(f"{project_file}: recall.max_tokens:") for w in data["warnings"])
    assert data["effective_backend"] == "hindsight"


def test_config_text_as_console_script(tmp_path: Path, project: Path) -> None:
    proc = run_cli(tmp_path, "config", "--cwd", str(project))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert 'recall.budget = "high"  (user)' in lines
    assert "recall.max_tokens = 800  (default)" in lines
    assert 'hindsight.base_url = "http://repo:1"  (project)' in lines
    assert "recall.query_timestamp = unset  (default)" in lines
    assert "retain.async = true  (default)" in lines
    assert any(line.startswith("warning: ") and "recall.max_tokens" in line for line in lines)
    assert SECRET not in proc.stdout
    value_lines = [line for line in lines if " = " in line and not line.startswith(("#", "warning:"))]
    assert len(value_lines) == len(config_keys())


def test_config_parse_error_exits_1(tmp_path: Path) -> None:
    cwd = tmp_path / "proj"
    (cwd / ".hindsight").mkdir(parents=True)
    bad = cwd / ".hindsight" / "config.toml"
    bad.write_text("[recall]\nbudget = = 1\n")
    proc = run_cli(tmp_path, "config", "--json", "--cwd", str(cwd))
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert str(bad) in data["error"] and "line 2, column 10" in data["error"]
    assert data["values"]["enabled"]["value"] is False
    text = run_cli(tmp_path, "config", "--cwd", str(cwd))
    assert text.returncode == 1
    # The error comes first, naming the file that does not parse (not "not found"), and is not
    # buried under the effective config (issue 9 item 18).
    assert text.stdout == ""
    first = text.stderr.splitlines()[0]
    assert first.startswith("hindsight-hooks: config error: ") and str(bad) in first and "line 2, column 10" in first
    assert data["files"] == {"project": str(bad)}


def test_registry_runs_registered_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    seen: dict[str, object] = {}

    def add_args(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("word")

    def run(ns: argparse.Namespace) -> int:
        seen["word"] = ns.word
        seen["json"] = ns.json
        seen["cwd"] = cli.cwd_of(ns)
        return 7

    cli.register("test-echo-registry", "echo for tests", add_args, run)
    assert "test-echo-registry" in cli.subcommands()
    assert cli.main(["test-echo-registry", "hello", "--json", "--cwd", "/tmp"]) == 7
    assert seen == {"word": "hello", "json": True, "cwd": Path("/tmp")}
    with pytest.raises(ValueError):
        cli.register("test-echo-registry", "again", None, run)


def test_main_usage_errors_return_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([]) == 2
    assert cli.main(["no-such-command"]) == 2
    assert cli.main(["--help"]) == 0
    assert "config" in capsys.readouterr().out
