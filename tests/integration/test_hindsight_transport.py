"""HindsightBackend over real loopback sockets (no Hindsight needed): connection reuse,
transport failures, and that abandoning a recall really closes its connection."""

from __future__ import annotations

import contextlib
import json
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hindsight_hooks.backends.base import BankSpec, RecallRequest
from hindsight_hooks.backends.hindsight import HindsightBackend, HindsightError


class TinyServer:
    """A loopback TCP server with one behaviour per instance.

    ``http``: a keep-alive HTTP/1.1 server answering every request with ``{"results": []}``;
    ``hang``: reads the request and never answers; ``close``: accepts and closes at once.
    It records how many connections were accepted and when each one saw the client's EOF.
    """

    def __init__(self, mode: str, tls: ssl.SSLContext | None = None) -> None:
        self.mode = mode
        self.tls = tls
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.requests = 0
        self.eof_at: list[float] = []
        self.got_request = threading.Event()
        self._stop = threading.Event()
        self._conns: list[socket.socket] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            self.accepted += 1
            self._conns.append(conn)
            if self.mode == "close":
                conn.close()
                continue
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _read_request(self, conn: socket.socket, buf: bytes) -> tuple[bytes, bytes] | None:
        while b"\r\n\r\n" not in buf:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            buf += chunk
        head, rest = buf.split(b"\r\n\r\n", 1)
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        while len(rest) < length:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            rest += chunk
        return head, rest[length:]

    def _handle(self, conn: socket.socket) -> None:
        buf = b""
        conn.settimeout(10)
        try:
            if self.tls is not None:
                conn = self.tls.wrap_socket(conn, server_side=True)
            while True:
                got = self._read_request(conn, buf)
                if got is None:
                    break
                self.requests += 1
                self.got_request.set()
                _, buf = got
                if self.mode == "hang":
                    while conn.recv(65536):  # wait for the client to leave
                        pass
                    break
                body = json.dumps({"results": [], "status": "healthy"}).encode()
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + f"Content-Length: {len(body)}\r\n\r\n".encode()
                    + body
                )
        except OSError:
            pass
        self.eof_at.append(time.monotonic())
        with contextlib.suppress(OSError):
            conn.close()

    def stop(self) -> None:
        self._stop.set()
        for c in self._conns:
            with contextlib.suppress(OSError):
                c.close()
        self.sock.close()
        self._thread.join(2)


@contextlib.contextmanager
def serving(mode: str, tls: ssl.SSLContext | None = None) -> Iterator[TinyServer]:
    server = TinyServer(mode, tls)
    try:
        yield server
    finally:
        server.stop()


def test_keep_alive_reuses_connections_for_plain_calls_and_recall_lanes() -> None:
    with serving("http") as srv:
        backend = HindsightBackend(srv.url)
        try:
            for _ in range(5):
                assert backend.health()["status"] == "healthy"
            for _ in range(5):
                assert backend.recall("b", RecallRequest(query="q")).hits == []
        finally:
            backend.close()
        assert srv.requests == 10
        assert srv.accepted == 2  # one shared-client connection + one recall lane


def test_connection_refused_is_transient_without_status() -> None:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    backend = HindsightBackend(f"http://127.0.0.1:{port}", retry_base_ms=1, retry_jitter_ms=1)
    for call in (
        lambda: backend.recall("b", RecallRequest(query="q"), timeout_s=2),
        lambda: backend.health(timeout_s=2),
        lambda: backend.retain_batch("b", [{"content": "x"}], operation_id="op", timeout_s=2),
    ):
        with pytest.raises(HindsightError) as ei:
            call()
        err = ei.value
        assert (err.kind, err.status) == ("transient", None)
        assert "request failed:" in str(err)
    backend.close()


def test_server_that_accepts_then_closes_gets_one_connection_per_call_not_backoff_retries() -> None:
    """No answer at all is definitive for the call (ADR 069): a GET is not retried in-call with
    1-4 s of backoff, which used to cost a hook's ensure about 7 s against such a server."""
    with serving("close") as srv:
        backend = HindsightBackend(srv.url)  # the default 1 s backoff: a retry would be visible
        start = time.monotonic()
        with pytest.raises(HindsightError) as ei:
            backend.health(timeout_s=5)
        took = time.monotonic() - start
        assert (ei.value.kind, ei.value.status) == ("transient", None)
        accepted_after_get = srv.accepted
        with pytest.raises(HindsightError) as ei:
            backend.retain_batch("b", [{"content": "x"}], operation_id="op", timeout_s=5)
        assert ei.value.kind == "transient"
        backend.close()
    # one try; httpcore itself may reconnect once on a dropped keep-alive
    assert 1 <= accepted_after_get <= 2
    assert srv.accepted - accepted_after_get <= 2
    assert took < 0.9, "no backoff delay ran (the first one alone is >= 1 s)"


