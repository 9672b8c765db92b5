"""``hindsight-hooks serve --stdio``: one agent session's Host, driven over JSON-RPC on stdin/stdout.

Why: hosts that are not Python (Pi's extensions are TypeScript) cannot load the plugin, but
they can run one long-lived child process per session and talk to it. This server is that
child. It builds one public :class:`~hindsight_hooks.hooks.Host` when the peer says ``start``
and maps each method onto it (``context``, ``agentEnd``, ``shutdown``, ``commands``,
``command``, ``tools``, ``callTool``); the plugin's UI comes back the other way
(:mod:`.bridge_ui`). The protocol, every message and every error, is in
``docs/pi-bridge-protocol.md``; ``PROTOCOL_VERSION`` is its version.

Promises, each tested against a real child process:

- **Never a crash or a hang on input.** Framing problems (not JSON, not JSON-RPC, a line over
  the size limit) get JSON-RPC errors and the server reads on (:mod:`.rpc_wire`).
- **Requests run concurrently**, each on a worker thread, so a slow recall never delays a
  cancellation, a command or the answer to a question.
- **Cancellation stops the waiting at once.** ``$/cancelRequest`` answers the request with
  ``REQUEST_CANCELLED`` immediately and, for ``context``, ``command`` and ``callTool``, sets
  the Host's abort signal so an in-flight recall gives up too. Durable work (``agentEnd``
  queues the turn; ``start``/``shutdown``) is never interrupted: only the waiting stops.
- **stdout is the wire only.** fd 1 is pointed at stderr for the life of the process; the
  protocol writes to a private duplicate of the original stdout.
- **The session always ends.** stdin closing, SIGTERM, SIGINT or SIGHUP end it with
  ``Host.shutdown`` (the bounded flush) when the peer did not send ``shutdown`` itself.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, TypeGuard

from ..errors import HindsightHooksError
from ..hooks import Host
from ..host_sessions import session_file_for
from .bridge_payloads import command_answer, command_entry, context_answer, tool_answer, tool_entry
from .bridge_ui import BridgeUI
from .hookseen import stamp as stamp_seen
from .rpc_wire import (
    DEFAULT_MAX_MESSAGE_BYTES,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    NOT_STARTED,
    REQUEST_CANCELLED,
    SHUT_DOWN,
    UNSUPPORTED_PROTOCOL,
    FrameError,
    LineReader,
    LineWriter,
    error_object,
    response,
)

PROTOCOL_VERSION = 1
SERVER_NAME = "hindsight-hooks"
CANCEL_METHOD = "$/cancelRequest"
#: Methods whose cancellation also sets the Host's abort signal (recall and tools stop early).
ABORTABLE = frozenset({"context", "command", "callTool"})
MAX_WORKERS = 8
#: How long the session's end waits for requests still running (a recall, a tool) to finish.
DRAIN_S = 15.0
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class RpcError(HindsightHooksError):
    """A handler's refusal, sent as the request's JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data


class _Stop(HindsightHooksError):
    """Raised in the reading thread by a stop signal."""


@dataclass
class _Call:
    msg_id: str | int
    method: str
    params: dict[str, Any]
    cancelled: threading.Event = field(default_factory=threading.Event)
    answered: bool = False


def _messages(params: dict[str, Any]) -> list[Any]:
    messages = params.get("messages")
    if not isinstance(messages, list):
        raise RpcError(INVALID_PARAMS, "messages: expected an array of messages")
    return messages


def _text(params: dict[str, Any], key: str, *, required: bool = True) -> str | None:
    value = params.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise RpcError(INVALID_PARAMS, f"{key}: expected a string")
    return value


