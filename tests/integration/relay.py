"""A loopback TCP relay in front of the real Hindsight server, which a test can take down.

Taking it down resets every live connection and closes new ones on arrival, as a server that
died would; bringing it back serves the same port again; closing it stops listening for good.
"""

from __future__ import annotations

import contextlib
import socket
import threading


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
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                dst.sendall(data)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

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
