"""The Gemini API for the scripted model server (``tests/hosts/model_server.py``).

Gemini CLI (``GOOGLE_GEMINI_BASE_URL`` pointing here, ``GEMINI_API_KEY`` set) calls
``POST /v1beta/models/{model}:streamGenerateContent?alt=sse`` for turns and
``:generateContent`` for its side questions, and ``:countTokens`` now and then.

- A turn takes the next scripted :class:`~.model_server.Reply`: text becomes a ``text`` part, each
  tool call a ``functionCall`` part (``finishReason`` ``STOP`` either way, as Gemini answers).
  Streamed, the whole candidate is one ``data:`` event.
- A request whose ``generationConfig.responseMimeType`` is ``application/json`` is one of the
  CLI's own structured side questions (its model router asks which model to use): it is answered
  with an object built from ``responseJsonSchema`` (or ``responseSchema``) by
  :func:`fitting_value` and does **not** consume a scripted reply. Without a fitting answer the
  router retries for about 100 s before it falls back.

Use with ``ModelServer(script, dialects=(GeminiAPI(),))``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .model_server import ModelServer, RecordedRequest, Reply, Response

_ROUTE = re.compile(r"^/v1(?:beta|alpha)?/models/(?P<model>[^/:]+):(?P<method>[A-Za-z]+)$")
TURN_METHODS = ("generateContent", "streamGenerateContent")


def fitting_value(schema: Any, depth: int = 0) -> Any:
    """A small value that satisfies a JSON schema (or Gemini's OpenAPI-style ``responseSchema``)."""
    if not isinstance(schema, dict) or depth > 8:
        return None
    if "const" in schema:
        return schema["const"]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return enum[0]
    for key in ("anyOf", "oneOf", "allOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            return fitting_value(options[0], depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    kind = str(kind).lower() if kind is not None else ("object" if "properties" in schema else "string")
    if kind == "object":
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        required = schema.get("required") if isinstance(schema.get("required"), list) else list(props)
        return {name: fitting_value(props.get(name, {}), depth + 1) for name in required if isinstance(name, str)}
    if kind == "array":
        count = int(schema.get("minItems") or 0)
        return [fitting_value(schema.get("items", {}), depth + 1) for _ in range(count)]
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)  # scores and counts: Gemini CLI's router wants 1..100
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return "scripted"


def _parts(reply: Reply) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if reply.text:
        parts.append({"text": reply.text})
    for call in reply.tool_calls:
        parts.append({"functionCall": {"name": call.name, "args": call.arguments}})
    return parts


class GeminiAPI:
    """``/v1beta/models/{model}:generateContent|streamGenerateContent|countTokens`` and ``GET /v1beta/models``."""

    def handles(self, method: str, path: str) -> bool:
        route = path.split("?", 1)[0]
        return (method == "POST" and _ROUTE.match(route) is not None) or (
            method == "GET" and route in ("/v1beta/models", "/v1/models")
        )

    def answer(self, server: ModelServer, request: RecordedRequest) -> Response:
        match = _ROUTE.match(request.route)
        if match is None:
            return Response(json_body={"models": [{"name": "models/scripted", "displayName": "scripted"}]})
        method, model = match.group("method"), match.group("model")
        if method == "countTokens":
            return Response(json_body={"totalTokens": max(1, len(request.raw) // 4)})
        if method not in TURN_METHODS:
            return Response(json_body={})
        body = request.body if isinstance(request.body, dict) else {}
        config = body.get("generationConfig") if isinstance(body.get("generationConfig"), dict) else {}
        if config.get("responseMimeType") == "application/json":
            schema = config.get("responseJsonSchema") or config.get("responseSchema") or {}
            parts = [{"text": json.dumps(fitting_value(schema))}]
            text_len = len(parts[0]["text"])
        else:
            reply = server.next_reply(request)
            parts = _parts(reply) or [{"text": ""}]
            text_len = len(reply.text)
        usage = {"promptTokenCount": max(1, len(request.raw) // 4), "candidatesTokenCount": max(1, text_len // 4)}
        usage["totalTokenCount"] = usage["promptTokenCount"] + usage["candidatesTokenCount"]
        payload = {
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": usage,
            "modelVersion": model,
        }
        if method == "streamGenerateContent":
            return Response(sse=[(None, payload)])
        return Response(json_body=payload)


def is_turn(request: RecordedRequest) -> bool:
    """A model turn of the conversation (not a structured side question, not a token count)."""
    match = _ROUTE.match(request.route)
    if match is None or match.group("method") not in TURN_METHODS or not isinstance(request.body, dict):
        return False
    config = request.body.get("generationConfig")
    return not (isinstance(config, dict) and config.get("responseMimeType") == "application/json")


def contents(request: RecordedRequest) -> list[dict[str, Any]]:
    """The ``contents`` of a recorded request (role + parts)."""
    body = request.body if isinstance(request.body, dict) else {}
    items = body.get("contents")
    return [c for c in items if isinstance(c, dict)] if isinstance(items, list) else []


def content_text(content: dict[str, Any]) -> str:
    """The text parts of one ``contents`` entry, joined."""
    parts = content.get("parts")
    if not isinstance(parts, list):
        return ""
    return "\n".join(str(p["text"]) for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str))


def function_responses(request: RecordedRequest) -> list[dict[str, Any]]:
    """Every ``functionResponse`` part the request carries (``name``, ``response``)."""
    found: list[dict[str, Any]] = []
    for content in contents(request):
        for part in content.get("parts") or []:
            if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict):
                found.append(part["functionResponse"])
    return found
