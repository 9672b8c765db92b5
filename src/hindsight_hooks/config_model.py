"""The configuration schema: every key of docs/configuration.md#keys with its default.

These models hold *normalised* values only; ``config.py`` turns files and env into them,
reverting any bad value to its default with a warning. Keys are the snake_case forms of
the reference config.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_TOOL_EXCLUDE = [
    "hindsight_retain",
    "hindsight_retain_global",
    "hindsight_recall",
    "hindsight_reflect",
    "memory_edit",
]


AssistantPart = Literal["text", "thinking", "toolCall"]
ToolResultPart = Literal["error", "summary", "content"]
MemoryType = Literal["world", "experience", "observation"]


RecallRole = Literal["user", "assistant", "tool", "system"]


def _recall_roles() -> list[RecallRole]:
    return ["user", "assistant"]


def _user_parts() -> list[Literal["text"]]:
    return ["text"]


def _assistant_parts() -> list[AssistantPart]:
    return ["text", "toolCall"]


def _tool_result_parts() -> list[ToolResultPart]:
    return ["error"]


def _recall_types() -> list[MemoryType]:
    return ["observation"]


def _tool_recall_types() -> list[MemoryType]:
    return ["world", "experience"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=False)


class HindsightConfig(_Section):
    base_url: str = ""
    api_key: str = ""
    api_key_ref: str = ""
    timeout_ms: int = 30000


class BankConfig(_Section):
    enabled: bool = True
    derive: Literal["repo", "cwd", "manual"] = "repo"
    bank_id: str = ""
    retain_mission: str = ""
    reflect_mission: str = ""
    observations_mission: str = ""
    retain_extraction_mode: Literal["concise", "verbose", "custom", "verbatim", "chunks"] = "concise"
    retain_structured_chunk_size: int | None = None


def _user_bank() -> BankConfig:
    return BankConfig(enabled=False)


class BanksConfig(_Section):
    project: BankConfig = Field(default_factory=BankConfig)
    user: BankConfig = Field(default_factory=_user_bank)


class ScopeConfig(_Section):
    user_scope_tags: list[str] = Field(default_factory=lambda: ["source:<host>", "harness:<host>"])
    include_shared_observations: bool = False


class RecallConfig(_Section):
    enabled: bool = True
    budget: Literal["low", "mid", "high"] = "mid"
    max_tokens: int = 800
    types: list[MemoryType] = Field(default_factory=_recall_types)
    context_turns: int = 2
    roles: list[RecallRole] = Field(default_factory=_recall_roles)
    max_query_chars: int = 800
    query_preamble: str = "Coding task memory lookup."
    project_query_preamble: str = (
        "Project memory lookup for current repo architecture, tasks, bugs, decisions, and constraints."
    )
    user_query_preamble: str = (
        "User memory lookup for durable user preferences, recurring workflows, coding habits, "
        "and cross-project context."
    )
    include_date_in_query: bool = False
    include_repo_hints_in_query: bool = True
    query_timestamp: str | None = None
    include_source_facts: bool = False
    max_source_facts_tokens: int = 4096
    top_k: int = 8
    timeout_ms: int = 40000
    failure_cooldown_ms: int = 30000
    cache_ttl_ms: int = 60000
    injection_position: Literal["append", "prepend"] = "append"
    store_last_recall: bool = False
    store_last_recall_failures: bool = False
    last_recall_path: str = ".hindsight/last-recall.json"


class ObservationsConfig(_Section):
    enabled: bool = True
    scopes: list[list[str]] = Field(default_factory=lambda: [["harness:{hostName}"], ["repo:{repoKey}"]])


class UserRetainConfig(_Section):
    mode: Literal["explicit-only", "router"] = "explicit-only"


class RetainContentConfig(_Section):
    user: list[Literal["text"]] = Field(default_factory=_user_parts)
    assistant: list[AssistantPart] = Field(default_factory=_assistant_parts)
    tool_result: list[ToolResultPart] = Field(default_factory=_tool_result_parts)


class ToolFilter(_Section):
    include: list[str] | None = None
    exclude: list[str] | None = None

    def allows(self, name: str) -> bool:
        """A name passes when ``include`` is absent or lists it, and ``exclude`` does not."""
        if self.include is not None and name not in self.include:
            return False
        return not (self.exclude is not None and name in self.exclude)


class RetainToolFilterConfig(_Section):
    tool_call: ToolFilter = Field(default_factory=lambda: ToolFilter(exclude=list(DEFAULT_TOOL_EXCLUDE)))
    tool_result: ToolFilter = Field(
        default_factory=lambda: ToolFilter(exclude=[*DEFAULT_TOOL_EXCLUDE, "read", "grep", "find", "find_files", "ls"])
    )


class RetainStripConfig(_Section):
    message: list[str] = Field(default_factory=lambda: ["usage", "cost", "responseId"])
    top_level: list[str] = Field(default_factory=lambda: ["id", "parentId"])


class Entity(_Section):
    text: str
    type: str | None = None


class RetainConfig(_Section):
    enabled: bool = True
    async_: bool = Field(default=True, alias="async")
    update_mode: Literal["append", "replace"] = "append"
    delivery: Literal["immediate", "coalesced"] = "immediate"
    redact_secrets: bool = True
    entities: list[Entity] = Field(default_factory=list)
    queue_path: str = ".hindsight/retain-queue.jsonl"
    post_retain_reflect: bool = False
    content: RetainContentConfig = Field(default_factory=RetainContentConfig)
    tool_filter: RetainToolFilterConfig = Field(default_factory=RetainToolFilterConfig)
    strip: RetainStripConfig = Field(default_factory=RetainStripConfig)
    flush_timeout_ms: int = 10000
    flush_interval_ms: int = 0
    periodic_flush_max_jobs: int = 1
    periodic_flush_timeout_ms: int = 2000
    shutdown_flush_max_jobs: int = 10
    shutdown_flush_timeout_ms: int = 2000

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    def effective_flush_interval_ms(self) -> int:
        """``0`` is off, except that coalesced delivery with ``0`` flushes every 60 s."""
        if self.flush_interval_ms == 0 and self.delivery == "coalesced":
            return 60000
        return self.flush_interval_ms


class QueueConfig(_Section):
    max_attempts: int = 5
    retry_base_ms: int = 2000
    retry_max_ms: int = 600000
    dead_letter_after_ms: int = 604800000
    claim_ttl_ms: int = 120000
    batch_max_items: int = 16
    batch_max_bytes: int = 524288
    coalesce_max_age_ms: int = 60000
    max_active_bytes: int = 67108864
    lock_timeout_ms: int = 5000
    lock_retry_ms: int = 25
    lock_stale_ms: int = 30000


class ToolsConfig(_Section):
    recall_budget: Literal["low", "mid", "high"] = "mid"
    recall_max_tokens: int = 1024
    recall_types: list[MemoryType] = Field(default_factory=_tool_recall_types)
    retain_context: str = ""


class MentalModelsConfig(_Section):
    enabled: bool = True
    auto_seed: bool = True
    refresh_interval_ms: int = 300000
    max_render_chars: int = 16000


class ImportConfig(_Section):
    mode: Literal["curated", "raw", "forensic"] = "curated"
    quality_profile: Literal["compatible", "strict"] = "compatible"
    turns_per_document: int = 12
    max_document_bytes: int = 80000
    include_branches: Literal["current-only", "all-leaves"] = "current-only"
    tool_results: Literal["errors-only", "summary", "content"] = "errors-only"
    tool_result_summary_max_chars: int = 500
    replace_existing_imported_docs: bool = True
    manifest_path: str = ".hindsight/import-manifest.json"
    checkpoint_path: str = ".hindsight/import-checkpoint.json"
    resume: bool = True


class StatusConfig(_Section):
    style: Literal["off", "text", "emoji", "nerdfont"] = "text"
    detail: Literal["minimal", "project", "activity", "verbose"] = "activity"
    max_length: int = 24
    show_activity: bool = True


class NotificationsConfig(_Section):
    startup: bool = True
    recall: bool = False
    retain: bool = False


class LocalConfig(_Section):
    path: str = "$XDG_DATA_HOME/hindsight-hooks/memory.db"
    recall_limit: int = 8
    embedder: str = ""
    # auto: hybrid lexical + vector recall when the [semantic] extra is installed (ADR 116); off: lexical.
    semantic: Literal["auto", "off"] = "auto"


class Config(_Section):
    """The whole effective configuration."""

    enabled: bool = True
    backend: Literal["auto", "hindsight", "local", "off"] = "auto"
    hindsight: HindsightConfig = Field(default_factory=HindsightConfig)
    banks: BanksConfig = Field(default_factory=BanksConfig)
    scope: ScopeConfig = Field(default_factory=ScopeConfig)
    recall: RecallConfig = Field(default_factory=RecallConfig)
    observations: ObservationsConfig = Field(default_factory=ObservationsConfig)
    user_retain: UserRetainConfig = Field(default_factory=UserRetainConfig)
    retain: RetainConfig = Field(default_factory=RetainConfig)
    queue: QueueConfig = Field(default_factory=QueueConfig)
    tools: ToolsConfig = Field(default_factory=ToolsConfig)
    mental_models: MentalModelsConfig = Field(default_factory=MentalModelsConfig)
    import_: ImportConfig = Field(default_factory=ImportConfig, alias="import")
    status: StatusConfig = Field(default_factory=StatusConfig)
    notifications: NotificationsConfig = Field(default_factory=NotificationsConfig)
    local: LocalConfig = Field(default_factory=LocalConfig)

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    def effective_backend(self) -> Literal["hindsight", "local", "off"]:
        """``auto`` → hindsight when a base URL is configured, else local."""
        if not self.enabled or self.backend == "off":
            return "off"
        if self.backend == "auto":
            return "hindsight" if self.hindsight.base_url else "local"
        return self.backend

    def hindsight_base_url(self) -> str:
        """The base URL with trailing ``/`` stripped; empty with backend=hindsight → localhost:8888."""
        url = self.hindsight.base_url.rstrip("/")
        return url or "http://localhost:8888"


def default_config() -> Config:
    return Config()


def dump_config(cfg: Config) -> dict[str, Any]:
    """Plain dict with the TOML key names (``async``, ``import``)."""
    return cfg.model_dump(by_alias=True)
