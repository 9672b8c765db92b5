"""docs/configuration.md#normalisation: a bad value reverts to its default with a warning naming the key and the
file."""

from __future__ import annotations

import pytest

from hindsight_hooks.config_model import DEFAULT_TOOL_EXCLUDE

from .conftest import ConfigFiles, warning_for


@pytest.mark.parametrize(
    ("section", "key", "toml_value", "default"),
    [
        ("recall", "enabled", '"true"', True),  # booleans must be TOML booleans
        ("recall", "enabled", "1", True),
        ("notifications", "startup", "0", True),
        ("recall", "max_tokens", "0", 800),  # positive ints must be > 0
        ("recall", "max_tokens", "-5", 800),
        ("recall", "max_tokens", "1.5", 800),
        ("recall", "max_tokens", '"800"', 800),
        ("recall", "max_tokens", "true", 800),
        ("queue", "max_attempts", "[1]", 5),
        ("recall", "budget", '"huge"', "mid"),  # enums
        ("recall", "budget", "3", "mid"),
        ("status", "style", '"Text"', "text"),
        ("recall", "types", '["world", "planet"]', ["observation"]),  # one bad member reverts the whole list
        ("recall", "roles", '["user", 1]', ["user", "assistant"]),
        ("recall", "roles", '"user"', ["user", "assistant"]),
        ("retain.strip", "message", '["usage", 3]', ["usage", "cost", "responseId"]),
        ("scope", "user_scope_tags", '["ok", ""]', ["source:<host>", "harness:<host>"]),
        ("recall", "last_recall_path", '"  "', ".hindsight/last-recall.json"),  # blank *_path reverts
        ("retain", "queue_path", '""', ".hindsight/retain-queue.jsonl"),
        ("import", "manifest_path", "5", ".hindsight/import-manifest.json"),
        ("local", "path", '""', "$XDG_DATA_HOME/hindsight-hooks/memory.db"),
        ("recall", "query_timestamp", '"yesterday"', None),  # non-ISO → unset
        ("banks.project", "retain_structured_chunk_size", "0", None),  # not a positive int → unset
        ("banks.user", "retain_structured_chunk_size", '"big"', None),
        ("hindsight", "base_url", '"ftp://x"', ""),
        ("hindsight", "timeout_ms", "-1", 30000),
        ("local", "embedder", '"not a factory"', ""),
        ("retain", "entities", '[{text = "ok"}, {text = ""}]', []),  # entities kept only if all valid
        ("retain", "entities", '[{text = "ok", kind = "x"}]', []),
        ("retain", "entities", '[{type = "person"}]', []),
        ("retain", "entities", '"Ada"', []),
        ("banks.project", "derive", '"git"', "repo"),
        ("user_retain", "mode", '"always"', "explicit-only"),
    ],
)
def test_bad_value_reverts_to_default_with_warning(
    files: ConfigFiles, section: str, key: str, toml_value: str, default: object
) -> None:
    path = files.user(f"[{section}]\n{key} = {toml_value}\n")
    loaded = files.load()
    dotted = f"{section}.{key}"
    assert files.value(loaded, dotted) == default
    assert loaded.sources[dotted] == "default"
    warning = warning_for(loaded, dotted)
    assert warning.startswith(f"{path}: {dotted}: ")
    assert len([w for w in loaded.warnings if dotted in w]) == 1


def test_bad_value_reverts_to_default_not_to_lower_layer(files: ConfigFiles) -> None:
    files.user("[recall]\nmax_tokens = 500\n")
    project = files.project('[recall]\nmax_tokens = "many"\n')
    loaded = files.load()
    assert loaded.config.recall.max_tokens == 800
    assert warning_for(loaded, "recall.max_tokens").startswith(str(project))


def test_warnings_do_not_echo_values(files: ConfigFiles) -> None:
    files.user('[recall]\nmax_tokens = "sk-supersecretvalue123"\n[hindsight]\ntokn = "sk-othersecret4567"\n')
    loaded = files.load()
    assert len(loaded.warnings) == 2
    assert not any("secret" in w for w in loaded.warnings)


def test_flush_interval_is_clamped_at_zero(files: ConfigFiles) -> None:
    files.user("[retain]\nflush_interval_ms = -250\n")
    loaded = files.load()
    assert loaded.config.retain.flush_interval_ms == 0
    assert loaded.warnings == []
    files.user("[retain]\nflush_interval_ms = 1500\n")
    assert files.load().config.retain.flush_interval_ms == 1500
    files.user('[retain]\nflush_interval_ms = "soon"\n')
    loaded = files.load()
    assert loaded.config.retain.flush_interval_ms == 0
    warning_for(loaded, "retain.flush_interval_ms")


