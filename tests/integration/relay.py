"""A loopback TCP relay in front of the real Hindsight server, which a test can take down.

Taking it down resets every live connection and closes new ones on arrival, as a server that
died would; bringing it back serves the same port again; closing it stops listening for good.
``die_after_requests(n)`` makes it die by itself *mid-flush*: the n-th request reaches the server
(which processes it) but its response is dropped, the worst moment for an at-least-once queue.
"""

from __future__ import annotations

import contextlib
import socket
import threading

_METHODS = {b"GET", b"POST", b"PUT", b"PATCH", b"DELETE", b"HEAD"}


class SwitchableRelay:
    """A TCP relay to the real server that can be taken down and brought back on its port."""

    def __init__(self, target_url: str) -> None:
        hostport = target_url.split("://", 1)[1].split("/", 1)[0]
        host, _, port = hostport.rpartition(":")
        self.target = (host, int(port))
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.up = True
        self.refused = 0
        self.requests = 0
        self._die_after: int | None = None
        self._conns: list[socket.socket] = []
        self._guard = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            if not self.up:
                self.refused += 1
                client.close()
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=10)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self._guard:
                self._conns += [client, upstream]
            for a, b, upward in ((client, upstream, True), (upstream, client, False)):
                threading.Thread(target=self._pipe, args=(a, b, upward), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket, upward: bool) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                if upward and data.split(b" ", 1)[0] in _METHODS:
                    with self._guard:
                        self.requests += 1
                elif not upward and self._die_after is not None and self.requests >= self._die_after:
                    self._die_after = None
                    self.take_down()  # the request was processed; its answer never arrives
                    return
                dst.sendall(data)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    def die_after_requests(self, n: int) -> None:
        """Take itself down when the response to the n-th request from now arrives (dropping it)."""
        with self._guard:
            self._die_after = self.requests + n

    def take_down(self) -> None:
        """The server 'dies': live connections are reset, new ones closed on arrival."""
        self.up = False
        with self._guard:
            conns, self._conns = self._conns, []
        for c in conns:
            with contextlib.suppress(OSError):
                c.shutdown(socket.SHUT_RDWR)
            c.close()

    def bring_back(self) -> None:
        self.up = True

    def close(self) -> None:
        self._closed = True
        self.take_down()
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
