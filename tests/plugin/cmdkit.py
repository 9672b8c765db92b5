"""Shared set-up for the slash-command and tool tests (docs/governance.md–docs/tools.md).

Every test drives the plugin only through the ``Host`` harness (``Host.command``,
``Host.call_tool``, ``Host.complete`` and the hooks), in a project folder under ``tmp_path``
with HOME, XDG folders and every ``HINDSIGHT*`` variable isolated. The ``kit`` fixture is
parametrised over both backends: the embedded store (a real SQLite file) and the real
Hindsight test server (a fresh verbatim bank per role, from ``make_bank``). Assertions read
what was stored straight from the store, never from the plugin's own report.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pytest

from hindsight_hooks.backends.base import MemoryHit
from hindsight_hooks.hooks import Host, RecordingUI
from hindsight_hooks.plugin.core import HindsightPlugin
from tests.sqlite_lock import lock_held

Sections = dict[str, dict[str, Any]]
BACKENDS = ["local", "hindsight"]
#: Sections only the user's own config file may set (ADR-063).
USER_ONLY_SECTIONS = frozenset({"banks.user", "scope"})


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def to_toml(top: dict[str, Any], sections: Sections) -> str:
    """A tiny TOML writer for flat sections (enough for a project config)."""
    lines = [f"{k} = {_toml_value(v)}" for k, v in top.items()]
    for name, keys in sections.items():
        lines.append(f"\n[{name}]")
        lines.extend(f"{k} = {_toml_value(v)}" for k, v in keys.items())
    return "\n".join(lines) + "\n"


def closed_port_url() -> str:
    """A loopback URL nothing listens on: connections are refused at once."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def ui_of(host: Host) -> RecordingUI:
    return cast(RecordingUI, host.ctx.ui)


def utc_stamps() -> set[str]:
    """The ``YYYY-MM-DD HH:MM`` UTC stamp now (call before and after an action to bracket it)."""
    return {datetime.now(UTC).strftime("%Y-%m-%d %H:%M")}


@dataclass
class Kit:
    """One test project on one backend."""

    backend: str
    tmp: Path
    root: Path
    db: Path
    url: str | None
    project_bank: str
    user_bank: str
    store: Any  # LocalBackend on the same file, or the suite's HindsightBackend
    monkeypatch: pytest.MonkeyPatch
    sections: Sections = field(default_factory=dict)
    top: dict[str, Any] = field(default_factory=dict)
    hosts: list[Host] = field(default_factory=list)

    # -- config ------------------------------------------------------------------------------
    @property
    def state(self) -> Path:
        return self.root / ".hindsight"

    @property
    def config_path(self) -> Path:
        return self.state / "config.toml"

    @property
    def user_config_path(self) -> Path:
        return self.tmp / "xdg-config" / "hindsight-hooks" / "config.toml"

    def configure(self, top: dict[str, Any] | None = None, sections: Sections | None = None) -> None:
        """Merge keys into the config (``sections`` keyed ``"banks.user"`` etc.) and rewrite it.

        The user bank and its read scope go to the user config file: a project file may not
        choose them (ADR-063). Everything else goes to the project config.
        """
        self.top.update(top or {})
        for name, keys in (sections or {}).items():
            self.sections.setdefault(name, {}).update(keys)
        project = {k: v for k, v in self.sections.items() if k not in USER_ONLY_SECTIONS}
        mine = {k: v for k, v in self.sections.items() if k in USER_ONLY_SECTIONS}
        self.config_path.write_text(to_toml(self.top, project), encoding="utf-8")
        self.user_config_path.parent.mkdir(parents=True, exist_ok=True)
        self.user_config_path.write_text(to_toml({}, mine), encoding="utf-8")

    def use_url(self, url: str) -> None:
        """Point the Hindsight backend at ``url`` (env, as a user would)."""
        self.monkeypatch.setenv("HINDSIGHT_BASE_URL", url)

    # -- hosts -------------------------------------------------------------------------------
    def session_file(self, name: str = "main") -> Path:
        return self.tmp / "sessions" / f"{name}.jsonl"

    def host(
        self,
        session: str | None = "main",
        answers: list[str | None] | None = None,
        start: bool = True,
        host_name: str = "pi",
    ) -> Host:
        ui = RecordingUI(answers=answers)
        sf = self.session_file(session) if session is not None else None
        host = Host(self.root, session_file=sf, plugins=[HindsightPlugin()], ui=ui, host_name=host_name)
        if start:
            host.start()
        self.hosts.append(host)
        return host

    # -- what is on disk / in the store --------------------------------------------------------
    @property
    def queue_file(self) -> Path:
        return self.state / "retain-queue.jsonl"

    @property
    def dead_file(self) -> Path:
        return self.state / "retain-queue.dead.jsonl"

    def jobs(self, path: Path | None = None) -> list[dict[str, Any]]:
        p = path or self.queue_file
        if not p.exists():
            return []
        return [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]

    def meta_files(self) -> list[Path]:
        folder = self.state / "session-meta"
        return sorted(folder.glob("*.json")) if folder.exists() else []

    def units(self, bank: str) -> list[dict[str, Any]]:
        """Every memory unit of ``bank`` as ``{id, text, tags, document_id, context, metadata}``, from the store."""
        if self.backend == "local":
            hits: list[MemoryHit] = self.store.list_units(bank, 500, 0, include_invalid=True)
            with sqlite3.connect(f"file:{self.db}?mode=ro", uri=True) as conn:
                rows = {
                    r[0]: (r[1], json.loads(r[2]))
                    for r in conn.execute("SELECT id, context, metadata_json FROM units WHERE bank_id = ?", (bank,))
                }
            return [
                {
                    "id": h.id,
                    "text": h.text,
                    "tags": h.tags,
                    "document_id": h.document_id,
                    "context": rows[str(h.id)][0],
                    "metadata": rows[str(h.id)][1],
                }
                for h in hits
            ]
        if not self.store.bank_exists(bank, timeout_s=30):
            return []
        items = self.store.list_memories(bank, limit=500, timeout_s=30)["items"]
        return [
            {
                "id": u.get("id"),
                "text": u.get("text"),
                "tags": u.get("tags") or [],
                "document_id": u.get("document_id"),
                "context": u.get("context"),
                "metadata": u.get("metadata") or {},
            }
            for u in items
        ]

    def texts(self, bank: str) -> list[str]:
        return sorted(str(u["text"]) for u in self.units(bank))

    def settle(self, bank: str, timeout_s: float = 90.0) -> None:
        """On the server: wait until none of ``bank``'s operations is pending or processing. It
        extracts memories on its own workers, in no set order, so one memory of an import may be
        listed while another is still being made. The embedded store is done when retain returns."""
        if self.backend != "hindsight" or self.url is None:
            return
        import httpx

        url = f"{self.url.rstrip('/')}/v1/default/banks/{bank}/operations"
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            busy = 0
            for status in ("pending", "processing"):
                reply = httpx.get(url, params={"status": status, "limit": 1}, timeout=30)
                reply.raise_for_status()
                busy += int(reply.json()["total"])
            if not busy:
                return
            time.sleep(0.2)
        raise AssertionError(f"the server still had operations of {bank} under way after {timeout_s} s")

    def close(self) -> None:
        for host in self.hosts:
            try:
                host.shutdown()
            except Exception:
                pass


