"""docs/configuration.md#sources-and-safety: project-file restrictions, legacy aliases and parse errors; api-key rules;
resolve helpers."""

from __future__ import annotations

from pathlib import Path

import pytest

from hindsight_hooks.config import (
    MASK,
    describe_config,
    load_config,
    resolve_api_key,
    resolve_local_path,
    resolve_path,
)
from hindsight_hooks.config_model import Config

from .conftest import ConfigFiles, warning_for


@pytest.mark.parametrize(
    ("section", "key", "value"),
    [
        ("hindsight", "api_key", '"sk-from-the-repo-1234"'),
        ("hindsight", "api_key", '{source = "env", name = "STEAL"}'),
        ("hindsight", "api_key_ref", '"env:STEAL"'),
        ("local", "embedder", '"evil.module:run"'),
    ],
)
def test_project_may_not_set_secrets_or_code(files: ConfigFiles, section: str, key: str, value: str) -> None:
    files.user('[hindsight]\napi_key = "user-key"\napi_key_ref = "env:USER_VAR"\n[local]\nembedder = "good.mod:make"\n')
    project = files.project(f"[{section}]\n{key} = {value}\n")
    loaded = files.load()
    cfg = loaded.config
    assert (cfg.hindsight.api_key, cfg.hindsight.api_key_ref, cfg.local.embedder) == (
        "user-key",
        "env:USER_VAR",
        "good.mod:make",
    )
    assert warning_for(loaded, f"{section}.{key}").startswith(str(project))
    assert "project" not in set(loaded.sources.values())


def test_project_base_url_is_honoured_and_flagged(files: ConfigFiles) -> None:
    files.user('[hindsight]\nbase_url = "http://user-server:1"\n')
    files.project('[hindsight]\nbase_url = "https://repo-server:2/"\n')
    loaded = files.load()
    assert loaded.config.hindsight.base_url == "https://repo-server:2"
    assert loaded.project_base_url is True
    assert loaded.sources["hindsight.base_url"] == "project"
    assert files.load({"HINDSIGHT_BASE_URL": "http://env:3"}).project_base_url is False


@pytest.mark.parametrize(
    "bad",
    ["/etc/passwd", "../outside.jsonl", ".hindsight/../../x", "~/q.jsonl", "$HOME/q.jsonl", "${X}/q", "..", "C:/x"],
)
def test_project_paths_must_stay_inside(files: ConfigFiles, bad: str) -> None:
    project = files.project(f'[retain]\nqueue_path = "{bad}"\n[local]\npath = "{bad}"\n')
    loaded = files.load()
    assert loaded.config.retain.queue_path == ".hindsight/retain-queue.jsonl"
    assert loaded.config.local.path == "$XDG_DATA_HOME/hindsight-hooks/memory.db"
    assert warning_for(loaded, "retain.queue_path").startswith(str(project))
    warning_for(loaded, "local.path")


def test_project_relative_paths_inside_are_kept(files: ConfigFiles) -> None:
    files.project('[retain]\nqueue_path = "state/../q/queue.jsonl"\n[recall]\nlast_recall_path = "lr.json"\n')
    loaded = files.load()
    assert loaded.warnings == []
    assert loaded.config.retain.queue_path == "state/../q/queue.jsonl"
    assert loaded.config.recall.last_recall_path == "lr.json"


def test_absolute_paths_are_fine_from_user_file_and_env(files: ConfigFiles) -> None:
    files.user('[retain]\nqueue_path = "/var/q.jsonl"\n[local]\npath = "~/mem.db"\n')
    loaded = files.load({"HINDSIGHT_HOOKS_IMPORT__MANIFEST_PATH": "/tmp/m.json"})
    assert loaded.warnings == []
    assert loaded.config.retain.queue_path == "/var/q.jsonl"
    assert loaded.config.local.path == "~/mem.db"
    assert loaded.config.import_.manifest_path == "/tmp/m.json"


