"""Driving the real plugin through the ``Host`` harness only, and looking at what it left behind.

The hook tests never call plugin functions: they build a tmp project with a real config file,
load the plugin the way a host does (the ``agent_hooks`` entry point), fire hooks and commands,
and then read the real files — the SQLite store (read-only), the queue, receipts, cursors —
to see what was actually retained. Network trouble is real too: a loopback server that accepts
and never answers, and a loopback port with nothing listening.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hindsight_hooks.hooks import Host, Message, RecordingUI

STATE = ".hindsight"
INJECTED_MARKERS = ("<hindsight-memory>", "<hindsight_memories>", "hindsight-recall")

#: A project on the embedded store: the database lives in the project's own state folder.
LOCAL_CONFIG: dict[str, Any] = {
    "backend": "local",
    "local": {"path": f"{STATE}/memory.db"},
    "notifications": {"startup": False},
}


# -- config files --------------------------------------------------------------------------------


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def to_toml(data: dict[str, Any], prefix: str = "") -> str:
    """A nested dict as TOML (tables for dicts, inline values for the rest)."""
    lines = [f"{key} = {_toml_value(value)}" for key, value in data.items() if not isinstance(value, dict)]
    out = "\n".join(lines) + ("\n" if lines else "")
    for key, value in data.items():
        if isinstance(value, dict):
            name = f"{prefix}.{key}" if prefix else key
            body = to_toml(value, name)
            out += f"\n[{name}]\n{body}"
    return out


def merged(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """``base`` deep-updated with ``extra`` (neither is modified)."""
    out = {k: (merged(v, {}) if isinstance(v, dict) else v) for k, v in base.items()}
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merged(out[key], value)
        else:
            out[key] = value
    return out


# -- the project ------------------------------------------------------------------------------------


def _has_schema(conn: sqlite3.Connection) -> bool:
    """A store file another process (a hook's delivery worker) has created but not yet given its
    tables holds no memory yet; reading it then is "nothing stored", not an error."""
    row = conn.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'units'").fetchone()
    return bool(row and row[0])


class Project:
    """A tmp project folder with ``.hindsight/config.toml``; makes hosts and reads state files."""

    def __init__(self, root: Path, config: dict[str, Any]) -> None:
        self.root = root
        (root / STATE).mkdir(parents=True, exist_ok=True)
        self.config: dict[str, Any] = {}
        self.configure(config)

    @property
    def state(self) -> Path:
        return self.root / STATE

    def configure(self, config: dict[str, Any], *, replace: bool = True) -> None:
        """Write the project config file (a later session reads the new one)."""
        self.config = config if replace else merged(self.config, config)
        (self.state / "config.toml").write_text(to_toml(self.config), encoding="utf-8")

    def session_file(self, name: str = "s1") -> Path:
        return self.root / "sessions" / f"{name}.jsonl"

    def host(
        self,
        session: str | None = "s1",
        *,
        ui: RecordingUI | None = None,
        host_name: str = "agent",
        is_subagent: bool = False,
    ) -> Host:
        """A host loading the plugin from its entry point, exactly like a real agent would."""
        return Host(
            self.root,
            session_file=self.session_file(session) if session is not None else None,
            host_name=host_name,
            ui=ui if ui is not None else RecordingUI(),
            is_subagent=is_subagent,
        )

    # -- what is on disk ------------------------------------------------------------------------
    @property
    def db(self) -> Path:
        return self.state / "memory.db"

    @property
    def queue_path(self) -> Path:
        return self.state / "retain-queue.jsonl"

    def queue_jobs(self) -> list[dict[str, Any]]:
        """The valid jobs of the active queue file (blank and broken lines skipped)."""
        return _jsonl(self.queue_path)

    def dead_jobs(self) -> list[dict[str, Any]]:
        return _jsonl(self.queue_path.with_name(self.queue_path.name + ".dead.jsonl"))

    def receipts(self) -> list[dict[str, Any]]:
        path = self.state / "retain-receipts.json"
        if not path.exists():
            return []
        return list(json.loads(path.read_text(encoding="utf-8")).get("receipts", []))

    def units(self) -> list[tuple[str, str]]:
        """``(bank_id, content)`` of every stored memory unit, read through a read-only connection."""
        return [(str(b), str(c)) for b, c in self._query("SELECT bank_id, content FROM units ORDER BY rowid")]

    def documents(self) -> list[tuple[str, str, str]]:
        """``(bank_id, document_id, text)`` of every stored document, its text read the way the
        store itself reads it (``local_write.document_text``: parts since schema 2, ADR-050)."""
        from hindsight_hooks.backends.local_write import document_text

        if not self.db.exists():
            return []
        conn = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True)
        try:
            if not _has_schema(conn):
                return []
            keys = conn.execute("SELECT bank_id, document_id FROM documents ORDER BY created_at").fetchall()
            return [(str(b), str(d), document_text(conn, b, d) or "") for b, d in keys]
        finally:
            conn.close()

    def _query(self, sql: str) -> list[tuple[Any, ...]]:
        if not self.db.exists():
            return []
        conn = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True)
        try:
            return list(conn.execute(sql).fetchall()) if _has_schema(conn) else []
        finally:
            conn.close()

    def unit_count(self, text: str) -> int:
        """How many stored units carry ``text`` (each retained message becomes one unit)."""
        return sum(1 for _, content in self.units() if text in content)

    def units_without_vector(self) -> int:
        """Stored units that have no vector yet (recall by meaning cannot find those)."""
        rows = self._query("SELECT count(*) FROM units WHERE id NOT IN (SELECT unit_id FROM unit_vectors)")
        return int(rows[0][0]) if rows else 0

    def state_text(self) -> str:
        """Every text file of the state folder plus the store's documents and units, as one string."""
        parts: list[str] = []
        for path in sorted(self.state.rglob("*")):
            if path.is_file() and path.name != "memory.db" and not path.name.startswith("memory.db-"):
                parts.append(path.read_text(encoding="utf-8", errors="replace"))
        parts.extend(text for _, _, text in self.documents())
        parts.extend(content for _, content in self.units())
        return "\n".join(parts)


def _jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    out: list[dict[str, Any]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        with contextlib.suppress(ValueError):
            value = json.loads(line)
            if isinstance(value, dict):
                out.append(value)
    return out


def job_text(job: dict[str, Any]) -> str:
    return "\n".join(str(item.get("content", "")) for item in job.get("items", []))


# -- transcripts --------------------------------------------------------------------------------------

T0 = 1_700_000_000_000


def user(text: str, n: int, **extra: Any) -> Message:
    msg: Message = {"role": "user", "content": text, "timestamp": T0 + n * 1000, "id": f"u{n}"}
    msg.update(extra)
    return msg


def assistant(text: str, n: int, **extra: Any) -> Message:
    msg: Message = {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "model": "echo",
        "stopReason": "stop",
        "timestamp": T0 + n * 1000 + 500,
        "id": f"a{n}",
    }
    msg.update(extra)
    return msg


def exchange(n: int, topic: str = "turn") -> list[Message]:
    """One user prompt and its answer, each with a unique findable marker ``q<n>x`` / ``r<n>x``."""
    return [user(f"{topic} question q{n}x about the parser", n), assistant(f"{topic} answer r{n}x done", n)]


def markers(n: int) -> tuple[str, str]:
    return f"q{n}x", f"r{n}x"


def injected_block(messages: list[Message]) -> Message | None:
    """The ``<hindsight-memory>`` message the plugin added for the model, if any."""
    found = [m for m in messages if m.get("customType") == "hindsight-recall"]
    assert len(found) <= 1, "at most one injected block per model call"
    return found[0] if found else None


def block_text(messages: list[Message]) -> str:
    """The injected block's text, or ``""`` when the plugin added none."""
    block = injected_block(messages)
    return "" if block is None else str(block["content"])


_ITEM = re.compile(r"^\d+\. ((?:user|assistant): .*?)(?: \([^()]*\))?$", re.M)


def block_items(block: str) -> list[str]:
    """The block's items as ``role: text``, each without the date it was said."""
    return _ITEM.findall(block)


def asked_the_next_day(project: Project, talk: list[Message], retained: str, *prompt: Message) -> list[str]:
    """The block items a new session's ``prompt`` (its messages so far) gets, after a session on the
    lexical store said ``talk`` (retained by ``agent_end``; ``retained``: a text of it to wait for)."""
    project.configure({"local": {"semantic": "off"}}, replace=False)
    with project.host("monday") as host:
        host.agent_end(talk)
    assert wait_until(lambda: project.unit_count(retained) == 1)
    with project.host("tuesday") as host:
        return block_items(block_text(host.context(list(prompt))))


def statuses(ui: RecordingUI) -> list[str]:
    return [text or "" for key, text in ui.status_history if key == "hindsight"]


# -- loopback servers ---------------------------------------------------------------------------------


class HangingServer:
    """Accepts TCP connections and never answers; counts accepts and peers that hung up."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = int(self.sock.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        self.accepted = 0
        self.hung_up = 0
        self.requests: list[bytes] = []
        self._conns: list[socket.socket] = []
        self._guard = threading.Lock()
        self._stop = threading.Event()
        threading.Thread(target=self._accept, name="hanging-server", daemon=True).start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self._guard:
                self.accepted += 1
                self._conns.append(conn)
            threading.Thread(target=self._drain, args=(conn,), daemon=True).start()

    def _drain(self, conn: socket.socket) -> None:
        """Read (and keep) what the client sends; notice when it closes its end."""
        first = b""
        try:
            while True:
                data = conn.recv(65536)
                if not data:
                    break
                if not first:
                    first = data
                    with self._guard:
                        self.requests.append(data)
        except OSError:
            return
        with self._guard:
            self.hung_up += 1

    def request_lines(self) -> list[str]:
        with self._guard:
            return [r.split(b"\r\n", 1)[0].decode("latin-1") for r in self.requests]

    def close(self) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):
            self.sock.close()
        with self._guard:
            conns, self._conns = self._conns, []
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.close()


def closed_port_url() -> str:
    """A loopback URL where nothing listens (connections are refused at once)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    port = int(s.getsockname()[1])
    s.close()
    return f"http://127.0.0.1:{port}"


def wait_until(check: Callable[[], bool], timeout_s: float = 10.0, step_s: float = 0.02) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(step_s)
    return check()


@contextlib.contextmanager
def elapsed() -> Iterator[list[float]]:
    """``with elapsed() as t: ...`` then ``t[0]`` is the wall time in seconds."""
    box = [0.0]
    start = time.monotonic()
    try:
        yield box
    finally:
        box[0] = time.monotonic() - start


# -- fixtures -----------------------------------------------------------------------------------------


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HOME and XDG dirs inside ``tmp_path``; no Hindsight settings leak in from the caller."""
    for key in list(os.environ):
        if key.startswith("HINDSIGHT_HOOKS_") or key in (
            "HINDSIGHT_BASE_URL",
            "HINDSIGHT_API_KEY",
            "HINDSIGHT_API_KEY_REF",
        ):
            monkeypatch.delenv(key, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    return home


@pytest.fixture
def local_project(tmp_path: Path, isolated: Path) -> Project:
    return Project(tmp_path / "repo", LOCAL_CONFIG)


@pytest.fixture
def hanging_server() -> Iterator[HangingServer]:
    server = HangingServer()
    yield server
    server.close()


class StubHindsight:
    """A tiny Hindsight look-alike on a real loopback socket, for timing behaviour the real test
    server cannot be made to show on demand (a mental-model list that takes its time, a server
    that answers 503 and then recovers). Server semantics are tested against the real server;
    this only answers the few routes the hooks call, with the real API's shapes.

    - ``GET …/banks/<id>/config`` → ``{}`` (the bank exists); ``PUT …/banks/<id>`` → ``{}``.
    - ``POST …/memories/recall`` → ``{"results": memories}`` after ``recall_delay_s``.
    - ``GET …/mental-models`` waits for ``models_gate`` (set = no wait), then ``{"items": models}``;
      ``POST …/mental-models`` records the body in ``created``.
    - ``POST …/memories`` (retain) → ``{"success": true, "items_count": n}`` after ``retain_delay_s``.
    - While ``down`` is true every request gets a 503.
    - ``recall_errors``: statuses the next recalls answer with, one per recall (then normal again).
    """

    def __init__(self) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.memories: list[dict[str, Any]] = []
        self.models: list[dict[str, Any]] = []
        self.created: list[dict[str, Any]] = []
        self.requests: list[str] = []
        self.recall_delay_s = 0.0
        self.retain_delay_s = 0.0
        self.recall_errors: list[int] = []
        self.models_gate = threading.Event()
        self.models_gate.set()
        self.down = False
        self._guard = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _reply(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                path = self.path.split("?", 1)[0]
                with stub._guard:
                    stub.requests.append(f"{self.command} {self.path}")
                if stub.down:
                    self._reply(503, {"detail": "stub is down"})
                    return
                if path.endswith("/mental-models"):
                    stub.models_gate.wait(30)
                    if self.command == "POST":
                        with stub._guard:
                            stub.created.append(json.loads(raw or b"{}"))
                        self._reply(200, {"mental_model_id": "x", "operation_id": "op"})
                    else:
                        self._reply(200, {"items": list(stub.models)})
                elif path.endswith("/memories/recall"):
                    with stub._guard:
                        error = stub.recall_errors.pop(0) if stub.recall_errors else None
                    if error is not None:
                        self._reply(error, {"detail": f"stub recall error {error}"})
                        return
                    time.sleep(stub.recall_delay_s)
                    self._reply(200, {"results": list(stub.memories)})
                elif path.endswith("/memories"):
                    time.sleep(stub.retain_delay_s)
                    items = json.loads(raw or b"{}").get("items", [])
                    self._reply(200, {"success": True, "items_count": len(items), "async": False})
                else:
                    self._reply(200, {})

            do_GET = do_POST = do_PUT = _handle

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, name="stub-hindsight", daemon=True).start()

    def request_lines(self) -> list[str]:
        with self._guard:
            return list(self.requests)

    def close(self) -> None:
        self.models_gate.set()
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def stub_hindsight() -> Iterator[StubHindsight]:
    server = StubHindsight()
    yield server
    server.close()
