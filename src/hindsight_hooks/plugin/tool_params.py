"""Pydantic parameter models of the model-facing tools (BEHAVIOUR.md §11).

snake_case names with camelCase aliases accepted; the JSON schemas the host gives the model
come from these models, so a field's description is what the model reads.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

TagsMatch = Literal["any", "all", "any_strict", "all_strict", "exact"]
Budget = Literal["low", "mid", "high"]
MemoryType = Literal["world", "experience", "observation"]


def _alias(snake: str) -> Any:
    parts = snake.split("_")
    camel = parts[0] + "".join(p.title() for p in parts[1:])
    return Field(default=None, validation_alias=AliasChoices(snake, camel))


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class RetainItem(_Params):
    content: str = Field(description="One self-contained memory: who/what/when/why.")
    context: str | None = Field(default=None, description="Optional provenance for this item.")


class EntityParam(_Params):
    text: str = Field(min_length=1)
    type: str | None = None


class RetainGlobalParams(_Params):
    items: list[RetainItem] = Field(min_length=1, description="One or more memories to store.")
    tags: list[str] | None = None
    entities: list[EntityParam] | None = None
    document_id: str | None = _alias("document_id")
    timestamp: str | None = Field(default=None, description='ISO 8601 time, or "unset".')
    metadata: dict[str, str] | None = None
    update_mode: Literal["append", "replace"] | None = _alias("update_mode")
    observation_scopes: list[list[str]] | Literal["per_tag", "combined", "all_combinations", "shared"] | None = _alias(
        "observation_scopes"
    )
    async_: bool | None = Field(default=None, validation_alias=AliasChoices("async", "async_"))


class RetainParams(RetainGlobalParams):
    bank: Literal["project", "user", "global"] = "project"


class _ScopedQuery(_Params):
    tags: list[str] | None = None
    tags_match: TagsMatch | None = _alias("tags_match")
    tag_groups: list[dict[str, Any]] | None = _alias("tag_groups")


class RecallParams(_ScopedQuery):
    query: str = Field(min_length=1, description="Natural-language search query, passed unchanged.")
    bank: Literal["all", "project", "user", "global"] = "all"
    types: list[MemoryType] | None = None
    budget: Budget | None = None
    max_tokens: int | None = _alias("max_tokens")
    query_timestamp: str | None = _alias("query_timestamp")
    include_source_facts: bool | None = _alias("include_source_facts")
    max_source_facts_tokens: int | None = _alias("max_source_facts_tokens")

    @field_validator("max_tokens")
    @classmethod
    def _non_negative(cls, v: int | None) -> int | None:
        if v is not None and v < 0:
            raise ValueError("max_tokens must be >= 0")
        return v


class ReflectParams(_ScopedQuery):
    query: str = Field(min_length=1, description="Question to answer from long-term memory.")
    context: str | None = None
    bank: Literal["project", "user", "global"] = "project"
    budget: Budget | None = None
    max_tokens: int | None = _alias("max_tokens")
    response_schema: dict[str, Any] | None = _alias("response_schema")
    include_facts: bool | None = _alias("include_facts")


class MemoryEditParams(_Params):
    op: Literal["update", "forget", "invalidate"]
    id: str = Field(min_length=1, description="A memory id returned by hindsight_recall.")
    content: str | None = None
    importance: float | None = None
    replacement_id: str | None = _alias("replacement_id")
