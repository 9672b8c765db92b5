"""``serve --stdio`` as a real child process: every bad input gets a JSON-RPC error, never a crash or hang.

Each test spawns the server in a tmp project (tmp HOME and XDG folders, embedded store) and
speaks to it over its real pipes with :class:`tests.hosts.bridge_client.ServeProcess`. After
each refusal the test checks that the server still answers, which is what "never a crash" means
to the host on the other side.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from hindsight_hooks.hosts.rpc_wire import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    MESSAGE_TOO_LARGE,
    METHOD_NOT_FOUND,
    NOT_STARTED,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    SHUT_DOWN,
    UNSUPPORTED_PROTOCOL,
)

from .bridge_client import ServeProcess, clean_env, make_project

FIVE_MB = 5 * 1024 * 1024
QUICK_S = 10.0  # "at once" on a loaded 2-core machine; a hang would be the recall's 120 s


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[ServeProcess]:
    root = make_project(tmp_path)
    server = ServeProcess(root, clean_env(tmp_path))
    yield server
    server.kill()


def error_code(answer: dict[str, Any]) -> int:
    assert "error" in answer, answer
    return int(answer["error"]["code"])


def still_answers(server: ServeProcess) -> None:
    commands = server.result("commands")["commands"]
    assert any(c["name"] == "hindsight:mode" for c in commands)


def test_malformed_json_gets_a_parse_error_and_the_server_reads_on(serve: ServeProcess) -> None:
    serve.start()
    serve.send_bytes(b'{"jsonrpc": "2.0", "id": 7, "method": \n')
    serve.send_bytes(b"\xff\xfe not utf-8\n")
    answers = [serve.wait(None), serve.wait(None)]
    assert [error_code(a) for a in answers] == [PARSE_ERROR, PARSE_ERROR]
    still_answers(serve)


def test_not_json_rpc_shapes_are_invalid_requests(serve: ServeProcess) -> None:
    serve.start()
    serve.send_json([{"jsonrpc": "2.0", "id": 1, "method": "commands"}])  # a batch
    assert error_code(serve.wait(None)) == INVALID_REQUEST
    serve.send_json({"id": 41, "method": "commands"})  # no "jsonrpc": "2.0"
    assert error_code(serve.wait(41)) == INVALID_REQUEST
    serve.send_json({"jsonrpc": "2.0", "id": 42, "method": 5})
    assert error_code(serve.wait(42)) == INVALID_REQUEST
    serve.send_json({"jsonrpc": "2.0", "id": 43, "method": "context", "params": [1]})
    assert error_code(serve.wait(43)) == INVALID_PARAMS
    assert error_code(serve.request("context", {"messages": "not a list"})) == INVALID_PARAMS
    still_answers(serve)


def test_unknown_method_is_method_not_found(serve: ServeProcess) -> None:
    serve.start()
    answer = serve.request("session/teleport", {})
    assert error_code(answer) == METHOD_NOT_FOUND
    assert "session/teleport" in answer["error"]["message"]
    still_answers(serve)


def test_requests_before_start_and_a_protocol_it_does_not_speak(serve: ServeProcess) -> None:
    assert error_code(serve.request("context", {"messages": []})) == NOT_STARTED
    answer = serve.request("start", {"protocolVersion": 99})
    assert error_code(answer) == UNSUPPORTED_PROTOCOL
    assert answer["error"]["data"] == {"supported": [1]}
    started = serve.start()  # the peer may retry with a version the server speaks
    assert started["protocolVersion"] == 1
    assert error_code(serve.request("start", {"protocolVersion": 1})) == INVALID_REQUEST


def test_a_request_after_shutdown_is_refused_and_stdin_eof_ends_the_process(serve: ServeProcess) -> None:
    serve.start()
    assert serve.result("shutdown") == {}
    for method in ("context", "commands", "shutdown", "start"):
        assert error_code(serve.request(method, {"messages": [], "protocolVersion": 1})) == SHUT_DOWN
    assert serve.close() == 0


def test_a_5_mb_message_over_the_limit_is_refused_without_holding_it(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    server = ServeProcess(root, clean_env(tmp_path), extra_args=("--max-message-bytes", str(1024 * 1024)))
    try:
        server.start()
        big = {"role": "user", "content": "x" * FIVE_MB, "timestamp": 1}
        server.send_json({"jsonrpc": "2.0", "id": 9, "method": "context", "params": {"messages": [big]}})
        answer = server.wait(None)
        assert error_code(answer) == MESSAGE_TOO_LARGE
        still_answers(server)
    finally:
        server.kill()


def test_a_5_mb_context_within_the_default_limit_is_answered(serve: ServeProcess) -> None:
    serve.start()
    messages = [{"role": "user", "content": "about the cache " + "y" * FIVE_MB, "timestamp": 1}]
    answer = serve.request("context", {"messages": messages})
    assert "result" in answer, answer
    still_answers(serve)


# -- cancellation ------------------------------------------------------------------------------
class _HangingRecall(BaseHTTPRequestHandler):
    """A Hindsight look-alike: every call answers 200 {} at once, except recall, which never answers."""

    release = threading.Event()

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        if "recall" in self.path:
            self.release.wait(120)
        body = b"{}"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_PATCH = _answer


def hanging_handler() -> type[_HangingRecall]:
    """A handler class with its own release event (one set by an earlier test must not carry over)."""
    return type("HangingRecall", (_HangingRecall,), {"release": threading.Event()})


@pytest.fixture
def hanging_recall() -> Iterator[str]:
    handler = hanging_handler()
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    handler.release.set()
    server.shutdown()
    server.server_close()


def test_a_cancelled_context_is_answered_at_once_and_the_recall_gives_up(tmp_path: Path, hanging_recall: str) -> None:
    config = f'backend = "hindsight"\n[hindsight]\nbase_url = "{hanging_recall}"\n[recall]\ntimeout_ms = 120000\n'
    root = make_project(tmp_path, config)
    server = ServeProcess(root, clean_env(tmp_path))
    try:
        server.start()
        messages = [{"role": "user", "content": "what did we decide about the cache?", "timestamp": 1}]
        msg_id = server.request_async("context", {"messages": messages})
        time.sleep(0.5)  # the recall is now waiting on the loopback server
        with pytest.raises(TimeoutError):
            server.wait(msg_id, timeout=1.0)
        began = time.monotonic()
        server.cancel(msg_id)
        answer = server.wait(msg_id, timeout=QUICK_S)
        assert error_code(answer) == REQUEST_CANCELLED
        assert time.monotonic() - began < QUICK_S
        still_answers(server)
        # The plugin saw the abort: its recall ended as idle, not as a late success or failure.
        statuses = [n["params"]["text"] for n in server.drain_notifications() if n["method"] == "ui/setStatus"]
        deadline = time.monotonic() + QUICK_S
        while "mem:idle" not in statuses and time.monotonic() < deadline:
            time.sleep(0.1)
            statuses += [n["params"]["text"] for n in server.drain_notifications() if n["method"] == "ui/setStatus"]
        assert "mem:idle" in statuses, statuses
    finally:
        server.kill()


def test_a_cancel_for_an_unknown_or_finished_id_is_ignored(serve: ServeProcess) -> None:
    serve.start()
    serve.cancel(12345)
    serve.send_json({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": [1]}})
    serve.send_json({"jsonrpc": "2.0", "method": "some/notification"})
    still_answers(serve)


# -- the UI both ways --------------------------------------------------------------------------
def test_select_is_a_request_the_host_answers(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    server = ServeProcess(root, clean_env(tmp_path), on_select=lambda req: req["params"]["options"][0])
    try:
        server.start()
        assert server.result("command", {"line": "/hindsight:mode read-only"})["level"] == "info"
        args = {"items": [{"content": "We chose Postgres 16 for the cache."}]}
        result = server.result("callTool", {"name": "hindsight_retain", "arguments": args})
        assert server.selects, "a retain in a read-only session asks the person first"
        question = server.selects[0]["params"]
        assert question["title"] and question["options"]
        assert result["isError"] is (question["options"][0].lower().startswith("no")), result
    finally:
        server.kill()


def test_a_question_never_answered_ends_when_its_request_is_cancelled(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    server = ServeProcess(root, clean_env(tmp_path))  # never answers ui/select
    try:
        server.start()
        server.result("command", {"line": "/hindsight:mode read-only"})
        args = {"items": [{"content": "We chose Postgres 16 for the cache."}]}
        msg_id = server.request_async("callTool", {"name": "hindsight_retain", "arguments": args})
        deadline = time.monotonic() + QUICK_S
        while not server.selects and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.selects
        server.cancel(msg_id)
        assert error_code(server.wait(msg_id, timeout=QUICK_S)) == REQUEST_CANCELLED
        still_answers(server)
    finally:
        server.kill()


def test_notices_and_status_arrive_as_notifications_and_stdout_carries_only_json(serve: ServeProcess) -> None:
    serve.start()
    serve.result("command", {"line": "/hindsight:mode read-only"})
    methods = {n["method"] for n in serve.drain_notifications()}
    assert "ui/setStatus" in methods
    assert serve.close() == 0
    for line in serve.raw_lines:
        assert json.loads(line)["jsonrpc"] == "2.0"


# -- the session's work, end to end ------------------------------------------------------------
def test_agent_end_retains_and_the_next_context_inserts_the_block(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    server = ServeProcess(root, clean_env(tmp_path))
    try:
        server.start(sessionId="one")
        turn = [
            {"role": "user", "content": "We decided to use Postgres 16 for the cache.", "timestamp": 1},
            {"role": "assistant", "content": [{"type": "text", "text": "Noted."}], "timestamp": 2},
        ]
        assert server.result("agentEnd", {"messages": turn}) == {}
        server.result("shutdown")
        assert server.close() == 0
    finally:
        server.kill()
    server = ServeProcess(root, clean_env(tmp_path))
    try:
        server.start(sessionId="two")
        messages = [{"role": "user", "content": "Which Postgres version for the cache?", "timestamp": 3}]
        answer = server.result("context", {"messages": messages})
        assert set(answer) == {"inserts"}
        (insert,) = answer["inserts"]
        assert insert["index"] == 0  # a single message: the block goes first (docs/recall.md#injection)
        assert insert["message"]["customType"] == "hindsight-recall"
        assert "Postgres 16" in insert["message"]["content"]
        tools = {t["name"]: t for t in server.result("tools")["tools"]}
        assert "hindsight_recall" in tools
        assert "$ref" not in json.dumps(tools["hindsight_retain"]["parameters"])
        recalled = server.result("callTool", {"name": "hindsight_recall", "arguments": {"query": "Postgres cache"}})
        assert recalled["isError"] is False
        assert "Postgres 16" in recalled["content"][0]["text"]
    finally:
        server.kill()
    db = tmp_path / "xdg-data" / "hindsight-hooks" / "memory.db"
    with sqlite3.connect(db) as conn:
        assert conn.execute("select count(*) from sqlite_master").fetchone()[0] > 0


def test_sigterm_ends_the_session_with_exit_0(serve: ServeProcess) -> None:
    serve.start()
    serve.proc.send_signal(signal.SIGTERM)
    assert serve.proc.wait(QUICK_S * 3) == 0