def test_refused_connection_is_not_retried_in_call() -> None:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    backend = HindsightBackend(f"http://127.0.0.1:{port}")
    start = time.monotonic()
    for call in (
        lambda: backend.health(timeout_s=5),
        lambda: backend.get_bank_config("b", timeout_s=5),
        lambda: backend.ensure_bank("b", BankSpec(), timeout_s=5),
    ):
        with pytest.raises(HindsightError) as ei:
            call()
        assert (ei.value.kind, ei.value.status) == ("transient", None)
    backend.close()
    # three calls; one retry delay alone would be >= 1 s (before: about 3.5 s per call)
    assert time.monotonic() - start < 0.9


def _eof_within(srv: TinyServer, since: float, limit_s: float) -> float:
    end = time.monotonic() + 3
    while not srv.eof_at and time.monotonic() < end:
        time.sleep(0.01)
    assert srv.eof_at, "server never saw the connection close"
    lag = srv.eof_at[0] - since
    assert lag < limit_s, lag
    return lag


def test_abort_signal_mid_recall_returns_promptly_and_closes_the_connection() -> None:
    with serving("hang") as srv:
        backend = HindsightBackend(srv.url)
        sig = threading.Event()
        set_at: list[float] = []

        def fire() -> None:
            set_at.append(time.monotonic())
            sig.set()

        threading.Timer(0.25, fire).start()
        with pytest.raises(HindsightError) as ei:
            backend.recall("b", RecallRequest(query="q"), timeout_s=20, signal=sig)
        returned = time.monotonic()
        assert srv.got_request.is_set()
        assert ei.value.kind == "aborted"
        assert returned - set_at[0] < 0.15
        _eof_within(srv, returned, 0.2)
        backend.close()


def test_recall_deadline_returns_promptly_and_closes_the_connection() -> None:
    with serving("hang") as srv:
        backend = HindsightBackend(srv.url, timeout_ms=30000)
        start = time.monotonic()
        with pytest.raises(HindsightError) as ei:
            backend.recall("b", RecallRequest(query="q"), timeout_s=0.4)
        returned = time.monotonic()
        assert ei.value.kind == "timeout"
        assert 0.4 <= returned - start < 0.5
        _eof_within(srv, returned, 0.2)
        backend.close()


def test_recall_after_an_abandoned_one_uses_a_fresh_connection() -> None:
    with serving("hang") as hang:
        backend = HindsightBackend(hang.url)
        with pytest.raises(HindsightError):
            backend.recall("b", RecallRequest(query="q"), timeout_s=0.2)
        _eof_within(hang, time.monotonic(), 1.0)
        with pytest.raises(HindsightError) as ei:
            backend.recall("b", RecallRequest(query="q"), timeout_s=0.2)
        assert ei.value.kind == "timeout"
        assert hang.accepted == 2  # the abandoned lane was closed, not reused
        backend.close()


def _self_signed(tmp: Path) -> tuple[Path, Path]:
    cert, key = tmp / "cert.pem", tmp / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return cert, key


def test_abort_over_tls_closes_the_connection_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cert, key = _self_signed(tmp_path)
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(cert, key)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the client trusts our test CA via the env, as httpx documents
    with serving("hang", server_ctx) as srv:
        backend = HindsightBackend(srv.url)
        sig = threading.Event()
        threading.Thread(target=lambda: (srv.got_request.wait(10), sig.set()), daemon=True).start()
        with pytest.raises(HindsightError) as ei:
            backend.recall("b", RecallRequest(query="q"), timeout_s=20, signal=sig)
        returned = time.monotonic()
        assert srv.got_request.is_set()  # the TLS handshake and the request really happened
        assert ei.value.kind == "aborted"
        _eof_within(srv, returned, 0.2)
        backend.close()
