"""Shared helpers: real config files under tmp_path and an explicit env (never the real home)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from hindsight_hooks.config import LoadedConfig, flatten_config, load_config


@dataclass
class ConfigFiles:
    root: Path
    env: dict[str, str] = field(default_factory=dict)

    @property
    def cwd(self) -> Path:
        return self.root / "project"

    @property
    def user_path(self) -> Path:
        return self.root / "xdg" / "hindsight-hooks" / "config.toml"

    @property
    def project_path(self) -> Path:
        return self.cwd / ".hindsight" / "config.toml"

    def user(self, text: str) -> Path:
        self.user_path.parent.mkdir(parents=True, exist_ok=True)
        self.user_path.write_text(text, encoding="utf-8")
        return self.user_path

    def project(self, text: str) -> Path:
        self.project_path.parent.mkdir(parents=True, exist_ok=True)
        self.project_path.write_text(text, encoding="utf-8")
        return self.project_path

    def load(self, env: Mapping[str, str] | None = None) -> LoadedConfig:
        merged = {**self.env, **(env or {})}
        return load_config(self.cwd, env=merged)

    def value(self, loaded: LoadedConfig, key: str) -> object:
        return flatten_config(loaded.config)[key]


@pytest.fixture
def files(tmp_path: Path) -> ConfigFiles:
    root = tmp_path
    (root / "project").mkdir()
    (root / "home").mkdir()
    return ConfigFiles(root, {"HOME": str(root / "home"), "XDG_CONFIG_HOME": str(root / "xdg")})


def warning_for(loaded: LoadedConfig, key: str) -> str:
    """The one warning that names ``key`` (fails when there is none)."""
    hits = [w for w in loaded.warnings if f": {key}:" in w]
    assert hits, f"no warning names {key}: {loaded.warnings}"
    return hits[0]
