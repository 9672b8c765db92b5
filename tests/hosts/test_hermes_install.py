"""``hindsight-hooks install|uninstall hermes`` on real folders: the provider folder, config.yaml, exact undo."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from hindsight_hooks.hosts import hermes_install
from hindsight_hooks.hosts.hermes_config import BACKUP_SUFFIX
from hindsight_hooks.hosts.hermes_install import MANIFEST, InstallError, install, uninstall

SCRIPT = Path(sys.executable).parent / "hindsight-hooks"
USER_CONFIG = """# my Hermes settings
model:
  provider: custom
  default: scripted
memory:
  provider: hindsight
  memory_enabled: true
plugins:
  enabled:
  - disk-cleanup
"""


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HERMES_HOME": str(home)}
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=120)


def test_install_writes_folder_and_settings_then_uninstall_restores_the_bytes(tmp_path: Path) -> None:
    home = tmp_path / "hermes"
    home.mkdir()
    config = home / "config.yaml"
    config.write_text(USER_CONFIG, encoding="utf-8")
    config.chmod(0o640)

    change = install(home)
    folder = home / "plugins" / "hindsight_hooks"
    assert sorted(change.written) == ["__init__.py", "plugin.yaml"]
    init = (folder / "__init__.py").read_text(encoding="utf-8")
    assert "register_memory_provider" in init  # Hermes finds provider folders by this text
    assert yaml.safe_load((folder / "plugin.yaml").read_text(encoding="utf-8"))["name"] == "hindsight_hooks"
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    assert data["memory"] == {"provider": "hindsight_hooks", "memory_enabled": True}
    assert data["plugins"]["enabled"] == ["disk-cleanup", "hindsight-hooks"]
    assert data["model"] == {"provider": "custom", "default": "scripted"}
    assert (config.stat().st_mode & 0o777) == 0o640  # the user's permissions kept
    backup = home / ("config.yaml" + BACKUP_SUFFIX)
    assert backup.read_text(encoding="utf-8") == USER_CONFIG
    assert (backup.stat().st_mode & 0o777) == 0o600

    again = install(home)
    assert not again.changed  # idempotent: nothing written the second time

    (folder / "__pycache__").mkdir()  # Hermes imported the folder
    (folder / "__pycache__" / "__init__.cpython-311.pyc").write_bytes(b"x")
    removed = uninstall(home)
    assert removed.config is not None and removed.config.restored
    assert config.read_text(encoding="utf-8") == USER_CONFIG  # comments and all
    assert not folder.exists()
    assert not backup.exists()
    assert (home / "plugins").is_dir()


def test_uninstall_after_hermes_rewrote_the_file_takes_back_only_our_settings(tmp_path: Path) -> None:
    home = tmp_path / "hermes"
    home.mkdir()
    config = home / "config.yaml"
    config.write_text(USER_CONFIG, encoding="utf-8")
    install(home)
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    data["display"] = {"skin": "mono"}  # the user (or Hermes' migration) changed something since
    data["plugins"]["enabled"].append("spotify")
    config.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")

    change = uninstall(home)
    assert change.config is not None and change.config.changed and not change.config.restored
    after = yaml.safe_load(config.read_text(encoding="utf-8"))
    assert after["memory"] == {"provider": "hindsight", "memory_enabled": True}  # the previous provider is back
    assert after["plugins"]["enabled"] == ["disk-cleanup", "spotify"]
    assert after["display"] == {"skin": "mono"}


def test_install_into_an_empty_home_and_uninstall_leaves_nothing(tmp_path: Path) -> None:
    home = tmp_path / "fresh"
    install(home)
    config = home / "config.yaml"
    assert yaml.safe_load(config.read_text(encoding="utf-8")) == {
        "memory": {"provider": "hindsight_hooks"},
        "plugins": {"enabled": ["hindsight-hooks"]},
    }
    assert (config.stat().st_mode & 0o777) == 0o600
    uninstall(home)
    assert not config.exists()
    assert not (home / "plugins" / "hindsight_hooks").exists()


def test_semantic_undo_removes_keys_install_created(tmp_path: Path) -> None:
    home = tmp_path / "h"
    home.mkdir()
    (home / "config.yaml").write_text("model:\n  default: m\n", encoding="utf-8")
    install(home)
    config = home / "config.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "agent:\n  max_turns: 9\n", encoding="utf-8")
    uninstall(home)
    assert yaml.safe_load(config.read_text(encoding="utf-8")) == {"model": {"default": "m"}, "agent": {"max_turns": 9}}


def test_a_folder_that_is_not_ours_and_a_config_that_is_not_a_mapping_are_refused(tmp_path: Path) -> None:
    home = tmp_path / "h"
    theirs = home / "plugins" / "hindsight_hooks"
    theirs.mkdir(parents=True)
    (theirs / "__init__.py").write_text("# someone else's\n", encoding="utf-8")
    with pytest.raises(InstallError, match="not made by hindsight-hooks"):
        install(home)
    with pytest.raises(InstallError, match="not made by hindsight-hooks"):
        uninstall(home)
    assert (theirs / "__init__.py").read_text(encoding="utf-8") == "# someone else's\n"

    other = tmp_path / "h2"
    other.mkdir()
    (other / "config.yaml").write_text("- a list\n", encoding="utf-8")
    with pytest.raises(InstallError, match="not hold a YAML mapping"):
        install(other)
    (other / "config.yaml").write_text("memory: [1, 2]\n", encoding="utf-8")
    with pytest.raises(InstallError, match="`memory` is not a mapping"):
        install(other)
    (other / "config.yaml").write_text("a: [unclosed\n", encoding="utf-8")
    with pytest.raises(InstallError, match="not valid YAML"):
        install(other)
    assert (other / "config.yaml").read_text(encoding="utf-8") == "a: [unclosed\n"
    assert not (other / "plugins").exists()


def test_an_edited_file_is_kept_on_uninstall(tmp_path: Path) -> None:
    home = tmp_path / "h"
    install(home)
    init = home / "plugins" / "hindsight_hooks" / "__init__.py"
    init.write_text(init.read_text(encoding="utf-8") + "# mine\n", encoding="utf-8")
    change = uninstall(home)
    assert change.kept == ["__init__.py"]
    assert init.exists()
    assert not (home / "plugins" / "hindsight_hooks" / MANIFEST).exists()


def test_cli_install_and_uninstall_hermes(tmp_path: Path) -> None:
    home = tmp_path / "cli-home"
    first = _cli(home, "install", "hermes", "--json")
    assert first.returncode == 0, first.stderr
    answer = json.loads(first.stdout)
    assert answer["host"] == "hermes" and answer["changed"] and answer["config_changed"]
    second = _cli(home, "install", "hermes")
    assert second.returncode == 0 and "already installed" in second.stdout
    project = _cli(home, "install", "hermes", "--project")
    assert project.returncode == 2 and "no project settings" in project.stdout
    gone = _cli(home, "uninstall", "hermes")
    assert gone.returncode == 0 and "removed the memory provider" in gone.stdout
    assert not (home / "config.yaml").exists()
    none = _cli(home, "uninstall", "hermes")
    assert none.returncode == 0 and "nothing of ours" in none.stdout


def test_the_hint_names_a_hermes_python_without_us(tmp_path: Path) -> None:
    fake_python = tmp_path / "python"
    fake_python.write_text("#!/bin/sh\nexit 1\n", encoding="utf-8")
    fake_python.chmod(0o755)
    hermes = tmp_path / "hermes"
    hermes.write_text(f"#!{fake_python}\nprint('hi')\n", encoding="utf-8")
    hermes.chmod(0o755)
    hint = hermes_install.hermes_python_has_us(str(hermes))
    assert hint is not None and f"{fake_python} -m pip install hindsight-hooks" in hint
    ours = tmp_path / "ours"
    ours.write_text(f"#!{sys.executable}\n", encoding="utf-8")
    assert hermes_install.hermes_python_has_us(str(ours)) is None