def test_legacy_aliases(files: ConfigFiles) -> None:
    path = files.user(
        """
        [banks.global]
        enabled = true
        bank_id = "me"
        [recall]
        global_query_preamble = "G"
        [retain]
        include_tool_results = "all"
        """
    )
    before = path.read_bytes()
    loaded = files.load()
    cfg = loaded.config
    assert (cfg.banks.user.enabled, cfg.banks.user.bank_id) == (True, "me")
    assert cfg.recall.user_query_preamble == "G"
    assert cfg.retain.content.tool_result == ["content", "error"]
    for old in ("banks.global", "recall.global_query_preamble", "retain.include_tool_results"):
        assert warning_for(loaded, old).startswith(str(path))
    assert path.read_bytes() == before  # files are never rewritten


@pytest.mark.parametrize(("legacy", "parts"), [("all", ["content", "error"]), ("errors", ["error"]), ("none", [])])
def test_include_tool_results_mapping(files: ConfigFiles, legacy: str, parts: list[str]) -> None:
    files.user(f'[retain]\ninclude_tool_results = "{legacy}"\n')
    assert files.load().config.retain.content.tool_result == parts


def test_bad_include_tool_results_is_ignored_with_warning(files: ConfigFiles) -> None:
    files.user('[retain]\ninclude_tool_results = "some"\n')
    loaded = files.load()
    assert loaded.config.retain.content.tool_result == ["error"]
    warning_for(loaded, "retain.include_tool_results")


def test_current_name_beats_legacy_name_in_same_file(files: ConfigFiles) -> None:
    files.user(
        '[banks.global]\nbank_id = "old"\n[banks.user]\nbank_id = "new"\n'
        '[retain]\ninclude_tool_results = "none"\n[retain.content]\ntool_result = ["summary"]\n'
    )
    cfg = files.load().config
    assert cfg.banks.user.bank_id == "new"
    assert cfg.retain.content.tool_result == ["summary"]


def test_legacy_alias_from_env(files: ConfigFiles) -> None:
    loaded = files.load({"HINDSIGHT_HOOKS_BANKS__GLOBAL__BANK_ID": "me"})
    assert (loaded.config.banks.user.bank_id, loaded.config.banks.user.enabled) == ("me", True)
    assert warning_for(loaded, "banks.global").startswith("HINDSIGHT_HOOKS_BANKS__GLOBAL__BANK_ID")


# --------------------------------------------------------------------------- parse errors


@pytest.mark.parametrize("which", ["user", "project"])
def test_syntax_error_names_file_line_and_column(files: ConfigFiles, which: str) -> None:
    files.user("[recall]\nmax_tokens = 5\n")
    text = '[recall]\nbudget = "low"\nmax_tokens = = 3\n'
    path = files.user(text) if which == "user" else files.project(text)
    loaded = files.load({"HINDSIGHT_HOOKS_RECALL__TOP_K": "3"})
    assert loaded.error is not None
    assert str(path) in loaded.error
    assert "line 3" in loaded.error and "column 14" in loaded.error
    assert loaded.config.enabled is False
    assert loaded.config.model_copy(update={"enabled": True}) == Config()


def test_error_at_end_of_document_has_a_position(files: ConfigFiles) -> None:
    path = files.project('[recall]\nquery_preamble = "open')
    loaded = files.load()
    assert loaded.error is not None and str(path) in loaded.error
    assert "line 2" in loaded.error and "column" in loaded.error


def test_invalid_utf8_is_a_parse_error(files: ConfigFiles) -> None:
    files.user("")
    files.user_path.write_bytes(b'a = "ok"\nb = "\xff"\n')
    loaded = files.load()
    assert loaded.error is not None
    assert "line 2, column 6" in loaded.error and str(files.user_path) in loaded.error
    assert loaded.config.enabled is False


def test_unreadable_config_path_is_an_error(files: ConfigFiles) -> None:
    files.project_path.mkdir(parents=True)  # a directory where the file should be
    loaded = files.load()
    assert loaded.error is not None and str(files.project_path) in loaded.error
    assert loaded.config.enabled is False


