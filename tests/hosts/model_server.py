"""A scripted model server on loopback: the real agent programs talk to it instead of a model.

Why: the host tests run the real Claude Code (and later Codex, Gemini CLI) offline. Each of them
speaks its vendor's HTTP API, so this server speaks those APIs well enough for a non-interactive
run, records every request body (that is how a test sees what reached "the model"), and answers
from a script: plain text, or tool calls (a ``tool_use`` block for an MCP tool, say).

Stdlib only (``http.server``), bound to 127.0.0.1 on a random port, served from a daemon thread::

    with ModelServer(script=[Reply.text("Noted."), Reply.tool("mcp__hindsight__recall", {"query": "cache"})]) as srv:
        env["ANTHROPIC_BASE_URL"] = srv.url
        ...
        srv.requests_to("/v1/messages")   # RecordedRequest(method, path, headers, body)

**Adding an API (a dialect).** A dialect is an object with ``handles(method, path) -> bool`` and
``answer(server, request) -> Response``; list it in ``ModelServer(dialects=...)`` (the defaults are
:data:`DEFAULT_DIALECTS`). A dialect that produces a model turn takes the next reply with
``server.next_reply(request)`` and renders it in its own wire shape; see :class:`AnthropicMessages`
for the pattern (stream and non-stream from one ``Reply``). OpenAI Responses, Chat Completions and
Gemini go in the same way. Anything no dialect handles gets ``200 {}`` (``HEAD /`` included), so a
program's side probes never fail a run.

**Scripts.** ``script`` is a list of :class:`Reply` (used in order; when it runs out the server
answers ``Reply.text(default_text)``), or a callable ``(RecordedRequest) -> Reply`` for replies that
depend on the request (e.g. answer the tool result that came back).
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

# --------------------------------------------------------------------------- replies


@dataclass(frozen=True)
class ToolCall:
    """A tool call the model makes: ``name`` with JSON ``arguments``."""

    name: str
    arguments: dict[str, Any]
    call_id: str = field(default_factory=lambda: "toolu_" + uuid.uuid4().hex[:20])


@dataclass(frozen=True)
class Reply:
    """One model turn: text, then tool calls (either may be empty)."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()

    @staticmethod
    def say(text: str) -> Reply:
        return Reply(text=text)

    @staticmethod
    def tool(name: str, arguments: dict[str, Any], text: str = "") -> Reply:
        return Reply(text=text, tool_calls=(ToolCall(name, arguments),))


Script = Sequence[Reply] | Callable[["RecordedRequest"], Reply]


# --------------------------------------------------------------------------- requests and responses


@dataclass
class RecordedRequest:
    """One request as received: ``body`` is the parsed JSON (``None`` when empty or not JSON)."""

    method: str
    path: str
    headers: dict[str, str]
    raw: bytes
    body: Any

    @property
    def route(self) -> str:
        """The path without its query string."""
        return self.path.split("?", 1)[0]

    def text(self) -> str:
        """The whole body as text (for "does this request carry X" checks)."""
        return self.raw.decode("utf-8", "replace")


@dataclass
class Response:
    """What a dialect answers: a JSON body, or a list of SSE events ``(event, data)``."""

    status: int = 200
    json_body: Any = None
    sse: list[tuple[str | None, Any]] | None = None


class Dialect(Protocol):
    def handles(self, method: str, path: str) -> bool: ...

    def answer(self, server: ModelServer, request: RecordedRequest) -> Response: ...


# --------------------------------------------------------------------------- Anthropic Messages


