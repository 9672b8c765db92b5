"""Hook implementations: the thin wiring between the host contract and our policies.

Every hook is fail-open: exceptions are caught here, turned into a status change and one
notice per streak, and never reach the host.
"""

from __future__ import annotations

from ..backends.base import BackendError, server_unreachable
from ..governance.redact import redact_error
from ..hooks import Command, HostContext, Message, Tool, hookimpl
from . import registry
from .notices import safe_notify, safe_status
from .runtime import STARTUP_ENSURE_MS, SessionRuntime

_OUTAGE_KINDS = frozenset({"timeout", "transient"})
"""Failures that say "the server is not answering", as opposed to "it answered no"."""


def runtime_for(ctx: HostContext) -> SessionRuntime:
    """The session runtime for ``ctx``, built lazily (commands and tools may come first).

    After ``shutdown`` the closed runtime is returned as it is: only ``session_start`` begins a
    new session. Reopening here let a late tool call store a memory and open a store or client
    that nothing would ever close (docs/shutdown.md step 5: later writes get "queue is closed").
    """
    rt = registry.get(ctx)
    if rt is None:
        rt = SessionRuntime(ctx)
        registry.put(ctx, rt)
    return rt


class HindsightPlugin:
    """The plugin object registered under the ``agent_hooks`` entry point."""

    @hookimpl
    def session_start(self, ctx: HostContext) -> None:
        try:
            _session_start(ctx)
        except Exception as exc:
            safe_notify(ctx.ui, f"hindsight: session start failed: {redact_error(exc)}", "error")

    @hookimpl
    def context(self, messages: list[Message], ctx: HostContext) -> list[Message] | None:
        try:
            from ..sanitize import sanitize_if_needed
            from .recall.recall_policy import run_context

            # A lone surrogate or absurd nesting in any message would fail the query, the
            # cache key and the request: the recall reads a safe copy (clean ones pass as is).
            runtime = runtime_for(ctx)
            if runtime.closed:  # after shutdown: the session has ended, nothing to recall into
                return None
            safe = sanitize_if_needed(messages)
            return _encodable_additions(safe, run_context(runtime, safe))
        except Exception as exc:
            rt = registry.get(ctx)
            if rt is not None:
                rt.set_activity("recall-failed")
                rt.warn_once("recall-internal", f"recall failed: {redact_error(exc)}")
            return None

    @hookimpl
    def agent_end(self, messages: list[Message], ctx: HostContext) -> None:
        try:
            from .retaining.retain_policy import run_agent_end

            rt = runtime_for(ctx)
            if rt.closed:  # after shutdown; the cursor did not move, so the next session retains it
                return
            run_agent_end(rt, messages)
            if rt.mental_models is not None:
                rt.mental_models.maybe_refresh()
        except Exception as exc:
            rt2 = registry.get(ctx)
            if rt2 is not None:
                rt2.set_activity("retain-failed")
                rt2.warn_once("retain-internal", f"automatic retain failed: {redact_error(exc)}")

    @hookimpl
    def shutdown(self, ctx: HostContext) -> None:
        rt = registry.get(ctx)
        if rt is None:
            return
        try:
            from .retaining.flusher import shutdown_flush

            shutdown_flush(rt)
        except Exception as exc:
            safe_notify(ctx.ui, f"hindsight: shutdown failed: {redact_error(exc)}", "warning")

    @hookimpl
    def register_commands(self) -> list[Command]:
        from .control.commands import build_commands

        return build_commands(runtime_for)

    @hookimpl
    def register_tools(self) -> list[Tool]:
        from .control.tools import build_tools

        return build_tools(runtime_for)


def _encodable_additions(given: list[Message], result: list[Message] | None) -> list[Message] | None:
    """``result`` with the messages it adds (the memory block) made encodable: recalled text
    from a server may carry lone surrogates, which the host could not send to its model."""
    if result is None:
        return None
    from ..sanitize import sanitize

    ours = {id(m) for m in given}
    return [m if id(m) in ours else sanitize(m) for m in result]


