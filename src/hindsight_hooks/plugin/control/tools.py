"""The model-facing tools (docs/tools.md): retain, retain_global, recall, reflect, memory_edit.

Tools never raise and never claim a write that did not happen: explicit retains go through the
durable queue first, are delivered at once only when they head their bank's queue (so a
backlog never burns retries), and report stored / queued / failed truthfully per backend.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

from ...backends.base import BackendError, MemoryBackend, MemoryHit, RecallRequest, ReflectRequest, same_text_key
from ...backends.capabilities import meaning_loader, unit_editor
from ...governance import identity as ident
from ...governance.redact import redact_error, redact_text, redact_value
from ...governance.session_meta import effective
from ...hooks import HostContext, Tool, ToolResult
from ...retain.delivery import deliver
from ...retain.injected import strip_injected_blocks
from ...retain.jobs import RESERVED_METADATA, base_metadata, base_tags, build_item, new_job, session_context
from ...timefmt import days_said_twice, iso_now, parse_iso, when_said
from ..recall.recall_details import memory_records
from ..runtime import SessionRuntime
from .tool_params import MemoryEditParams, RecallParams, ReflectParams, RetainGlobalParams, RetainParams

RuntimeFor = Callable[[HostContext], SessionRuntime]

RETAIN_DESC = (
    "Store durable facts in long-term memory. Each item must be specific and self-contained "
    "(who/what/when/why); batch related facts in one call; do not store ephemeral task state."
)
RETAIN_GLOBAL_DESC = (
    "Store durable cross-project facts in the user's memory bank: identity, preferences and "
    "workflows that hold across projects. Items must be self-contained."
)
RECALL_DESC = (
    "Search long-term memory and return raw matching memories. Use it proactively before "
    "answering questions that past sessions may have settled."
)
REFLECT_DESC = "Ask long-term memory a question and get a synthesised answer over what it holds."
EDIT_DESC = "Update, forget or invalidate one local memory. Use only ids that hindsight_recall returned."
NO_REFLECT = "No relevant information found to reflect on."
BEHIND_BACKLOG = "an earlier job for this bank is still queued"
NOT_YET = "delivery did not finish within retain.flush_timeout_ms"
CLOSED = "Hindsight retain queue is closed."
# A read tool was asked for explicitly, so it may wait this long for recall by meaning (the model,
# the units not embedded yet, the banks' vectors), which hooks never wait for (ADR 164).
MEANING_WAIT_S = 3.0
SESSION_ENDED = "the memory session has ended (shutdown); memory tools work again after the next session start"


def build_tools(runtime_for: RuntimeFor) -> list[Tool]:
    """All five tools (ADR-020), each knowing whether a session should be offered it (ADR-085)."""

    def offered(name: str) -> Callable[[HostContext], bool]:
        return lambda ctx: name in tools_available(runtime_for(ctx))

    def tool(name: str, desc: str, params: type[Any], fn: Callable[[SessionRuntime, Any], ToolResult]) -> Tool:
        return Tool(name, desc, params, lambda p, c: _guard(runtime_for, c, fn, p), available=offered(name))

    return [
        tool("hindsight_retain", RETAIN_DESC, RetainParams, _retain),
        tool("hindsight_retain_global", RETAIN_GLOBAL_DESC, RetainGlobalParams, _retain_global),
        tool("hindsight_recall", RECALL_DESC, RecallParams, _recall),
        tool("hindsight_reflect", REFLECT_DESC, ReflectParams, _reflect),
        tool("memory_edit", EDIT_DESC, MemoryEditParams, _memory_edit),
    ]


def tools_available(rt: SessionRuntime) -> set[str]:
    """Names offered for this session: none when memory is off, the user-bank tool only with a
    user bank, memory_edit only on a backend that can edit units (ADR 140)."""
    if not rt.enabled:
        return set()
    names = {"hindsight_retain", "hindsight_recall", "hindsight_reflect"}
    if rt.user_bank():
        names.add("hindsight_retain_global")
    if rt.caps.edit:
        names.add("memory_edit")
    return names


def _guard(
    runtime_for: RuntimeFor, ctx: HostContext, fn: Callable[[SessionRuntime, Any], ToolResult], params: Any
) -> ToolResult:
    try:
        rt = runtime_for(ctx)
        if not rt.enabled:
            return _disabled(rt, fn)
        if rt.closed:
            return _after_shutdown(fn)
        if ctx.signal.is_set():
            return ToolResult.error("request aborted", "aborted")
        return _encodable(fn(rt, params))
    except BackendError as exc:
        return ToolResult.error(redact_error(exc), exc.kind)
    except Exception as exc:
        return ToolResult.error(redact_error(exc), "internal")


def _encodable(result: ToolResult) -> ToolResult:
    """The result with lone surrogates (recalled text from a server may carry them) replaced,
    so the host can send it to its model; the same object when there are none."""
    from ...sanitize import sanitize_if_needed

    content, details = sanitize_if_needed(result.content), sanitize_if_needed(result.details)
    if content is result.content and details is result.details:
        return result
    return ToolResult(content=content, details=details)


def _disabled(rt: SessionRuntime, fn: Callable[[SessionRuntime, Any], ToolResult]) -> ToolResult:
    """Memory is off: say why. A config file that could not be read or parsed switches memory off
    too, and "enabled=false or backend=off" then sent the user looking for a setting they never
    made; a write says plainly that its text was not stored (there is no config to say where)."""
    if not rt.loaded.error:
        return ToolResult.error("memory is disabled for this session (enabled=false or backend=off)", "disabled")
    message = f"memory is off for this session: config error: {redact_text(rt.loaded.error)}"
    if fn in (_retain, _retain_global, _memory_edit):
        message += "; nothing was stored: fix the config, then retain the text again"
    return ToolResult.error(message, "config")


def _after_shutdown(fn: Callable[[SessionRuntime, Any], ToolResult]) -> ToolResult:
    """A tool called after ``shutdown``: writes are refused (docs/shutdown.md step 5), reads say why; neither
    reopens the store or the client."""
    if fn in (_retain, _retain_global, _memory_edit):
        return ToolResult.error(CLOSED, "closed")
    return ToolResult.error(SESSION_ENDED, "closed")


# -- gates ------------------------------------------------------------------------------------
def _read_gate(rt: SessionRuntime) -> ToolResult | None:
    if rt.meta is None:
        return None
    eff = effective(rt.meta.read().record)
    if eff.mode == "ignored":
        return ToolResult.error("recall disabled for this session", "disabled")
    return None


def _readable_backend(rt: SessionRuntime) -> MemoryBackend | ToolResult:
    """The backend a read tool (recall, reflect) uses, or the refusal it answers with."""
    blocked = _read_gate(rt)
    if blocked is not None:
        return blocked
    backend = rt.backend()
    if backend is None:
        return ToolResult.error(rt.not_initialised_message(), "not_initialised")
    return backend


def _with_meaning(backend: MemoryBackend, bank_ids: list[str]) -> None:
    """Recall by meaning ready for these banks, where the store loads it lazily (within a bound:
    past it, the tool searches with what is loaded, by words at worst)."""
    loader = meaning_loader(backend)
    if loader is not None:
        loader.prepare_meaning(bank_ids, MEANING_WAIT_S)


def _write_gate(rt: SessionRuntime, what: str) -> ToolResult | None:
    blocked = _write_gate_mode(rt, what)
    if blocked is None and rt.ctx.signal.is_set():
        # Aborted while the read-only question was open: an abort wins over an answer.
        return ToolResult.error("request aborted", "aborted")
    return blocked


def _write_gate_mode(rt: SessionRuntime, what: str) -> ToolResult | None:
    if rt.meta is None:
        return None
    record = rt.meta.read().record
    eff = effective(record)
    if eff.mode == "ignored":
        return ToolResult.error("retain disabled for this session", "disabled")
    if record.retain_mode == "off" or not record.retained:
        return ToolResult.error("retain disabled for this session", "disabled")
    if eff.mode == "read-only":
        try:
            answer = rt.ctx.ui.select(f"Session is read-only. Allow {what}?", ["Allow", "Deny"])
        except Exception:
            answer = None
        if answer != "Allow":
            return ToolResult.error("retain refused: session is read-only", "disabled")
    return None


# -- retain -----------------------------------------------------------------------------------
def _retain(rt: SessionRuntime, p: RetainParams) -> ToolResult:
    role = "user" if p.bank in ("user", "global") else "project"
    return _retain_to(rt, p, role, "hindsight_retain")


def _retain_global(rt: SessionRuntime, p: RetainGlobalParams) -> ToolResult:
    return _retain_to(rt, p, "user", "hindsight_retain_global")


def _retain_to(rt: SessionRuntime, p: RetainGlobalParams, role: str, tool: str) -> ToolResult:
    blocked = _write_gate(rt, tool)
    if blocked is not None:
        return blocked
    assert rt.identity is not None
    bank_id = rt.user_bank() if role == "user" else rt.project_bank()
    if not bank_id:
        if role == "user":
            return ToolResult.error(
                "no user bank is configured: set banks.user.enabled = true and banks.user.bank_id", "config"
            )
        return ToolResult.error("the project bank is disabled (banks.project.enabled = false)", "config")
    # No backend check here: a store or server that cannot be opened now is exactly what the
    # durable queue is for. The job is queued like agent_end's and the result says so (ADR-021).

    # The transcript path's context (ADR 119): the store indexes and searches a unit with its
    # context, so a memory the model retains ranks like the session's own turns.
    default_context = rt.cfg.tools.retain_context or session_context(rt)
    # Content, context and metadata are redacted by build_item; what else the model passes is
    # written too (tags, a document id, entity names), so it gets the same treatment.
    scrub = _scrubber(rt)
    tags = base_tags(rt, list(dict.fromkeys(scrub(t) for t in p.tags or [])))
    document_id = scrub(p.document_id) if p.document_id else None
    meta = {k: v for k, v in (p.metadata or {}).items() if k not in RESERVED_METADATA}
    meta.update(base_metadata(rt, "tool"))
    meta.pop("imported", None)
    timestamp = None if p.timestamp is None else p.timestamp
    update_mode = p.update_mode or "replace"
    entities = [e.model_dump(exclude_none=True) for e in p.entities] if p.entities else None
    for entity in entities or []:
        entity["text"] = scrub(entity["text"])
    items: list[dict[str, Any]] = []
    for n, it in enumerate(p.items, start=1):
        content = strip_injected_blocks(it.content).strip()
        if not content:
            return ToolResult.error(
                f"items[{n - 1}].content is empty (after removing recalled memory blocks)", "invalid"
            )
        context = (it.context or "").strip() or default_context
        doc_id = document_id or ident.explicit_document_id(rt.identity.sid, bank_id, content, context)
        items.append(
            build_item(
                rt,
                bank_id=bank_id,
                content=content,
                context=context,
                document_id=doc_id,
                update_mode=update_mode,
                tags=tags,
                metadata=meta,
                timestamp=timestamp or iso_now(),
                observation_scopes=p.observation_scopes,
                entities=entities,
            )
        )
    async_ = rt.cfg.retain.async_ if p.async_ is None else p.async_
    job = new_job(bank_id, "tool", items, async_)
    rt.ensure_state_dir()
    try:
        enq = rt.queue().enqueue(job, coalesce=False)
    except Exception as exc:
        return ToolResult.error(f"could not queue the memory: {redact_error(exc)}", "queue")
    n = len(items)
    noun = "memory" if n == 1 else "memories"
    doc_ids = list(dict.fromkeys(i["document_id"] for i in items))
    delivered = dead = False
    error: str | None = None
    delivered_entry: dict[str, Any] | None = None
    if rt.backend() is None:
        error = f"the memory store is unavailable: {rt.backend_error or rt.not_initialised_message()}"
    elif enq.bank_head:
        report = deliver(rt, banks={bank_id}, budget_ms=rt.cfg.retain.flush_timeout_ms)
        delivered_entry = report.delivered_job(enq.job_id)
        delivered = delivered_entry is not None
        dead = enq.job_id in report.dead_letter_ids
        error = report.errors.get(bank_id) or report.error
        if not delivered and not error:
            error = NOT_YET
    else:
        # Not this bank's head: an older job goes first (after its backoff). Say so, and keep
        # the last delivery error visible, without calling the backlog's error this job's.
        error = BEHIND_BACKLOG + (f"; last error: {rt.last_error}" if rt.last_error else "")
    forgotten = (delivered_entry or {}).get("forgotten") if delivered else None
    if forgotten:  # a tombstone kept some out: never "stored" for what was not (ADR 173)
        return _forgotten_result(rt, n, bank_id, enq.job_id, doc_ids, forgotten, delivered_entry or {})
    if rt.caps.append:  # delivered = stored: say so, with the ids memory_edit takes
        if delivered:
            ids = _stored_unit_ids(rt, bank_id, doc_ids, delivered_entry or {})
            rt.set_activity("retained")
            return ToolResult.of_text(f"{n} {noun} stored.", count=n, bank_id=bank_id, ids=ids)
        reason = error or NOT_YET
        if dead:
            after = "it was moved to the dead-letter file; /hindsight:queue --requeue-dead retries it."
        elif rt.backend() is None:
            after = "it stays queued on disk and is written once the store can be opened (next session)."
        else:
            after = "it stays queued and will be retried."
        text = f"{n} {noun} queued.\nThe local write did not happen now ({reason}); {after}"
        local: dict[str, Any] = {"count": n, "stored": 0, "queued": True, "error": reason, "bank_id": bank_id}
        if dead:
            local["dead_lettered"] = True
        return ToolResult(content=[{"type": "text", "text": text}], details=local)
    details: dict[str, Any] = {
        "count": n,
        "bank_id": bank_id,
        "queue_job_id": enq.job_id,
        "document_ids": doc_ids,
        "delivered": delivered,
        "pending": not delivered,
    }
    if error and not delivered:
        details["last_error"] = error
    if dead:
        details["dead_lettered"] = True
    rt.set_activity("retained" if delivered else "retain-queued")
    return ToolResult(content=[{"type": "text", "text": f"{n} {noun} queued."}], details=details)


def _forgotten_result(
    rt: SessionRuntime,
    n: int,
    bank_id: str,
    job_id: str,
    doc_ids: list[str],
    forgotten: dict[str, Any],
    entry: dict[str, Any],
) -> ToolResult:
    """The answer when tombstones kept items of this retain out (ADR 173).

    A forget keeps out what was said at or before it, so a retain made now is dropped only when
    its items are dated at or before a forget they match (an explicit older ``timestamp``, or a
    forget in the same millisecond). Saying "stored" then would be the silent loss ADR 173
    fixes; nothing stored at all is an error (the CLI exits 1), some stored is said with both
    counts."""
    dropped = min(n, int(forgotten.get("items") or n))
    when = _display_time(str(forgotten.get("forgotten_at") or ""))
    why = (
        f"it matches memories you forgot{f' on {when}' if when else ''} and is dated at or before that forget"
        " (a forget keeps out what was said before it; retain it without an earlier timestamp to keep it)"
    )
    kept = n - dropped
    details: dict[str, Any] = {
        "count": n,
        "stored": kept,
        "forgotten": dropped,
        "forgotten_at": forgotten.get("forgotten_at") or None,
        "bank_id": bank_id,
        "queue_job_id": job_id,
        "document_ids": doc_ids,
        "delivered": True,
        "ids": _stored_unit_ids(rt, bank_id, doc_ids, entry) if kept and rt.caps.append else [],
    }
    rt.set_activity("retained")
    if kept == 0:
        noun = "memory" if n == 1 else "memories"
        message = f"{n} {noun} not stored: {why}."
        return ToolResult(
            content=[{"type": "text", "text": f"Error: {message}"}],
            details={**details, "error": {"kind": "forgotten", "message": message}},
        )
    noun = "memory" if kept == 1 else "memories"
    text = f"{kept} {noun} stored; {dropped} not stored: {why}."
    return ToolResult(content=[{"type": "text", "text": text}], details=details)


def _display_time(iso: str) -> str:
    """A tombstone's time as the ``YYYY-MM-DD HH:MM UTC`` people read elsewhere in the tools."""
    seconds = parse_iso(iso)
    if seconds is None:
        return ""
    return datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")


