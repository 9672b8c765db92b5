"""Hermes Agent memory provider ``hindsight_hooks``: our plugin behind Hermes' ``MemoryProvider`` contract.

Hermes (``hermes-agent`` on PyPI) runs one external memory provider, chosen by ``memory.provider`` in
``$HERMES_HOME/config.yaml``. It ships its own ``hindsight`` provider; ours is named ``hindsight_hooks`` so
both can be installed and the user picks one. Hermes finds it in two ways (ADR-100):

- 0.19.0 and older: the folder ``$HERMES_HOME/plugins/hindsight_hooks/`` that ``hindsight-hooks install
  hermes`` writes, whose ``register(ctx)`` calls :func:`register`;
- newer releases: the ``hermes_agent.memory_providers`` entry point ``hindsight_hooks`` (this module).

How Hermes' lifecycle maps onto the public :class:`~hindsight_hooks.hooks.Host` (one per Hermes session,
named by Hermes' session id, in the folder Hermes runs in):

========================  =======================================================================
Hermes calls              we do
========================  =======================================================================
``initialize``            open the session's Host and ``start`` it (bounded)
``prefetch(query)``       ``context`` over the conversation so far plus the new prompt; the text of our
                          ``<hindsight-memory>`` block is returned (Hermes puts it in the API copy of
                          the user message, inside its ``<memory-context>`` fence)
``post_llm_call`` hook    ``agent_end`` on a short-lived twin of the session: the new part of the
                          turn is on disk before Hermes prints the answer (no network; ADR-101)
``sync_turn``             ``agent_end`` on the session Host: queue (if the hook has not) and deliver
``on_pre_compress``       the same before Hermes drops old messages (their turns are then delivered)
``on_session_end``        the same with the whole conversation
``shutdown``              ``shutdown``: the plugin's bounded flush; anything left stays queued
``get_tool_schemas`` /    ``Host.session_tools`` / ``Host.call_tool``
``handle_tool_call``
``/hindsight:*``          ``Host.command`` (registered by :mod:`.hermes_plugin`, or here when Hermes'
                          context offers ``register_command``)
========================  =======================================================================

Nothing here raises into Hermes, and every Host call is waited for at most the plugin's own limit plus a
second (:class:`~.inprocess.Bounds`). Hermes itself is never imported: the provider is duck-typed against
its ``MemoryProvider`` ABC, so this module loads (and type-checks) without Hermes installed.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..hooks.context import NotifyLevel

if TYPE_CHECKING:
    from ..hooks import Host, Message, Tool
    from .inprocess import Bounds, MemorySession

PROVIDER_NAME = "hindsight_hooks"
"""The ``memory.provider`` value (and plugin folder name); Hermes' own provider is ``hindsight``."""

HOST_NAME = "hermes"
HISTORY_LIMIT = 40
"""Messages of the conversation kept for the recall query (the plugin reads only the last few)."""

_active: dict[str, HindsightHooksProvider] = {}
_active_lock = threading.Lock()


def active_provider(session_id: str | None = None) -> HindsightHooksProvider | None:
    """The open provider of Hermes session ``session_id`` (else the one opened last), for hooks and commands."""
    with _active_lock:
        if session_id and session_id in _active:
            return _active[session_id]
        return next(reversed(_active.values()), None) if _active else None


class HermesUI:
    """Notices go to the ``hindsight_hooks`` logger, and warnings also to Hermes' CLI warning line."""

    def __init__(self, warn: Callable[[str], Any] | None = None) -> None:
        from .inprocess import LoggingUI

        self._log = LoggingUI()
        self._warn = warn

    @property
    def status(self) -> dict[str, str]:
        return self._log.status

    def notify(self, text: str, level: NotifyLevel = "info") -> None:
        self._log.notify(text, level)
        if self._warn is not None and level != "info":
            try:
                self._warn(text)
            except Exception:
                pass

    def set_status(self, key: str, text: str | None) -> None:
        self._log.set_status(key, text)

    def select(self, title: str, options: list[str]) -> str | None:
        return None


def _default_cwd() -> Path:
    """Where Hermes works: the terminal tool's folder when Hermes names one (gateway), else ours."""
    named = os.environ.get("TERMINAL_CWD", "").strip()
    if named and Path(named).is_dir():
        return Path(named)
    return Path.cwd()


def retain_view(messages: Sequence[Any]) -> list[Message]:
    """Hermes' OpenAI-style conversation as the Pi messages ``agent_end`` gets (no system, no block)."""
    from .openai_messages import for_retain

    return for_retain(messages)