def _session_start(ctx: HostContext) -> None:
    old = registry.get(ctx)
    if old is not None:
        old.close_quietly()
    rt = SessionRuntime(ctx)
    registry.put(ctx, rt)
    loaded = rt.loaded
    if loaded.error:
        safe_notify(ctx.ui, f"hindsight: config error: {loaded.error}; memory is off for this session", "error")
        safe_status(ctx.ui, "hindsight", None)
        return
    if loaded.warnings:
        safe_notify(ctx.ui, "hindsight config: " + "; ".join(loaded.warnings), "warning")
    if not rt.enabled:
        safe_status(ctx.ui, "hindsight", None)
        return
    rt.ensure_state_dir()
    assert rt.meta is not None and rt.identity is not None
    meta = rt.meta.read()
    if meta.failed_closed:
        rt.warn_once("meta", f"session meta {meta.path} is unreadable: memory is off for this session (fail-closed)")
    _connect(rt)
    from .retaining.flusher import start_background

    start_background(rt)
    _warm_meaning(rt)
    if rt.caps.mental_models and rt.cfg.mental_models.enabled:
        from .recall.mental_models import MentalModels

        rt.mental_models = MentalModels(rt)
        if rt.connection == "connected":  # offline: the first agent_end after the cooldown loads
            rt.mental_models.start()
    if rt.cfg.notifications.startup:
        rt.info(_startup_notice(rt))
    rt.set_activity(rt.connection)


def _warm_meaning(rt: SessionRuntime) -> None:
    """Recall by meaning loaded in the background for this session's banks, so its first turn has
    it where the process outlives the hook (ADR 175); it never waits. The banks are the ones recall
    reads (project, then user), named here without importing the recall module: a process that
    runs one ``agent_end`` would pay ~15 ms for it."""
    from ..backends.capabilities import meaning_loader

    loader = meaning_loader(rt.backend() if rt.connection == "connected" else None)
    if loader is not None:
        banks = [bank for bank in (rt.project_bank(), rt.user_bank()) if bank]
        loader.warm_meaning(banks, long_lived=not getattr(rt.ctx, "short_lived", False))


def _connect(rt: SessionRuntime) -> None:
    """Ensure the banks within the startup budget; a dead server costs one bounded wait (ADR 017).

    Once one bank's ensure times out, cannot connect or gets a 5xx, the other banks on the same
    server are not tried again: each still gets its warning (with that error). Banks whose
    server gave no answer at all (timeout, refused) cool down, so the first turns skip recall
    and delivery with status ``offline`` instead of waiting once more; a server that answered
    with a 5xx is tried again on the first turn (ADR 069).
    """
    backend = rt.backend()
    if backend is None:
        rt.connection = "offline"
        rt.warn_once("backend", f"memory backend unavailable: {rt.backend_error or 'not initialised'}")
        return
    ok = True
    timeout_s = min(rt.cfg.hindsight.timeout_ms, STARTUP_ENSURE_MS) / 1000.0
    unreachable: str | None = None
    no_answer = False
    for bank in [b for b in (rt.project_bank(), rt.user_bank()) if b]:
        if unreachable is not None:
            rt.warn_once(f"ensure:{bank}", f"could not reach memory bank {bank}: {unreachable}")
            if no_answer:
                rt.start_cooldown(bank)
            continue
        try:
            rt.ensure_bank(bank, timeout_s=timeout_s)
        except Exception as exc:
            ok = False
            error = redact_error(exc)
            rt.warn_once(f"ensure:{bank}", f"could not reach memory bank {bank}: {error}")
            if isinstance(exc, BackendError) and exc.kind in _OUTAGE_KINDS:
                no_answer = server_unreachable(exc)
                if no_answer:
                    rt.start_cooldown(bank)
                unreachable = error
    rt.connection = "connected" if ok else "offline"


def _startup_notice(rt: SessionRuntime) -> str:
    from ..governance.redact import redact_text

    parts = []
    if rt.caps.remote:
        src = " (from project config)" if rt.location_source() == "project" else ""
        parts.append(f"backend {rt.caps.label} {redact_text(rt.backend_location())}{src}")
    else:
        summary = "" if rt.backend_entry is None else rt.backend_entry.summary
        parts.append(f"backend {rt.caps.label} ({summary})")
    banks = [b for b in (rt.project_bank(), rt.user_bank()) if b]
    parts.append("banks " + (", ".join(banks) if banks else "none"))
    if rt.meta is not None:
        parts.append(f"mode {rt.meta.read().record.mode}")
    if rt.cfg.user_retain.mode == "router":
        parts.append("user_retain=router")
    try:
        parts.append(f"queued {rt.queue().count_active()}")
    except Exception:
        pass
    return "hindsight: " + "; ".join(parts)