def test_good_values_are_kept(files: ConfigFiles) -> None:
    files.user(
        """
        enabled = false
        backend = "local"
        [recall]
        types = []
        roles = ["tool", "system"]
        query_timestamp = "2024-02-03T04:05:06+00:00"
        [banks.project]
        retain_structured_chunk_size = 4000
        retain_extraction_mode = "chunks"
        [retain]
        entities = [{text = "Ada", type = "person"}, {text = "Rust"}]
        [local]
        embedder = "my_pkg.embed:make"
        """
    )
    loaded = files.load()
    cfg = loaded.config
    assert loaded.warnings == []
    assert cfg.enabled is False and cfg.backend == "local"
    assert cfg.recall.types == [] and cfg.recall.roles == ["tool", "system"]
    assert cfg.recall.query_timestamp == "2024-02-03T04:05:06+00:00"
    assert cfg.banks.project.retain_structured_chunk_size == 4000
    assert cfg.banks.project.retain_extraction_mode == "chunks"
    assert [(e.text, e.type) for e in cfg.retain.entities] == [("Ada", "person"), ("Rust", None)]
    assert cfg.local.embedder == "my_pkg.embed:make"


def test_toml_datetime_is_accepted_as_query_timestamp(files: ConfigFiles) -> None:
    files.user("[recall]\nquery_timestamp = 2024-02-03T04:05:06Z\n")
    loaded = files.load()
    assert loaded.config.recall.query_timestamp == "2024-02-03T04:05:06+00:00"
    assert loaded.warnings == []


def test_empty_query_timestamp_means_unset_without_warning(files: ConfigFiles) -> None:
    files.user('[recall]\nquery_timestamp = ""\n')
    loaded = files.load()
    assert loaded.config.recall.query_timestamp is None
    assert loaded.warnings == []


@pytest.mark.parametrize(
    "scopes",
    [
        '[["repo:{repoKey}"], []]',  # empty group
        '[["repo:{repoKey}", ""]]',  # empty value
        '[["repo:{repo}"]]',  # unknown placeholder
        '[["repo:{repoKey"]]',  # stray brace
        '["repo:{repoKey}"]',  # not a list of lists
        '"repo"',
        "[[1]]",
    ],
)
def test_bad_observation_scopes_revert(files: ConfigFiles, scopes: str) -> None:
    files.user(f"[observations]\nscopes = {scopes}\n")
    loaded = files.load()
    assert loaded.config.observations.scopes == [["harness:{hostName}"], ["repo:{repoKey}"]]
    warning_for(loaded, "observations.scopes")


def test_good_observation_scopes_with_every_placeholder(files: ConfigFiles) -> None:
    scopes = [
        ["repo:{repoKey}", "s:{sessionId}"],
        ["c:{cwdHash}", "p:{projectBankId}", "b:{bankId}", "h:{hostName}"],
        ["plain"],
    ]
    files.user(f"[observations]\nscopes = {scopes!r}\n".replace("'", '"'))
    loaded = files.load()
    assert loaded.warnings == []
    assert loaded.config.observations.scopes == scopes


def test_tool_filter_rules(files: ConfigFiles) -> None:
    default_call = list(DEFAULT_TOOL_EXCLUDE)
    # include only: kept, exclude keeps its default (tables deep-merge).
    files.user('[retain.tool_filter.tool_call]\ninclude = ["bash"]\n')
    loaded = files.load()
    assert loaded.config.retain.tool_filter.tool_call.include == ["bash"]
    assert loaded.config.retain.tool_filter.tool_call.exclude == default_call
    assert loaded.warnings == []
    # exclude not a string list → the whole filter reverts, even the valid include.
    files.user('[retain.tool_filter.tool_call]\ninclude = ["bash"]\nexclude = "read"\n')
    loaded = files.load()
    assert loaded.config.retain.tool_filter.tool_call.include is None
    assert loaded.config.retain.tool_filter.tool_call.exclude == default_call
    warning_for(loaded, "retain.tool_filter.tool_call")
    # both absent → reverts.
    files.user("[retain.tool_filter.tool_result]\n")
    loaded = files.load()
    assert loaded.config.retain.tool_filter.tool_result.exclude is not None
    warning_for(loaded, "retain.tool_filter.tool_result")
    # an override in a higher layer is reverted too.
    files.user('[retain.tool_filter.tool_result]\nexclude = ["x"]\n')
    files.project("[retain.tool_filter.tool_result]\ninclude = [1]\n")
    loaded = files.load()
    assert "read" in (loaded.config.retain.tool_filter.tool_result.exclude or [])
    assert loaded.sources["retain.tool_filter.tool_result.exclude"] == "default"


