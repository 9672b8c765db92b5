"""Everything one host session needs, resolved once at ``session_start`` (or lazily).

``SessionRuntime`` owns the effective config, the identity (banks, tags, sid), the state
folder, the backend, the queue and the cursor store. Hooks, commands and tools all go
through it so that each of them sees the same facts and the same failure streaks.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..backends.base import BackendError, BankSpec, MemoryBackend
from ..backends.capabilities import OFF, Capabilities
from ..backends.factory import BackendEntry, backend_entry
from ..config import LoadedConfig, load_config, resolve_api_key, resolve_local_path, resolve_path
from ..config_model import Config
from ..fsutil import ensure_private_dir
from ..governance import identity as ident
from ..governance.redact import redact_error
from ..governance.session_meta import SessionMetaStore
from ..hooks import HostContext
from ..retain.banks import BankEnsurer, bank_spec, forget
from .notices import StreakNotifier, safe_notify, safe_status
from .status import StatusLine

if TYPE_CHECKING:
    from ..queue import RetainQueue
    from ..retain.cursor import CursorStore

STATE_DIR_NAME = ".hindsight"
STARTUP_ENSURE_MS = 5000
CLOSE_DRAIN_S = 0.5
"""How long closing waits for background backend work (an abandoned recall, a background flush)
to leave the backend before handing the close to the last of them (ADR 018)."""


class SessionRuntime:
    """The resolved session: config, identity, backend, queue, cursor, meta, status."""

    def __init__(self, ctx: HostContext, *, env: dict[str, str] | None = None) -> None:
        self.ctx = ctx
        self.env: dict[str, str] = dict(os.environ) if env is None else env
        self.cwd = Path(os.path.realpath(ctx.cwd))
        self.loaded: LoadedConfig = load_config(self.cwd, env=self.env)
        self.cfg: Config = self.loaded.config
        name = "off" if self.loaded.error else self.cfg.effective_backend()
        # What the configured backend is and can do, known before it is built (ADR 140).
        self.backend_entry: BackendEntry | None = backend_entry(name)
        self.caps: Capabilities = OFF if self.backend_entry is None else self.backend_entry.capabilities
        self.enabled = self.backend_entry is not None
        self.notifier = StreakNotifier()
        self.connection = "idle"
        self.last_error: str | None = None
        self.last_outcome: dict[str, Any] | None = None
        self.cooldown_until: dict[str, float] = {}
        self._backend: MemoryBackend | None = None
        self._backend_error: str | None = None
        self._backend_lock = threading.Lock()
        self._queue: RetainQueue | None = None
        self._cursors: CursorStore | None = None
        self._uses = 0
        self._uses_cv = threading.Condition()
        self._close_deferred = False
        self.closed = False
        self.flusher: Any = None
        self.mental_models: Any = None
        self.state_dir = self.cwd / STATE_DIR_NAME
        self.identity: ident.Identity | None = None
        self.meta: SessionMetaStore | None = None
        self.status = StatusLine(self.cfg.status, "")
        if self.enabled:
            self.identity = ident.resolve_identity(ctx, self.cfg)
            label = (self.identity.project_bank_id or "").removeprefix("hh-project-")
            self.status = StatusLine(self.cfg.status, label)
            self.meta = SessionMetaStore(self.state_dir / "session-meta", self.identity.sid)

    # -- state folder -----------------------------------------------------------------------
    def ensure_state_dir(self) -> Path:
        return ensure_private_dir(self.state_dir, gitignore=True)

    def resolve_path(self, configured: str) -> Path:
        """A configured path: ``$VAR`` and ``~`` expanded, relative paths under the project cwd."""
        return resolve_path(configured, self.cwd, self.env)

    # -- backend ----------------------------------------------------------------------------
    @property
    def backend_key(self) -> str:
        """Which store a bank lives in: the backend's label and its location (URL or path)."""
        return self.caps.label + ":" + self.backend_location()

    def backend_location(self) -> str:
        """Where the backend keeps memory (a URL or a path, not redacted); empty when off."""
        entry = self.backend_entry
        return "" if entry is None else entry.location(self.cfg, self.local_path)

    @property
    def local_path(self) -> Path:
        return resolve_local_path(self.cfg, self.env, cwd=self.cwd)

    def backend(self) -> MemoryBackend | None:
        """The backend, built on first use; ``None`` (with the reason kept) when it cannot be."""
        if not self.enabled or self.closed:
            return None  # closed: never reopen a store or client that nothing would close
        with self._backend_lock:
            if self._backend is None and self._backend_error is None:
                from ..backends.factory import make_backend

                try:
                    self._backend = make_backend(
                        self.cfg,
                        api_key=resolve_api_key(self.cfg, self.env),
                        local_path=self.local_path,
                    )
                except Exception as exc:
                    self._backend_error = redact_error(exc)
            return self._backend

    @property
    def backend_error(self) -> str | None:
        return self._backend_error

    def location_source(self) -> str:
        """Which config source set the backend's location: default, user, project or env."""
        entry = self.backend_entry
        return "default" if entry is None else self.loaded.sources.get(entry.location_key, "default")

    def not_initialised_message(self) -> str:
        """Why there is no backend. With the open error when there was one: "not initialised"
        alone sent users looking for a setup step when the store itself could not be opened."""
        title = "Memory backend" if self.backend_entry is None else self.backend_entry.title
        if self._backend_error:  # "could not be opened: open failed: …" said it twice
            return f"{title} could not be opened: {self._backend_error.removeprefix('open failed: ')}"
        return f"{title} is not initialised for this session."

    def bank_spec(self, bank_id: str) -> BankSpec:
        return bank_spec(self.cfg, self.user_bank(), bank_id)

    def ensure_bank(self, bank_id: str, timeout_s: float | None = None) -> None:
        """Create the bank if missing, at most once per process after a success."""
        backend = self.backend()
        if backend is None:
            raise BackendError("ensure bank", "permanent", self.not_initialised_message())
        BankEnsurer(backend, self.backend_key, self.bank_spec)(bank_id, timeout_s=timeout_s)

    def forget_ensured(self, bank_id: str) -> None:
        forget(self.backend_key, bank_id)

    # -- queue and cursor -------------------------------------------------------------------
    def queue(self) -> RetainQueue:
        if self._queue is None:
            from ..queue import RetainQueue

            self._queue = RetainQueue(
                self.resolve_path(self.cfg.retain.queue_path), self.cfg.queue, receipts_path=self.receipts_path
            )
            if self.closed:  # first asked for after shutdown: it refuses writes like the old one
                self._queue.close()
        return self._queue

    def cursors(self) -> CursorStore:
        if self._cursors is None:
            from ..retain.cursor import CursorStore

            self._cursors = CursorStore(self.state_dir / "retain-cursors.json", self.cfg.queue.lock_timeout_ms)
        return self._cursors

    @property
    def receipts_path(self) -> Path:
        return self.state_dir / "retain-receipts.json"

    # -- banks ------------------------------------------------------------------------------
    def project_bank(self) -> str | None:
        if self.identity is None or not self.cfg.banks.project.enabled:
            return None
        return self.identity.project_bank_id

    def user_bank(self) -> str | None:
        return None if self.identity is None else self.identity.user_bank_id

    # -- status -----------------------------------------------------------------------------
    def set_activity(self, activity: str) -> None:
        mode = None
        if self.meta is not None and activity in ("idle", "connected"):
            mode = self.meta.read().record.mode
        text = self.status.text(activity, mode)
        if text is not None or self.status.should_clear():
            safe_status(self.ctx.ui, "hindsight", text)

    def warn_once(self, key: str, text: str) -> None:
        self.notifier.failure(self.ctx.ui, key, text)

    def info(self, text: str) -> None:
        safe_notify(self.ctx.ui, text, "info")

    def in_cooldown(self, bank_id: str) -> bool:
        until = self.cooldown_until.get(bank_id)
        return until is not None and time.monotonic() < until

    def start_cooldown(self, bank_id: str) -> None:
        self.cooldown_until[bank_id] = time.monotonic() + self.cfg.recall.failure_cooldown_ms / 1000.0

    # -- background work and teardown ---------------------------------------------------------
    @contextlib.contextmanager
    def backend_use(self) -> Iterator[None]:
        """Mark backend work in flight. Closing never pulls the backend from under it (ADR 018).

        Background threads (recall lanes, timer and startup flushes) wrap their backend calls
        in this; a close that finds work in flight waits up to ``CLOSE_DRAIN_S`` and otherwise
        leaves the close to the last user. Closing a SQLite connection while another thread is
        inside a statement on it can crash the whole host process.
        """
        with self._uses_cv:
            self._uses += 1
        try:
            yield
        finally:
            with self._uses_cv:
                self._uses -= 1
                if self._uses == 0:
                    self._uses_cv.notify_all()
                    if self._close_deferred:
                        self._close_deferred = False
                        self._close_backend_locked()

    def _close_backend_locked(self) -> None:
        """Close the backend; the caller holds ``_uses_cv`` so no new use starts half-way."""
        with self._backend_lock:
            backend, self._backend = self._backend, None
            self._backend_error = self._backend_error or "closed"
        if backend is None:
            return
        try:
            backend.close()
        except Exception:
            pass

    def close_quietly(self, drain_s: float = CLOSE_DRAIN_S) -> None:
        """Stop background work, refuse later queue writes, close the backend (never raises)."""
        self.closed = True
        try:
            if self.flusher is not None:
                self.flusher.stop(1.0)
        except Exception:
            pass
        try:
            if self._queue is not None:
                self._queue.close()
        except Exception:
            pass
        with self._uses_cv:
            if not self._uses_cv.wait_for(lambda: self._uses == 0, timeout=max(0.0, drain_s)):
                self._close_deferred = True
                return
            self._close_backend_locked()
