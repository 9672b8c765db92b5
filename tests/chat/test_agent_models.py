"""The agent run and the models: tool-call round trips over a faked OpenAI-compatible API.

The network is the only fake (``httpx.MockTransport``); the Host, the plugin, the tools and
the embedded store are real, in a tmp project.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from hindsight_hooks.chat.agent import AgentRunner, tool_calls_of
from hindsight_hooks.chat.models import EchoModel, OpenAICompatibleModel, make_model
from hindsight_hooks.chat.openai_wire import from_openai, to_openai
from hindsight_hooks.chat.session_file import SessionFile, read_session
from hindsight_hooks.hooks import Host, HostContext, Message, RecordingUI, hookimpl

API_KEY = "sk-test-" + "Zq9Xw8Vu7Ts6Rp5On4Ml3Kj2"


def completion(content: str | None = None, calls: list[tuple[str, str, Any]] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [
            {
                "id": cid,
                "type": "function",
                "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
            }
            for cid, name, args in calls
        ]
    return {
        "id": "cmpl-1",
        "model": "test-model",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    }


class FakeAPI:
    """Answers each chat-completions request with the next scripted body; records requests."""

    def __init__(self, replies: list[dict[str, Any]] | None = None, repeat_last: bool = False) -> None:
        self.replies = list(replies or [])
        self.repeat_last = repeat_last
        self.requests: list[dict[str, Any]] = []
        self.headers: list[httpx.Headers] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        assert request.url.path.endswith("/chat/completions")
        self.requests.append(json.loads(request.content))
        self.headers.append(request.headers)
        body = self.replies[0] if (self.repeat_last and len(self.replies) == 1) else self.replies.pop(0)
        return httpx.Response(200, json=body)


def model_for(api: Any) -> OpenAICompatibleModel:
    return OpenAICompatibleModel("test-model", "http://llm.test/v1", API_KEY, transport=httpx.MockTransport(api))


@pytest.fixture
def host(project: Path, isolated_env: dict[str, str]) -> Host:
    return Host(
        project, session_file=project / ".hindsight" / "sessions" / "t.jsonl", host_name="chat", ui=RecordingUI()
    )


def test_recall_tool_round_trip_through_the_real_plugin(host: Host) -> None:
    host.start()
    stored = host.call_tool(
        "hindsight_retain", {"items": [{"content": "The team decided the response cache lives in SQLite, not Redis."}]}
    )
    assert not stored.is_error, stored.text
    api = FakeAPI(
        [
            completion(calls=[("call_1", "hindsight_recall", {"query": "response cache SQLite"})]),
            completion("You chose SQLite for the response cache."),
        ]
    )
    transcript: list[Message] = []
    runner = AgentRunner(host, model_for(api), transcript)
    outcome = runner.run("Which cache store did we pick?")
    host.shutdown()

    assert outcome.error is None and not outcome.aborted and outcome.tool_rounds == 1
    # The first request offered the plugin's tools as functions.
    offered = {t["function"]["name"] for t in api.requests[0]["tools"]}
    assert {"hindsight_recall", "hindsight_retain", "hindsight_reflect"} <= offered
    assert api.headers[0]["authorization"] == f"Bearer {API_KEY}"
    # The loop ran the tool and sent its result back, answering the model's call id.
    tool_msgs = [m for m in api.requests[1]["messages"] if m["role"] == "tool"]
    assert len(tool_msgs) == 1 and tool_msgs[0]["tool_call_id"] == "call_1"
    assert "SQLite, not Redis" in tool_msgs[0]["content"]
    assert tool_msgs[0]["content"].startswith("Found 1 relevant memory")
    # The transcript is a well-formed Pi conversation ending with the final answer.
    assert [m["role"] for m in transcript] == ["user", "assistant", "toolResult", "assistant"]
    assert transcript[2]["toolCallId"] == "call_1" and transcript[2]["isError"] is False
    assert transcript[-1]["content"] == [{"type": "text", "text": "You chose SQLite for the response cache."}]
    assert transcript[-1]["stopReason"] == "stop" and transcript[-1]["usage"]["totalTokens"] == 18


def test_bad_tool_arguments_are_answered_with_an_error_not_run(host: Host) -> None:
    api = FakeAPI(
        [
            completion(
                calls=[
                    ("c1", "hindsight_recall", "{not json"),
                    ("c2", "no_such_tool", {"x": 1}),
                    ("c3", "hindsight_recall", {"wrong": "field"}),
                ]
            ),
            completion("ok"),
        ]
    )
    transcript: list[Message] = []
    AgentRunner(host, model_for(api), transcript).run("go")
    results = {m["toolCallId"]: m for m in transcript if m["role"] == "toolResult"}
    assert set(results) == {"c1", "c2", "c3"}
    assert all(r["isError"] for r in results.values())
    assert "not a JSON object" in results["c1"]["content"][0]["text"]
    assert "unknown tool" in results["c2"]["content"][0]["text"]
    assert "invalid arguments" in results["c3"]["content"][0]["text"]
    assert len(api.requests) == 2


def test_tool_rounds_are_capped_and_the_transcript_stays_well_formed(host: Host) -> None:
    api = FakeAPI([completion(calls=[("loop", "hindsight_recall", {"query": "again"})])], repeat_last=True)
    transcript: list[Message] = []
    outcome = AgentRunner(host, model_for(api), transcript, max_tool_rounds=2).run("loop forever")
    assert outcome.hit_round_limit and outcome.tool_rounds == 2
    assert len(api.requests) == 3
    calls = [c["id"] for m in transcript if m["role"] == "assistant" for c in tool_calls_of(m)]
    answered = [m["toolCallId"] for m in transcript if m["role"] == "toolResult"]
    assert calls == answered  # every call has its result, so the next request is valid
    assert "tool round limit (2)" in transcript[-1]["content"][0]["text"]


def test_model_errors_are_reported_without_the_api_key(host: Host) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(401, text=f"Incorrect API key provided: {API_KEY}")

    transcript: list[Message] = []
    model = OpenAICompatibleModel("m", "http://llm.test/v1", API_KEY, transport=httpx.MockTransport(handler))
    outcome = AgentRunner(host, model, transcript).run("hi")
    assert outcome.error is not None and "401" in outcome.error
    assert API_KEY not in outcome.error
    assert API_KEY not in repr(model)
    assert transcript[-1]["stopReason"] == "error" and API_KEY not in json.dumps(transcript)


def test_unreachable_model_is_an_error_reply(host: Host) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    transcript: list[Message] = []
    model = OpenAICompatibleModel("m", "http://llm.test/v1", None, transport=httpx.MockTransport(handler))
    outcome = AgentRunner(host, model, transcript).run("hi")
    assert outcome.error is not None and "ConnectError" in outcome.error


def test_abort_during_the_model_call_records_an_aborted_reply_and_still_ends_the_run(host: Host) -> None:
    cancel = threading.Event()
    release = threading.Event()

    def handler(request: httpx.Request) -> httpx.Response:
        cancel.set()  # the person presses Ctrl-C while the model is thinking
        release.wait(10)
        return httpx.Response(200, json=completion("too late"))

    ended: list[int] = []

    class Spy:
        @hookimpl
        def agent_end(self, messages: list[Message], ctx: HostContext) -> None:
            ended.append(len(messages))

    spy_host = Host(host.ctx.cwd, host_name="chat", ui=RecordingUI(), plugins=[Spy()])
    transcript: list[Message] = []
    model = OpenAICompatibleModel("m", "http://llm.test/v1", None, transport=httpx.MockTransport(handler))
    outcome = AgentRunner(spy_host, model, transcript).run("think hard", cancel)
    release.set()
    assert outcome.aborted
    assert transcript[-1]["stopReason"] == "aborted"
    assert "too late" not in json.dumps(transcript)
    assert ended == [2]  # agent_end fired once, with the prompt and the aborted reply


class InjectingPlugin:
    """A real plugin that adds an ephemeral message in ``context``, like auto-recall does."""

    @hookimpl
    def context(self, messages: list[Message], ctx: HostContext) -> list[Message] | None:
        note: Message = {
            "role": "user",
            "customType": "test-note",
            "content": "<note>remember the cache</note>",
            "timestamp": 1,
        }
        return [*messages[:-1], note, messages[-1]]


def test_injected_messages_reach_the_model_but_never_the_transcript_or_file(tmp_path: Path) -> None:
    session = SessionFile.create(tmp_path / "s.jsonl", tmp_path)
    host = Host(tmp_path, session_file=session.path, host_name="chat", ui=RecordingUI(), plugins=[InjectingPlugin()])
    transcript: list[Message] = []
    runner = AgentRunner(host, EchoModel(), transcript, on_message=session.append)
    runner.run("what about the cache?")
    session.close()

    reply = transcript[-1]["content"][0]["text"]
    assert reply.startswith("echo: I was given 1 memory block(s):\n<note>remember the cache</note>")
    assert "echo: you said: what about the cache?" in reply
    assert all("customType" not in m for m in transcript)
    on_disk = read_session(session.path).messages
    assert on_disk == transcript
    assert "customType" not in session.path.read_text(encoding="utf-8")


def test_echo_without_memory_says_so() -> None:
    reply = EchoModel().complete([{"role": "user", "content": "hello", "timestamp": 1}], [], threading.Event())
    text = reply["content"][0]["text"]
    assert text.startswith("echo: no memory was injected")
    assert text.endswith("you said: hello")


def test_make_model_picks_echo_or_openai() -> None:
    assert isinstance(make_model("echo", None, None), EchoModel)
    remote = make_model("gpt-x", None, None)
    assert isinstance(remote, OpenAICompatibleModel) and remote.base_url == "https://api.openai.com/v1"


def test_wire_mapping_round_trip() -> None:
    messages: list[Message] = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "look"}, {"type": "image", "data": "AAA", "mimeType": "image/jpeg"}],
        },
        {"role": "user", "customType": "hindsight-recall", "content": "<hindsight-memory>x</hindsight-memory>"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hmm"},
                {"type": "text", "text": "a"},
                {"type": "toolCall", "id": "t1", "name": "f", "arguments": {"q": 1}},
            ],
        },
        {
            "role": "toolResult",
            "toolCallId": "t1",
            "toolName": "f",
            "content": [{"type": "text", "text": "r"}],
            "isError": False,
        },
        {"role": "assistant", "content": [], "stopReason": "aborted"},
        {"role": "bashExecution", "command": "ls"},
    ]
    wire = to_openai(messages, "sys")
    assert wire[0] == {"role": "system", "content": "sys"}
    assert wire[1]["content"][1] == {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,AAA"}}
    assert wire[2] == {"role": "user", "content": "<hindsight-memory>x</hindsight-memory>"}
    assert wire[3]["content"] == "a" and wire[3]["tool_calls"][0]["function"] == {"name": "f", "arguments": '{"q": 1}'}
    assert wire[4] == {"role": "tool", "tool_call_id": "t1", "content": "r"}
    assert len(wire) == 5  # the empty aborted reply and the unknown role are not sent

    back = from_openai(completion("hi", [("t9", "f", {"a": "b"})]), "m")
    assert back["stopReason"] == "toolUse"
    assert back["content"] == [
        {"type": "text", "text": "hi"},
        {"type": "toolCall", "id": "t9", "name": "f", "arguments": {"a": "b"}},
    ]
    with pytest.raises(ValueError):
        from_openai({"choices": []}, "m")
