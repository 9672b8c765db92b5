"""What the retain core reads from a session: a structural type, not the plugin's runtime.

Building a job needs the session's identity (host, repo, session id, banks), its directory,
its session file, its tags and the configuration. The plugin's ``SessionRuntime`` has all of
them and satisfies :class:`RetainSession` as it is; so can anything else that resolves a
session (a test, a future CLI writer), without importing the plugin.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..backends.base import MemoryBackend
from ..backends.capabilities import Capabilities
from ..config_model import Config
from ..governance.identity import Identity
from ..governance.session_meta import SessionMetaStore
from ..hooks import HostContext

if TYPE_CHECKING:
    from ..queue import RetainQueue


class RetainSession(Protocol):
    """The parts of a resolved session that jobs are built from."""

    @property
    def ctx(self) -> HostContext: ...

    @property
    def cwd(self) -> Path: ...

    @property
    def cfg(self) -> Config: ...

    @property
    def identity(self) -> Identity | None: ...

    @property
    def meta(self) -> SessionMetaStore | None: ...


class EchoSession(Protocol):
    """The parts of a session the echo guard needs: where its record lives, and a notice sink."""

    @property
    def ctx(self) -> HostContext: ...

    @property
    def identity(self) -> Identity | None: ...

    @property
    def state_dir(self) -> Path: ...

    def warn_once(self, key: str, text: str) -> None: ...


class Notices(Protocol):
    """Where a streak of failures ends (the plugin's ``StreakNotifier``)."""

    def success(self, key: str) -> None: ...


class DeliverySession(Protocol):
    """What delivery needs from a session: its backend and queue, the offline cooldowns, the
    last error and outcome it shows in status, and where notices go."""

    last_error: str | None
    last_outcome: dict[str, Any] | None
    cooldown_until: dict[str, float]
    flusher: Any
    """The session's timer flusher (``busy()``, ``exclusive(wait_s)``), or None."""

    @property
    def cfg(self) -> Config: ...

    @property
    def caps(self) -> Capabilities: ...

    @property
    def backend_key(self) -> str: ...

    @property
    def backend_error(self) -> str | None: ...

    @property
    def notifier(self) -> Notices: ...

    def backend(self) -> MemoryBackend | None: ...

    def backend_use(self) -> AbstractContextManager[None]: ...

    def queue(self) -> RetainQueue: ...

    def not_initialised_message(self) -> str: ...

    def in_cooldown(self, bank_id: str) -> bool: ...

    def start_cooldown(self, bank_id: str) -> None: ...

    def user_bank(self) -> str | None: ...

    def warn_once(self, key: str, text: str) -> None: ...


class RecoverySession(DeliverySession, Protocol):
    """What the cursor's recovery reads from a session (``cursor_recovery``): delivery's view
    (backend, queue, cooldowns, notices) plus the project bank to look in and the activity
    it reports when a cursor store had to be moved aside."""

    def project_bank(self) -> str | None: ...

    def set_activity(self, activity: str) -> None: ...


class ImportSession(RetainSession, DeliverySession, Protocol):
    """What an import reads from the session it runs in: everything a retain writer and a
    delivery need, plus the environment (to find other hosts' sessions), the state directory,
    configured paths, the project bank and an info line for progress."""

    @property
    def env(self) -> dict[str, str]: ...

    def ensure_state_dir(self) -> Path: ...

    def resolve_path(self, configured: str) -> Path: ...

    def project_bank(self) -> str | None: ...

    def info(self, text: str) -> None: ...
