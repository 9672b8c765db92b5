"""docs/configuration.md#sources-and-safety/docs/configuration.md#environment: sources, precedence, deep merge, env
parsing."""

from __future__ import annotations

from pathlib import Path

import pytest

from hindsight_hooks.config import config_keys, default_user_config_path, load_config
from hindsight_hooks.config_model import Config, dump_config

from .conftest import ConfigFiles, warning_for


def test_no_files_gives_defaults_with_default_sources(files: ConfigFiles) -> None:
    loaded = files.load()
    assert loaded.config == Config()
    assert loaded.warnings == []
    assert loaded.error is None
    assert loaded.files == {}
    assert set(loaded.sources) == set(config_keys())
    assert set(loaded.sources.values()) == {"default"}
    assert loaded.project_base_url is False


def test_precedence_defaults_user_project_env(files: ConfigFiles) -> None:
    files.user('[recall]\nmax_tokens = 100\ntop_k = 3\nbudget = "low"\n')
    files.project("[recall]\nmax_tokens = 200\ntop_k = 4\n")
    loaded = files.load({"HINDSIGHT_HOOKS_RECALL__MAX_TOKENS": "300"})
    recall = loaded.config.recall
    assert (recall.max_tokens, recall.top_k, recall.budget, recall.context_turns) == (300, 4, "low", 2)
    assert loaded.sources["recall.max_tokens"] == "env"
    assert loaded.sources["recall.top_k"] == "project"
    assert loaded.sources["recall.budget"] == "user"
    assert loaded.sources["recall.context_turns"] == "default"
    assert loaded.files == {"user": files.user_path, "project": files.project_path}


def test_tables_deep_merge(files: ConfigFiles) -> None:
    files.user('[banks.project]\nretain_mission = "U"\n[retain.content]\nuser = []\n')
    files.project('[banks.project]\nreflect_mission = "P"\n[retain.content]\nassistant = ["text"]\n')
    cfg = files.load().config
    assert cfg.banks.project.retain_mission == "U"
    assert cfg.banks.project.reflect_mission == "P"
    assert cfg.retain.content.user == []
    assert cfg.retain.content.assistant == ["text"]
    assert cfg.retain.content.tool_result == ["error"]


def test_user_file_location_follows_xdg_and_home(tmp_path: Path) -> None:
    assert default_user_config_path({"XDG_CONFIG_HOME": str(tmp_path / "x"), "HOME": "/nowhere"}) == (
        tmp_path / "x" / "hindsight-hooks" / "config.toml"
    )
    # Unset or relative XDG_CONFIG_HOME falls back to ~/.config (XDG spec).
    for env in ({"HOME": str(tmp_path)}, {"HOME": str(tmp_path), "XDG_CONFIG_HOME": "rel"}):
        assert default_user_config_path(env) == tmp_path / ".config" / "hindsight-hooks" / "config.toml"


def test_user_file_is_read_from_home_config_without_xdg(tmp_path: Path) -> None:
    path = tmp_path / ".config" / "hindsight-hooks" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text("[status]\nmax_length = 40\n")
    loaded = load_config(tmp_path / "proj", env={"HOME": str(tmp_path)})
    assert loaded.config.status.max_length == 40
    assert loaded.files == {"user": path}


def test_explicit_user_config_path_wins_over_env(files: ConfigFiles, tmp_path: Path) -> None:
    files.user("[status]\nmax_length = 40\n")
    other = tmp_path / "other.toml"
    other.write_text("[status]\nmax_length = 50\n")
    loaded = load_config(files.cwd, env=files.env, user_config_path=other)
    assert loaded.config.status.max_length == 50
    assert loaded.files["user"] == other


def test_env_short_vars(files: ConfigFiles) -> None:
    loaded = files.load(
        {"HINDSIGHT_BASE_URL": "http://h:1/", "HINDSIGHT_API_KEY": "k1", "HINDSIGHT_API_KEY_REF": "MY_VAR"}
    )
    h = loaded.config.hindsight
    assert (h.base_url, h.api_key, h.api_key_ref) == ("http://h:1", "k1", "MY_VAR")
    assert {loaded.sources[f"hindsight.{k}"] for k in ("base_url", "api_key", "api_key_ref")} == {"env"}


def test_empty_short_env_vars_count_as_unset(files: ConfigFiles) -> None:
    files.user('[hindsight]\nbase_url = "http://user:2"\n')
    loaded = files.load({"HINDSIGHT_BASE_URL": "", "HINDSIGHT_API_KEY": ""})
    assert loaded.config.hindsight.base_url == "http://user:2"
    assert loaded.sources["hindsight.base_url"] == "user"


