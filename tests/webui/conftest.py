"""The memory page served in process, on a kit project (a real SQLite file or the real test server).

``Page`` talks plain HTTP to it with ``http.client``, so every header (Host, Origin, Cookie) is
exactly what the test says; the browser tests in ``test_browser.py`` drive the real CLI instead.
"""

from __future__ import annotations

import http.client
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from urllib.parse import urlencode, urlsplit

import pytest

from hindsight_hooks.hooks import Host
from hindsight_hooks.plugin.core import HindsightPlugin
from hindsight_hooks.webui.actions import Actions, PageUI
from hindsight_hooks.webui.server import PageServer

from ..plugin.cmdkit import Kit


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: str

    def csrf(self) -> str:
        found = re.search(r'name=csrf value="([^"]+)"', self.body)
        assert found, "no CSRF field on this page"
        return found.group(1)


@dataclass
class Page:
    """A running page and a client for it; ``cookie`` is what a browser would have kept."""

    server: PageServer
    host: Host
    thread: threading.Thread
    outcome: list[str] = field(default_factory=list)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.port}"

    @property
    def cookie(self) -> str:
        return f"{self.server.cookie_name}={self.server.token}"

    def request(
        self,
        method: str,
        path: str,
        *,
        headers: dict[str, str] | None = None,
        form: dict[str, str] | None = None,
        signed_in: bool = True,
    ) -> Reply:
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=60)
        sent = {"Host": f"127.0.0.1:{self.server.port}"}
        if signed_in:
            sent["Cookie"] = self.cookie
        body = None
        if form is not None:
            body = urlencode(form)
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        sent.update(headers or {})
        try:
            conn.request(method, path, body=body, headers=sent)
            resp = conn.getresponse()
            return Reply(resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read().decode("utf-8"))
        finally:
            conn.close()

    def get(self, path: str, **kw: object) -> Reply:
        return self.request("GET", path, **kw)  # type: ignore[arg-type]


def start_page(kit: Kit, idle_s: float = 600.0) -> Page:
    ui = PageUI()
    host = Host(kit.root, session_file=kit.session_file(), plugins=[HindsightPlugin()], ui=ui, host_name="ui")
    kit.hosts.append(host)
    server = PageServer(Actions(host, ui, kit.root), idle_s=idle_s)
    outcome: list[str] = []
    thread = threading.Thread(target=lambda: outcome.append(server.serve()), daemon=True)
    thread.start()
    return Page(server, host, thread, outcome)


@pytest.fixture
def serve() -> Iterator[Callable[..., Page]]:
    """``serve(kit, idle_s=…)`` starts a page on ``kit``; every page started is stopped at the end."""
    pages: list[Page] = []

    def start(kit: Kit, idle_s: float = 600.0) -> Page:
        page = start_page(kit, idle_s)
        pages.append(page)
        return page

    yield start
    for page in pages:
        if page.thread.is_alive():
            page.server.stop()
            page.thread.join(10)


def path_of(location: str) -> str:
    parts = urlsplit(location)
    return parts.path + (f"?{parts.query}" if parts.query else "")
