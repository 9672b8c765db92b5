"""``hindsight-hooks chat`` end to end, in a real pseudo-terminal, as a person would use it.

Two sessions in one tmp project on the embedded store: a decision stated in session 1 is
injected into session 2's context, and the echo model shows the block it was given. Slash
commands, tab completion (real GNU readline on the pty), the status in the prompt, the
session files and Ctrl-C are checked on the way.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import SCRIPT, clean_env
from .ptyproc import PtyProcess

DECISION = "Decision: the response cache lives in SQLite, not Redis, because the agent must run offline."
QUESTION = "Which cache store did we pick for the response cache?"
PROMPT = r"you> "


def spawn_chat(project: Path, env: dict[str, str], *extra: str) -> PtyProcess:
    assert SCRIPT.exists(), f"console script missing: {SCRIPT}"
    return PtyProcess([str(SCRIPT), "chat", *extra], env, project)


def session_files(project: Path) -> list[Path]:
    return sorted((project / ".hindsight" / "sessions").glob("*.jsonl"))


def read_jsonl(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def assert_pi_v3_without_injection(path: Path, project: Path) -> list[dict[str, object]]:
    rows = read_jsonl(path)
    header, entries = rows[0], rows[1:]
    assert header["type"] == "session" and header["version"] == 3 and header["cwd"] == str(project)
    previous = None
    for entry in entries:
        assert entry["type"] == "message" and entry["parentId"] == previous
        previous = entry["id"]
        message = entry["message"]
        assert isinstance(message, dict) and message["role"] in ("user", "assistant", "toolResult")
        assert "customType" not in message
    raw = path.read_text(encoding="utf-8")
    # The echo reply quotes the block it was given, so the tag may appear inside an assistant
    # text; what must never appear is a message that *is* the block.
    assert '"customType"' not in raw
    for entry in entries:
        message = entry["message"]
        assert isinstance(message, dict)
        if message["role"] == "user":
            assert not str(message["content"]).lstrip().startswith("<hindsight-memory>")
    return entries


@pytest.fixture
def chat_env(tmp_path: Path) -> dict[str, str]:
    return clean_env(tmp_path)


def test_two_sessions_commands_completion_and_session_files(project: Path, chat_env: dict[str, str]) -> None:
    # -- session 1: state a decision, then leave with /exit
    chat = spawn_chat(project, chat_env)
    try:
        chat.expect(r"hindsight-hooks chat with model echo")
        chat.expect(r"\[mem:[^\]]*\] " + PROMPT)  # the plugin's status is shown in the prompt
        chat.sendline(DECISION)
        reply = chat.expect(PROMPT)
        assert "echo: no memory was injected" in reply
        chat.sendline("/exit")
        chat.expect("bye")
        assert chat.wait() == 0
    finally:
        chat.close()
    first = session_files(project)
    assert len(first) == 1
    entries = assert_pi_v3_without_injection(first[0], project)
    assert [e["message"]["role"] for e in entries] == ["user", "assistant"]  # type: ignore[index]
    assert entries[0]["message"]["content"] == DECISION  # type: ignore[index]

    # -- session 2: a fresh chat is reminded of the decision before its first answer
    chat = spawn_chat(project, chat_env)
    try:
        chat.expect(PROMPT)
        chat.sendline(QUESTION)
        reply = chat.expect(r"echo: you said: " + QUESTION[:20])
        assert "echo: I was given 1 memory block(s):" in reply
        block = reply.split("memory block(s):", 1)[1]
        assert "<hindsight-memory>" in block and "</hindsight-memory>" in block
        assert "SQLite" in block and "Redis" in block
        status = chat.expect(PROMPT)
        assert "[mem:retained] " in status  # the prompt shows the plugin's latest status (after agent_end)

        # a slash command, completed with TAB by readline
        chat.send("/hindsight:mo\t")
        chat.expect(r"/hindsight:mode ")
        chat.sendline("read-only")
        out = chat.expect(PROMPT)
        assert "mode=read-only" in out and "retain=off" in out
        assert "[mem:read-only]" in out
        chat.sendline("/hindsight:mode bogus")
        out = chat.expect(PROMPT)
        assert "warning:" in out and "usage: /hindsight:mode" in out
        chat.sendline("/hindsight:session")
        assert "mode=read-only" in chat.expect(PROMPT)
        chat.sendline("/help")
        listing = chat.expect(PROMPT)
        assert "/hindsight:mode" in listing and "/exit" in listing

        # a command that asks a question: the UI offers numbered options on the terminal
        chat.sendline("/hindsight:import")
        question = chat.expect(r"choose 1-2 \(empty = cancel\): ")
        assert "Continue?" in question and "1) Import" in question and "2) Cancel" in question
        chat.sendline("2")
        assert "import cancelled" in chat.expect(PROMPT)

        # Ctrl-C with a half-typed line clears it and keeps the chat going
        chat.send("half a thought")
        chat.expect("half a thought")
        chat.interrupt()
        chat.expect(r"\^C\r?\n.*" + PROMPT)
        chat.sendline("/hindsight:session")
        assert "mode=read-only" in chat.expect(PROMPT)

        # Ctrl-C on an empty prompt ends the chat cleanly (shutdown runs, exit code 0)
        chat.interrupt()
        chat.expect("bye")
        assert chat.wait() == 0
    finally:
        chat.close()
    files = session_files(project)
    assert len(files) == 2
    second = next(p for p in files if p != first[0])
    entries = assert_pi_v3_without_injection(second, project)
    assert [e["message"]["role"] for e in entries] == ["user", "assistant"]  # type: ignore[index]
    assert entries[0]["message"]["content"] == QUESTION  # type: ignore[index]


def test_ctrl_d_exits_and_a_resumed_session_continues_the_file(project: Path, chat_env: dict[str, str]) -> None:
    path = project / "mine.jsonl"
    chat = spawn_chat(project, chat_env, "--session-file", str(path))
    try:
        chat.expect(PROMPT)
        chat.sendline("first message")
        chat.expect(PROMPT)
        chat.send("\x04")  # Ctrl-D on an empty line
        chat.expect("bye")
        assert chat.wait() == 0
    finally:
        chat.close()
    chat = spawn_chat(project, chat_env, "--session-file", str(path))
    try:
        chat.expect(r"resumed 2 message\(s\)")
        chat.expect(PROMPT)
        chat.sendline("/quit")
        assert chat.wait() == 0
    finally:
        chat.close()
    rows = read_jsonl(path)
    assert sum(1 for r in rows if r["type"] == "session") == 1
    assert len(rows) == 3


class StalledModelServer:
    """A real TCP server that accepts a request and never answers: a model that hangs."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.requests = 0
        self.conns: list[socket.socket] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            try:
                if conn.recv(65536):
                    self.requests += 1
            except OSError:
                pass

    def close(self) -> None:
        for c in self.conns:
            c.close()
        self.sock.close()


