"""What the retain core reads from a session: a structural type, not the plugin's runtime.

Building a job needs the session's identity (host, repo, session id, banks), its directory,
its session file, its tags and the configuration. The plugin's ``SessionRuntime`` has all of
them and satisfies :class:`RetainSession` as it is; so can anything else that resolves a
session (a test, a future CLI writer), without importing the plugin.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from ..config_model import Config
from ..governance.identity import Identity
from ..governance.session_meta import SessionMetaStore
from ..hooks import HostContext


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