def test_unknown_keys_warn_once_each(files: ConfigFiles) -> None:
    path = files.user(
        "nope = 1\n[recall]\nmax_tokenz = 5\n[mystery]\na = 1\nb = 2\n"
        "[retain.tool_filter.tool_call]\nexclude = []\nonly = 1\n"
    )
    loaded = files.load()
    assert sorted(loaded.warnings) == sorted(
        f"{path}: {key}: unknown key (ignored)"
        for key in ("nope", "recall.max_tokenz", "mystery", "retain.tool_filter.tool_call.only")
    )
    assert loaded.config.retain.tool_filter.tool_call.exclude == []


def test_table_given_a_scalar_reverts_its_keys(files: ConfigFiles) -> None:
    files.user("[recall]\nmax_tokens = 5\n")
    files.project("recall = 3\n")
    loaded = files.load()
    assert loaded.config.recall.max_tokens == 800
    warning_for(loaded, "recall")


def test_project_query_preamble_falls_back_to_explicit_query_preamble(files: ConfigFiles) -> None:
    files.user('[recall]\nquery_preamble = "Generic."\n')
    loaded = files.load()
    assert loaded.config.recall.project_query_preamble == "Generic."
    assert loaded.config.recall.user_query_preamble == "Generic."
    assert loaded.sources["recall.project_query_preamble"] == "user"
    files.project('[recall]\nproject_query_preamble = "Proj."\n')
    loaded = files.load()
    assert loaded.config.recall.project_query_preamble == "Proj."
    assert loaded.config.recall.user_query_preamble == "Generic."


def test_preambles_keep_defaults_without_explicit_values(files: ConfigFiles) -> None:
    cfg = files.load().config
    assert cfg.recall.project_query_preamble.startswith("Project memory lookup")
    assert cfg.recall.user_query_preamble.startswith("User memory lookup")


def test_user_query_preamble_order(files: ConfigFiles) -> None:
    files.user('[recall]\nquery_preamble = "Q"\nglobal_query_preamble = "G"\n')
    assert files.load().config.recall.user_query_preamble == "G"
    files.user('[recall]\nquery_preamble = "Q"\nglobal_query_preamble = "G"\nuser_query_preamble = "U"\n')
    assert files.load().config.recall.user_query_preamble == "U"


def test_user_retain_mode_falls_back_to_global_retain(files: ConfigFiles) -> None:
    path = files.user('[global_retain]\nmode = "router"\n')
    loaded = files.load()
    assert loaded.config.user_retain.mode == "router"
    assert loaded.sources["user_retain.mode"] == "user"
    assert warning_for(loaded, "global_retain").startswith(str(path))
    files.user('[global_retain]\nmode = "router"\n[user_retain]\nmode = "explicit-only"\n')
    assert files.load().config.user_retain.mode == "explicit-only"


def test_project_bank_id_implies_manual(files: ConfigFiles) -> None:
    files.user('[banks.project]\nbank_id = "  fixed  "\nderive = "repo"\n')
    loaded = files.load()
    assert loaded.config.banks.project.bank_id == "fixed"
    assert loaded.config.banks.project.derive == "manual"
    assert loaded.sources["banks.project.derive"] == "user"


def test_manual_derive_without_bank_id_reverts(files: ConfigFiles) -> None:
    files.user('[banks.project]\nderive = "manual"\n')
    loaded = files.load()
    assert loaded.config.banks.project.derive == "repo"
    warning_for(loaded, "banks.project.derive")


def test_user_bank_needs_enabled_and_bank_id(files: ConfigFiles) -> None:
    files.user('[banks.user]\nbank_id = "me"\n')
    assert files.load().config.banks.user.enabled is False  # id alone does not enable it
    files.user("[banks.user]\nenabled = true\n")
    loaded = files.load()
    assert loaded.config.banks.user.enabled is False
    warning_for(loaded, "banks.user.enabled")
    files.user('[banks.user]\nenabled = true\nbank_id = "  "\n')
    assert files.load().config.banks.user.enabled is False
    files.user('[banks.user]\nenabled = true\nbank_id = "me"\n')
    loaded = files.load()
    assert loaded.config.banks.user.enabled is True
    assert loaded.warnings == []
