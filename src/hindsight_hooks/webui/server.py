"""The page's HTTP server: loopback only, a one-time token, no request from anywhere else (ADR 155).

Why each guard:

- **Loopback, random port** (``127.0.0.1:0``): nothing off this machine can connect at all.
- **Token**: another local user, or any program that can reach loopback, must not read memory.
  The printed URL carries a random token once; the first request with it gets an ``HttpOnly``,
  ``SameSite=Strict`` cookie (named after the port, so two pages do not overwrite each other's)
  and is redirected to the same page without the token, so it does not stay in the address bar.
  Every later request needs the cookie. Both are compared with ``hmac.compare_digest``.
- **Host header**: a web page elsewhere can point a DNS name of its own at 127.0.0.1 (DNS
  rebinding); its requests carry that name, so anything but ``127.0.0.1:<port>`` or
  ``localhost:<port>`` is refused before anything else is looked at.
- **POSTs**: an ``Origin`` or ``Sec-Fetch-Site`` saying another site is refused, and every form
  carries a second secret (the CSRF token) that a foreign page cannot read.
- **Headers**: a Content-Security-Policy that allows our one inline style sheet and nothing
  else (no script, no frames, forms only to ourselves), and ``no-store``. The referrer policy is
  ``same-origin``, not ``no-referrer``: with ``no-referrer`` Chromium sends ``Origin: null`` on
  our own form posts, and the Origin check would then refuse them.
- The request log is off: paths carry the token and search words.

The server stops on Ctrl-C and after ``idle_s`` without a request.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections.abc import Callable
from http import HTTPStatus
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from . import render
from .actions import Actions, Answer

LOOPBACK = "127.0.0.1"
MAX_BODY = 64 * 1024
DEFAULT_IDLE_S = 30 * 60
CSP = (
    f"default-src 'none'; style-src '{render.STYLE_HASH}'; img-src 'none'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)


def _same(given: str | None, secret: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode("utf-8"), secret.encode("utf-8"))


class PageServer(ThreadingHTTPServer):
    """A threading HTTP server on ``127.0.0.1`` at a port the system picks."""

    daemon_threads = True
    allow_reuse_address = False

    def __init__(self, actions: Actions, *, idle_s: float = DEFAULT_IDLE_S) -> None:
        super().__init__((LOOPBACK, 0), PageHandler)
        self.actions = actions
        self.idle_s = idle_s
        self.token = secrets.token_urlsafe(32)
        self.csrf = secrets.token_urlsafe(32)
        self.last_request = time.monotonic()
        self.stopped_idle = False
        self._stop = threading.Event()

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        """The one link to print: it carries the token."""
        return f"http://{LOOPBACK}:{self.port}/?token={self.token}"

    @property
    def cookie_name(self) -> str:
        return f"hh_ui_{self.port}"

    def hosts(self) -> set[str]:
        return {f"{LOOPBACK}:{self.port}", f"localhost:{self.port}"}

    def origins(self) -> set[str]:
        return {f"http://{h}" for h in self.hosts()}

    def touch(self) -> None:
        self.last_request = time.monotonic()

    def serve(self) -> str:
        """Serve until Ctrl-C (``"interrupted"``) or ``idle_s`` without a request (``"idle"``)."""
        watchdog = threading.Thread(target=self._watch_idle, name="hh-ui-idle", daemon=True)
        watchdog.start()
        try:
            self.serve_forever(poll_interval=0.2)
        except KeyboardInterrupt:
            return "interrupted"
        finally:
            self._stop.set()
            self.server_close()
        return "idle" if self.stopped_idle else "stopped"

    def handle_error(self, request: Any, client_address: Any) -> None:
        """One line, no traceback: a traceback's values could hold memory text or the token."""
        import sys

        kind = type(sys.exc_info()[1]).__name__
        print(f"hindsight-hooks ui: a request failed ({kind})", file=sys.stderr)

    def stop(self) -> None:
        self._stop.set()
        self.shutdown()

    def _watch_idle(self) -> None:
        while not self._stop.wait(min(1.0, max(0.05, self.idle_s / 4))):
            if time.monotonic() - self.last_request >= self.idle_s:
                self.stopped_idle = True
                self.shutdown()
                return