@pytest.fixture
def stalled() -> Iterator[StalledModelServer]:
    server = StalledModelServer()
    yield server
    server.close()


def test_ctrl_c_during_a_model_call_aborts_the_run_not_the_chat(
    project: Path, chat_env: dict[str, str], stalled: StalledModelServer
) -> None:
    env = {**chat_env, "OPENAI_API_KEY": "sk-test-" + "Hh7Gg6Ff5Ee4Dd3Cc2Bb1Aa0"}
    chat = spawn_chat(project, env, "--model", "slow-model", "--base-url", f"http://127.0.0.1:{stalled.port}/v1")
    try:
        chat.expect("with model slow-model")
        chat.expect(PROMPT)
        chat.sendline("tell me something slowly")
        chat.expect("tell me something slowly")
        for _ in range(100):  # wait until the request is really in flight
            if stalled.requests:
                break
            chat._pump(0.1)
        assert stalled.requests == 1
        chat.interrupt()
        out = chat.expect(PROMPT, timeout=15)
        assert "(aborting)" in out and "(aborted)" in out
        chat.sendline("/hindsight:session")
        assert "mode=normal" in chat.expect(PROMPT)
        chat.sendline("/exit")
        assert chat.wait() == 0
    finally:
        chat.close()
    assert env["OPENAI_API_KEY"] not in chat.log
    entries = read_jsonl(session_files(project)[0])[1:]
    assert [e["message"]["stopReason"] for e in entries[1:]] == ["aborted"]  # type: ignore[index]