class BridgeServer:
    """Reads requests, runs them against one Host, writes answers; see the module docstring."""

    def __init__(self, reader: LineReader, writer: LineWriter, *, cwd: Path) -> None:
        self._reader = reader
        self._writer = writer
        self._cwd = cwd
        self._local = threading.local()
        self.ui = BridgeUI(writer, self._current_cancelled)
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._calls: dict[str | int, _Call] = {}
        self._pool = ThreadPoolExecutor(max_workers=MAX_WORKERS, thread_name_prefix="hh-serve")
        self._start_requested = False
        self._started = threading.Event()
        self._closing = False  # ``shutdown`` received: every later request is refused
        self._shut_down = False  # Host.shutdown has run (or is running)
        self.host: Host | None = None
        self._handlers: dict[str, Callable[[dict[str, Any]], Any]] = {
            "start": self._start,
            "context": self._context,
            "agentEnd": self._agent_end,
            "shutdown": self._shutdown,
            "commands": self._commands,
            "complete": self._complete,
            "command": self._command,
            "tools": self._tools,
            "callTool": self._call_tool,
        }

    # -- the read loop ------------------------------------------------------------------------
    def run(self) -> None:
        """Serve until stdin ends (or a stop signal), then end the session if the peer did not."""
        try:
            while True:
                message = self._reader.read()
                if message is None:
                    break
                self._dispatch(message)
        finally:
            self.ui.close()
            self._drain(None)
            self._end_session()
            self._drain(None)  # a ``shutdown`` request still being answered
            self._pool.shutdown(wait=False, cancel_futures=True)

    def _drain(self, current: _Call | None) -> None:
        """Wait (at most ``DRAIN_S``) until no request but ``current`` is running."""
        with self._idle:
            self._idle.wait_for(lambda: all(c is current for c in self._calls.values()), timeout=DRAIN_S)

    def _dispatch(self, message: Any) -> None:
        if isinstance(message, FrameError):
            self._writer.write(response(None, error=error_object(message.code, message.message)))
            return
        if isinstance(message, list):
            self._writer.write(response(None, error=error_object(INVALID_REQUEST, "batches are not supported")))
            return
        raw_id = message.get("id") if isinstance(message, dict) else None
        reply_id = raw_id if _valid_id(raw_id) else None
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self._refuse(reply_id, INVALID_REQUEST, 'not a JSON-RPC 2.0 message ("jsonrpc": "2.0")')
            return
        method = message.get("method")
        if method is None and ("result" in message or "error" in message):
            self.ui.answer(message)  # the host answering one of our questions
            return
        if not isinstance(method, str):
            self._refuse(reply_id, INVALID_REQUEST, "method: expected a string")
            return
        if "id" not in message:
            self._notification(method, message.get("params"))
            return
        msg_id = message["id"]
        if not _valid_id(msg_id):
            self._refuse(None, INVALID_REQUEST, "id: expected a string or an integer")
            return
        params = message.get("params", {})
        if not isinstance(params, dict):
            self._refuse(msg_id, INVALID_PARAMS, "params: expected an object")
            return
        self._accept(msg_id, method, params)

    def _accept(self, msg_id: str | int, method: str, params: dict[str, Any]) -> None:
        if method not in self._handlers:
            self._refuse(msg_id, METHOD_NOT_FOUND, f"unknown method: {method}")
            return
        with self._lock:
            if self._closing:
                refusal: tuple[int, str] | None = (SHUT_DOWN, "the session is shut down")
            elif method == "start" and self._start_requested:
                refusal = (INVALID_REQUEST, "start: the session is already started")
            elif method != "start" and not self._start_requested:
                refusal = (NOT_STARTED, "the session is not started: send start first")
            elif msg_id in self._calls:
                refusal = (INVALID_REQUEST, f"id {msg_id!r} is already in use by a pending request")
            else:
                refusal = None
                call = _Call(msg_id, method, params)
                self._calls[msg_id] = call
                if method == "start":
                    self._start_requested = True
                if method == "shutdown":
                    self._closing = True
        if refusal is not None:
            self._refuse(msg_id, *refusal)
            return
        self._pool.submit(self._run_call, call)

    def _notification(self, method: str, params: Any) -> None:
        if method != CANCEL_METHOD or not isinstance(params, dict):
            return  # unknown notifications are ignored, as JSON-RPC asks
        target = params.get("id")
        if not _valid_id(target):
            return
        with self._lock:
            call = self._calls.get(target)
        if call is None:
            return
        call.cancelled.set()
        if call.method in ABORTABLE and self.host is not None:
            self.host.abort()
        self._answer(call, error=error_object(REQUEST_CANCELLED, f"{call.method}: cancelled by the host"))

    # -- running one request ------------------------------------------------------------------
    def _current_cancelled(self) -> bool:
        call: _Call | None = getattr(self._local, "call", None)
        return call is not None and call.cancelled.is_set()

    def _run_call(self, call: _Call) -> None:
        if call.cancelled.is_set():
            self._forget(call)
            return
        self._local.call = call
        try:
            if call.method != "start":
                while not self._started.wait(0.05):
                    if call.cancelled.is_set():
                        return
            result = self._handlers[call.method](call.params)
            self._answer(call, result=result)
        except RpcError as exc:
            self._answer(call, error=error_object(exc.code, str(exc), exc.data))
        except Exception as exc:
            logging.getLogger(__name__).warning("%s failed: %s", call.method, type(exc).__name__)
            self._answer(call, error=error_object(INTERNAL_ERROR, f"{call.method} failed: {type(exc).__name__}"))
        finally:
            self._local.call = None
            self._forget(call)

    def _answer(self, call: _Call, *, result: Any = None, error: dict[str, Any] | None = None) -> None:
        with self._lock:
            if call.answered:
                return
            call.answered = True
        self._writer.write(response(call.msg_id, result=result, error=error))

    def _forget(self, call: _Call) -> None:
        with self._idle:
            if self._calls.get(call.msg_id) is call:
                del self._calls[call.msg_id]
            self._idle.notify_all()

    def _refuse(self, msg_id: Any, code: int, message: str) -> None:
        self._writer.write(response(msg_id, error=error_object(code, message)))

    def _host(self) -> Host:
        if self.host is None:
            raise RpcError(NOT_STARTED, "the session did not start")
        return self.host

    # -- the methods --------------------------------------------------------------------------
    def _start(self, params: dict[str, Any]) -> dict[str, Any]:
        try:
            version = params.get("protocolVersion")
            if version != PROTOCOL_VERSION:
                with self._lock:
                    self._start_requested = False  # the peer may retry with a version we speak
                raise RpcError(
                    UNSUPPORTED_PROTOCOL,
                    f"protocol version {version!r} is not supported",
                    {"supported": [PROTOCOL_VERSION]},
                )
            cwd_text = _text(params, "cwd", required=False)
            cwd = Path(cwd_text) if cwd_text else self._cwd
            if not cwd.is_dir():
                with self._lock:
                    self._start_requested = False
                raise RpcError(INVALID_PARAMS, f"cwd: not a folder: {cwd}")
            session_file = _session_file(cwd, params)
            host_name = _text(params, "hostName", required=False) or "pi"
            host = Host(
                cwd,
                session_file=session_file,
                host_name=host_name,
                ui=self.ui,
                is_subagent=params.get("isSubagent") is True,
            )
            host.start()
            self.host = host
            stamp_seen(cwd, host_name, "session_start")  # doctor's evidence that the bridge is live here
        finally:
            self._started.set()  # settled: waiting requests go on (and find no Host if it failed)
        from .. import __version__

        return {
            "protocolVersion": PROTOCOL_VERSION,
            "server": {"name": SERVER_NAME, "version": __version__},
            "session": {"file": str(session_file), "pid": os.getpid()},
        }

    def _context(self, params: dict[str, Any]) -> dict[str, Any]:
        messages = _messages(params)
        return context_answer(messages, self._host().context(messages))

    def _agent_end(self, params: dict[str, Any]) -> dict[str, Any]:
        self._host().agent_end(_messages(params))
        return {}

    def _shutdown(self, params: dict[str, Any]) -> dict[str, Any]:
        self._drain(getattr(self._local, "call", None))  # the turn's last requests finish first
        self._end_session()
        return {}

    def _commands(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"commands": [command_entry(c) for c in self._host().commands().values()]}

    def _complete(self, params: dict[str, Any]) -> dict[str, Any]:
        line = _text(params, "line") or ""
        return {"candidates": self._host().complete(line)}

    def _command(self, params: dict[str, Any]) -> dict[str, Any]:
        line = _text(params, "line") or ""
        return command_answer(self._host().command(line))

    def _tools(self, params: dict[str, Any]) -> dict[str, Any]:
        host = self._host()
        found = host.tools() if params.get("all") is True else host.session_tools()
        return {"tools": [tool_entry(t) for t in found.values()]}

    def _call_tool(self, params: dict[str, Any]) -> dict[str, Any]:
        name = _text(params, "name") or ""
        arguments = params.get("arguments", {})
        if not isinstance(arguments, dict):
            raise RpcError(INVALID_PARAMS, "arguments: expected an object")
        return tool_answer(self._host().call_tool(name, arguments))

    def _end_session(self) -> None:
        """``Host.shutdown`` once, whoever asks first (the peer, end of input, a signal)."""
        with self._lock:
            if self._shut_down or self.host is None:
                self._shut_down = True
                return
            self._shut_down = True
            self._closing = True
        self.host.shutdown()


