"""OpenAI Chat Completions for the scripted model server (``tests/hosts/model_server.py``).

Pi (``api: "openai-completions"``) talks to the model through ``POST /v1/chat/completions``,
streamed as ``data:`` chunks; ``GET /v1/models`` lists the one scripted model. A :class:`Reply`
becomes assistant text and ``tool_calls`` (``finish_reason`` ``tool_calls`` when it has any).
Use with ``ModelServer(script, dialects=(ChatCompletions(),))``.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from .model_server import ModelServer, RecordedRequest, Response

CHAT_ROUTE = "/v1/chat/completions"


class ChatCompletions:
    """``POST /v1/chat/completions`` (SSE when ``stream`` is true) and ``GET /v1/models``."""

    def handles(self, method: str, path: str) -> bool:
        route = path.split("?", 1)[0]
        return (method == "POST" and route == CHAT_ROUTE) or (method == "GET" and route == "/v1/models")

    def answer(self, server: ModelServer, request: RecordedRequest) -> Response:
        if request.route == "/v1/models":
            return Response(json_body={"object": "list", "data": [{"id": "scripted", "object": "model"}]})
        body = request.body if isinstance(request.body, dict) else {}
        reply = server.next_reply(request)
        model = str(body.get("model") or "scripted")
        completion_id = "chatcmpl-" + uuid.uuid4().hex[:20]
        calls = [
            {
                "index": i,
                "id": call.call_id,
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
            }
            for i, call in enumerate(reply.tool_calls)
        ]
        finish = "tool_calls" if calls else "stop"
        usage = {"prompt_tokens": max(1, len(request.raw) // 4), "completion_tokens": max(1, len(reply.text) // 4)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        base: dict[str, Any] = {"id": completion_id, "created": int(time.time()), "model": model}
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
            if calls:
                message["tool_calls"] = [{k: v for k, v in c.items() if k != "index"} for c in calls]
            return Response(
                json_body={
                    **base,
                    "object": "chat.completion",
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    "usage": usage,
                }
            )
        chunk = {**base, "object": "chat.completion.chunk"}

        def event(delta: dict[str, Any], finish_reason: str | None = None, **extra: Any) -> tuple[None, Any]:
            return (None, {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}], **extra})

        events: list[tuple[str | None, Any]] = [event({"role": "assistant"})]
        if reply.text:
            events.append(event({"content": reply.text}))
        if calls:
            events.append(event({"tool_calls": calls}))
        events.append(event({}, finish, usage=usage))
        return Response(sse=events)


def chat_messages(request: RecordedRequest) -> list[dict[str, Any]]:
    """The ``messages`` of a recorded Chat Completions request."""
    body = request.body if isinstance(request.body, dict) else {}
    messages = body.get("messages")
    return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []


def message_text(message: dict[str, Any]) -> str:
    """A chat message's text: the string content, or its text parts joined."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""