def _stored_unit_ids(rt: SessionRuntime, bank_id: str, doc_ids: list[str], entry: dict[str, Any]) -> list[str]:
    """The ids the local store now holds for the job's documents (what memory_edit takes).

    The flush's delivered entry does not carry unit ids, so they are read back from the store
    (the newest units of this session, filtered to the job's documents). Best effort: an
    id list that cannot be read is empty, never invented.
    """
    given = entry.get("unit_ids")
    if isinstance(given, list) and given:
        return [str(i) for i in given]
    backend = unit_editor(rt.backend())
    if backend is None or rt.identity is None:
        return []
    wanted = set(doc_ids)
    try:
        groups = [{"tags": [f"session:{rt.identity.sid}"], "match": "any_strict"}]
        hits = backend.list_units(bank_id, 500, 0, groups)
    except Exception:
        return []
    return [h.id for h in hits if h.id and h.document_id in wanted]


def _scrubber(rt: SessionRuntime) -> Callable[[str], str]:
    """Redaction for what the model passes on, under ``retain.redact_secrets`` (ADR-060)."""
    return redact_text if rt.cfg.retain.redact_secrets else (lambda text: text)


def _search_filter(
    rt: SessionRuntime, scope_groups: list[dict[str, Any]], p: RecallParams | ReflectParams
) -> list[dict[str, Any]]:
    """The tag filter a search sends, its caller tags redacted like the tags a retain stores
    (so a filter still matches what was stored, and no secret leaves in a filter)."""
    scrub = _scrubber(rt)
    tags = [scrub(t) for t in p.tags] if p.tags else p.tags
    caller = redact_value(p.tag_groups) if p.tag_groups and rt.cfg.retain.redact_secrets else p.tag_groups
    return ident.compose_tool_groups(scope_groups, tags, p.tags_match, caller)


