"""Hermes general plugin ``hindsight-hooks``: our ``/hindsight:*`` commands and the durable end-of-turn write.

Hermes 0.19.0 hands a memory provider's ``register(ctx)`` a context that can only register the provider:
no slash commands, no hooks. Its general plugins (entry-point group ``hermes_agent.plugins``, loaded when
listed in ``plugins.enabled``, which ``hindsight-hooks install hermes`` does) get the full surface, so this
module is one (ADR-100):

- every command of our catalog becomes a Hermes slash command of the same name (``/hindsight:mode
  read-only``), run by :meth:`.hermes.HindsightHooksProvider.command` in the session it is typed in;
- Hermes' ``post_llm_call`` hook, fired on the turn path before the answer is shown, hands the
  conversation to :meth:`~.hermes.HindsightHooksProvider.persist_turn`, which queues the turn on disk
  (ADR-101).

Both act only while our memory provider is the active one; otherwise a command says how to turn it on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

PLUGIN_NAME = "hindsight-hooks"
"""The entry-point name, as ``plugins.enabled`` and ``hermes plugins list`` spell it."""

NOT_ACTIVE = (
    "hindsight-hooks memory is not active in this session: set memory.provider to hindsight_hooks "
    "in Hermes' config.yaml (`hindsight-hooks install hermes` does it) and start a new session"
)


def _catalog() -> list[tuple[str, str, str]]:
    """``(name, description, usage)`` of our commands, from a Host that is never started."""
    from ..hooks import Host

    host = Host(Path.cwd(), host_name="hermes")
    return [(c.name, c.description, c.usage) for c in host.commands().values()]


def _handler(name: str) -> Any:
    def run(raw_args: str = "") -> str:
        from .hermes import active_provider

        provider = active_provider()
        if provider is None or provider.host is None:
            return NOT_ACTIVE
        try:
            return provider.command(f"/{name} {raw_args or ''}".strip())
        except Exception as exc:
            return f"/{name} failed: {type(exc).__name__}"

    return run


def _args_hint(name: str, usage: str) -> str:
    """The part of ``/hindsight:mode normal|read-only|ignored`` after the command name."""
    text = usage.strip()
    for prefix in (f"/{name}", name):
        if text.startswith(prefix):
            return text[len(prefix) :].strip()
    return ""


def on_post_llm_call(session_id: str = "", conversation_history: list[Any] | None = None, **_: Any) -> None:
    """Queue the finished turn durably before Hermes shows it (never raises into Hermes)."""
    try:
        from .hermes import active_provider

        provider = active_provider(session_id)
        if provider is not None and conversation_history:
            provider.persist_turn(conversation_history)
    except Exception:
        pass


def register_session_surface(ctx: Any) -> None:
    """Our commands and the ``post_llm_call`` hook on a Hermes plugin context."""
    for name, description, usage in _catalog():
        ctx.register_command(name, _handler(name), description=description, args_hint=_args_hint(name, usage))
    ctx.register_hook("post_llm_call", on_post_llm_call)


def register(ctx: Any) -> None:
    """Hermes' general-plugin entry point (``hermes_agent.plugins``: ``hindsight-hooks``)."""
    register_session_surface(ctx)


__all__ = ["NOT_ACTIVE", "PLUGIN_NAME", "on_post_llm_call", "register", "register_session_surface"]
