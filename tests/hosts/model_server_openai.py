"""OpenAI Responses for the scripted model server (``tests/hosts/model_server.py``).

Codex CLI talks to its model only through ``POST /v1/responses`` (``wire_api = "responses"``),
streamed as server-sent events. A :class:`~.model_server.Reply` becomes, in order:
``response.created``, then per output item ``response.output_item.added`` (+ one
``response.output_text.delta`` for text) and ``response.output_item.done``, then
``response.completed`` carrying the whole ``output`` and a usage record. Text is an assistant
``message`` item; each tool call is a ``function_call`` item whose ``arguments`` is a JSON string
(what a real model sends); a tool of a namespace (Codex puts each MCP server's tools in one,
``mcp__<server>``) is named ``"<namespace>.<tool>"`` in the script and sent with its ``namespace``
field. Non-stream requests get the finished response object.

Use with ``ModelServer(script, dialects=(OpenAIResponses(),))``; :func:`response_input` and
:func:`input_texts` read a recorded request back.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from .model_server import ModelServer, RecordedRequest, Reply, Response

RESPONSES_ROUTE = "/v1/responses"


def _output_items(reply: Reply) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if reply.text:
        items.append(
            {
                "type": "message",
                "id": "msg_" + uuid.uuid4().hex[:24],
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
            }
        )
    for call in reply.tool_calls:
        namespace, _, name = call.name.rpartition(".")
        item: dict[str, Any] = {
            "type": "function_call",
            "id": "fc_" + uuid.uuid4().hex[:24],
            "status": "completed",
            "call_id": call.call_id,
            "name": name,
            "arguments": json.dumps(call.arguments),
        }
        if namespace:
            item["namespace"] = namespace
        items.append(item)
    return items


class OpenAIResponses:
    """``POST /v1/responses`` (SSE when ``stream`` is true, else one JSON response) and ``GET /v1/models``."""

    def handles(self, method: str, path: str) -> bool:
        route = path.split("?", 1)[0]
        return (method == "POST" and route == RESPONSES_ROUTE) or (method == "GET" and route == "/v1/models")

    def answer(self, server: ModelServer, request: RecordedRequest) -> Response:
        if request.route == "/v1/models":
            return Response(json_body={"object": "list", "data": [{"id": "scripted", "object": "model"}]})
        body = request.body if isinstance(request.body, dict) else {}
        reply = server.next_reply(request)
        items = _output_items(reply)
        usage = {
            "input_tokens": max(1, len(request.raw) // 4),
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": max(1, len(reply.text) // 4),
            "output_tokens_details": {"reasoning_tokens": 0},
        }
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
        shell: dict[str, Any] = {
            "id": "resp_" + uuid.uuid4().hex[:24],
            "object": "response",
            "created_at": int(time.time()),
            "model": str(body.get("model") or "scripted"),
            "status": "in_progress",
            "output": [],
        }
        done = {**shell, "status": "completed", "output": items, "usage": usage}
        if not body.get("stream"):
            return Response(json_body=done)
        events: list[tuple[str | None, Any]] = [("response.created", {"type": "response.created", "response": shell})]
        for index, item in enumerate(items):
            opened = {**item, "status": "in_progress"}
            if item["type"] == "message":
                opened["content"] = []
            events.append(
                (
                    "response.output_item.added",
                    {"type": "response.output_item.added", "output_index": index, "item": opened},
                )
            )
            if item["type"] == "message":
                events.append(
                    (
                        "response.output_text.delta",
                        {
                            "type": "response.output_text.delta",
                            "item_id": item["id"],
                            "output_index": index,
                            "content_index": 0,
                            "delta": item["content"][0]["text"],
                        },
                    )
                )
            events.append(
                (
                    "response.output_item.done",
                    {"type": "response.output_item.done", "output_index": index, "item": item},
                )
            )
        events.append(("response.completed", {"type": "response.completed", "response": done}))
        return Response(sse=events)


def response_input(request: RecordedRequest) -> list[dict[str, Any]]:
    """The ``input`` items of a recorded Responses request."""
    body = request.body if isinstance(request.body, dict) else {}
    items = body.get("input")
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []


def item_text(item: dict[str, Any]) -> str:
    """An input item's text: its string content or its ``input_text``/``output_text`` parts joined."""
    content = item.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def input_texts(request: RecordedRequest, role: str | None = None) -> list[str]:
    """The text of each ``message`` item of the request (only ``role``'s, when given)."""
    return [
        item_text(item)
        for item in response_input(request)
        if item.get("type", "message") == "message" and (role is None or item.get("role") == role)
    ]


def function_outputs(request: RecordedRequest) -> dict[str, str]:
    """``call_id`` -> output text of every ``function_call_output`` item the request carries."""
    out: dict[str, str] = {}
    for item in response_input(request):
        if item.get("type") == "function_call_output":
            value = item.get("output")
            out[str(item.get("call_id"))] = value if isinstance(value, str) else json.dumps(value)
    return out