# -- recall -----------------------------------------------------------------------------------
def _scope_for(rt: SessionRuntime, role: str) -> tuple[str, list[dict[str, Any]]] | None:
    assert rt.identity is not None
    if role == "project":
        bank = rt.project_bank()
        return (bank, ident.project_scope_groups(rt.identity.repo_key)) if bank else None
    bank = rt.user_bank()
    return (bank, ident.user_scope_groups(rt.cfg, rt.identity.host)) if bank else None


def _banks_for(rt: SessionRuntime, bank: str) -> list[tuple[str, list[dict[str, Any]]]]:
    roles = ["project", "user"] if bank == "all" else ["user" if bank in ("user", "global") else "project"]
    return [s for s in (_scope_for(rt, r) for r in roles) if s is not None]


def _recall(rt: SessionRuntime, p: RecallParams) -> ToolResult:
    backend = _readable_backend(rt)
    if isinstance(backend, ToolResult):
        return backend
    scopes = _banks_for(rt, p.bank)
    if not scopes:
        return ToolResult.error("no memory bank is configured for this scope", "config")
    tools_cfg = rt.cfg.tools
    timeout_s = rt.cfg.hindsight.timeout_ms / 1000.0
    query = _scrubber(rt)(p.query)  # sent to the server or searched: redacted first (ADR-060)
    requests = []
    for bank_id, scope_groups in scopes:
        groups = _search_filter(rt, scope_groups, p)
        types = p.types if p.types is not None else list(tools_cfg.recall_types)
        requests.append(
            (
                bank_id,
                RecallRequest(
                    query=query,
                    budget=p.budget or tools_cfg.recall_budget,
                    max_tokens=p.max_tokens if p.max_tokens is not None else tools_cfg.recall_max_tokens,
                    types=list(types) or None,
                    tag_groups=groups or None,
                    query_timestamp=p.query_timestamp,
                    include_source_facts=bool(p.include_source_facts),
                    max_source_facts_tokens=p.max_source_facts_tokens or rt.cfg.recall.max_source_facts_tokens,
                    limit=rt.cfg.local.recall_limit,
                ),
            )
        )
    _with_meaning(backend, [b for b, _ in requests])
    results: list[tuple[str, list[MemoryHit] | None, str | None]] = []
    with ThreadPoolExecutor(max_workers=len(requests)) as pool:
        futs = [(b, pool.submit(backend.recall, b, r, timeout_s, rt.ctx.signal)) for b, r in requests]
        for bank_id, fut in futs:
            try:
                results.append((bank_id, list(fut.result().hits), None))
            except Exception as exc:
                results.append((bank_id, None, redact_error(exc)))
    failures = [{"bank_id": b, "error": e} for b, _, e in results if e is not None]
    if len(failures) == len(results):
        text = "recall failed: " + "; ".join(f"{f['bank_id']}: {f['error']}" for f in failures)
        return ToolResult.error(text, "backend")
    hits = _merge_hits(rt, [hs for _, hs, _ in results if hs])
    details: dict[str, Any] = {"failures": failures} if failures else {}
    if not hits:
        return ToolResult.of_text("No relevant memories found.", **details)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M")
    noun = "memory" if len(hits) == 1 else "memories"
    if rt.caps.ranked_hits:
        timed_days = days_said_twice(h.said_at for h in hits)
        bullets = [_local_bullet(h, timed_days) for h in hits]
    else:
        bullets = [_hindsight_bullet(h) for h in hits]
    text = f"Found {len(hits)} relevant {noun} (as of {stamp} UTC):\n\n" + "\n\n".join(bullets)
    details["memories"] = memory_records(hits, results)
    return ToolResult.of_text(text, **details)


