"""The retain projection (docs/retain.md#projection): content selectors, tool filters, images, stripping, timestamps."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from hindsight_hooks.config_model import RetainConfig, ToolFilter
from hindsight_hooks.retain.projection import project, projection_json
from hindsight_hooks.timefmt import iso_from_ms as iso_ms

T = 1_700_000_000_000  # 2023-11-14T22:13:20.000Z
T_ISO = "2023-11-14T22:13:20.000Z"
NOW = 1_800_000_000_000
NOW_ISO = iso_ms(NOW)


def cfg(**changes: Any) -> RetainConfig:
    """The default retain config with nested overrides given as dotted keys."""
    data = RetainConfig().model_dump(by_alias=True)
    for dotted, value in changes.items():
        node = data
        *parents, leaf = dotted.split("__")
        for key in parents:
            node = node[key]
        node[leaf] = value
    return RetainConfig.model_validate(data)


def user(content: Any, **extra: Any) -> dict[str, Any]:
    return {"role": "user", "content": content, "timestamp": T, **extra}


def assistant(*parts: dict[str, Any], **extra: Any) -> dict[str, Any]:
    msg = {"role": "assistant", "content": list(parts), "model": "m1", "stopReason": "stop", "timestamp": T}
    msg.update(extra)
    return msg


def tool_result(name: str, text: str, *, error: bool = False, **extra: Any) -> dict[str, Any]:
    msg = {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": error,
        "timestamp": T,
    }
    msg.update(extra)
    return msg


def one(msg: dict[str, Any], config: RetainConfig | None = None, **kw: Any) -> dict[str, Any] | None:
    out = project([msg], config or RetainConfig(), now_ms=NOW, **kw)
    assert len(out) <= 1
    return out[0] if out else None


# ----------------------------------------------------------------------------- timestamps


@pytest.mark.parametrize(
    ("ms", "iso"),
    [
        (T, T_ISO),
        (0, "1970-01-01T00:00:00.000Z"),
        (1_700_000_000_123, "2023-11-14T22:13:20.123Z"),
        (-1, "1969-12-31T23:59:59.999Z"),
        (-62_135_596_800_000, "0001-01-01T00:00:00.000Z"),
    ],
)
def test_iso_ms(ms: int, iso: str) -> None:
    assert iso_ms(ms) == iso


def test_timestamps_become_iso_or_now() -> None:
    assert one(user("a"))["timestamp"] == T_ISO  # type: ignore[index]
    assert one(user("a", timestamp=None))["timestamp"] == NOW_ISO  # type: ignore[index]
    missing = {"role": "user", "content": "a"}
    assert one(missing)["timestamp"] == NOW_ISO  # type: ignore[index]
    assert one(user("a", timestamp=T + 0.9))["timestamp"] == T_ISO  # type: ignore[index]
    assert one(user("a", timestamp=True))["timestamp"] == NOW_ISO  # type: ignore[index]
    assert one(user("a", timestamp=float("nan")))["timestamp"] == NOW_ISO  # type: ignore[index]
    assert one(user("a", timestamp=10**20))["timestamp"] == NOW_ISO  # type: ignore[index]
    assert one(user("a", timestamp="2024-01-01T00:00:00Z"))["timestamp"] == "2024-01-01T00:00:00Z"  # type: ignore[index]


def test_now_defaults_to_the_clock() -> None:
    out = project([{"role": "user", "content": "a"}], RetainConfig())
    assert out[0]["timestamp"].endswith("Z") and out[0]["timestamp"] > "2024"


# ----------------------------------------------------------------------------- user


def test_user_string_and_parts() -> None:
    assert one(user("hello", id="u1", usage={"x": 1})) == {"role": "user", "timestamp": T_ISO, "content": "hello"}
    parts = [
        {"type": "text", "text": "look"},
        {"type": "image", "data": "iVBORw0KGgo=" * 100, "mimeType": "image/png"},
        {"type": "file", "data": "xx"},
        {"type": "text", "text": "   "},
    ]
    out = one(user(parts))
    assert out == {
        "role": "user",
        "timestamp": T_ISO,
        "content": [{"type": "text", "text": "look"}, {"type": "image", "mimeType": "image/png", "omitted": True}],
    }
    assert "iVBOR" not in projection_json([out])  # type: ignore[list-item]


def test_user_left_empty_is_dropped() -> None:
    assert one(user("")) is None
    assert one(user("  \n")) is None
    assert one(user([{"type": "text", "text": ""}])) is None
    assert one(user(None)) is None
    assert one(user({"weird": True})) is None


def test_user_needs_the_text_selector() -> None:
    assert one(user("hello"), cfg(content__user=[])) is None


# ----------------------------------------------------------------------------- assistant


CALL = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"cmd": "ls"}, "partialJson": "{"}
THINK = {"type": "thinking", "thinking": "hmm", "thinkingSignature": "opaque-blob"}


def test_assistant_default_keeps_text_and_tool_calls() -> None:
    msg = assistant({"type": "text", "text": "done"}, THINK, CALL, usage={"input": 1}, responseId="r1", id="a1")
    assert one(msg) == {
        "role": "assistant",
        "timestamp": T_ISO,
        "content": [
            {"type": "text", "text": "done"},
            {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"cmd": "ls"}},
        ],
        "model": "m1",
        "stopReason": "stop",
    }


def test_assistant_thinking_when_selected() -> None:
    out = one(assistant(THINK), cfg(content__assistant=["thinking"]))
    assert out is not None
    assert out["content"] == [{"type": "thinking", "thinking": "hmm"}]


def test_assistant_tool_call_filter() -> None:
    recall = {**CALL, "name": "hindsight_recall"}
    out = one(assistant({"type": "text", "text": "t"}, recall, CALL))
    assert out is not None
    assert [p.get("name") for p in out["content"]] == [None, "bash"]
    only_bash = cfg(tool_filter__tool_call={"include": ["bash"], "exclude": None})
    out = one(assistant({**CALL, "name": "edit"}, CALL), only_bash)
    assert out is not None and [p["name"] for p in out["content"]] == ["bash"]


def test_assistant_left_empty_is_dropped() -> None:
    assert one(assistant(THINK)) is None  # thinking is off by default
    assert one(assistant({**CALL, "name": "memory_edit"})) is None
    assert one(assistant({"type": "text", "text": "x"}), cfg(content__assistant=["toolCall"])) is None
    assert one(assistant()) is None


def test_assistant_string_content() -> None:
    out = one({"role": "assistant", "content": "plain", "timestamp": T})
    assert out == {"role": "assistant", "timestamp": T_ISO, "content": "plain"}


# ----------------------------------------------------------------------------- toolResult


def test_tool_result_filter_rejects_noisy_and_memory_tools() -> None:
    for name in ("read", "grep", "find", "find_files", "ls", "hindsight_retain", "memory_edit"):
        assert one(tool_result(name, "boom", error=True)) is None


def test_tool_result_errors_need_the_error_selector() -> None:
    msg = tool_result("bash", "exit 1", error=True, details={"x": 1})
    assert one(msg) == {
        "role": "toolResult",
        "timestamp": T_ISO,
        "toolName": "bash",
        "isError": True,
        "content": "exit 1",
    }
    assert one(msg, cfg(content__tool_result=["content"])) is None


def test_successful_results_dropped_by_default() -> None:
    assert one(tool_result("bash", "ok")) is None


def test_summary_cuts_to_500_chars() -> None:
    long = "x" * 600
    out = one(tool_result("bash", long), cfg(content__tool_result=["summary"]))
    assert out == {
        "role": "toolResult",
        "timestamp": T_ISO,
        "toolName": "bash",
        "isError": False,
        "content": "x" * 500 + "…",
    }
    short = one(tool_result("bash", "y" * 500), cfg(content__tool_result=["summary"]))
    assert short is not None and short["content"] == "y" * 500


def test_content_keeps_the_whole_message_without_images() -> None:
    msg = tool_result("bash", "output", usage={"a": 1}, id="t1", parentId="p0")
    msg["content"].append({"type": "image", "data": "QUJD" * 50, "mimeType": "image/jpeg"})
    out = one(msg, cfg(content__tool_result=["content", "summary"]))
    assert out == {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "bash",
        "content": [{"type": "text", "text": "output"}, {"type": "image", "mimeType": "image/jpeg", "omitted": True}],
        "isError": False,
        "timestamp": T_ISO,
    }


def test_import_policy_replaces_the_selector() -> None:
    ok, failed = tool_result("bash", "z" * 40), tool_result("bash", "bad", error=True)
    none_selected = cfg(content__tool_result=[])
    assert one(ok, none_selected, tool_result_policy="errors-only") is None
    assert one(failed, none_selected, tool_result_policy="errors-only") is not None  # failures always kept
    summary = one(ok, none_selected, tool_result_policy="summary", summary_max_chars=10)
    assert summary is not None and summary["content"] == "z" * 10 + "…"
    assert one(failed, none_selected, tool_result_policy="summary") is not None
    content = one(ok, none_selected, tool_result_policy="content")
    assert content is not None and content["content"] == [{"type": "text", "text": "z" * 40}]
    # The tool filter still applies on the import path.
    assert one(tool_result("read", "bad", error=True), tool_result_policy="content") is None
    with pytest.raises(ValueError, match="policy"):
        one(ok, tool_result_policy="everything")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="summary_max_chars"):
        one(ok, summary_max_chars=-1)


def test_tool_filter_allows_uses_include_and_exclude() -> None:
    flt = ToolFilter(include=["a", "b"], exclude=["b"])
    assert flt.allows("a") and not flt.allows("b") and not flt.allows("c")
    config = cfg(tool_filter__tool_result={"include": ["pytest"], "exclude": None})
    assert one(tool_result("pytest", "f", error=True), config) is not None
    assert one(tool_result("bash", "f", error=True), config) is None


# ----------------------------------------------------------------------------- other roles, stripping


@pytest.mark.parametrize("role", ["bashExecution", "custom", "branchSummary", "compactionSummary", "mystery"])
def test_other_roles_are_copied(role: str) -> None:
    msg = {"role": role, "command": "ls", "output": "a\nb", "nested": {"k": [1, 2]}, "timestamp": T, "id": "x"}
    assert one(msg) == {"role": role, "command": "ls", "output": "a\nb", "nested": {"k": [1, 2]}, "timestamp": T_ISO}
    assert one({"content": "no role"}) == {"content": "no role", "timestamp": NOW_ISO}


def test_stripping_message_then_top_level_fields() -> None:
    msg = {"role": "custom", "usage": 1, "cost": 2, "responseId": 3, "id": 4, "parentId": 5, "keep": 6, "timestamp": T}
    assert one(msg) == {"role": "custom", "keep": 6, "timestamp": T_ISO}
    custom = cfg(strip__message=["keep"], strip__top_level=["timestamp"])
    assert one(msg, custom) == {"role": "custom", "usage": 1, "cost": 2, "responseId": 3, "id": 4, "parentId": 5}


def test_injected_messages_are_never_projected() -> None:
    block = {"role": "user", "content": "<hindsight-memory>x</hindsight-memory>", "timestamp": T}
    marked = {"role": "user", "content": "x", "customType": "hindsight-recall"}
    assert project([block, marked, user("real")], RetainConfig(), now_ms=NOW) == [one(user("real"))]


def test_projection_is_pure() -> None:
    msgs = [
        user([{"type": "text", "text": "a"}, {"type": "image", "data": "d", "mimeType": "image/png"}]),
        assistant({"type": "text", "text": "b"}, CALL),
        tool_result("bash", "c"),
        {"role": "custom", "data": {"deep": [1]}, "timestamp": T},
    ]
    before = copy.deepcopy(msgs)
    out = project(msgs, cfg(content__tool_result=["content"]), now_ms=NOW)
    assert msgs == before
    out[1]["content"][1]["arguments"]["cmd"] = "rm -rf /"
    out[3]["data"]["deep"].append(2)
    out[2]["content"][0]["text"] = "changed"
    assert msgs == before
    assert [m["role"] for m in out] == ["user", "assistant", "toolResult", "custom"]


def test_projection_json_is_indented_unicode_json() -> None:
    out = project([user("héllo ✓")], RetainConfig(), now_ms=NOW)
    text = projection_json(out)
    assert text == json.dumps(out, indent=2, ensure_ascii=False)
    assert "héllo ✓" in text and text.startswith("[\n  {")
    assert projection_json([]) == "[]"
    # A host that breaks the JSON contract gets a type name, not a crash.
    assert '"<object>"' in projection_json([{"role": "custom", "x": object()}])
