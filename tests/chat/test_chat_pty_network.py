"""``hindsight-hooks chat`` in a real pseudo-terminal, talking to real HTTP servers on loopback.

* An OpenAI-compatible chat-completions server (a small ``http.server`` on 127.0.0.1, not a
  patched client): the chat sends the plugin's tools as function schemas, the server asks for
  ``hindsight_recall``, the real plugin runs it against the embedded store, and the tool result
  goes back to the server, which answers with what memory said.
* The real Hindsight test server behind a loopback proxy that holds every recall request:
  Ctrl-C while the recall is in flight sets ``ctx.signal``, the recall is abandoned well before
  its timeout, the run ends as aborted, and the chat goes on.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from ..cli.conftest import Cli
from .conftest import SCRIPT
from .ptyproc import PtyProcess
from .test_chat_pty import PROMPT, read_jsonl, session_files

API_KEY = "sk-test-" + "Loop8back7Fake6Open5Ai4Key3"
FACT = "The nightly export job runs at 02:30 UTC and writes to the cold-storage bucket."


class _Server:
    """A ``ThreadingHTTPServer`` on an ephemeral loopback port, served from a daemon thread."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


# -- an OpenAI-compatible model server ------------------------------------------------------------
class FakeOpenAI:
    """Scripted model: asks for ``hindsight_recall`` once, then answers from the tool result."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.auth: list[str | None] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                fake.requests.append(body)
                fake.auth.append(self.headers.get("Authorization"))
                if self.path != "/v1/chat/completions":
                    self._reply(404, {"error": {"message": "no such route"}})
                    return
                self._reply(200, fake.answer(body))

            def _reply(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = _Server(Handler)
        self.url = self.server.url + "/v1"

    @staticmethod
    def answer(body: dict[str, Any]) -> dict[str, Any]:
        last = body["messages"][-1]
        if last["role"] == "tool":
            message: dict[str, Any] = {
                "role": "assistant",
                "content": "From memory: " + " ".join(last["content"].split()),
            }
            finish = "stop"
        else:
            call = {
                "id": "call_1",
                "type": "function",
                "function": {"name": "hindsight_recall", "arguments": json.dumps({"query": "nightly export job"})},
            }
            message = {"role": "assistant", "content": None, "tool_calls": [call]}
            finish = "tool_calls"
        return {
            "id": "cmpl-loop",
            "object": "chat.completion",
            "model": body["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI()
    yield fake
    fake.server.close()


def test_function_calling_against_a_loopback_openai_compatible_server(
    tmp_path: Path, project: Path, fake_openai: FakeOpenAI
) -> None:
    cli = Cli(tmp_path, project)
    stored = cli("retain", FACT)
    assert stored.returncode == 0 and stored.stdout.strip() == "1 memory stored.", stored.stderr
    env = {**cli.env, "OPENAI_API_KEY": API_KEY, "OPENAI_BASE_URL": fake_openai.url}
    chat = PtyProcess([str(SCRIPT), "chat", "--model", "loop-model"], env, project)
    try:
        chat.expect("with model loop-model")
        chat.expect(PROMPT)
        chat.sendline("When does the nightly export run?")
        out = chat.expect(r"loop-model> From memory: [^\n]*\n", timeout=60)
        assert "-> tool hindsight_recall" in out and "<- hindsight_recall [ok]" in out
        assert "02:30 UTC" in out.split("loop-model> From memory:", 1)[1]
        chat.expect(PROMPT)
        chat.sendline("/exit")
        chat.expect("bye")
        assert chat.wait() == 0
    finally:
        chat.close()

    # two requests: the question with the tool schemas, then the tool result
    assert len(fake_openai.requests) == 2
    assert fake_openai.auth == [f"Bearer {API_KEY}"] * 2
    first, second = fake_openai.requests
    assert first["model"] == "loop-model" and first["tool_choice"] == "auto"
    tools = {t["function"]["name"]: t["function"] for t in first["tools"]}
    assert {"hindsight_recall", "hindsight_retain", "hindsight_reflect"} <= set(tools)
    assert tools["hindsight_recall"]["parameters"]["required"] == ["query"]
    assert [m["role"] for m in second["messages"]][-2:] == ["assistant", "tool"]
    assert second["messages"][-2]["tool_calls"][0]["id"] == second["messages"][-1]["tool_call_id"] == "call_1"
    assert FACT in second["messages"][-1]["content"]
    assert API_KEY not in chat.log

    # the Pi v3 session file holds the whole run, tool call and result included, as a chain
    rows = read_jsonl(session_files(project)[0])
    assert rows[0]["type"] == "session" and rows[0]["version"] == 3
    entries = rows[1:]
    assert [e["message"]["role"] for e in entries] == ["user", "assistant", "toolResult", "assistant"]  # type: ignore[index]
    assert all(e["parentId"] == (entries[i - 1]["id"] if i else None) for i, e in enumerate(entries))
    assert entries[2]["message"]["toolName"] == "hindsight_recall"  # type: ignore[index]


# -- the real Hindsight server behind a proxy that holds recalls ----------------------------------
class RecallHoldingProxy:
    """Forwards every request to the real server, except that recalls wait until released."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.release = threading.Event()
        self.held = 0
        self.client = httpx.Client(timeout=60)
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length", "0") or 0)
                body = self.rfile.read(length) if length else b""
                if self.path.rstrip("/").endswith("/memories/recall"):
                    proxy.held += 1
                    proxy.release.wait(60)
                    with contextlib.suppress(OSError):
                        self._send(503, {}, b'{"detail":"held by the test proxy"}')
                    return
                skip = {"host", "content-length", "connection", "accept-encoding"}
                headers = {k: v for k, v in self.headers.items() if k.lower() not in skip}
                resp = proxy.client.request(self.command, proxy.upstream + self.path, headers=headers, content=body)
                drop = {"content-length", "transfer-encoding", "connection", "content-encoding"}
                self._send(
                    resp.status_code, {k: v for k, v in resp.headers.items() if k.lower() not in drop}, resp.content
                )

            def _send(self, status: int, headers: dict[str, str], data: bytes) -> None:
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Type", headers.get("content-type", "application/json"))
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _forward

        self.server = _Server(Handler)
        self.url = self.server.url

    def close(self) -> None:
        self.release.set()
        self.server.close()
        self.client.close()