def _merge_hits(rt: SessionRuntime, per_bank: list[list[MemoryHit]]) -> list[MemoryHit]:
    """One list from each bank's hits, repeats (same id, same text) once.

    With ranked hits the banks are interleaved by score, but each bank's own order is kept: the
    store may have put a newer statement above a better-scoring older one that it changes
    (ADR 118), and a plain sort by score would undo that.
    """
    seen_ids: set[str] = set()
    seen_text: set[str] = set()
    out: list[MemoryHit] = []
    merged = heapq.merge(*per_bank, key=_best_first) if rt.caps.ranked_hits else itertools.chain(*per_bank)
    for h in merged:
        key = same_text_key(h.text)
        if rt.caps.ranked_hits and h.id is not None:
            if h.id in seen_ids:
                continue
            seen_ids.add(h.id)
        if key in seen_text:
            continue
        seen_text.add(key)
        out.append(h)
    return out[: rt.cfg.local.recall_limit] if rt.caps.ranked_hits else out


def _best_first(h: MemoryHit) -> float:
    """The merge key: higher score first. ``heapq.merge`` takes the smallest of the lists' heads
    (the earlier list on a tie) and never reorders a list, which is what keeps a bank's order."""
    return -(h.score if h.score is not None else (h.importance or 0.0))