def test_env_values_parse_as_toml_with_string_fallback(files: ConfigFiles) -> None:
    loaded = files.load(
        {
            "HINDSIGHT_HOOKS_RECALL__MAX_TOKENS": "123",
            "HINDSIGHT_HOOKS_RECALL__TYPES": '["world", "experience"]',
            "HINDSIGHT_HOOKS_RECALL__BUDGET": "high",  # not TOML → the string
            "HINDSIGHT_HOOKS_RECALL__QUERY_PREAMBLE": '"quoted"',  # a TOML string → unquoted
            "HINDSIGHT_HOOKS_BANKS__PROJECT__BANK_ID": "123",  # string key: stays the text "123"
            "HINDSIGHT_HOOKS_RECALL__QUERY_TIMESTAMP": "2024-05-01T10:00:00Z",
            "HINDSIGHT_HOOKS_RETAIN__ASYNC": "false",
            "HINDSIGHT_HOOKS_IMPORT__MODE": "raw",
            "HINDSIGHT_HOOKS_RETAIN__ENTITIES": '[{text = "Ada", type = "person"}]',
            "HINDSIGHT_HOOKS_OBSERVATIONS": "{enabled = false}",
        }
    )
    cfg = loaded.config
    assert loaded.warnings == []
    assert cfg.recall.max_tokens == 123
    assert cfg.recall.types == ["world", "experience"]
    assert cfg.recall.budget == "high"
    assert cfg.recall.query_preamble == "quoted"
    assert cfg.banks.project.bank_id == "123"
    assert cfg.recall.query_timestamp == "2024-05-01T10:00:00Z"
    assert cfg.retain.async_ is False
    assert cfg.import_.mode == "raw"
    assert [(e.text, e.type) for e in cfg.retain.entities] == [("Ada", "person")]
    assert cfg.observations.enabled is False
    assert loaded.sources["observations.enabled"] == "env"


def test_env_booleans_accept_words(files: ConfigFiles) -> None:
    for raw, expected in [("1", True), ("0", False), ("yes", True), ("No", False), ("on", True), ("OFF", False)]:
        loaded = files.load({"HINDSIGHT_HOOKS_RECALL__STORE_LAST_RECALL": raw, "HINDSIGHT_HOOKS_ENABLED": raw})
        assert loaded.config.recall.store_last_recall is expected, raw
        assert loaded.config.enabled is expected, raw
        assert loaded.warnings == []


def test_env_bad_value_warns_naming_var_and_key(files: ConfigFiles) -> None:
    loaded = files.load({"HINDSIGHT_HOOKS_RECALL__MAX_TOKENS": "lots", "HINDSIGHT_HOOKS_ENABLED": "maybe"})
    assert loaded.config.recall.max_tokens == 800
    assert loaded.config.enabled is True
    assert warning_for(loaded, "recall.max_tokens").startswith("HINDSIGHT_HOOKS_RECALL__MAX_TOKENS: ")
    assert warning_for(loaded, "enabled").startswith("HINDSIGHT_HOOKS_ENABLED: ")


def test_env_unknown_key_warns(files: ConfigFiles) -> None:
    loaded = files.load({"HINDSIGHT_HOOKS_RECALL__NOPE": "1", "HINDSIGHT_HOOKS_A____B": "1"})
    assert warning_for(loaded, "recall.nope").startswith("HINDSIGHT_HOOKS_RECALL__NOPE: ")
    assert any(w.startswith("HINDSIGHT_HOOKS_A____B: ") for w in loaded.warnings)


def test_env_project_bank_id_sets_manual_and_user_bank_id_enables(files: ConfigFiles) -> None:
    files.user('[banks.project]\nderive = "cwd"\n')
    loaded = files.load(
        {"HINDSIGHT_HOOKS_BANKS__PROJECT__BANK_ID": "proj-x", "HINDSIGHT_HOOKS_BANKS__USER__BANK_ID": "me"}
    )
    banks = loaded.config.banks
    assert (banks.project.bank_id, banks.project.derive) == ("proj-x", "manual")
    assert (banks.user.bank_id, banks.user.enabled) == ("me", True)
    assert loaded.sources["banks.user.enabled"] == "env"
    assert loaded.sources["banks.project.derive"] == "env"


def test_env_explicit_user_enabled_false_is_respected(files: ConfigFiles) -> None:
    loaded = files.load({"HINDSIGHT_HOOKS_BANKS__USER__BANK_ID": "me", "HINDSIGHT_HOOKS_BANKS__USER__ENABLED": "0"})
    assert loaded.config.banks.user.enabled is False
    assert loaded.warnings == []


def test_env_hooks_var_beats_short_var(files: ConfigFiles) -> None:
    loaded = files.load({"HINDSIGHT_BASE_URL": "http://a", "HINDSIGHT_HOOKS_HINDSIGHT__BASE_URL": "http://b"})
    assert loaded.config.hindsight.base_url == "http://b"


def test_env_mapping_is_used_instead_of_os_environ(files: ConfigFiles, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HINDSIGHT_HOOKS_RECALL__TOP_K", "5")
    assert files.load().config.recall.top_k == 8


def test_aliased_names_load_and_dump(files: ConfigFiles) -> None:
    files.user('[retain]\nasync = false\n[import]\nmode = "forensic"\nresume = false\n')
    loaded = files.load()
    assert loaded.config.retain.async_ is False
    assert loaded.config.import_.mode == "forensic"
    dumped = dump_config(loaded.config)
    assert dumped["retain"]["async"] is False
    assert dumped["import"]["resume"] is False
    assert loaded.sources["retain.async"] == "user"