class PageHandler(BaseHTTPRequestHandler):
    server: PageServer
    server_version = "hindsight-hooks-ui"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        return None  # paths carry the token and search words: nothing is logged

    # -- responses ------------------------------------------------------------------------------
    def _send(self, status: int, body: str, headers: dict[str, str] | None = None) -> None:
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("Referrer-Policy", "same-origin")
        self.send_header("Cache-Control", "no-store")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _refuse(self, status: HTTPStatus, why: str) -> None:
        self._send(status.value, render.error_page(status.value, why))

    # -- checks ---------------------------------------------------------------------------------
    def _host_ok(self) -> bool:
        return (self.headers.get("Host") or "").strip().lower() in self.server.hosts()

    def _cookie(self) -> str | None:
        jar = SimpleCookie()
        try:
            jar.load(self.headers.get("Cookie") or "")
        except CookieError:
            return None
        morsel = jar.get(self.server.cookie_name)
        return morsel.value if morsel is not None else None

    def _same_origin_post(self) -> bool:
        origin = self.headers.get("Origin")
        if origin is not None and origin.lower() not in self.server.origins():
            return False
        site = self.headers.get("Sec-Fetch-Site")
        return site is None or site == "same-origin"

    def _gate(self) -> tuple[str, dict[str, list[str]]] | None:
        """The path and query of an allowed request; ``None`` when it was answered already."""
        self.server.touch()
        if not self._host_ok():
            self._refuse(HTTPStatus.FORBIDDEN, "This page answers only to 127.0.0.1 and localhost.")
            return None
        parts = urlsplit(self.path)
        query = parse_qs(parts.query, keep_blank_values=True)
        if "token" in query:
            if not _same(query["token"][-1], self.server.token):
                self._refuse(HTTPStatus.FORBIDDEN, "Wrong token: open the link `hindsight-hooks ui` printed.")
                return None
            rest = "&".join(p for p in parts.query.split("&") if p and not p.startswith("token="))
            cookie = f"{self.server.cookie_name}={self.server.token}; HttpOnly; SameSite=Strict; Path=/"
            self._send(
                HTTPStatus.SEE_OTHER.value,
                render.page("Signed in", "<p><a href=/>continue</a></p>"),
                {"Set-Cookie": cookie, "Location": (parts.path or "/") + (f"?{rest}" if rest else "")},
            )
            return None
        if not _same(self._cookie(), self.server.token):
            self._refuse(HTTPStatus.FORBIDDEN, "This page needs its token: open the link `hindsight-hooks ui` printed.")
            return None
        return parts.path, query

    # -- methods --------------------------------------------------------------------------------
    def do_GET(self) -> None:
        gated = self._gate()
        if gated is None:
            return
        path, query = gated
        route: Callable[[dict[str, list[str]]], tuple[int, str]] | None = {
            "/": self._memories,
            "/memory": self._memory,
            "/forget": self._forget_step,
            "/queue": lambda q: (200, render.queue_page(self.server.actions.queue())),
            "/doctor": lambda q: (200, render.doctor_page(self.server.actions.doctor())),
        }.get(path)
        if route is None:
            self._refuse(HTTPStatus.NOT_FOUND, "No such page.")
            return
        try:
            status, body = route(query)
        except Exception as exc:  # the page says what kind of failure, never its values
            status, body = 500, render.error_page(500, f"The page failed ({type(exc).__name__}).")
        self._send(status, body)

    do_HEAD = do_GET

    def do_POST(self) -> None:
        gated = self._gate()
        if gated is None:
            return
        path, _ = gated
        if not self._same_origin_post():
            self._refuse(HTTPStatus.FORBIDDEN, "A request from another site was refused.")
            return
        form = self._form()
        if form is None:
            return
        if not _same(_one(form, "csrf"), self.server.csrf):
            self._refuse(HTTPStatus.FORBIDDEN, "The form is stale or foreign (CSRF check): reload the page.")
            return
        if path != "/forget":
            self._refuse(HTTPStatus.NOT_FOUND, "No such action.")
            return
        bank, by, value = _one(form, "bank") or "project", _one(form, "by") or "", _one(form, "value") or ""
        try:
            answer = self.server.actions.forget(bank, by, value)
        except ValueError as exc:
            answer = Answer(str(exc), "warning")
        self._send(200, render.forgot_page(answer))

    def _form(self) -> dict[str, list[str]] | None:
        kind = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if kind != "application/x-www-form-urlencoded":
            self._refuse(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "Only form posts are accepted.")
            return None
        try:
            size = int(self.headers.get("Content-Length") or "0")
        except ValueError:
            size = -1
        if size < 0 or size > MAX_BODY:
            self._refuse(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "The form is too large.")
            return None
        raw = self.rfile.read(size).decode("utf-8", errors="replace")
        return parse_qs(raw, keep_blank_values=True)

    # -- pages ----------------------------------------------------------------------------------
    def _memories(self, query: dict[str, list[str]]) -> tuple[int, str]:
        return 200, render.memories_page(query, self.server.actions.list_memories(query))

    def _memory(self, query: dict[str, list[str]]) -> tuple[int, str]:
        bank, memory_id = _one(query, "bank") or "project", _one(query, "id") or ""
        if not memory_id:
            return 400, render.error_page(400, "Which memory? (id= is missing)")
        return 200, render.memory_page(bank, self.server.actions.show(bank, memory_id))

    def _forget_step(self, query: dict[str, list[str]]) -> tuple[int, str]:
        bank, by, value = _one(query, "bank") or "project", _one(query, "by") or "", _one(query, "value") or ""
        try:
            answer = self.server.actions.forget_plan(bank, by, value)
        except ValueError as exc:
            return 400, render.error_page(400, str(exc))
        return 200, render.confirm_page(bank, by, value, answer, self.server.csrf)


def _one(values: dict[str, list[str]], key: str) -> str | None:
    got = values.get(key)
    return got[-1] if got else None
