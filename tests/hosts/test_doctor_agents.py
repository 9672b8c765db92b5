"""``hindsight-hooks doctor``'s agent section: the real console script on real settings files in a tmp HOME.

Install Claude Code's hooks, run one hook as the child process the agent would start, and doctor
says installed and live; point the hooks at a Python that is gone, and it says so and what to
run; uninstall, and it says not installed.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

from hindsight_hooks.hosts.hookseen import read_seen, seen_path, stamp

SCRIPT = Path(sys.executable).parent / "hindsight-hooks"


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HINDSIGHT", "XDG_", "CODEX_", "PI_", "HERMES_"))}
    env["HOME"] = str(home)
    env["XDG_CONFIG_HOME"] = str(home / ".config")
    env["XDG_DATA_HOME"] = str(home / ".local" / "share")
    env["XDG_RUNTIME_DIR"] = str(home / "run")
    return env


def _cli(home: Path, cwd: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *args],
        cwd=cwd,
        env=_env(home),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _doctor(home: Path, project: Path) -> tuple[dict[str, Any], str]:
    as_json = _cli(home, project, "doctor", "--json")
    text = _cli(home, project, "doctor")
    assert as_json.stdout.strip().startswith("{"), as_json.stdout + as_json.stderr
    return json.loads(as_json.stdout), text.stdout + text.stderr


def _claude(data: dict[str, Any]) -> dict[str, Any]:
    agent = next(a for a in data["agents"] if a["host"] == "claude-code")
    assert isinstance(agent, dict)
    return agent


def _scope(data: dict[str, Any], scope: str) -> dict[str, Any]:
    found = next(s for s in _claude(data)["scopes"] if s["scope"] == scope)
    assert isinstance(found, dict)
    return found


def _line(text: str, name: str) -> str:
    return next(ln for ln in text.splitlines() if f" {name}:" in ln)


def test_doctor_follows_a_claude_code_install_from_live_to_broken_to_removed(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    settings = project / ".claude" / "settings.json"

    data, text = _doctor(home, project)
    assert _scope(data, "project")["installed"] is False and _scope(data, "user")["installed"] is False
    assert "ok   agent claude-code: not installed" in text and str(settings) in _line(text, "agent claude-code")

    assert _cli(home, project, "install", "claude-code", "--project").returncode == 0
    event = {
        "session_id": "s-doctor",
        "transcript_path": str(tmp_path / "none.jsonl"),
        "cwd": str(project),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "what did we decide about the cache?",
    }
    hook = _cli(home, project, "hook", "claude-code", "UserPromptSubmit", stdin=json.dumps(event))
    assert hook.returncode == 0 and json.loads(hook.stdout.strip().splitlines()[-1]) is not None

    data, text = _doctor(home, project)
    scope = _scope(data, "project")
    assert scope["installed"] is True and scope["file"] == str(settings)
    hooks = {h["event"]: h for h in scope["hooks"]}
    assert sorted(hooks) == sorted(["SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd"])
    assert all(h["executable_exists"] for h in hooks.values())
    assert hooks["UserPromptSubmit"]["live"] is True and hooks["Stop"]["live"] is False
    line = _line(text, "agent claude-code (project)")
    assert line.startswith("ok ") and f"installed in {settings}" in line and "live here: UserPromptSubmit" in line
    assert "not seen here yet: PreCompact, SessionEnd, SessionStart, Stop" in line
    assert _scope(data, "user")["installed"] is False

    # the virtualenv the hooks run is gone: every hook would fail before it starts
    gone = str(tmp_path / "old-venv" / "bin" / "python")
    raw = settings.read_text(encoding="utf-8")
    settings.write_text(raw.replace(json.dumps(os.path.abspath(sys.executable))[1:-1], gone), encoding="utf-8")
    assert gone in settings.read_text(encoding="utf-8")
    broken = _cli(home, project, "doctor")
    assert broken.returncode == 1
    line = _line(broken.stdout + broken.stderr, "agent claude-code (project)")
    assert line.startswith("fail") and gone in line and "does not exist" in line
    assert "run `hindsight-hooks install claude-code --project`" in line
    data, _ = _doctor(home, project)
    assert data["status"] == "fail"
    assert not any(h["executable_exists"] for h in _scope(data, "project")["hooks"])

    # reinstalling (as doctor says) repairs it; uninstalling leaves nothing installed
    assert _cli(home, project, "install", "claude-code", "--project").returncode == 0
    assert _line(_doctor(home, project)[1], "agent claude-code (project)").startswith("ok ")
    assert _cli(home, project, "uninstall", "claude-code", "--project").returncode == 0
    data, text = _doctor(home, project)
    assert _scope(data, "project")["installed"] is False
    assert "ok   agent claude-code: not installed" in text
    assert "UserPromptSubmit" in _claude(data)["seen_here"]  # the evidence stays; nothing claims it is installed


def test_the_seen_stamp_is_private_holds_only_names_and_times_and_is_written_at_most_once_a_minute(
    tmp_path: Path,
) -> None:
    stamp(tmp_path, "claude-code", "Stop", now=1000.0)
    path = seen_path(tmp_path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text(encoding="utf-8")) == {"claude-code": {"Stop": 1000.0}}
    stamp(tmp_path, "claude-code", "Stop", now=1030.0)
    assert read_seen(tmp_path) == {"claude-code": {"Stop": 1000.0}}
    stamp(tmp_path, "claude-code", "Stop", now=1100.0)
    stamp(tmp_path, "codex", "UserPromptSubmit", now=1100.0)
    assert read_seen(tmp_path) == {"claude-code": {"Stop": 1100.0}, "codex": {"UserPromptSubmit": 1100.0}}
    path.write_text("{not json", encoding="utf-8")
    assert read_seen(tmp_path) == {}
    stamp(tmp_path, "gemini", "BeforeAgent", now=1200.0)  # a corrupt file costs the old stamps, never the hook
    assert read_seen(tmp_path) == {"gemini": {"BeforeAgent": 1200.0}}


def test_doctor_sees_a_pi_extension_its_python_and_a_bridge_session_started_here(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    assert _cli(home, project, "install", "pi", "--project").returncode == 0
    folder = project / ".pi" / "extensions" / "hindsight"

    line = _line(_doctor(home, project)[1], "agent pi (project)")
    assert line.startswith("ok ") and f"installed in {folder}" in line and "no session of it has run" in line

    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "start", "params": {"protocolVersion": 1, "cwd": str(project)}},
        {"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": {}},
    ]
    bridge = _cli(home, project, "serve", "--stdio", stdin="".join(json.dumps(r) + "\n" for r in requests))
    assert bridge.returncode == 0, bridge.stderr
    data, text = _doctor(home, project)
    assert "live here: last session started" in _line(text, "agent pi (project)")
    pi = next(a for a in data["agents"] if a["host"] == "pi")
    assert pi["seen_here"]["session_start"]["live"] is True

    settings = folder / "hindsight.json"
    gone = str(tmp_path / "gone" / "bin" / "python3")
    settings.write_text(json.dumps({**json.loads(settings.read_text(encoding="utf-8")), "python": gone}), "utf-8")
    line = _line(_doctor(home, project)[1], "agent pi (project)")
    assert line.startswith("fail") and gone in line and "run `hindsight-hooks install pi --project`" in line


def test_doctor_fails_a_hook_python_that_exists_but_cannot_import_us(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    venv = tmp_path / "other-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    other = str(venv / "bin" / "python")
    assert _cli(home, project, "install", "gemini", "--project").returncode == 0
    settings = project / ".gemini" / "settings.json"
    raw = settings.read_text(encoding="utf-8")
    settings.write_text(raw.replace(json.dumps(os.path.abspath(sys.executable))[1:-1], other), encoding="utf-8")

    done = _cli(home, project, "doctor")
    line = _line(done.stdout + done.stderr, "agent gemini (project)")
    assert done.returncode == 1 and line.startswith("fail") and other in line
    assert "cannot import hindsight_hooks" in line and f"`{other} -m pip install hindsight-hooks`" in line
    assert "hook BeforeAgent" in line and "mcp server" not in line  # the MCP script is still ours and fine
