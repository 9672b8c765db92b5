"""Tool registration, JSON schemas and argument validation (docs/tools.md "Params").

Schemas come from the pydantic models; invalid arguments never reach a backend and come back
as one error naming the field. Empty ``and``/``or`` tag groups are refused up front because
the real server answers them with a 500 (checked here against it).
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from hindsight_hooks.backends.base import RecallRequest
from hindsight_hooks.backends.hindsight import HindsightError
from hindsight_hooks.plugin.control.tool_params import (
    MemoryEditParams,
    RecallParams,
    ReflectParams,
    RetainGlobalParams,
    RetainParams,
)

from .cmdkit import Kit, hs_kit_fixture, kit_fixture, local_kit_fixture  # noqa: F401  (fixtures)

TOOLS: dict[str, type[BaseModel]] = {
    "hindsight_retain": RetainParams,
    "hindsight_retain_global": RetainGlobalParams,
    "hindsight_recall": RecallParams,
    "hindsight_reflect": ReflectParams,
    "memory_edit": MemoryEditParams,
}


def _err(result: Any) -> str:
    assert result.is_error, result
    assert result.text.startswith("Error: ")
    return str(result.details["error"]["message"])


def test_every_tool_is_registered_with_its_pydantic_schema(kit: Kit) -> None:
    host = kit.host()
    tools = host.tools()
    assert set(tools) == set(TOOLS)  # memory_edit too: registration has no ctx (ADR 020)
    for name, model in TOOLS.items():
        schema = tools[name].json_schema()
        assert schema["type"] == "function"
        assert schema["function"]["name"] == name
        assert schema["function"]["parameters"] == model.model_json_schema(by_alias=False)
    retain = tools["hindsight_retain"].json_schema()["function"]
    assert retain["parameters"]["required"] == ["items"]
    items = retain["parameters"]["properties"]["items"]
    assert items["type"] == "array" and items["minItems"] == 1
    item_schema = retain["parameters"]["$defs"]["RetainItem"]
    assert item_schema["required"] == ["content"] and set(item_schema["properties"]) == {"content", "context"}
    assert retain["parameters"]["properties"]["bank"]["enum"] == ["project", "user", "global"]
    assert tools["hindsight_recall"].json_schema()["function"]["parameters"]["required"] == ["query"]
    assert tools["hindsight_reflect"].json_schema()["function"]["parameters"]["required"] == ["query"]
    edit = tools["memory_edit"].json_schema()["function"]["parameters"]
    assert edit["required"] == ["op", "id"] and edit["properties"]["op"]["enum"] == ["update", "forget", "invalidate"]
    assert "tag_groups" in tools["hindsight_recall"].json_schema()["function"]["parameters"]["properties"]


def test_descriptions_carry_the_model_facing_guidance(local_kit: Kit) -> None:
    tools = local_kit.host().tools()
    assert "self-contained" in tools["hindsight_retain"].description
    assert "ephemeral" in tools["hindsight_retain"].description
    assert "proactively" in tools["hindsight_recall"].description
    assert "raw" in tools["hindsight_recall"].description
    assert "synthesised" in tools["hindsight_reflect"].description
    assert "ids that hindsight_recall returned" in tools["memory_edit"].description
    assert "preferences" in tools["hindsight_retain_global"].description


BAD_ARGS: list[tuple[str, dict[str, Any], str]] = [
    ("hindsight_retain", {}, "items"),
    ("hindsight_retain", {"items": []}, "items"),
    ("hindsight_retain", {"items": [{"context": "no content"}]}, "items.0.content"),
    ("hindsight_retain", {"items": [{"content": "x"}], "bank": "elsewhere"}, "bank"),
    ("hindsight_retain", {"items": [{"content": "x"}], "surprise": 1}, "surprise"),
    ("hindsight_retain", {"items": [{"content": "x"}], "tags": ["repo:other-repo"]}, "tags"),
    ("hindsight_retain", {"items": [{"content": "x"}], "tags": ["  "]}, "tags"),
    ("hindsight_retain", {"items": [{"content": "x"}], "metadata": {"k": 1}}, "metadata.k"),
    ("hindsight_retain", {"items": [{"content": "x"}], "updateMode": "merge"}, "updateMode"),
    ("hindsight_retain", {"items": [{"content": "x"}], "observation_scopes": "sometimes"}, "observation_scopes"),
    ("hindsight_retain", {"items": [{"content": "x"}], "timestamp": "yesterday"}, "timestamp"),
    ("hindsight_retain_global", {"items": [{"content": "x"}], "bank": "project"}, "bank"),
    ("hindsight_recall", {}, "query"),
    ("hindsight_recall", {"query": ""}, "query"),
    ("hindsight_recall", {"query": "q", "max_tokens": -1}, "max_tokens"),
    ("hindsight_recall", {"query": "q", "types": ["dreams"]}, "types"),
    ("hindsight_recall", {"query": "q", "budget": "huge"}, "budget"),
    ("hindsight_recall", {"query": "q", "tagsMatch": "some"}, "tagsMatch"),
    ("hindsight_recall", {"query": "q", "tag_groups": [{"and": []}]}, "tag_groups[0].and must not be empty"),
    ("hindsight_recall", {"query": "q", "tagGroups": [{"or": []}]}, "tag_groups[0].or must not be empty"),
    ("hindsight_recall", {"query": "q", "tag_groups": [{"not": {"and": [{"or": []}]}}]}, "tag_groups[0].not.and[0].or"),
    ("hindsight_recall", {"query": "q", "tag_groups": [{"tags": "a"}]}, "tag_groups[0].tags"),
    ("hindsight_recall", {"query": "q", "tag_groups": [{"tags": ["a"], "match": "most"}]}, "tag_groups[0].match"),
    ("hindsight_recall", {"query": "q", "tag_groups": [{"tags": ["a"], "or": []}]}, "exactly one of"),
    ("hindsight_reflect", {"query": "q", "tag_groups": [{"or": []}]}, "tag_groups[0].or must not be empty"),
    ("hindsight_reflect", {"query": "q", "bank": "all"}, "bank"),
    ("memory_edit", {"op": "rewrite", "id": "x"}, "op"),
    ("memory_edit", {"op": "forget"}, "id"),
    ("memory_edit", {"op": "forget", "id": ""}, "id"),
]


@pytest.mark.parametrize(("tool", "args", "named"), BAD_ARGS, ids=[f"{t}-{n}" for t, _, n in BAD_ARGS])
def test_invalid_arguments_are_one_error_naming_the_field(
    local_kit: Kit, tool: str, args: dict[str, Any], named: str
) -> None:
    host = local_kit.host()
    result = host.call_tool(tool, args)
    message = _err(result)
    assert result.details["error"]["kind"] == "invalid_arguments"
    assert message.startswith("invalid arguments: ")
    assert named in message
    assert local_kit.jobs() == [] and local_kit.units(local_kit.project_bank) == []


def test_empty_tag_groups_would_be_a_server_500_so_they_never_leave(kit: Kit) -> None:
    host = kit.host()
    if kit.backend == "hindsight":  # the reason for the rule, measured on the real server
        with pytest.raises(HindsightError) as err:
            kit.store.recall(kit.project_bank, RecallRequest(query="q", tag_groups=[{"and": []}]), timeout_s=30)
        assert err.value.status == 500
    for tool, extra in (("hindsight_recall", {}), ("hindsight_reflect", {"context": "c"})):
        groups: list[dict[str, list[Any]]] = [{"and": []}, {"or": []}]
        for group in groups:
            result = host.call_tool(tool, {"query": "anything", "tag_groups": [group], **extra})
            kind = next(iter(group))
            assert f"tag_groups[0].{kind} must not be empty" in _err(result)


def test_camel_case_aliases_are_accepted(local_kit: Kit) -> None:
    host = local_kit.host()
    ok = host.call_tool(
        "hindsight_retain",
        {
            "items": [{"content": "Aliases work for documentId and updateMode."}],
            "documentId": "doc-alias",
            "updateMode": "append",
            "observationScopes": [["repo:x"]],
            "async": False,
        },
    )
    assert not ok.is_error and ok.text == "1 memory stored."
    (unit,) = local_kit.units(local_kit.project_bank)
    assert unit["document_id"] == "doc-alias"
    args = {
        "query": "aliases documentId",
        "maxTokens": 0,
        "tagsMatch": "any",
        "tagGroups": [{"and": [{"tags": ["harness:pi"]}]}],
        "includeSourceFacts": True,
        "maxSourceFactsTokens": 10,
        "queryTimestamp": "2030-01-01T00:00:00Z",
    }
    found = host.call_tool("hindsight_recall", args)
    assert found.text.startswith("Found 1 relevant memory")
    edit = host.call_tool("memory_edit", {"op": "invalidate", "id": unit["id"], "replacementId": "other"})
    assert edit.details["status"] == "invalidated"
