"""Pydantic parameter models of the model-facing tools (docs/tools.md).

snake_case names with camelCase aliases accepted; the JSON schemas the host gives the model
come from these models, so a field's description is what the model reads. Validation happens
here, before any tool runs, so a bad argument becomes one error that names the field (the
host's ``invalid arguments: <field>: <why>``) instead of a server 500 or a silent mis-scope
(ADR 021).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator

from ...backends.tag_groups import TagGroupError, validate_tag_groups
from ...governance.session_meta import RESERVED_TAG_PREFIXES
from ...timefmt import is_iso8601

TagsMatch = Literal["any", "all", "any_strict", "all_strict", "exact"]
Budget = Literal["low", "mid", "high"]
MemoryType = Literal["world", "experience", "observation"]


def _alias(snake: str, description: str | None = None) -> Any:
    parts = snake.split("_")
    camel = parts[0] + "".join(p.title() for p in parts[1:])
    return Field(default=None, validation_alias=AliasChoices(snake, camel), description=description)


TAG_GROUPS_DESC = (
    "Extra Hindsight tag filters, AND-ed with the automatic scope: a list of groups, each a leaf "
    '{"tags": [...], "match": "any|all|any_strict|all_strict|exact"} or {"and": [groups]}, '
    '{"or": [groups]}, {"not": group}. "and"/"or" lists must not be empty.'
)


def _reject_empty_compounds(group: dict[str, Any], path: str) -> None:
    """An empty ``and``/``or`` is a no-op or match-nothing locally but a 500 on the server: refuse it."""
    for kind in ("and", "or"):
        if kind in group:
            if not group[kind]:
                raise ValueError(f"{path}.{kind} must not be empty")
            for i, child in enumerate(group[kind]):
                _reject_empty_compounds(child, f"{path}.{kind}[{i}]")
    if "not" in group:
        _reject_empty_compounds(group["not"], f"{path}.not")


def check_tag_groups(value: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    """Validate caller ``tag_groups`` (shape, match modes, no empty compounds); returned as given
    (so a leaf's ``resolve`` reaches the server unchanged)."""
    if value is None:
        return None
    try:
        groups = validate_tag_groups(value)
    except TagGroupError as exc:
        raise ValueError(str(exc)) from None
    for i, group in enumerate(groups):
        _reject_empty_compounds(group, f"tag_groups[{i}]")
    return value


def check_tag_list(value: list[str] | None, *, writing: bool) -> list[str] | None:
    """Caller tags: non-blank strings; a write may not carry a scope tag (it would move the memory)."""
    if value is None:
        return None
    out: list[str] = []
    for i, tag in enumerate(value):
        t = tag.strip()
        if not t:
            raise ValueError(f"tags[{i}] is empty")
        if writing and t.lower().startswith(RESERVED_TAG_PREFIXES):
            raise ValueError(f"tags[{i}] uses a reserved scope prefix ({', '.join(RESERVED_TAG_PREFIXES)})")
        if t not in out:
            out.append(t)
    return out


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    @model_validator(mode="before")
    @classmethod
    def _encodable(cls, data: Any) -> Any:
        """Arguments as the model sent them, minus what nothing downstream can encode: lone
        surrogates become U+FFFD and absurd nesting is cut (see ``hindsight_hooks.sanitize``)."""
        from ...sanitize import sanitize_if_needed

        return sanitize_if_needed(data)


class RetainItem(_Params):
    content: str = Field(description="One self-contained memory: who/what/when/why.")
    context: str | None = Field(default=None, description="Optional provenance for this item.")


class EntityParam(_Params):
    text: str = Field(min_length=1)
    type: str | None = None


class RetainGlobalParams(_Params):
    items: list[RetainItem] = Field(min_length=1, description="One or more memories to store.")
    tags: list[str] | None = Field(default=None, description="Extra tags, added after the session's own tags.")
    entities: list[EntityParam] | None = None
    document_id: str | None = _alias("document_id")
    timestamp: str | None = Field(default=None, description='ISO 8601 time, or "unset".')
    metadata: dict[str, str] | None = None
    update_mode: Literal["append", "replace"] | None = _alias("update_mode")
    observation_scopes: list[list[str]] | Literal["per_tag", "combined", "all_combinations", "shared"] | None = _alias(
        "observation_scopes"
    )
    async_: bool | None = Field(default=None, validation_alias=AliasChoices("async", "async_"))

    @field_validator("tags")
    @classmethod
    def _write_tags(cls, v: list[str] | None) -> list[str] | None:
        return check_tag_list(v, writing=True)

    @field_validator("timestamp")
    @classmethod
    def _timestamp(cls, v: str | None) -> str | None:
        # The server answers a bad one with a 422, which would only surface as a dead letter.
        if v is None or v == "unset":
            return v
        if not is_iso8601(v.strip()):
            raise ValueError('timestamp must be an ISO 8601 date-time or "unset"')
        return v.strip()


class RetainParams(RetainGlobalParams):
    bank: Literal["project", "user", "global"] = "project"


class _ScopedQuery(_Params):
    tags: list[str] | None = Field(default=None, description="Only memories with these tags (see tags_match).")
    tags_match: TagsMatch | None = _alias("tags_match")
    tag_groups: list[dict[str, Any]] | None = _alias("tag_groups", TAG_GROUPS_DESC)

    @field_validator("tags")
    @classmethod
    def _read_tags(cls, v: list[str] | None) -> list[str] | None:
        return check_tag_list(v, writing=False)

    @field_validator("tag_groups")
    @classmethod
    def _tag_groups(cls, v: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
        return check_tag_groups(v)


class RecallParams(_ScopedQuery):
    query: str = Field(min_length=1, description="Natural-language search query; secrets in it are redacted first.")
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