class HindsightHooksProvider:
    """Hermes' ``MemoryProvider``, duck-typed (see the module docstring for the mapping).

    ``cwd``, ``session_id`` and ``host_name`` override the defaults (the folder Hermes runs in, Hermes'
    session id or ``$HINDSIGHT_HOOKS_SESSION_ID``, ``"hermes"``); ``plugins`` is for tests that register
    plugin objects instead of loading the ``agent_hooks`` entry points. Constructing one is free: Hermes
    builds providers just to list them (``hermes memory status``).
    """

    def __init__(
        self,
        *,
        cwd: str | os.PathLike[str] | None = None,
        session_id: str | None = None,
        host_name: str = HOST_NAME,
        plugins: list[object] | None = None,
    ) -> None:
        self._cwd = Path(cwd) if cwd is not None else None
        self._fixed_session_id = session_id
        self._host_name = host_name
        self._plugins = plugins
        self._lock = threading.RLock()
        self._session: MemorySession | None = None
        self._durable: Host | None = None
        self._bounds: Bounds | None = None
        self._session_id = ""
        self._hermes_session_id = ""
        self._history: list[Message] = []
        self._ui = HermesUI()
        self._subagent = False
        self._catalog: Host | None = None

    # -- identity ------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return PROVIDER_NAME

    @property
    def session_id(self) -> str:
        """Our session id (Hermes' unless overridden); ``""`` before ``initialize``."""
        return self._session_id

    @property
    def host(self) -> Host | None:
        """The session's Host, once initialized (for commands and tests)."""
        return self._session.host if self._session is not None else None

    def is_available(self) -> bool:
        """Always: with no config the plugin uses its embedded store (no server, no key, no network)."""
        return True

    # -- lifecycle -----------------------------------------------------------------------------
    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Open and start the session's Host. Non-primary agents (subagents, cron) only read memory."""
        try:
            warn = kwargs.get("warning_callback")
            self._ui = HermesUI(warn if callable(warn) else None)
            context = str(kwargs.get("agent_context") or "primary")
            self._subagent = context != "primary"
            self._open(str(session_id or ""))
        except Exception as exc:
            self._ui.notify(f"hindsight: could not start memory for this session: {type(exc).__name__}", "error")

    def _open(self, hermes_session_id: str) -> None:
        from ..hooks import Host
        from ..host_sessions import session_file_for
        from .hookseen import stamp as stamp_seen
        from .inprocess import Bounds, MemorySession, new_session_id

        cwd = self._cwd or _default_cwd()
        sid = (
            self._fixed_session_id
            or os.environ.get("HINDSIGHT_HOOKS_SESSION_ID", "").strip()
            or hermes_session_id
            or new_session_id(self._host_name)
        )
        if self._bounds is None:
            self._bounds = Bounds.for_project(cwd)
        common: dict[str, Any] = {
            "cwd": cwd,
            "session_file": session_file_for(cwd, sid),
            "host_name": self._host_name,
            "ui": self._ui,
            "plugins": self._plugins,
            "is_subagent": self._subagent,
        }
        session = MemorySession(Host(**common), self._bounds)
        stamp_seen(cwd, "hermes", "session_start")  # doctor's evidence that the provider is live here
        durable = Host(**common, short_lived=True)
        with self._lock:
            self._session, self._durable = session, durable
            self._session_id, self._hermes_session_id = sid, hermes_session_id
            self._history = []
        with _active_lock:
            _active[hermes_session_id or sid] = self
        session.start()

    def _close(self, wait: bool) -> None:
        with self._lock:
            session, self._session, self._durable = self._session, None, None
        with _active_lock:
            for key in [k for k, v in _active.items() if v is self]:
                del _active[key]
        if session is None:
            return
        if wait:
            session.close()
        else:  # the old session's bounded flush runs off Hermes' path
            threading.Thread(target=session.close, name="hindsight-session-end", daemon=True).start()

    def shutdown(self) -> None:
        """Hermes is done with the provider: the plugin's bounded flush, the rest stays queued on disk."""
        try:
            self._close(wait=True)
        except Exception:
            pass

    def on_session_switch(
        self,
        new_session_id: str,
        *,
        parent_session_id: str = "",
        reset: bool = False,
        rewound: bool = False,
        **kwargs: Any,
    ) -> None:
        """``/new``, ``/resume``, ``/branch`` open the new session; compression and rewinds continue this
        one (the retain cursor already copes with a transcript that was cut or rewritten)."""
        try:
            if self._session is None:
                return
            if rewound or kwargs.get("reason") == "compression":
                if new_session_id:  # Hermes' hooks name the continuation from now on
                    with _active_lock:
                        _active[str(new_session_id)] = self
                return
            if new_session_id == self._hermes_session_id and not reset:
                return
            self._close(wait=False)
            self._open(str(new_session_id or ""))
        except Exception as exc:
            self._ui.notify(f"hindsight: session switch failed: {type(exc).__name__}", "warning")

    # -- recall --------------------------------------------------------------------------------
    def system_prompt_block(self) -> str:
        return ""

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """The text of our block for this prompt ("" for none): Hermes fences it and sends it with the prompt."""
        try:
            from ..hooks import user_message

            session = self._session
            if session is None or not query.strip():
                return ""
            found = session.recall([*self._history, user_message(query)])
            return "\n\n".join(item.text for item in found)
        except Exception:
            return ""

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        """Nothing to warm: recall runs when the next prompt is known (the plugin caches its answers)."""

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        return None

    # -- retain --------------------------------------------------------------------------------
    def _remember(self, messages: Sequence[Any] | None) -> list[Message]:
        """Our view of the conversation so far; kept (bounded) as the next recall's context."""
        view = retain_view(messages or [])
        if view:
            with self._lock:
                self._history = view[-HISTORY_LIMIT:]
        return view

    def persist_turn(self, messages: Sequence[Any]) -> None:
        """Queue the new part of the conversation durably, without network (Hermes' ``post_llm_call``).

        Runs on Hermes' turn path before it shows the answer, so a process killed right after the turn
        still has the turn on disk; the next session start delivers it (ADR-101).
        """
        try:
            durable, bounds = self._durable, self._bounds
            view = self._remember(messages)
            if durable is None or bounds is None or not view:
                return
            from .inprocess import wait_bounded

            wait_bounded(lambda: durable.agent_end(view), bounds.retain_s, None, "queue turn")
        except Exception:
            pass

    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        """Hermes' end-of-turn write (on its background worker): queue what is new, then deliver."""
        try:
            session = self._session
            if session is None:
                return
            if messages is None:
                messages = [
                    {"role": "user", "content": user_content},
                    {"role": "assistant", "content": assistant_content},
                ]
            view = self._remember(messages)
            if view:
                session.retain(view)
        except Exception:
            pass

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        """Before Hermes summarises old messages away: retain them first (bounded). Adds nothing to the summary."""
        try:
            session = self._session
            view = retain_view(messages)
            if session is not None and view:
                session.retain(view)
        except Exception:
            pass
        return ""

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """A session boundary (exit, ``/new``, expiry): retain the whole conversation (the cursor keeps what
        is new)."""
        self.on_pre_compress(messages)

    def on_delegation(self, task: str, result: str, **kwargs: Any) -> None:
        return None

    def on_memory_write(self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None) -> None:
        """Hermes' built-in MEMORY.md writes stay Hermes' own; the model has our retain tool for ours."""

    # -- tools ---------------------------------------------------------------------------------
    def _tools(self) -> list[Tool]:
        session = self._session
        if session is not None:
            return session.tools()
        # Hermes indexes tool names when it adds the provider, before ``initialize``: the catalog then.
        from ..hooks import Host

        if self._catalog is None:
            self._catalog = Host(self._cwd or _default_cwd(), host_name=self._host_name, plugins=self._plugins)
        return list(self._catalog.tools().values())

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """Our tools in Hermes' shape (``name``, ``description``, self-contained JSON-schema ``parameters``)."""
        try:
            from .bridge_payloads import standalone_schema
            from .inprocess import tool_schema

            return [
                {"name": t.name, "description": t.description, "parameters": standalone_schema(tool_schema(t))}
                for t in self._tools()
            ]
        except Exception:
            return []

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """A JSON string, as Hermes' tools answer: ``{"result": text}``, or ``{"error": text}``."""
        try:
            from .inprocess import tool_text

            session = self._session
            if session is None:
                return json.dumps({"error": "hindsight memory is not initialized for this session"})
            result = session.call_tool(tool_name, dict(args or {}))
            text = tool_text(result)
            return json.dumps({"error": text} if result.is_error else {"result": text}, ensure_ascii=False)
        except Exception as exc:
            return json.dumps({"error": f"{tool_name} failed: {type(exc).__name__}"})

    # -- commands ------------------------------------------------------------------------------
    def command(self, line: str) -> str:
        """Run ``/hindsight:<name> args`` in this session; the text Hermes prints."""
        session = self._session
        if session is None:
            return "hindsight-hooks memory is not initialized for this session"
        result = session.host.command(line)
        return result.text

    # -- set-up (``hermes memory setup`` / ``status``) -----------------------------------------
    def get_config_schema(self) -> list[dict[str, Any]]:
        """Nothing to ask: our config lives in hindsight-hooks' own files and environment."""
        return []

    def save_config(self, values: dict[str, Any], hermes_home: str) -> None:
        return None

    def backup_paths(self) -> list[str]:
        return []


def register(ctx: Any) -> None:
    """Hand Hermes our provider (both discovery paths call this). Newer Hermes gives memory providers the
    full plugin surface: then our commands and end-of-turn hook come from here too."""
    ctx.register_memory_provider(HindsightHooksProvider())
    if callable(getattr(ctx, "register_command", None)):
        from .hermes_plugin import register_session_surface

        try:
            register_session_surface(ctx)
        except Exception:
            pass


__all__ = ["PROVIDER_NAME", "HindsightHooksProvider", "active_provider", "register", "retain_view"]