@pytest.fixture
def holding_proxy(hindsight_url: str) -> Iterator[RecallHoldingProxy]:
    proxy = RecallHoldingProxy(hindsight_url)
    yield proxy
    proxy.close()


@pytest.mark.integration
def test_ctrl_c_aborts_an_in_flight_recall(tmp_path: Path, project: Path, holding_proxy: RecallHoldingProxy) -> None:
    (project / ".hindsight" / "config.toml").write_text(
        'backend = "hindsight"\n[recall]\ntimeout_ms = 60000\n[notifications]\nstartup = false\n',
        encoding="utf-8",
    )
    env = {**Cli(tmp_path, project).env, "HINDSIGHT_BASE_URL": holding_proxy.url}
    chat = PtyProcess([str(SCRIPT), "chat"], env, project)
    try:
        chat.expect("with model echo")
        chat.expect(PROMPT)
        chat.sendline("What did we decide about the export job?")
        chat.expect("export job")
        deadline = time.monotonic() + 30
        while not holding_proxy.held and time.monotonic() < deadline:  # the recall is really in flight
            chat._pump(0.1)
        assert holding_proxy.held == 1
        chat.interrupt()
        out = chat.expect(PROMPT, timeout=20)  # the recall's own timeout is 60 s
        assert "(aborting)" in out and "(aborted)" in out
        assert "echo:" not in out  # the model was never called with a half-done context
        assert not holding_proxy.release.is_set()  # the server never answered: the abort did it
        chat.sendline("/hindsight:session")
        assert "mode=normal" in chat.expect(PROMPT)
        chat.sendline("/exit")
        chat.expect("bye", timeout=60)
        assert chat.wait() == 0
    finally:
        chat.close()
    entries = read_jsonl(session_files(project)[0])[1:]
    assert [e["message"]["role"] for e in entries] == ["user", "assistant"]  # type: ignore[index]
    assert entries[1]["message"]["stopReason"] == "aborted"  # type: ignore[index]