class AnthropicMessages:
    """``POST /v1/messages`` (SSE when ``stream`` is true) and ``/v1/messages/count_tokens``."""

    def handles(self, method: str, path: str) -> bool:
        return method == "POST" and path.split("?", 1)[0] in ("/v1/messages", "/v1/messages/count_tokens")

    def answer(self, server: ModelServer, request: RecordedRequest) -> Response:
        if request.route.endswith("/count_tokens"):
            return Response(json_body={"input_tokens": max(1, len(request.raw) // 4)})
        body = request.body if isinstance(request.body, dict) else {}
        reply = server.next_reply(request)
        model = str(body.get("model") or "claude-scripted")
        blocks: list[dict[str, Any]] = []
        if reply.text:
            blocks.append({"type": "text", "text": reply.text})
        for call in reply.tool_calls:
            blocks.append({"type": "tool_use", "id": call.call_id, "name": call.name, "input": call.arguments})
        stop = "tool_use" if reply.tool_calls else "end_turn"
        message_id = "msg_" + uuid.uuid4().hex[:24]
        usage = {"input_tokens": max(1, len(request.raw) // 4), "output_tokens": max(1, len(reply.text) // 4)}
        if not body.get("stream"):
            return Response(
                json_body={
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": blocks,
                    "stop_reason": stop,
                    "stop_sequence": None,
                    "usage": usage,
                }
            )
        start = {
            "type": "message_start",
            "message": {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": usage["input_tokens"], "output_tokens": 1},
            },
        }
        events: list[tuple[str | None, Any]] = [("message_start", start)]
        for index, block in enumerate(blocks):
            if block["type"] == "text":
                events.append(
                    (
                        "content_block_start",
                        {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
                    )
                )
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                opened = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
                events.append(
                    ("content_block_start", {"type": "content_block_start", "index": index, "content_block": opened})
                )
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        events.append(
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": usage["output_tokens"]},
                },
            )
        )
        events.append(("message_stop", {"type": "message_stop"}))
        return Response(sse=events)


DEFAULT_DIALECTS: tuple[Dialect, ...] = (AnthropicMessages(),)


# --------------------------------------------------------------------------- the server


class ModelServer:
    """The server; use as a context manager (``start``/``stop`` also work)."""

    def __init__(
        self,
        script: Script = (),
        *,
        default_text: str = "OK.",
        dialects: Sequence[Dialect] = DEFAULT_DIALECTS,
    ) -> None:
        self._script = script
        self._replies: list[Reply] = [] if callable(script) else list(script)
        self.default_text = default_text
        self.dialects = list(dialects)
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting --------------------------------------------------------------------------
    def next_reply(self, request: RecordedRequest) -> Reply:
        """The reply for a model turn: from the callable script, the next listed one, or the default."""
        if callable(self._script):
            return self._script(request)
        with self._lock:
            if self._replies:
                return self._replies.pop(0)
        return Reply.say(self.default_text)

    def add_replies(self, *replies: Reply) -> None:
        """Queue more replies (a list script only)."""
        with self._lock:
            self._replies.extend(replies)

    # -- what was asked -----------------------------------------------------------------------
    def requests_to(self, route: str) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.route == route]

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    # -- lifecycle ----------------------------------------------------------------------------
    @property
    def url(self) -> str:
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> ModelServer:
        server = self
        handler = type("_Handler", (_Handler,), {"model_server": server})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="model-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def answer(self, request: RecordedRequest) -> Response:
        for dialect in self.dialects:
            if dialect.handles(request.method, request.path):
                return dialect.answer(self, request)
        return Response(json_body={})


class _Handler(BaseHTTPRequestHandler):
    model_server: ModelServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read requests, not logs
        return None

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length > 0 else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        request = RecordedRequest(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, raw, body)
        self.model_server._record(request)
        try:
            response = self.model_server.answer(request)
        except Exception as exc:  # a script bug shows as a 500 the program reports, not a hang
            response = Response(status=500, json_body={"error": {"type": "script_error", "message": repr(exc)}})
        if response.sse is not None:
            self._send_sse(response)
        else:
            self._send_json(response.status, response.json_body if response.json_body is not None else {})

    def _send_json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _send_sse(self, response: Response) -> None:
        chunks: list[bytes] = []
        for event, data in response.sse or []:
            head = f"event: {event}\n" if event else ""
            chunks.append(f"{head}data: {json.dumps(data)}\n\n".encode())
        data = b"".join(chunks)
        self.send_response(response.status)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _serve


def iter_texts(value: Any) -> Iterator[str]:
    """Every string inside a JSON value (for searching a request body for our block)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from iter_texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from iter_texts(item)
