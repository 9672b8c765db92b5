"""``hindsight-hooks install|uninstall claude-code``: the real console script on real settings files."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from .install_kit import SCRIPT
from .install_kit import cli as _cli
from .install_kit import our_hooks as _ours

EVENTS = ["SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd"]
OUR_ALLOW = ["mcp__hindsight__hindsight_recall", "mcp__hindsight__hindsight_reflect"]
MCP_ARGS = ["mcp", "--host-name", "claude-code", "--session-id-env", "CLAUDE_CODE_SESSION_ID"]

USER_SETTINGS: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}],
    },
}


def _dirs(tmp_path: Path) -> tuple[Path, Path]:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    return home, project


def test_install_writes_one_hook_per_event_and_is_idempotent(tmp_path: Path) -> None:
    home, project = _dirs(tmp_path)
    first = _cli(home, project, "install", "claude-code")
    assert first.returncode == 0, first.stdout + first.stderr
    path = home / ".claude" / "settings.json"
    settings = json.loads(path.read_text(encoding="utf-8"))
    ours = _ours(settings)
    assert sorted(ours) == sorted(EVENTS)
    assert all(len(commands) == 1 for commands in ours.values())
    assert shlex.split(ours["Stop"][0])[0] == os.path.abspath(sys.executable)
    before = path.read_bytes()
    again = _cli(home, project, "install", "claude-code")
    assert again.returncode == 0 and "already installed" in again.stdout
    assert path.read_bytes() == before
    assert not path.with_name("settings.json.hindsight-hooks.bak").exists()


def test_install_keeps_everything_of_the_users_and_uninstall_gives_it_back(tmp_path: Path) -> None:
    home, project = _dirs(tmp_path)
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    original = json.dumps(USER_SETTINGS, indent=4)
    path.write_text(original, encoding="utf-8")
    done = _cli(home, project, "install", "claude-code", "--project")
    assert done.returncode == 0, done.stdout + done.stderr
    settings = json.loads(path.read_text(encoding="utf-8"))
    assert settings["model"] == "opus"
    assert settings["permissions"] == {"allow": ["Bash(ls:*)", *OUR_ALLOW]}  # the user's rule first, as it was
    assert settings["enabledMcpjsonServers"] == ["hindsight"]  # approves our .mcp.json server only
    assert settings["hooks"]["PreToolUse"] == USER_SETTINGS["hooks"]["PreToolUse"]
    assert settings["hooks"]["Stop"][0] == USER_SETTINGS["hooks"]["Stop"][0]
    assert sorted(_ours(settings)) == sorted(EVENTS)
    assert path.with_name("settings.json.hindsight-hooks.bak").read_text(encoding="utf-8") == original
    assert not (home / ".claude").exists() and not (home / ".claude.json").exists()  # only the project

    removed = _cli(home, project, "uninstall", "claude-code", "--project")
    assert removed.returncode == 0, removed.stdout + removed.stderr
    assert json.loads(path.read_text(encoding="utf-8")) == USER_SETTINGS
    nothing = _cli(home, project, "uninstall", "claude-code", "--project")
    assert nothing.returncode == 0 and "nothing of ours" in nothing.stdout


def test_uninstall_removes_a_file_that_held_only_our_hooks(tmp_path: Path) -> None:
    home, project = _dirs(tmp_path)
    assert _cli(home, project, "install", "claude-code", "--user").returncode == 0
    path = home / ".claude" / "settings.json"
    assert path.exists()
    assert _cli(home, project, "uninstall", "claude-code", "--user").returncode == 0
    assert not path.exists()


def test_a_settings_file_that_is_not_json_is_refused_and_left_alone(tmp_path: Path) -> None:
    home, project = _dirs(tmp_path)
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"model": "opus",, }', encoding="utf-8")
    result = _cli(home, project, "install", "claude-code")
    assert result.returncode == 1
    assert "not valid JSON" in result.stdout and str(path) in result.stdout
    assert path.read_text(encoding="utf-8") == '{"model": "opus",, }'


def test_the_installed_command_line_answers_a_hook_event(tmp_path: Path) -> None:
    home, project = _dirs(tmp_path)
    assert _cli(home, project, "install", "claude-code").returncode == 0
    settings = json.loads((home / ".claude" / "settings.json").read_text(encoding="utf-8"))
    command = _ours(settings)["UserPromptSubmit"][0]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HINDSIGHT", "XDG_"))}
    env.update({"HOME": str(home), "HINDSIGHT_HOOK_HELPER": "off"})
    event = {"session_id": "s", "transcript_path": str(home / "none.jsonl"), "cwd": str(project), "prompt": "hi"}
    proc = subprocess.run(
        command, shell=True, input=json.dumps(event), capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert proc.returncode == 0
    assert isinstance(json.loads(proc.stdout), dict)


def test_the_readme_line_for_claude_code_installs_as_written(tmp_path: Path) -> None:
    from .readme_lines import install_line

    home, project = _dirs(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HINDSIGHT", "XDG_"))}
    env.update({"HOME": str(home), "PATH": f"{SCRIPT.parent}{os.pathsep}{os.environ.get('PATH', '')}"})
    proc = subprocess.run(
        ["bash", "-c", install_line("Claude Code")], cwd=project, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    settings = json.loads((home / ".claude" / "settings.json").read_text(encoding="utf-8"))
    assert sorted(_ours(settings)) == sorted(EVENTS)


def test_install_writes_the_slash_commands_and_uninstall_removes_only_them(tmp_path: Path) -> None:
    home, project = _dirs(tmp_path)
    folder = home / ".claude" / "commands" / "hindsight"
    folder.mkdir(parents=True)
    (folder / "mine.md").write_text("my own command\n", encoding="utf-8")
    (folder / "mode.md").write_text("my own /hindsight:mode\n", encoding="utf-8")  # not ours: kept
    assert _cli(home, project, "install", "claude-code").returncode == 0
    status = (folder / "status.md").read_text(encoding="utf-8")
    assert f"!`{SCRIPT} status --host-name claude-code --session-file " in status
    assert "${CLAUDE_SESSION_ID}" in status and "$ARGUMENTS" in status
    assert (folder / "mode.md").read_text(encoding="utf-8") == "my own /hindsight:mode\n"
    assert _cli(home, project, "uninstall", "claude-code").returncode == 0
    assert sorted(p.name for p in folder.iterdir()) == ["mine.md", "mode.md"]


CLAUDE_STATE: dict[str, Any] = {  # the user's ~/.claude.json, which Claude Code itself keeps
    "numStartups": 7,
    "mcpServers": {"github": {"type": "stdio", "command": "gh-mcp", "args": ["serve"]}},
    "projects": {"/somewhere": {"allowedTools": []}},
}


def test_install_adds_our_mcp_server_beside_the_users_and_uninstall_removes_only_ours(tmp_path: Path) -> None:
    home, project = _dirs(tmp_path)
    state = home / ".claude.json"
    original = json.dumps(CLAUDE_STATE, indent=2)
    state.write_text(original, encoding="utf-8")
    done = _cli(home, project, "install", "claude-code", "--user")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"MCP server 'hindsight' (hindsight-hooks mcp) added to {state}" in done.stdout
    data = json.loads(state.read_text(encoding="utf-8"))
    assert data["mcpServers"]["github"] == CLAUDE_STATE["mcpServers"]["github"]
    assert data["mcpServers"]["hindsight"] == {"type": "stdio", "command": str(SCRIPT), "args": MCP_ARGS}
    assert {k: v for k, v in data.items() if k != "mcpServers"} == {
        k: v for k, v in CLAUDE_STATE.items() if k != "mcpServers"
    }
    assert state.with_name(".claude.json.hindsight-hooks.bak").read_text(encoding="utf-8") == original
    settings = json.loads((home / ".claude" / "settings.json").read_text(encoding="utf-8"))
    assert settings["permissions"]["allow"] == OUR_ALLOW  # read-only tools only: retain still asks
    assert "enabledMcpjsonServers" not in settings  # a user server needs no approval

    before = state.read_bytes()
    again = _cli(home, project, "install", "claude-code", "--user")
    assert again.returncode == 0 and "already installed" in again.stdout
    assert state.read_bytes() == before

    removed = _cli(home, project, "uninstall", "claude-code", "--user")
    assert removed.returncode == 0, removed.stdout + removed.stderr
    assert json.loads(state.read_text(encoding="utf-8")) == CLAUDE_STATE
    assert not (home / ".claude" / "settings.json").exists()  # it held only our hooks and rules


def test_project_install_writes_mcp_json_and_leaves_a_foreign_hindsight_server_alone(tmp_path: Path) -> None:
    home, project = _dirs(tmp_path)
    assert _cli(home, project, "install", "claude-code", "--project").returncode == 0
    mcp_json = project / ".mcp.json"
    assert json.loads(mcp_json.read_text(encoding="utf-8"))["mcpServers"]["hindsight"]["args"] == MCP_ARGS
    assert _cli(home, project, "uninstall", "claude-code", "--project").returncode == 0
    assert not mcp_json.exists() and not (project / ".claude" / "settings.json").exists()

    foreign = {"mcpServers": {"hindsight": {"command": "npx", "args": ["some-other-hindsight"]}}}
    mcp_json.write_text(json.dumps(foreign), encoding="utf-8")
    done = _cli(home, project, "install", "claude-code", "--project")
    assert done.returncode == 0 and "that is not ours" in done.stdout
    assert json.loads(mcp_json.read_text(encoding="utf-8")) == foreign
    assert _cli(home, project, "uninstall", "claude-code", "--project").returncode == 0
    assert json.loads(mcp_json.read_text(encoding="utf-8")) == foreign
