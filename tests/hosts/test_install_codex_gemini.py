"""``hindsight-hooks install|uninstall codex|gemini``: the real console script on real settings files.

Everything of the user's stays as it was (other hooks, other MCP servers, comments and layout of
Codex's TOML), a second install changes nothing, uninstall gives back exactly the file from
before, a foreign ``hindsight`` MCP server is left alone, and a file that does not parse is
refused untouched. The README's copy-paste lines are run as written.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from .install_kit import SCRIPT, home_env
from .install_kit import cli as _cli
from .install_kit import our_hooks as _ours
from .readme_lines import install_line

CODEX_EVENTS = ["SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd"]
GEMINI_EVENTS = ["SessionStart", "BeforeAgent", "AfterAgent", "PreCompress", "SessionEnd"]

USER_CODEX_TOML = """# my Codex settings
model = "o4"   # keep this comment

[mcp_servers.docs]
command = "docs-server"

[projects."/src/app"]
trust_level = "trusted"
"""
USER_HOOKS: dict[str, Any] = {
    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]},
}
USER_GEMINI: dict[str, Any] = {
    "theme": "Dracula",
    "mcpServers": {"docs": {"command": "docs-server"}},
    "hooks": {
        "BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "./check.sh"}]}]
    },
}


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    return home, project


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# --------------------------------------------------------------------------- Codex


def test_codex_install_merges_hooks_and_mcp_keeping_the_users_and_uninstall_gives_them_back(
    dirs: tuple[Path, Path],
) -> None:
    home, project = dirs
    codex_home = home / ".codex"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(USER_CODEX_TOML, encoding="utf-8")
    (codex_home / "hooks.json").write_text(json.dumps(USER_HOOKS), encoding="utf-8")
    before = _files(home)

    first = _cli(home, project, "install", "codex")
    assert first.returncode == 0, first.stdout + first.stderr
    hooks = json.loads((codex_home / "hooks.json").read_text(encoding="utf-8"))
    ours = _ours(hooks)
    assert sorted(ours) == sorted(CODEX_EVENTS)
    assert shlex.split(ours["Stop"][0])[:5] == [
        os.path.abspath(sys.executable),
        "-m",
        "hindsight_hooks.hosts",
        "hook",
        "codex",
    ]
    assert hooks["hooks"]["Stop"][0] == USER_HOOKS["hooks"]["Stop"][0]
    session_end = [g for g in hooks["hooks"]["SessionEnd"] if _ours({"hooks": {"x": [g]}})]
    assert session_end[0]["hooks"][0]["timeout"] <= 3  # Codex clamps SessionEnd hooks to 3 s

    text = (codex_home / "config.toml").read_text(encoding="utf-8")
    assert text.startswith(USER_CODEX_TOML)  # the user's text, comments and all, untouched
    config = tomllib.loads(text)
    assert config["model"] == "o4" and config["mcp_servers"]["docs"] == {"command": "docs-server"}
    server = config["mcp_servers"]["hindsight"]
    assert server["command"] == str(SCRIPT) and server["args"] == ["mcp"]
    assert server["tools"]["hindsight_recall"]["approval_mode"] == "approve"
    assert "memory_edit" not in server["tools"]  # editing memory still asks
    assert "review" in first.stdout  # the user is told Codex runs hooks only once reviewed

    after_first = _files(home)
    again = _cli(home, project, "install", "codex")
    assert again.returncode == 0 and "already installed" in again.stdout
    assert _files(home) == after_first

    gone = _cli(home, project, "uninstall", "codex")
    assert gone.returncode == 0, gone.stdout + gone.stderr
    now = _files(home)
    assert now[".codex/config.toml"] == before[".codex/config.toml"]  # byte for byte
    assert json.loads(now[".codex/hooks.json"]) == USER_HOOKS
    assert set(now) - set(before) == {".codex/hooks.json.hindsight-hooks.bak", ".codex/config.toml.hindsight-hooks.bak"}


def test_codex_project_install_goes_to_the_projects_codex_folder_and_says_it_needs_trust(
    dirs: tuple[Path, Path],
) -> None:
    home, project = dirs
    done = _cli(home, project, "install", "codex", "--project")
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(_ours(json.loads((project / ".codex" / "hooks.json").read_text(encoding="utf-8")))) == sorted(
        CODEX_EVENTS
    )
    assert "hindsight" in tomllib.loads((project / ".codex" / "config.toml").read_text(encoding="utf-8"))["mcp_servers"]
    assert "trusted project" in done.stdout
    assert not (home / ".codex").exists()
    assert _cli(home, project, "uninstall", "codex", "--project").returncode == 0
    assert sorted(p.name for p in (project / ".codex").iterdir()) == [
        "config.toml.hindsight-hooks.bak",
        "hooks.json.hindsight-hooks.bak",
    ]


def test_codex_home_is_where_codex_home_points(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    home, project = dirs
    elsewhere = tmp_path / "codex-home"
    done = _cli(home, project, "install", "codex", env={"CODEX_HOME": str(elsewhere)})
    assert done.returncode == 0, done.stdout
    assert (elsewhere / "hooks.json").exists() and (elsewhere / "config.toml").exists()


def test_codex_a_foreign_hindsight_server_is_left_alone(dirs: tuple[Path, Path]) -> None:
    home, project = dirs
    (home / ".codex").mkdir()
    theirs = '[mcp_servers.hindsight]\ncommand = "their-memory"\n'
    (home / ".codex" / "config.toml").write_text(theirs, encoding="utf-8")
    done = _cli(home, project, "install", "codex")
    assert done.returncode == 0
    assert "not ours" in done.stdout
    assert (home / ".codex" / "config.toml").read_text(encoding="utf-8") == theirs
    assert _cli(home, project, "uninstall", "codex").returncode == 0
    assert (home / ".codex" / "config.toml").read_text(encoding="utf-8") == theirs


def test_codex_a_config_that_is_not_toml_is_refused_untouched(dirs: tuple[Path, Path]) -> None:
    home, project = dirs
    (home / ".codex").mkdir()
    broken = 'model = "o4\n[unclosed\n'
    (home / ".codex" / "config.toml").write_text(broken, encoding="utf-8")
    done = _cli(home, project, "install", "codex")
    assert done.returncode == 1
    assert "not valid TOML" in done.stdout
    assert (home / ".codex" / "config.toml").read_text(encoding="utf-8") == broken


# --------------------------------------------------------------------------- Gemini CLI


def test_gemini_install_writes_hooks_mcp_commands_and_policy_and_uninstall_gives_everything_back(
    dirs: tuple[Path, Path],
) -> None:
    home, project = dirs
    (home / ".gemini").mkdir()
    (home / ".gemini" / "settings.json").write_text(json.dumps(USER_GEMINI, indent=2), encoding="utf-8")
    before = _files(home)

    first = _cli(home, project, "install", "gemini")
    assert first.returncode == 0, first.stdout + first.stderr
    settings = json.loads((home / ".gemini" / "settings.json").read_text(encoding="utf-8"))
    assert sorted(_ours(settings)) == sorted(GEMINI_EVENTS)
    assert settings["theme"] == "Dracula"
    assert settings["hooks"]["BeforeTool"] == USER_GEMINI["hooks"]["BeforeTool"]
    assert settings["mcpServers"]["docs"] == {"command": "docs-server"}
    assert settings["mcpServers"]["hindsight"] == {"command": str(SCRIPT), "args": ["mcp"]}
    assert all(g["hooks"][0]["timeout"] >= 1000 for e in GEMINI_EVENTS for g in settings["hooks"][e])  # milliseconds
    commands = home / ".gemini" / "commands" / "hindsight"
    mode = tomllib.loads((commands / "mode.toml").read_text(encoding="utf-8"))
    assert "hindsight_hooks.hosts.gemini_commands mode {{args}}" in mode["prompt"]
    policy = tomllib.loads((home / ".gemini" / "policies" / "hindsight-hooks.toml").read_text(encoding="utf-8"))
    shell = [r for r in policy["rule"] if r["toolName"] == "run_shell_command"]
    assert shell[0]["commandPrefix"].endswith("-m hindsight_hooks.hosts.gemini_commands")
    assert {r["toolName"] for r in policy["rule"] if r.get("mcpName") == "hindsight"} == {
        "hindsight_retain",
        "hindsight_retain_global",
        "hindsight_recall",
        "hindsight_reflect",
    }

    after_first = _files(home)
    assert after_first[".gemini/settings.json.hindsight-hooks.bak"] == before[".gemini/settings.json"]  # the original
    again = _cli(home, project, "install", "gemini")
    assert again.returncode == 0 and "already installed" in again.stdout
    assert _files(home) == after_first

    gone = _cli(home, project, "uninstall", "gemini")
    assert gone.returncode == 0, gone.stdout + gone.stderr
    now = _files(home)
    assert set(now) - set(before) == {".gemini/settings.json.hindsight-hooks.bak"}
    assert json.loads(now[".gemini/settings.json"]) == USER_GEMINI
    assert now[".gemini/settings.json.hindsight-hooks.bak"] == after_first[".gemini/settings.json"]


def test_gemini_project_install_keeps_a_policy_per_scope(dirs: tuple[Path, Path]) -> None:
    home, project = dirs
    assert _cli(home, project, "install", "gemini").returncode == 0
    done = _cli(home, project, "install", "gemini", "--project")
    assert done.returncode == 0, done.stdout
    assert sorted(_ours(json.loads((project / ".gemini" / "settings.json").read_text(encoding="utf-8")))) == sorted(
        GEMINI_EVENTS
    )
    assert (project / ".gemini" / "commands" / "hindsight" / "status.toml").exists()
    policies = sorted(p.name for p in (home / ".gemini" / "policies").iterdir())
    assert len(policies) == 2 and "hindsight-hooks.toml" in policies
    assert _cli(home, project, "uninstall", "gemini", "--project").returncode == 0
    assert sorted(p.name for p in (home / ".gemini" / "policies").iterdir()) == ["hindsight-hooks.toml"]
    assert not (project / ".gemini" / "commands").exists()
    assert not (project / ".gemini" / "settings.json").exists()  # it held only what we added


def test_gemini_a_command_file_edited_by_the_user_is_kept(dirs: tuple[Path, Path]) -> None:
    home, project = dirs
    assert _cli(home, project, "install", "gemini").returncode == 0
    mine = home / ".gemini" / "commands" / "hindsight" / "mine.toml"
    mine.write_text('prompt = "my own"\n', encoding="utf-8")
    assert _cli(home, project, "uninstall", "gemini").returncode == 0
    assert mine.read_text(encoding="utf-8") == 'prompt = "my own"\n'
    assert [p.name for p in mine.parent.iterdir()] == ["mine.toml"]


def test_gemini_settings_that_are_not_json_are_refused_untouched(dirs: tuple[Path, Path]) -> None:
    home, project = dirs
    (home / ".gemini").mkdir()
    (home / ".gemini" / "settings.json").write_text("{ not json", encoding="utf-8")
    done = _cli(home, project, "install", "gemini")
    assert done.returncode == 1
    assert "not valid JSON" in done.stdout
    assert (home / ".gemini" / "settings.json").read_text(encoding="utf-8") == "{ not json"
    assert not (home / ".gemini" / "commands").exists()


# --------------------------------------------------------------------------- the README


@pytest.mark.parametrize("agent", ["Codex CLI", "Gemini CLI"])
def test_the_readme_line_installs_as_written(dirs: tuple[Path, Path], agent: str) -> None:
    home, project = dirs
    env = home_env(home) | {"PATH": f"{SCRIPT.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        ["bash", "-c", install_line(agent)],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    if agent == "Codex CLI":
        assert sorted(_ours(json.loads((home / ".codex" / "hooks.json").read_text(encoding="utf-8")))) == sorted(
            CODEX_EVENTS
        )
    else:
        assert sorted(_ours(json.loads((home / ".gemini" / "settings.json").read_text(encoding="utf-8")))) == sorted(
            GEMINI_EVENTS
        )


def test_what_is_installed_where_is_reported_per_scope(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from hindsight_hooks.hosts.agent_install import installed

    home, project = dirs
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    assert _cli(home, project, "install", "codex").returncode == 0
    assert _cli(home, project, "install", "gemini", "--project").returncode == 0

    codex_user, codex_project = installed("codex", project)
    assert sorted(codex_user["hooks"]) == sorted(CODEX_EVENTS) and codex_user["mcp"] is True
    assert codex_project["hooks"] == [] and codex_project["mcp"] is False

    gemini_user, gemini_project = installed("gemini", project)
    assert gemini_user["hooks"] == [] and gemini_user["commands"] == [] and gemini_user["policy"] is False
    assert sorted(gemini_project["hooks"]) == sorted(GEMINI_EVENTS) and gemini_project["mcp"] is True
    assert "mode" in gemini_project["commands"] and gemini_project["policy"] is True

    assert _cli(home, project, "uninstall", "gemini", "--project").returncode == 0
    assert installed("gemini", project)[1]["hooks"] == []
