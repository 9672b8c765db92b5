"""Newline-delimited JSON-RPC 2.0 framing for ``hindsight-hooks serve --stdio``.

Why its own module: the bridge's promise is "never a crash or a hang", and most of the ways a
peer can break that are in the framing: bytes that are not JSON, a line far larger than any
sane message, a stream that ends mid-line. This module turns each of those into a value (a
parsed message, or a :class:`FrameError` carrying the JSON-RPC error to send) and never raises
on input. It knows nothing of methods or of the Host.

Framing: one JSON value per line, UTF-8, ``\\n``-terminated (a trailing ``\\r`` is ignored).
Only ``\\n`` ends a record, so U+2028/U+2029 inside strings are safe. A line longer than the
reader's limit is read to its end in bounded chunks and discarded, so a 1 GB line costs no
more memory than the limit.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass
from typing import Any, BinaryIO

# -- error codes (every one is listed in docs/pi-bridge-protocol.md) ----------------------------
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
NOT_STARTED = -32001
SHUT_DOWN = -32002
UNSUPPORTED_PROTOCOL = -32003
MESSAGE_TOO_LARGE = -32004
REQUEST_CANCELLED = -32800

DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024
_CHUNK = 1 << 20


@dataclass(frozen=True)
class FrameError:
    """A line that cannot be a message: answer it with this error (``id`` is ``None``)."""

    code: int
    message: str


def error_object(code: int, message: str, data: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return err


def response(msg_id: Any, *, result: Any = None, error: dict[str, Any] | None = None) -> dict[str, Any]:
    """A JSON-RPC response; exactly one of ``result`` / ``error`` is sent."""
    if error is not None:
        return {"jsonrpc": "2.0", "id": msg_id, "error": error}
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def notification(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def request(msg_id: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}


class LineReader:
    """Reads one message per line from a binary stream, within ``max_bytes`` per line."""

    def __init__(self, stream: BinaryIO, max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> None:
        self._stream = stream
        self._max = max(1024, max_bytes)

    def read(self) -> Any | FrameError | None:
        """The next parsed message, a :class:`FrameError`, or ``None`` at end of input.

        Blank lines are skipped. A line over the limit is drained (without keeping it) and
        reported as ``MESSAGE_TOO_LARGE``; bytes that are not UTF-8 JSON as ``PARSE_ERROR``.
        """
        while True:
            line = self._stream.readline(self._max + 1)
            if not line:
                return None
            if len(line) > self._max and not line.endswith(b"\n"):
                self._drain()
                return FrameError(MESSAGE_TOO_LARGE, f"message larger than {self._max} bytes")
            text = line.rstrip(b"\r\n")
            if not text.strip():
                continue
            try:
                return json.loads(text)
            except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
                return FrameError(PARSE_ERROR, f"parse error: {type(exc).__name__}")

    def _drain(self) -> None:
        while True:
            chunk = self._stream.readline(_CHUNK)
            if not chunk or chunk.endswith(b"\n"):
                return


class LineWriter:
    """Writes one message per line to a file descriptor, whole lines only, from any thread."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._lock = threading.Lock()
        self.broken = False

    def write(self, message: dict[str, Any]) -> bool:
        """Send ``message``; ``False`` once the peer has gone (the pipe is closed)."""
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":"), default=str)
        payload = data.encode("utf-8", "replace") + b"\n"
        with self._lock:
            if self.broken:
                return False
            view = memoryview(payload)
            try:
                while view:
                    written = os.write(self._fd, view)
                    view = view[written:]
            except OSError:
                self.broken = True
                return False
        return True