def _isolate(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key in list(os.environ):
        if key.startswith(("HINDSIGHT", "OPENAI_")):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(tmp / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp / "xdg-config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp / "xdg-data"))


def make_kit(backend: str, tmp: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Kit:
    if backend == "hindsight":
        # Before isolating: the server fixtures read HINDSIGHT_TEST_URL and the real HOME's cache.
        url: str | None = request.getfixturevalue("hindsight_url")
        store: Any = request.getfixturevalue("hindsight_backend")
        make_bank: Callable[..., str] = request.getfixturevalue("make_bank")
    _isolate(tmp, monkeypatch)
    root = tmp / "proj"
    (root / ".hindsight").mkdir(parents=True, mode=0o700)
    (tmp / "sessions").mkdir()
    db = tmp / "data" / "memory.db"
    monkeypatch.setenv("HINDSIGHT_HOOKS_LOCAL__PATH", str(db))
    if backend == "local":
        from hindsight_hooks.backends.local import LocalBackend

        url = None
        project_bank, user_bank = "hh-test-project", "hh-test-user"
        db.parent.mkdir(parents=True)
        store = LocalBackend(db)
        request.addfinalizer(store.close)
    else:
        assert url is not None
        project_bank, user_bank = make_bank("hh-cmd-p"), make_bank("hh-cmd-u")
        monkeypatch.setenv("HINDSIGHT_BASE_URL", url)
    kit = Kit(backend, tmp, root, db, url, project_bank, user_bank, store, monkeypatch)
    kit.configure(
        {"backend": backend},
        {
            "banks.project": {"bank_id": project_bank},
            "banks.user": {"enabled": True, "bank_id": user_bank},
            "hindsight": {"timeout_ms": 15000},
            "mental_models": {"enabled": False},
            "notifications": {"startup": False},
        },
    )
    request.addfinalizer(kit.close)
    return kit


@pytest.fixture(name="kit", params=BACKENDS)
def kit_fixture(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Kit:
    """A project on each backend in turn."""
    return make_kit(str(request.param), tmp_path, monkeypatch, request)


@pytest.fixture(name="local_kit")
def local_kit_fixture(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Kit:
    return make_kit("local", tmp_path, monkeypatch, request)


@pytest.fixture(name="hs_kit")
def hs_kit_fixture(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Kit:
    return make_kit("hindsight", tmp_path, monkeypatch, request)


def store_locked(db: Path) -> contextlib.AbstractContextManager[None]:
    """Another process holds the store's write lock, so every local write fails (busy)."""
    return lock_held(db)


def sid_of(kit: Kit, session: str = "main") -> str:
    """The session id the plugin derives for ``kit.session_file(session)``
    (docs/identity-and-scope.md#session-and-document-ids)."""
    from hindsight_hooks.governance.identity import session_id

    return session_id(kit.session_file(session), Path(os.path.realpath(kit.root)))


def auto_retained(kit: Kit, session: str = "main") -> bool:
    """Whether automatic retain wrote (a receipt) or queued (a job) this session's live document."""
    from hindsight_hooks.queue.receipts import read_receipts

    doc = f"hh-session:{sid_of(kit, session)}"
    receipts = read_receipts(kit.state / "retain-receipts.json")
    queued = [i for j in kit.jobs() for i in j.get("items", [])]
    return any(r.get("document_id") == doc for r in receipts) or any(i.get("document_id") == doc for i in queued)