def test_bom_is_tolerated(files: ConfigFiles) -> None:
    files.user("")
    files.user_path.write_bytes("\ufeff[recall]\ntop_k = 2\n".encode())
    assert files.load().config.recall.top_k == 2


# --------------------------------------------------------------------------- api key


def test_api_key_env_table_becomes_ref(files: ConfigFiles) -> None:
    files.user('[hindsight]\napi_key = {source = "env", name = "MY_HS_KEY"}\n')
    loaded = files.load()
    assert loaded.config.hindsight.api_key == ""
    assert loaded.config.hindsight.api_key_ref == "env:MY_HS_KEY"
    assert loaded.sources["hindsight.api_key_ref"] == "user"
    assert resolve_api_key(loaded.config, {"MY_HS_KEY": "secret-1"}) == "secret-1"
    assert resolve_api_key(loaded.config, {}) == ""


@pytest.mark.parametrize(
    "value", ['{source = "file", name = "X"}', '{source = "env", name = "1BAD"}', '{source = "env"}', "42"]
)
def test_bad_api_key_forms_revert(files: ConfigFiles, value: str) -> None:
    files.user(f"[hindsight]\napi_key = {value}\n")
    loaded = files.load()
    assert (loaded.config.hindsight.api_key, loaded.config.hindsight.api_key_ref) == ("", "")
    warning_for(loaded, "hindsight.api_key")


@pytest.mark.parametrize(("ref", "ok"), [("env:GOOD_1", True), ("_X", True), ("env:9x", False), ("a-b", False)])
def test_api_key_ref_names(files: ConfigFiles, ref: str, ok: bool) -> None:
    files.user(f'[hindsight]\napi_key_ref = "{ref}"\n')
    loaded = files.load()
    assert loaded.config.hindsight.api_key_ref == (ref if ok else "")
    assert bool(loaded.warnings) is not ok


def test_string_api_key_is_literal_even_env_prefixed(files: ConfigFiles) -> None:
    files.user('[hindsight]\napi_key = "env:x"\n')
    cfg = files.load().config
    assert resolve_api_key(cfg, {"x": "nope"}) == "env:x"


def test_direct_key_beats_ref_and_env_key_beats_refs(files: ConfigFiles) -> None:
    files.user('[hindsight]\napi_key = "literal"\napi_key_ref = "env:REF_VAR"\n')
    env = {"REF_VAR": "from-ref"}
    assert resolve_api_key(files.load(env).config, env) == "literal"
    files.user('[hindsight]\napi_key_ref = "env:REF_VAR"\n')
    assert resolve_api_key(files.load(env).config, env) == "from-ref"
    env2 = {**env, "HINDSIGHT_API_KEY": "from-env"}
    assert resolve_api_key(files.load(env2).config, env2) == "from-env"
    env3 = {"HINDSIGHT_API_KEY_REF": "OTHER", "OTHER": "other-key"}
    files.user("")
    assert resolve_api_key(files.load(env3).config, env3) == "other-key"


# --------------------------------------------------------------------------- resolve + describe


def test_resolve_local_path(tmp_path: Path) -> None:
    cfg = Config()
    assert resolve_local_path(cfg, {"XDG_DATA_HOME": str(tmp_path / "d"), "HOME": "/h"}) == (
        tmp_path / "d" / "hindsight-hooks" / "memory.db"
    )
    assert resolve_local_path(cfg, {"HOME": str(tmp_path)}) == tmp_path / ".local/share/hindsight-hooks/memory.db"
    cfg.local.path = "~/m.db"
    assert resolve_local_path(cfg, {"HOME": str(tmp_path)}) == tmp_path / "m.db"
    cfg.local.path = "rel/m.db"
    assert resolve_local_path(cfg, {"HOME": "/h"}, cwd=tmp_path) == tmp_path / "rel/m.db"
    assert resolve_path(".hindsight/q.jsonl", tmp_path, {}) == tmp_path / ".hindsight/q.jsonl"


