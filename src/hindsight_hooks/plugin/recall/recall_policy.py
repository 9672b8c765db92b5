"""``context``: automatic recall (docs/recall.md). Always fails open, always bounded.

One recall per scope runs in parallel under a single ``recall.timeout_ms`` deadline; a bank
that fails is isolated (the others still render), a bank that timed out or could not be
reached cools down so a dead server costs one bounded wait, not one per turn.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ALL_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ...backends.base import BackendError, InContext, MemoryBackend, RecallRequest, RecallResult, server_unreachable
from ...governance import identity as ident
from ...governance.redact import redact_error
from ...governance.session_meta import effective
from ...hooks import Message
from ...retain.echo_guard import note_injected
from ...retain.injected import is_injected
from .mental_models import FIRST_TURN_WAIT_S
from .recall_cache import RecallCache
from .recall_query import QueryKind, compose_query, local_search_text, query_body
from .render import BankBlock, inject, quality_filter, render_block

if TYPE_CHECKING:
    from ..runtime import SessionRuntime

_CACHE = RecallCache(ttl_ms=float("inf"))
"""Process-wide (docs/recall.md#cache). Entries are bounded by the LRU size; each session's own
``recall.cache_ttl_ms`` decides at lookup whether an entry is still fresh for it."""
_EXECUTOR = ThreadPoolExecutor(max_workers=8, thread_name_prefix="hindsight-recall")
_POLL_S = 0.02


@dataclass
class Scope:
    kind: QueryKind
    bank_id: str
    tag_groups: list[dict[str, Any]] | None


def scopes_for(rt: SessionRuntime) -> list[Scope]:
    """The read scopes in order: project, then user."""
    out: list[Scope] = []
    if rt.identity is None:
        return out
    project = rt.project_bank()
    if project:
        out.append(Scope("project", project, ident.project_scope_groups(rt.identity.repo_key)))
    user = rt.user_bank()
    if user:
        out.append(Scope("user", user, ident.user_scope_groups(rt.cfg, rt.identity.host) or None))
    return out


def _last_user_content(msgs: list[Message]) -> Any:
    for m in reversed(msgs):
        if m.get("role") == "user" and not is_injected(m):
            return m.get("content")
    return None


def _live_document(rt: SessionRuntime) -> str:
    """The document this session's transcript is retained under."""
    return ident.live_document_id(rt.identity.sid) if rt.identity is not None else ""


def run_context(rt: SessionRuntime, messages: list[Message]) -> list[Message] | None:
    cfg = rt.cfg
    rc = cfg.recall
    if not rt.enabled or not rc.enabled:
        return None
    if rt.ctx.is_subagent:
        return None
    if rt.meta is not None and not effective(rt.meta.read().record).recall:
        return None
    scopes = scopes_for(rt)
    if not scopes:
        return None
    if rt.ctx.signal.is_set():
        rt.set_activity("idle")
        return None
    if rc.injection_position == "append" and (not messages or messages[-1].get("role") != "user"):
        return None
    active = [s for s in scopes if not rt.in_cooldown(s.bank_id)]
    if not active:
        rt.set_activity("offline")
        return None

    started = time.monotonic()
    clean = [m for m in messages if not is_injected(m)]
    # The session is part of the key: its own messages are left out of the block (ADR 183).
    key = _CACHE.key(
        [[s.bank_id, s.tag_groups] for s in active] + [rt.backend_key, _live_document(rt)],
        _last_user_content(clean),
    )
    hit = _CACHE.get(key)
    if hit is not None and time.monotonic() * 1000.0 - hit.stored_at_ms >= rc.cache_ttl_ms:
        hit = None
    if hit is not None:
        rt.set_activity(f"recalled:{hit.count}")
        if not hit.render:
            return None
        note_injected(rt, hit.render)  # the cache is shared: this session may not have seen it yet
        return inject(messages, hit.render, hit.timestamp_ms, rc.injection_position)

    backend = rt.backend()
    if backend is None:
        rt.set_activity("offline")
        rt.warn_once("backend", f"memory backend unavailable: {rt.backend_error or 'not initialised'}")
        return None

    rt.set_activity("recalling")
    blocks, failures, aborted = _recall_all(rt, backend, active, clean)
    if aborted:
        rt.set_activity("idle")
        return None
    blocks = quality_filter(blocks)
    models = _mental_models_text(rt, started + FIRST_TURN_WAIT_S)
    render = render_block(blocks, top_k=rc.top_k, mental_models=models)
    count = sum(min(len(b.hits), rc.top_k) for b in blocks)
    all_failed = len(failures) == len(active)
    timestamp_ms = int(time.time() * 1000)
    if not all_failed:
        _CACHE.put(key, render=render, blocks=blocks, failures=failures, timestamp_ms=timestamp_ms, count=count)
    if failures and all_failed:
        rt.warn_once(
            "recall",
            "memory recall failed for every bank: " + "; ".join(f"{f['bank_id']}: {f['error']}" for f in failures),
        )
    elif not failures:
        rt.notifier.success("recall")
    if count:
        rt.set_activity(f"recalled:{count}")
    else:
        rt.set_activity("recall-failed" if failures else "no-memory")
    if cfg.notifications.recall:
        failed = ", ".join(f["bank_id"] for f in failures)
        rt.info(
            f"recalled {count} memories from {', '.join(s.bank_id for s in active)}"
            + (f"; failed: {failed}" if failed else "")
            if count
            else "no matching memory"
        )
    if rc.store_last_recall:
        _snapshot(rt, blocks, failures, render)
    if not render:
        return None
    note_injected(rt, render)  # so a reply that quotes these lines is not retained back (ADR-065)
    return inject(messages, render, timestamp_ms, rc.injection_position)


def _recall_all(
    rt: SessionRuntime, backend: MemoryBackend, scopes: list[Scope], msgs: list[Message]
) -> tuple[list[BankBlock], list[dict[str, Any]], bool]:
    """Run every scope at once under one deadline; abandon on timeout or ``ctx.signal``."""
    rc = rt.cfg.recall
    assert rt.identity is not None
    deadline = time.monotonic() + rc.timeout_ms / 1000.0
    planned: list[tuple[Scope, str, RecallRequest]] = []
    redact = rt.cfg.retain.redact_secrets
    body = query_body(msgs, rc, redact=redact)  # the same transcript part for every scope
    in_context = InContext(_live_document(rt), msgs)  # not shown again: the model reads it (ADR 183)
    for scope in scopes:
        composed = compose_query(
            msgs, scope.kind, rc, repo_key=rt.identity.repo_key, cwd=rt.cwd, redact=redact, body=body
        )
        query = local_search_text(composed.body) if rt.caps.word_query else composed.query
        request = RecallRequest(
            query=query,
            budget=rc.budget,
            max_tokens=rc.max_tokens,
            types=list(rc.types) or None,
            tag_groups=scope.tag_groups,
            query_timestamp=rc.query_timestamp,
            include_source_facts=rc.include_source_facts,
            max_source_facts_tokens=rc.max_source_facts_tokens,
            limit=rc.top_k,
            in_context=in_context,
        )
        planned.append((scope, composed.query, request))
    if backend.capabilities.bounded_recall:  # the embedded store without a foreign embedder (ADR 053)
        return _recall_inline(rt, backend, planned, deadline)

    abandon = threading.Event()
    futures: list[tuple[Scope, str, Future[Any]]] = []
    for scope, query, request in planned:
        fut = _EXECUTOR.submit(_recall_one, rt, backend, scope.bank_id, request, deadline, abandon)
        futures.append((scope, query, fut))

    pending = [f for _, _, f in futures]
    while True:
        if rt.ctx.signal.is_set():
            abandon.set()
            return [], [], True
        left = deadline - time.monotonic()
        if all(f.done() for f in pending) or left <= 0:
            break
        # wakes the moment the last recall finishes (a local recall takes a few ms), and at
        # least every _POLL_S to notice ctx.signal: the host has no other way to reach us
        wait(pending, timeout=min(_POLL_S, left), return_when=ALL_COMPLETED)

    blocks: list[BankBlock] = []
    failures: list[dict[str, Any]] = []
    for scope, query, fut in futures:
        if not fut.done():
            abandon.set()
            failures.append(_failure(scope, query, "recall timed out", "timeout"))
            rt.start_cooldown(scope.bank_id)
            continue
        try:
            outcome: RecallResult | Exception = fut.result()
        except Exception as exc:
            outcome = exc
        _settle(rt, scope, query, outcome, blocks, failures)
    abandon.set()
    return blocks, failures, False


def _recall_inline(
    rt: SessionRuntime, backend: MemoryBackend, planned: list[tuple[Scope, str, RecallRequest]], deadline: float
) -> tuple[list[BankBlock], list[dict[str, Any]], bool]:
    """The embedded store's recalls, one after another on the hook's own thread (ADR 053).

    A local recall takes a few ms, and handing it to a pool thread and back cost the hook as
    much again on a loaded machine. It needs no watchdog thread: ``LocalBackend`` keeps the
    deadline and ``ctx.signal`` itself (a SQLite progress handler stops statements, lock waits
    are sliced), so a stuck recall is still cut at ``recall.timeout_ms`` and an abort still
    returns at once, with the same results as the pool path (docs/recall.md#per-bank-recall).
    """
    blocks: list[BankBlock] = []
    failures: list[dict[str, Any]] = []
    signal = rt.ctx.signal
    for scope, query, request in planned:
        if signal.is_set():
            return [], [], True
        left = deadline - time.monotonic()
        if left <= 0:
            failures.append(_failure(scope, query, "recall timed out", "timeout"))
            rt.start_cooldown(scope.bank_id)
            continue
        try:
            with rt.backend_use():
                outcome: RecallResult | Exception = backend.recall(scope.bank_id, request, left, signal)
        except Exception as exc:
            if isinstance(exc, BackendError) and exc.kind == "aborted" and signal.is_set():
                return [], [], True
            outcome = exc
        _settle(rt, scope, query, outcome, blocks, failures)
    if signal.is_set():
        return [], [], True
    return blocks, failures, False


def _recall_one(
    rt: SessionRuntime,
    backend: MemoryBackend,
    bank_id: str,
    request: RecallRequest,
    deadline: float,
    abandon: threading.Event,
) -> Any:
    """One bank's recall on a pool thread; marked in flight so a shutdown never closes the
    backend under it (an abandoned request may still be leaving SQLite or its socket)."""
    with rt.backend_use():
        if abandon.is_set():
            raise BackendError("recall", "aborted", "request aborted")
        return backend.recall(bank_id, request, max(0.001, deadline - time.monotonic()), abandon)


def _settle(
    rt: SessionRuntime,
    scope: Scope,
    query: str,
    outcome: RecallResult | Exception,
    blocks: list[BankBlock],
    failures: list[dict[str, Any]],
) -> None:
    """One bank's recall, as a block or a failure (the pool and the inline paths alike)."""
    if not isinstance(outcome, Exception):
        blocks.append(BankBlock(scope.bank_id, query, list(outcome.hits)))
    elif _bank_not_made_yet(outcome):
        blocks.append(BankBlock(scope.bank_id, query, []))
    else:
        failures.append(_failed(rt, scope, query, outcome))


def _bank_not_made_yet(exc: Exception) -> bool:
    """A bank the backend does not know yet holds no memories: that is an empty recall, not a
    failure. Hosts that never run ``session_start`` in the same process (command hooks, one
    process per event) recall before the first retain has created the bank; telling the user
    "recall failed" on their first prompt in a new project would be false."""
    return isinstance(exc, BackendError) and exc.kind == "not_found"


def _failed(rt: SessionRuntime, scope: Scope, query: str, exc: Exception) -> dict[str, Any]:
    """The failure entry for a bank whose recall raised; a timeout or a connection that got no
    answer also starts the bank's cooldown (docs/recall.md#gates gate 7), whichever dispatch path ran it. A
    server that answered (a 5xx) fails this recall only: the next turn tries again (ADR 069)."""
    if not isinstance(exc, BackendError):
        return _failure(scope, query, redact_error(exc), "transient")
    if server_unreachable(exc):
        rt.start_cooldown(scope.bank_id)
    return _failure(scope, query, redact_error(exc), exc.kind)


def _failure(scope: Scope, query: str, error: str, kind: str) -> dict[str, Any]:
    return {"bank_id": scope.bank_id, "query": query, "error": error, "kind": kind, "tag_groups": scope.tag_groups}


def _mental_models_text(rt: SessionRuntime, deadline: float) -> str:
    """The mental-models render; the first turn's wait (docs/recall.md#mental-models) runs alongside the recall, so it
    ends ``FIRST_TURN_WAIT_S`` after the hook began rather than after the recall finished."""
    mm = rt.mental_models
    if mm is None:
        return ""
    try:
        return str(mm.render_for_context(deadline))
    except Exception:
        return ""


def _snapshot(rt: SessionRuntime, blocks: list[BankBlock], failures: list[dict[str, Any]], render: str) -> None:
    from .snapshot import write_snapshot

    try:
        rt.ensure_state_dir()
        write_snapshot(
            rt.resolve_path(rt.cfg.recall.last_recall_path),
            created_at=datetime.now(UTC),
            blocks=blocks,
            failures=failures,
            rendered=render,
            store_failures=rt.cfg.recall.store_last_recall_failures,
            top_k=rt.cfg.recall.top_k,
        )
    except Exception as exc:
        rt.warn_once("snapshot", f"could not write the last-recall snapshot: {redact_error(exc)}")
