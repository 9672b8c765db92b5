"""The shared OpenAI <-> Pi message converter: examples, the retain view, and a round-trip property."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hindsight_hooks.hooks import message_text
from hindsight_hooks.hosts.openai_messages import META_KEY, for_retain, strip_block, to_messages, to_openai

BLOCK = "<hindsight-memory>\nRelevant memory:\n1. we use Redis for the cache\n</hindsight-memory>"
ESCAPED = BLOCK.replace("<", "&lt;").replace(">", "&gt;")


def _conversation() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "What did we decide about the cache?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "hindsight_recall", "arguments": '{"query": "cache"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "1. Redis for the cache"},
        {"role": "assistant", "content": "We chose Redis."},
    ]


def test_openai_messages_become_pi_messages() -> None:
    pi = to_messages(_conversation())
    assert [m["role"] for m in pi] == ["system", "user", "assistant", "toolResult", "assistant"]
    assert pi[1] == {"role": "user", "content": "What did we decide about the cache?"}
    assert pi[2]["content"] == [
        {"type": "toolCall", "id": "call_1", "name": "hindsight_recall", "arguments": {"query": "cache"}}
    ]
    assert pi[3]["toolCallId"] == "call_1"
    assert pi[3]["toolName"] == "hindsight_recall"  # from the call it answers
    assert pi[3]["content"] == [{"type": "text", "text": "1. Redis for the cache"}]
    assert pi[3]["isError"] is False
    assert pi[4]["content"] == [{"type": "text", "text": "We chose Redis."}]
    assert all("timestamp" not in m for m in pi)  # never invented: the retain cursor fingerprints it
    assert to_openai(pi) == _conversation()


def test_timestamps_only_when_asked() -> None:
    pi = to_messages([{"role": "user", "content": "hi"}], timestamp_ms=1234)
    assert pi == [{"role": "user", "content": "hi", "timestamp": 1234}]


def test_user_parts_and_images() -> None:
    content = [
        {"type": "text", "text": "look"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0K"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png", "detail": "low"}},
    ]
    pi = to_messages([{"role": "user", "content": content}])
    assert pi[0]["content"][1] == {"type": "image", "data": "iVBORw0K", "mimeType": "image/png"}
    assert pi[0]["content"][2] == content[2]  # not a data URL: passed through
    assert message_text(pi[0]) == "look"
    assert to_openai(pi) == [{"role": "user", "content": content}]


def test_pi_messages_from_a_host_become_openai() -> None:
    pi: list[dict[str, Any]] = [
        {"role": "user", "content": BLOCK, "customType": "hindsight-recall", "timestamp": 1},
        {"role": "user", "content": "hi", "timestamp": 2},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hmm"},
                {"type": "text", "text": "calling"},
                {"type": "toolCall", "id": "c1", "name": "hindsight_retain", "arguments": {"items": []}},
            ],
            "model": "m",
            "stopReason": "toolUse",
            "timestamp": 3,
        },
        {"role": "assistant", "content": [], "stopReason": "aborted", "timestamp": 4},
        {"role": "toolResult", "toolCallId": "c1", "toolName": "x", "content": [], "isError": True, "timestamp": 5},
    ]
    assert to_openai(pi) == [
        {"role": "user", "content": BLOCK},
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": "calling",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "hindsight_retain", "arguments": '{"items": []}'}}
            ],
        },
        {"role": "tool", "content": "", "tool_call_id": "c1"},
    ]


def test_arguments_that_are_not_an_object_stay_raw() -> None:
    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": "not json"}}
    pi = to_messages([{"role": "assistant", "content": None, "tool_calls": [call]}])
    assert pi[0]["content"][0]["arguments"] == "not json"
    assert to_openai(pi)[0]["tool_calls"] == [call]


def test_edited_arguments_win_over_the_remembered_spelling() -> None:
    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": '{ "a" : 1 }'}}
    pi = to_messages([{"role": "assistant", "content": None, "tool_calls": [call]}])
    assert to_openai(pi)[0]["tool_calls"][0]["function"]["arguments"] == '{ "a" : 1 }'
    pi[0]["content"][0]["arguments"] = {"a": 2}
    assert to_openai(pi)[0]["tool_calls"][0]["function"]["arguments"] == '{"a": 2}'


def test_objects_with_model_dump_are_read() -> None:
    class Typed:
        def model_dump(self, exclude_none: bool = False) -> dict[str, Any]:
            return {"role": "user", "content": "typed"}

    assert to_messages([Typed(), 42]) == [{"role": "user", "content": "typed"}]


def test_for_retain_strips_our_block_and_instructions() -> None:
    messages = [
        {"role": "system", "content": "You are helpful.\n" + BLOCK},
        {"role": "developer", "content": "rules"},
        {"role": "user", "content": BLOCK},  # an injected block message
        {"role": "user", "content": "Before\n" + BLOCK + "\nWhat did we decide?"},
        {"role": "user", "content": [{"type": "text", "text": ESCAPED}, {"type": "text", "text": "escaped one"}]},
        {"role": "assistant", "content": "I saw " + ESCAPED + " and answer: Redis."},
        {"role": "assistant", "content": BLOCK},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": '{ "x": 1 }'}}],
        },
        {"role": "tool", "tool_call_id": "c", "content": "ok " + BLOCK, "name": "f"},
    ]
    kept = for_retain(messages)
    assert [m["role"] for m in kept] == ["user", "user", "assistant", "assistant", "toolResult"]
    text = json.dumps(kept)
    assert "hindsight-memory" not in text
    assert "Redis for the cache" not in text
    assert kept[0]["content"] == "Before\n\nWhat did we decide?"
    assert kept[1]["content"] == [{"type": "text", "text": "escaped one"}]
    assert kept[2]["content"] == [{"type": "text", "text": "I saw  and answer: Redis."}]
    assert META_KEY not in text  # no wire bookkeeping in memory
    assert kept[4]["toolName"] == "f"
    assert kept[4]["content"] == [{"type": "text", "text": "ok "}]


def test_strip_block() -> None:
    assert strip_block("a " + BLOCK + " b " + ESCAPED) == "a  b "
    assert strip_block("plain") == "plain"


# --------------------------------------------------------------------------- property

_text = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=20)
_json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-(10**6), 10**6), _text)
_json_obj = st.dictionaries(
    _text, st.recursive(_json_leaf, lambda c: st.lists(c, max_size=3), max_leaves=5), max_size=3
)
_text_part = st.builds(lambda t: {"type": "text", "text": t}, _text)
_extra = st.dictionaries(st.sampled_from(["name", "refusal", "x_vendor"]), _text, max_size=2)


@st.composite
def _call(draw: st.DrawFn, index: str) -> dict[str, Any]:
    args = draw(_json_obj)
    spelled = draw(
        st.sampled_from([json.dumps(args), json.dumps(args, indent=1), json.dumps(args, separators=(",", ":"))])
    )
    return {
        "id": f"call_{index}_{draw(_text)}",
        "type": "function",
        "function": {"name": draw(_text), "arguments": spelled},
    }


@st.composite
def _conversations(draw: st.DrawFn) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if draw(st.booleans()):
        out.append({"role": draw(st.sampled_from(["system", "developer"])), "content": draw(_text)})
    for turn in range(draw(st.integers(0, 4))):
        user_content = draw(st.one_of(_text, st.lists(_text_part, max_size=3)))
        out.append({"role": "user", "content": user_content, **draw(_extra)})
        calls = [draw(_call(f"{turn}_{i}")) for i in range(draw(st.integers(0, 2)))]
        content = draw(st.one_of(st.none(), _text, st.lists(_text_part, max_size=3)))
        assistant: dict[str, Any] = {"role": "assistant", "content": content, **draw(_extra)}
        if calls:
            assistant["tool_calls"] = calls
        out.append(assistant)
        for call in calls:
            result = draw(st.one_of(_text, st.lists(_text_part, max_size=2)))
            out.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    return out


@settings(max_examples=200)
@given(_conversations())
def test_round_trip_is_lossless(conversation: list[dict[str, Any]]) -> None:
    pi = to_messages(conversation)
    assert to_openai(pi) == conversation
    assert to_messages(to_openai(pi)) == pi
    # the Pi side carries the same text, calls and results
    for wire, msg in zip(conversation, pi, strict=True):
        if wire["role"] == "assistant":
            calls = [p for p in msg["content"] if p.get("type") == "toolCall"]
            assert [(c["id"], c["name"], c["arguments"]) for c in calls] == [
                (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
                for c in wire.get("tool_calls", [])
            ]
        if wire["role"] == "tool":
            assert msg["role"] == "toolResult" and msg["toolCallId"] == wire["tool_call_id"]
            wire_text = (
                wire["content"] if isinstance(wire["content"], str) else "\n".join(p["text"] for p in wire["content"])
            )
            assert message_text(msg) == wire_text