def _hindsight_bullet(h: MemoryHit) -> str:
    line = f"- {h.text}"
    if h.type:
        line += f" [{h.type}]"
    if h.mentioned_at:
        line += f" ({h.mentioned_at})"
    return line


def _preview(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _local_bullet(h: MemoryHit, timed_days: frozenset[str]) -> str:
    line = f"- {_preview(h.text, 500)}"
    line += f" (id: {h.id})" if h.id else " (id unavailable)"
    if h.source:
        line += f" [{h.source}]"
    said = when_said(h.said_at, timed_days)  # with the time when another memory shares the day (ADR 180)
    if said:
        line += f" ({said})"
    score = h.score if h.score is not None else h.importance
    if score is not None:
        line += f" c:{score:.1f}"
    return line


# -- reflect ----------------------------------------------------------------------------------
def _reflect(rt: SessionRuntime, p: ReflectParams) -> ToolResult:
    backend = _readable_backend(rt)
    if isinstance(backend, ToolResult):
        return backend
    scope = _scope_for(rt, "user" if p.bank in ("user", "global") else "project")
    if scope is None:
        return ToolResult.error("no memory bank is configured for this scope", "config")
    bank_id, scope_groups = scope
    groups = _search_filter(rt, scope_groups, p)
    scrub = _scrubber(rt)  # the question and its context leave the process: redacted (ADR-060)
    timeout_s = rt.cfg.hindsight.timeout_ms / 1000.0
    if rt.caps.remote:
        try:
            rt.ensure_bank(bank_id, timeout_s=timeout_s)
        except Exception:
            pass
    _with_meaning(backend, [bank_id])
    result = backend.reflect(
        bank_id,
        ReflectRequest(
            query=scrub(p.query),
            budget=p.budget or rt.cfg.tools.recall_budget,
            context=scrub(p.context) if p.context else p.context,
            max_tokens=p.max_tokens,
            response_schema=p.response_schema,
            include_facts=bool(p.include_facts),
            tag_groups=groups or None,
        ),
        timeout_s=timeout_s,
        signal=rt.ctx.signal,
    )
    text = (result.text or "").strip() or NO_REFLECT
    details: dict[str, Any] = {}
    if p.response_schema is not None and result.structured_output is not None:
        details["structured_output"] = result.structured_output
    return ToolResult.of_text(text, **details)


# -- memory_edit ------------------------------------------------------------------------------
def _memory_edit(rt: SessionRuntime, p: MemoryEditParams) -> ToolResult:
    if not rt.caps.edit:
        return ToolResult.error("memory_edit is only available with the local backend", "unsupported")
    blocked = _write_gate(rt, "memory_edit")
    if blocked is not None:
        return blocked
    if p.op == "update" and p.content is None and p.importance is None:
        return ToolResult.error("memory_edit update requires content or importance.", "invalid")
    backend = unit_editor(rt.backend())
    if backend is None:
        return ToolResult.error(rt.not_initialised_message(), "not_initialised")
    from ...backends.tag_groups import match_tag_groups

    for role in ("project", "user"):
        scope = _scope_for(rt, role)
        if scope is None:
            continue
        bank_id, groups = scope
        unit = backend.get_unit(bank_id, p.id)
        if unit is None:
            continue
        if groups and not match_tag_groups(unit.tags, groups):
            return ToolResult.of_text(f"Memory {p.id} not_editable in bank {bank_id}.", status="not_editable")
        if p.op == "update":
            importance = None if p.importance is None else min(1.0, max(0.0, p.importance))
            content = None
            if p.content is not None:
                # The same write policy as retain: recalled blocks out, secrets redacted before disk.
                content = strip_injected_blocks(p.content).strip()
                if not content:
                    return ToolResult.error("content is empty (after removing recalled memory blocks)", "invalid")
                if rt.cfg.retain.redact_secrets:
                    content = redact_text(content)
            ok = backend.update_unit(bank_id, p.id, content=content, importance=importance)
            status = "updated" if ok else "not_found"
        elif p.op == "forget":
            status = "deleted" if backend.forget_unit(bank_id, p.id) else "not_found"
        else:
            ok = backend.invalidate_unit(bank_id, p.id, replacement_id=p.replacement_id)
            status = "invalidated" if ok else "not_found"
        return ToolResult.of_text(f"Memory {p.id} {status} in bank {bank_id}.", status=status, bank_id=bank_id)
    bank = rt.project_bank() or rt.user_bank() or "?"
    return ToolResult.of_text(f"Memory {p.id} not_found in bank {bank}.", status="not_found")