def test_describe_masks_secrets_only(files: ConfigFiles) -> None:
    files.user(
        '[hindsight]\napi_key = "plain-looking"\nbase_url = "http://bob:pw@host:1"\n'
        '[tools]\nretain_context = "token=abcdef123456"\n[recall]\nmax_tokens = 900\n'
    )
    loaded = load_config(files.cwd, env={**files.env, "HINDSIGHT_API_KEY_REF": "KEY_VAR"})
    rows = {key: (value, source) for key, value, source in describe_config(loaded)}
    assert rows["hindsight.api_key"] == (MASK, "user")
    assert rows["hindsight.base_url"] == (MASK, "user")
    assert rows["tools.retain_context"] == (MASK, "user")
    assert rows["recall.max_tokens"] == (900, "user")
    assert rows["hindsight.api_key_ref"] == ("KEY_VAR", "env")
    assert rows["recall.budget"] == ("mid", "default")
    assert len(rows) == len(loaded.sources)


def test_warnings_under_a_legacy_alias_quote_the_written_key(files: ConfigFiles) -> None:
    path = files.user('[global_retain]\nmode = "always"\n[banks.global]\nenabled = "yes"\n')
    loaded = files.load()
    assert f"{path}: global_retain.mode: must be one of 'explicit-only', 'router'; reverted to the default" in (
        loaded.warnings
    )
    assert any(w.startswith(f"{path}: banks.global.enabled: must be true or false") for w in loaded.warnings)
    assert loaded.config.user_retain.mode == "explicit-only"


def test_quoted_dotted_keys_are_not_paths(files: ConfigFiles) -> None:
    path = files.user('"recall.top_k" = 3\n[recall]\n"max_tokens.x" = 1\n')
    loaded = files.load()
    assert loaded.config.recall.top_k == 8
    assert sorted(loaded.warnings) == sorted(
        [f'{path}: "recall.top_k": unknown key (ignored)', f'{path}: recall."max_tokens.x": unknown key (ignored)']
    )


@pytest.mark.parametrize(
    ("doc", "key"),
    [
        ('[banks.user]\nbank_id = "hh-project-other-0123456789ab"\n', "banks.user.bank_id"),
        ("[banks.user]\nenabled = true\n", "banks.user.enabled"),
        ('[banks.user]\nretain_mission = "obey the repo"\n', "banks.user.retain_mission"),
        ('[banks.global]\nbank_id = "other"\n', "banks.global.bank_id"),
        ("[scope]\nuser_scope_tags = []\n", "scope.user_scope_tags"),
        ('[scope]\nuser_scope_tags = ["source:pi"]\n', "scope.user_scope_tags"),
        ("[scope]\ninclude_shared_observations = true\n", "scope.include_shared_observations"),
    ],
)
def test_project_may_not_choose_the_banks_we_read(files: ConfigFiles, doc: str, key: str) -> None:
    """ADR-063: the user's own bank settings stay; the project's are dropped with a warning."""
    files.user('[banks.user]\nenabled = true\nbank_id = "me"\n[scope]\nuser_scope_tags = ["source:<host>"]\n')
    project = files.project(doc)
    loaded = files.load()
    cfg = loaded.config
    assert (cfg.banks.user.enabled, cfg.banks.user.bank_id) == (True, "me")
    assert cfg.banks.user.retain_mission == ""
    assert cfg.scope.user_scope_tags == ["source:<host>"]
    assert cfg.scope.include_shared_observations is False
    warning = warning_for(loaded, key)
    assert warning.startswith(str(project)) and warning.endswith("set it in your user config")
    assert "project" not in set(loaded.sources.values())


def test_project_may_turn_the_user_bank_and_shared_observations_off(files: ConfigFiles) -> None:
    files.user('[banks.user]\nenabled = true\nbank_id = "me"\n[scope]\ninclude_shared_observations = true\n')
    files.project("[banks.user]\nenabled = false\n[scope]\ninclude_shared_observations = false\n")
    loaded = files.load()
    assert loaded.warnings == []
    assert loaded.config.banks.user.enabled is False
    assert loaded.config.scope.include_shared_observations is False
    assert loaded.sources["banks.user.enabled"] == "project"
