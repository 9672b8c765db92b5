"""A loopback HTTP server that records every request body, to prove what reaches "the server".

It answers the few routes a session touches with the real API's shapes (a bank exists, no
mental models, an empty recall, a one-line reflect, a stored retain) and keeps each request's
method, path and raw body, so a test can assert that a secret never left the process. Server
semantics are tested against the real Hindsight server elsewhere; this is only a witness.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


class RecordingServer:
    """``requests`` holds ``(method, path, body)`` for every request received, in order."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, bytes]] = []
        self._guard = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                path = self.path.split("?", 1)[0]
                with server._guard:
                    server.requests.append((self.command, self.path, body))
                reply: Any = {}
                if path.endswith("/memories/recall"):
                    reply = {"results": []}
                elif path.endswith("/reflect"):
                    reply = {"text": "reflected"}
                elif path.endswith("/mental-models"):
                    reply = {"items": []}
                elif path.endswith("/memories") and self.command == "POST":
                    reply = {"success": True, "items_count": len(json.loads(body or b"{}").get("items", []))}
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, name="recording-server", daemon=True).start()

    def bodies(self, path_suffix: str) -> list[dict[str, Any]]:
        """The JSON bodies of the POSTs whose path ends with ``path_suffix``."""
        with self._guard:
            raw = [b for m, p, b in self.requests if m == "POST" and p.split("?", 1)[0].endswith(path_suffix)]
        return [json.loads(b) for b in raw]

    def everything(self) -> bytes:
        """Every request line and body received, as one blob (a secret must appear nowhere)."""
        with self._guard:
            return b"\n".join(f"{m} {p}".encode() + b"\n" + b for m, p, b in self.requests)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def recording_server() -> Iterator[RecordingServer]:
    server = RecordingServer()
    yield server
    server.close()
