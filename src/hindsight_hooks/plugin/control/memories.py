"""``/hindsight:memories``: see, edit and forget what is remembered (docs/commands.md, ADR 130).

Subcommands: ``list``, ``show``, ``edit``, ``forget`` (here) and ``export``, ``import``,
``markdown`` (``memories_export``). Options are ``key=value`` words (``bank=user``,
``tag=x``, ``since=2026-01-01``) so the same line works as a slash command and as
``hindsight-hooks memories …``; ``--json`` puts the structured answer first, ``--dry-run``
makes ``forget`` only list what would go.

Forgetting asks first through the host's ``select`` (the CLI answers it with ``--yes``), then
writes tombstones and cleans the queue in one queue-lock hold, then deletes from the store.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ...backends.base import BackendError
from ...backends.browse import MemoryBrowser, MemoryFilter, MemoryRecord, Unsupported, browser_for
from ...errors import HindsightHooksError
from ...governance.redact import redact_error, redact_text
from ...hooks import CommandResult
from ...timefmt import is_iso8601, local_minute, utc_bound
from ..runtime import SessionRuntime

USAGE = "/hindsight:memories list|show|edit|forget|export|import|markdown [<args>] [key=value ...] [--dry-run] [--json]"
SUBCOMMANDS = ("list", "show", "edit", "forget", "export", "import", "markdown")
FORGET_BY = ("id", "document", "session", "tag", "query")
LIST_KEYS = ("bank", "tag", "document", "session", "since", "until", "text", "page", "limit")
CONFIRM, CANCEL = "Confirm", "Cancel"
PREVIEW_LINES = 20
QUERY_CAP = 1000  # a forget by query lists at most this many memories (ask for a narrower query)
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ][0-9:.]+Z?)?$")


class ArgError(HindsightHooksError, ValueError):
    """A bad argument: the command answers with the usage line and this reason."""


@dataclass
class Args:
    words: list[str] = field(default_factory=list)
    opts: dict[str, list[str]] = field(default_factory=dict)
    json: bool = False
    dry_run: bool = False

    def one(self, key: str) -> str | None:
        values = self.opts.get(key)
        return values[-1] if values else None


def parse(argv: list[str], allowed: tuple[str, ...]) -> Args:
    """Split words, ``key=value`` options and flags; unknown keys and flags are errors."""
    out = Args()
    for word in argv:
        if word == "--json":
            out.json = True
        elif word == "--dry-run":
            out.dry_run = True
        elif word.startswith("--"):
            raise ArgError(f"unknown option {word}")
        elif "=" in word and word.split("=", 1)[0] in allowed:
            key, value = word.split("=", 1)
            out.opts.setdefault(key, []).append(value)
        else:
            out.words.append(word)
    return out


def usage(why: str = "") -> CommandResult:
    return CommandResult((f"{why}\n" if why else "") + f"usage: {USAGE}", "warning", {"usage": USAGE})


def cmd_memories(rt: SessionRuntime, argv: list[str]) -> CommandResult:
    if rt.loaded.error:
        return CommandResult(f"config error: {rt.loaded.error}", "error")
    if not rt.enabled:
        return CommandResult("memory is off (enabled=false or backend=off)", "warning", {"enabled": False})
    if not argv or argv[0] not in SUBCOMMANDS:
        return usage("" if not argv else f"unknown subcommand {argv[0]!r}")
    sub, rest = argv[0], argv[1:]
    try:
        if sub in ("export", "import", "markdown"):
            from .memories_export import run_transfer

            return run_transfer(rt, sub, parse(rest, ("bank",)))
        handler = {"list": _list, "show": _show, "edit": _edit, "forget": _forget}[sub]
        return handler(rt, parse(rest, LIST_KEYS if sub == "list" else ("bank",)))
    except ArgError as exc:
        return usage(str(exc))
    except Unsupported as exc:
        return CommandResult(exc.sentence, "warning", {"unsupported": True, "reason": exc.sentence})
    except StoreUnavailable as exc:
        return CommandResult(str(exc), "error")
    except BackendError as exc:  # its text already says "<operation> failed: …"
        return CommandResult(redact_error(exc), "error")


# -- shared ------------------------------------------------------------------------------------
class StoreUnavailable(HindsightHooksError):
    """No backend to browse; the message says why (the store's open error, or memory is off)."""


def browser(rt: SessionRuntime) -> MemoryBrowser:
    backend = rt.backend()
    if backend is None:
        raise StoreUnavailable(rt.not_initialised_message())
    return browser_for(backend)


def bank_of(rt: SessionRuntime, args: Args) -> str:
    """``bank=project`` (the default), ``bank=user`` or an explicit bank id."""
    wanted = args.one("bank") or "project"
    if wanted == "project":
        bank = rt.project_bank()
    elif wanted in ("user", "global"):
        bank = rt.user_bank()
    else:
        bank = wanted
    if not bank:
        raise ArgError(f"no {wanted} bank is configured")
    return bank


def session_of(rt: SessionRuntime, value: str) -> str:
    if value == "current":
        if rt.identity is None:
            raise ArgError("no current session")
        return rt.identity.sid
    return value


def _date(value: str | None, key: str) -> str | None:
    if value is None:
        return None
    if not _DATE.match(value):
        raise ArgError(f"{key} must be a date like 2026-01-31 (or an ISO time)")
    text = value.replace(" ", "T")
    # The pattern only checks the shape: 2026-13-45 fits it and then matched nothing, silently.
    if not is_iso8601(text):
        raise ArgError(f"{key}={value} is not a real date or time; use a date like 2026-01-31")
    # A date without a zone is the user's, as the block's days are (ADR 216); stored times are UTC.
    return utc_bound(text) or text


def _int(value: str | None, key: str, default: int) -> int:
    if value is None:
        return default
    try:
        n = int(value)
    except ValueError:
        raise ArgError(f"{key} must be a number") from None
    if n < 1:
        raise ArgError(f"{key} must be at least 1")
    return n


def line_of(rec: MemoryRecord) -> str:
    """One memory on one line: id, when, where from, the text (shortened, one line)."""
    when = local_minute(rec.occurred_at or rec.created_at or "")
    text = " ".join(rec.text.split())
    text = text if len(text) <= 100 else text[:99] + "…"
    flags = "" if rec.valid else " (invalidated)"
    flags += " (edited)" if rec.edited_at else ""
    return f"{rec.id}  {when}  {rec.document_id or '-'}  {text}{flags}"


def _json_result(data: dict[str, Any], level: str = "info") -> CommandResult:
    return CommandResult(json.dumps(data, indent=2, ensure_ascii=False, default=str), level, data)  # type: ignore[arg-type]


# -- list / show --------------------------------------------------------------------------------
def filter_of(rt: SessionRuntime, args: Args) -> MemoryFilter:
    limit = _int(args.one("limit"), "limit", 20)
    page = _int(args.one("page"), "page", 1)
    session = args.one("session")
    text = args.one("text")
    if args.words:
        text = " ".join([*([text] if text else []), *args.words])
    return MemoryFilter(
        tags=args.opts.get("tag", []),
        document_id=args.one("document"),
        session_id=session_of(rt, session) if session else None,
        since=_date(args.one("since"), "since"),
        until=_date(args.one("until"), "until"),
        text=text or None,
        limit=limit,
        offset=(page - 1) * limit,
    ).bounded()


def _list(rt: SessionRuntime, args: Args) -> CommandResult:
    bank = bank_of(rt, args)
    flt = filter_of(rt, args)
    page = browser(rt).list_page(bank, flt)
    number = flt.offset // flt.limit + 1
    data: dict[str, Any] = {
        "bank_id": bank,
        "page": number,
        "limit": page.limit,
        "total": page.total,
        "next_page": None if page.next_offset is None else number + 1,
        "memories": [r.as_dict() for r in page.records],
    }
    if args.json:
        return _json_result(data)
    shown = f"{page.offset + 1}-{page.offset + len(page.records)}" if page.records else "none"
    head = f"bank {bank}: {page.total if page.total is not None else '?'} memories; page {number} ({shown})"
    lines = [head, *(line_of(r) for r in page.records)]
    if data["next_page"]:
        lines.append(f"next: page={data['next_page']}")
    return CommandResult("\n".join(lines), "info", data)


def _show(rt: SessionRuntime, args: Args) -> CommandResult:
    if len(args.words) != 1:
        raise ArgError("show takes one memory id")
    bank = bank_of(rt, args)
    b = browser(rt)
    rec = b.get(bank, args.words[0])
    if rec is None:
        return CommandResult(f"no memory {args.words[0]} in bank {bank}", "warning", {"found": False, "bank_id": bank})
    history = [e.as_dict() for e in b.history(bank, rec.id)]
    data = {"found": True, "memory": rec.as_dict(), "history": history}
    if args.json:
        return _json_result(data)
    lines = [
        f"id: {rec.id}",
        f"bank: {bank}",
        f"text: {rec.text}",
        f"tags: {', '.join(rec.tags) or 'none'}",
        f"document: {rec.document_id or '-'}" + (f" (position {rec.position})" if rec.position is not None else ""),
        f"session: {rec.session_id or '-'}" + (f" ({rec.session_file})" if rec.session_file else ""),
        f"when: {rec.occurred_at or rec.created_at or '-'} (stored {rec.created_at or '-'})",
        f"type: {rec.type or '-'}; source: {rec.source or '-'}; valid: {'yes' if rec.valid else 'no'}",
    ]
    if rec.context:
        lines.append(f"context: {' '.join(rec.context.split())[:300]}")
    for entry in history:
        lines.append(f"edited {entry['edited_at']}: was {' '.join(str(entry['previous']).split())[:200]}")
    return CommandResult("\n".join(lines), "info", data)


# -- edit ----------------------------------------------------------------------------------------
def _edit(rt: SessionRuntime, args: Args) -> CommandResult:
    if len(args.words) < 2:
        raise ArgError("edit takes a memory id and the new text")
    from ...retain.injected import strip_injected_blocks

    memory_id = args.words[0]
    # The write policy of retain: recalled blocks out, secrets redacted before anything is stored.
    text = strip_injected_blocks(" ".join(args.words[1:])).strip()
    if rt.cfg.retain.redact_secrets:
        text = redact_text(text)
    if not text:
        raise ArgError("the new text is empty")
    bank = bank_of(rt, args)
    b = browser(rt)
    if not b.edit(bank, memory_id, text):
        return CommandResult(f"no memory {memory_id} in bank {bank}", "warning", {"edited": False, "bank_id": bank})
    data = {"edited": True, "bank_id": bank, "id": memory_id, "text": text}
    if args.json:
        return _json_result(data)
    return CommandResult(
        f"memory {memory_id} edited in bank {bank} (the old text is kept in its history)", "info", data
    )


# -- forget --------------------------------------------------------------------------------------
@dataclass
class Plan:
    """What a forget removes: whole documents, single memories, and the tombstones it leaves."""

    bank_id: str
    by: str
    value: str
    documents: list[str] = field(default_factory=list)
    memories: list[MemoryRecord] = field(default_factory=list)
    doc_memories: int = 0
    preview: list[MemoryRecord] = field(default_factory=list)
    queued: int = 0

    @property
    def count(self) -> int:
        return self.doc_memories + len(self.memories)


def _forget(rt: SessionRuntime, args: Args) -> CommandResult:
    if len(args.words) < 2 or args.words[0] not in FORGET_BY:
        raise ArgError("forget by: id <id>..., document <id>, session <id>|current, tag <tag> or query <text>")
    bank = bank_of(rt, args)
    b = browser(rt)
    plan = plan_forget(rt, b, bank, args.words[0], args.words[1:])
    stones = tombstones_for(plan)
    from ...queue.forget import forget_queued, queued_matches
    from ...queue.tombstones import matcher_for

    queue = rt.queue()
    plan.queued = queued_matches(queue, bank, matcher_for(stones, bank).matches)
    data = plan_data(plan)
    if args.dry_run:
        data["dry_run"] = True
        return _json_result(data) if args.json else CommandResult(describe(plan, dry=True), "info", data)
    if plan.count == 0 and plan.queued == 0 and not plan.documents:
        data["forgotten"] = 0
        return _json_result(data) if args.json else CommandResult(describe(plan, dry=True), "info", data)
    question = f"Forget {plan.count} memories ({plan.queued} queued item(s)) from bank {bank}?"
    try:
        answer = rt.ctx.ui.select(question, [CONFIRM, CANCEL])
    except Exception:
        answer = None
    if answer != CONFIRM:
        data["cancelled"] = True
        return CommandResult("nothing forgotten (not confirmed)", "warning", data)
    done = forget_queued(queue, stones)  # tombstones first: nothing matching can be delivered after this
    deleted = b.delete_documents(bank, plan.documents)
    removed, note = b.delete_memories(bank, [r.id for r in plan.memories])
    data.update(
        forgotten=deleted + removed,
        queued_items_removed=done.items,
        queued_jobs_removed=done.jobs_removed,
        in_flight=done.in_flight,
        tombstones_added=done.tombstones_added,
        note=note,
    )
    if args.json:
        return _json_result(data, "warning" if note else "info")
    lines = [
        f"forgot {deleted + removed} memories from bank {bank}"
        + (f" ({len(plan.documents)} document(s) deleted)" if plan.documents else ""),
        f"queue: {done.items} item(s) removed, {done.jobs_removed} job(s) dropped",
    ]
    if done.in_flight:
        lines.append(f"{done.in_flight} job(s) were being delivered; the tombstone stops any retry of them")
    if note:
        lines.append(note)
    return CommandResult("\n".join(lines), "warning" if note else "info", data)


def plan_forget(rt: SessionRuntime, b: MemoryBrowser, bank: str, by: str, words: list[str]) -> Plan:
    value = " ".join(words)
    plan = Plan(bank, by, value)
    if by == "id":
        for memory_id in words:
            rec = b.get(bank, memory_id)
            if rec is not None:
                plan.memories.append(rec)
    elif by == "query":
        offset = 0
        while len(plan.memories) < QUERY_CAP:
            page = b.list_page(bank, MemoryFilter(text=value, limit=200, offset=offset))
            plan.memories.extend(page.records)
            if page.next_offset is None:
                break
            offset = page.next_offset
        plan.memories = plan.memories[:QUERY_CAP]
    else:
        if by == "document":
            plan.documents = [value]
        elif by == "session":
            plan.value = session_of(rt, value)
            plan.documents = b.documents_with(bank, session_id=plan.value)
        else:
            plan.documents = b.documents_with(bank, tag=value)
        for doc in plan.documents:
            page = b.list_page(bank, MemoryFilter(document_id=doc, limit=PREVIEW_LINES))
            plan.doc_memories += page.total if page.total is not None else len(page.records)
            plan.preview.extend(page.records[: max(0, PREVIEW_LINES - len(plan.preview))])
    if not plan.preview:
        plan.preview = plan.memories[:PREVIEW_LINES]
    return plan


def tombstones_for(plan: Plan) -> list[Any]:
    """What stays forgotten: the session/tag itself, every document deleted, every text removed."""
    import time

    from ...queue.tombstones import Tombstone, text_key
    from ...timefmt import iso_ms

    now = iso_ms(time.time())
    stones = []
    if plan.by in ("session", "tag", "document"):
        stones.append(Tombstone(plan.bank_id, plan.by, plan.value, now))
    stones += [Tombstone(plan.bank_id, "document", d, now) for d in plan.documents]
    stones += [Tombstone(plan.bank_id, "text", text_key(r.text), now) for r in plan.memories]
    return stones


def plan_data(plan: Plan) -> dict[str, Any]:
    return {
        "bank_id": plan.bank_id,
        "by": plan.by,
        "value": plan.value,
        "memories": plan.count,
        "documents": list(plan.documents),
        "queued_items": plan.queued,
        "preview": [r.as_dict() for r in plan.preview],
    }


def describe(plan: Plan, dry: bool) -> str:
    verb = "would forget" if dry else "forgets"
    lines = [f"{verb} {plan.count} memories from bank {plan.bank_id} ({plan.by} {plan.value})"]
    if plan.documents:
        lines.append(f"documents deleted whole: {', '.join(plan.documents)}")
    lines.append(f"queued items removed: {plan.queued}")
    lines.extend(line_of(r) for r in plan.preview)
    if plan.count > len(plan.preview):
        lines.append(f"… and {plan.count - len(plan.preview)} more")
    if dry:
        lines.append("(dry run: nothing was changed)")
    return "\n".join(lines)
