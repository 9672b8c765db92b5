"""``agent_end``: automatic retain (docs/retain.md#order), through the cursor and the durable queue.

Order matters and is the heart of "never lose, never duplicate": the cursor only moves after
every target job is acknowledged on disk; if the cursor write then fails the jobs are
already durable (a duplicate beats a loss). Delivery happens last and within its budget.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from ...governance.redact import redact_error
from ...governance.session_meta import effective
from ...hooks import Message
from ...retain.delivery import deliver
from ...retain.injected import drop_injected
from ...retain.jobs import base_metadata, base_tags, build_item, new_job, session_context
from ...sanitize import sanitize_if_needed

if TYPE_CHECKING:
    from ...retain.cursor import FingerprintMemo
    from ..runtime import SessionRuntime

ROUTER_CONTEXT = "Automatic retain from agent_end."


def run_agent_end(rt: SessionRuntime, messages: list[Message]) -> None:
    cfg = rt.cfg
    if not rt.enabled or not cfg.retain.enabled or rt.ctx.is_subagent or rt.identity is None:
        return
    project, user = rt.project_bank(), rt.user_bank()
    if project is None and user is None:
        return
    assert rt.meta is not None
    from ...retain.cursor import CursorCorruptError, FingerprintMemo, filter_new_messages, retained_through_index
    from ...retain.cursor_recovery import heal_store, session_cursor
    from ...retain.echo_guard import injected_keys
    from ...retain.projection import project as project_messages
    from ...retain.projection import projection_json

    sid = rt.identity.sid
    msgs = drop_injected(messages)
    meta = rt.meta.read()
    eff = effective(meta.record)
    opt_out = meta.record.next_retain_mode == "off"
    cursors = rt.cursors()
    memo = FingerprintMemo()  # one per run: each message is hashed at most once

    if not eff.retain or opt_out:
        try:
            try:
                cursors.advance(sid, msgs, len(msgs) - 1, memo=memo)
            except CursorCorruptError:
                if not heal_store(rt, cursors):  # moved aside, never overwritten (ADR-066)
                    return
                cursors.advance(sid, msgs, len(msgs) - 1, memo=memo)
        except Exception as exc:
            rt.set_activity("retain-failed")
            rt.warn_once("cursor", f"cursor update failed: {redact_error(exc)}")
            return
        if opt_out:
            try:
                rt.meta.consume_next_opt_out()
            except Exception as exc:
                rt.warn_once("meta", f"could not clear next-opt-out: {redact_error(exc)}")
            why = "next-opt-out" if eff.retain else f"retain is off ({eff.mode})"
            rt.info(f"automatic retain skipped for this run ({why})")
        return

    ok, state = session_cursor(rt, cursors, sid, msgs, memo)  # a lost store is recovered (ADR-066)
    if not ok:
        return

    delta = filter_new_messages(msgs, state, memo=memo)
    # Lone surrogates and absurd nesting would fail the projection or the queue write on every
    # later turn (the cursor never passes a job that cannot be written): made safe here, once.
    # Recalled memory the model quoted back is not new memory: cut it from every message (ADR-065).
    projected = project_messages(sanitize_if_needed(delta), cfg.retain, injected_lines=injected_keys(rt))
    if not projected:
        _advance(rt, msgs, len(msgs) - 1, memo)
        return
    content = projection_json(projected)

    targets, router_reason = _targets(rt, content)
    if not targets:
        _advance(rt, msgs, len(msgs) - 1, memo)
        rt.set_activity("retained")
        if cfg.notifications.retain:
            rt.info(f"automatic retain: nothing written ({router_reason or 'no target bank'})")
        return

    rt.set_activity("retaining")
    coalesce = cfg.retain.delivery == "coalesced"
    job_ids: list[str] = []
    try:
        rt.ensure_state_dir()
        queue = rt.queue()
        for bank_id in targets:
            job = _build_job(rt, bank_id, content)
            coalesce_now = coalesce or queue.bank_in_backoff(bank_id)
            job_ids.append(queue.enqueue(job, coalesce=coalesce_now).job_id)
    except Exception as exc:
        rt.set_activity("retain-failed")
        rt.warn_once("enqueue", f"could not queue automatic retain: {redact_error(exc)}; will retry next run")
        return
    rt.notifier.success("enqueue")

    through = retained_through_index(msgs, delta, memo=memo)
    _advance(rt, msgs, through if through >= 0 else len(msgs) - 1, memo)

    if getattr(rt.ctx, "short_lived", False):  # a process per hook: the host delivers later, elsewhere
        rt.set_activity("retain-queued")
        return
    if coalesce and not rt.caps.append and not rt.queue().coalesced_flush_due():
        rt.set_activity("retain-queued")
        return
    report = deliver(rt, banks=set(targets), budget_ms=cfg.retain.flush_timeout_ms, skip_offline=True)
    delivered_ids = {d.get("queue_job_id") for d in report.delivered}
    queued = report.remaining
    if delivered_ids & set(job_ids):
        rt.set_activity("retained" if queued == 0 else f"retained queued:{queued}")
        if cfg.retain.post_retain_reflect and rt.caps.synthesised_reflect:
            _post_retain_reflect(rt, targets[0])
    else:
        rt.set_activity("offline" if report.error else "retain-queued")
    if cfg.notifications.retain:
        rt.info(
            f"automatic retain: {len(delta)} message(s) to {', '.join(targets)}"
            + (f"; {router_reason}" if router_reason else "")
            + (f"; {queued} job(s) still queued" if queued else "")
        )


def _advance(rt: SessionRuntime, msgs: list[Message], through: int, memo: FingerprintMemo) -> None:
    assert rt.identity is not None
    try:
        rt.cursors().advance(rt.identity.sid, msgs, through, memo=memo)
    except Exception as exc:
        rt.warn_once("cursor", f"cursor update failed (jobs are queued): {redact_error(exc)}")


def _targets(rt: SessionRuntime, content: str) -> tuple[list[str], str | None]:
    project, user = rt.project_bank(), rt.user_bank()
    if rt.cfg.user_retain.mode != "router":
        return ([project] if project else []), None
    from ...governance.router import route

    decision = route(content, ROUTER_CONTEXT, rt.cfg, project_bank=project, user_bank=user)
    banks: list[str] = []
    for target in decision["targets"]:
        if target.get("will_write") and target.get("bank_id"):
            banks.append(str(target["bank_id"]))
    return banks, str(decision.get("reason", ""))


def _build_job(rt: SessionRuntime, bank_id: str, content: str) -> dict[str, Any]:
    assert rt.identity is not None
    from ...governance.identity import live_document_id

    cfg = rt.cfg
    item = build_item(
        rt,
        bank_id=bank_id,
        content=content,
        context=session_context(rt),
        document_id=live_document_id(rt.identity.sid),
        update_mode=cfg.retain.update_mode,
        tags=base_tags(rt),
        metadata=base_metadata(rt, "auto"),
        entities=[e.model_dump(exclude_none=True) for e in cfg.retain.entities],
    )
    return new_job(bank_id, "auto", [item], cfg.retain.async_)


def _post_retain_reflect(rt: SessionRuntime, bank_id: str) -> None:
    from ...backends.base import ReflectRequest

    backend = rt.backend()
    if backend is None:
        return

    def run() -> None:
        try:
            with rt.backend_use():
                backend.reflect(
                    bank_id,
                    ReflectRequest(
                        query="Reflect on the recently retained session to extract insights",
                        context="Post-retain reflection",
                        budget=rt.cfg.recall.budget,
                    ),
                    timeout_s=rt.cfg.hindsight.timeout_ms / 1000.0,
                )
        except Exception:
            pass

    threading.Thread(target=run, name="hindsight-post-reflect", daemon=True).start()