def _valid_id(value: Any) -> TypeGuard[str | int]:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _session_file(cwd: Path, params: dict[str, Any]) -> Path:
    """The host's session file when it has one, else the never-written file named by its id."""
    given = _text(params, "sessionFile", required=False)
    if given:
        path = Path(given)
        return path if path.is_absolute() else cwd / path
    session_id = _text(params, "sessionId", required=False) or f"serve-{os.getpid()}"
    return session_file_for(cwd, session_id)


# -- the process --------------------------------------------------------------------------------
def _private_stdout() -> int:
    """A duplicate of stdout for the wire; fd 1 itself then points at stderr, so a stray print
    anywhere in the process can never put a non-protocol line on the wire."""
    sys.stdout.flush()
    wire = os.dup(1)
    os.dup2(2, 1)
    return wire


def serve(cwd: Path, *, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES, stdin: BinaryIO | None = None) -> int:
    """Serve one session on stdin/stdout until stdin closes or a stop signal arrives."""
    if not logging.getLogger().handlers:
        logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="hindsight-hooks serve: %(message)s")
    writer = LineWriter(_private_stdout())
    server = BridgeServer(LineReader(stdin or sys.stdin.buffer, max_message_bytes), writer, cwd=cwd.absolute())

    def stop(signum: int, frame: object) -> None:
        for other in STOP_SIGNALS:  # a second signal must not cut the bounded flush short
            signal.signal(other, signal.SIG_IGN)
        raise _Stop

    if threading.current_thread() is threading.main_thread():
        for signum in STOP_SIGNALS:
            signal.signal(signum, stop)
    try:
        server.run()
    except _Stop:
        pass  # run()'s finally has ended the session
    sys.stderr.flush()
    os._exit(0)  # worker threads may still be inside a cancelled call: do not wait for them


def main(argv: list[str] | None = None) -> int:
    """``python -m hindsight_hooks.hosts.serve_stdio``: the light entry the Pi extension runs."""
    from ..cli_serve import add_serve_arguments

    parser = argparse.ArgumentParser(prog="hindsight-hooks serve", description="one session over JSON-RPC on stdio")
    add_serve_arguments(parser)
    parser.add_argument("--cwd", type=Path, default=Path.cwd(), help="the project folder (default: here)")
    ns = parser.parse_args(argv)
    return serve(ns.cwd, max_message_bytes=ns.max_message_bytes)


if __name__ == "__main__":
    sys.exit(main())
