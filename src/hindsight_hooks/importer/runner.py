"""Preview and import (docs/import.md "Delivery", "Preview", "A real import").

A *plan* is one source file's documents plus the bank they go to. The preview is computed
from plans alone and writes nothing. A real import asks first (unless the caller already
confirmed, e.g. ``--yes`` from a script), then per plan:

1. loads the run's checkpoint (a new run id starts fresh) and marks what can be skipped —
   empty projections, documents already delivered with the same content (checkpoint or
   manifest), documents a previous run queued and that have since been delivered;
2. removes stale queued copies of our documents and enqueues the rest as ``source:"import"``
   jobs — or nothing, when an identical job is already queued;
3. flushes the bank one job at a time, so the manifest and checkpoint record each delivery
   as it happens, and stops at the first failure; whatever is still queued afterwards is
   ``queued`` (pending, not failed) and the next flush or re-run delivers it.

The checkpoint is saved after every change, so a run killed anywhere resumes from disk.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import HindsightHooksError
from ..governance.redact import redact_error
from ..retain.jobs import build_item, new_job, session_tags
from ..timing import Deadline
from .chat_transcript import build_chat_document, parse_chat
from .checkpoint import Checkpoint, make_run_id
from .documents import (
    SKIP_ALREADY_IMPORTED,
    ImportDocument,
    ImportScope,
    ImportSettings,
    build_session_documents,
)
from .formats import CLAUDE_CODE, CODEX, PI_SESSION, detect_format
from .host_import import RANGES_KEY, CursorClaim, HostFile, Ranges, build_host_documents, live_sid
from .manifest import Manifest, entry_for
from .pi_session import BadLines, EmptyFileError, ParsedSession, SessionFormatError, parse_session
from .queue_ops import find_queued, job_states, queued_state, remove_stale
from .sources import ImportRefused, check_belongs, check_cwd_belongs

if TYPE_CHECKING:
    from ..retain.session import ImportSession

IMPORT_FLUSH_BUDGET_MS = 120_000
"""How long one import may spend delivering; what is left stays queued for later flushes."""

CLAIM_WAIT_S = 10.0
"""How long an import waits for another flusher's claim on its jobs before leaving them queued."""
CLAIM_POLL_S = 0.05

CONFIRM_OPTIONS = ["Import", "Cancel"]
PREVIEW_DOC_LINES = 40


class ImportFailure(HindsightHooksError):
    """An import that cannot start (no bank, unreadable file); the message is safe to show."""


class NothingToImport(ImportFailure):
    """Not a failure: the source holds nothing yet (an empty file). Shown as a warning."""


@dataclass
class Plan:
    """One source file's documents and where they go."""

    kind: str  # "session" | "chat" | "claude-code" | "codex"
    source_file: str
    bank_id: str
    session_id: str
    cwd: str
    settings: ImportSettings | None
    documents: list[ImportDocument]
    branch_messages: int
    leaves: int = 1
    bad_lines: int = 0
    warnings: list[str] = field(default_factory=list)
    bad: BadLines = field(default_factory=BadLines)
    notes: list[str] = field(default_factory=list)
    """Facts worth showing that are not problems (what the hooks already retained)."""
    claim: CursorClaim | None = None
    """A host session (Claude Code, Codex): the hooks' cursor to move once every document is queued."""
    ranges: Ranges | None = None
    """A host session: the message ranges this run covers, kept in the checkpoint for a resume (ADR-110)."""

    @property
    def include_branches(self) -> str:
        return self.settings.include_branches if self.settings else "transcript"

    @property
    def mode(self) -> str:
        return self.settings.mode if self.settings else "chat"

    @property
    def update_mode(self) -> str:
        return self.settings.update_mode if self.settings else "replace"

    def run_id(self) -> str:
        return make_run_id(
            self.bank_id, self.session_id, self.include_branches, self.mode, self.update_mode, self.source_file
        )


# -- planning --------------------------------------------------------------------------------------


def _scope(rt: ImportSession) -> ImportScope:
    assert rt.identity is not None
    return ImportScope(
        host=rt.identity.host,
        repo_key=rt.identity.repo_key,
        cwd=str(rt.cwd),
        session_tags=tuple(session_tags(rt)),
    )


def project_bank_or_fail(rt: ImportSession) -> str:
    bank = rt.project_bank()
    if bank is None:
        raise ImportFailure("no project bank (banks.project.enabled=false): there is nowhere to import sessions")
    return bank


@contextmanager
def _reading(path: Path) -> Iterator[None]:
    """Turn what reading a source file can raise into the import's own outcomes: an empty file
    is "nothing to import" (a warning), a damaged or unreadable one a clear failure naming it."""
    try:
        yield
    except EmptyFileError as exc:
        raise NothingToImport(str(exc)) from None
    except SessionFormatError as exc:
        raise ImportFailure(str(exc)) from None
    except OSError as exc:
        raise ImportFailure(f"cannot read {path}: {type(exc).__name__}") from None


def plan_session(rt: ImportSession, path: Path, settings: ImportSettings, *, explicit: bool) -> Plan:
    """Parse a Pi session file that belongs here and build its documents."""
    assert rt.identity is not None
    bank = project_bank_or_fail(rt)
    with _reading(path):
        parsed = parse_session(path)
    check_belongs(Path(path), parsed.header, rt.cwd, rt.identity.root, explicit=explicit)
    docs = build_session_documents(parsed, settings, _scope(rt))
    return Plan(
        kind="session",
        source_file=docs.source_file,
        bank_id=bank,
        session_id=docs.session_id,
        cwd=docs.cwd,
        settings=settings,
        documents=docs.documents,
        branch_messages=docs.branch_messages,
        leaves=len(docs.leaves),
        bad_lines=docs.bad_lines,
        warnings=list(docs.warnings) + _gap_warnings(parsed, settings),
        bad=docs.bad,
    )


def _gap_warnings(parsed: ParsedSession, settings: ImportSettings) -> list[str]:
    """Say so when the tree is cut (an entry's parent is missing): that history is not on the branch."""
    cut = parsed.dangling()
    if not cut:
        return []
    text = (
        f"{parsed.path}: {cut} entr{'y points' if cut == 1 else 'ies point'} to a parent that is not in the file"
        f"{' (likely an unparsable line)' if parsed.bad_lines else ''}; the conversation before that point "
        "is cut off from the branch that continues after it"
    )
    if settings.include_branches != "all-leaves":
        text += "; re-run with --all-leaves to import it as its own document"
    return [text]


HOST_NAMES = {CLAUDE_CODE: "Claude Code", CODEX: "Codex"}


def _parse_host_file(kind: str, path: Path) -> HostFile:
    if kind == CODEX:
        from .codex_import import parse_codex_file

        return parse_codex_file(path)
    from .claude_import import parse_claude_file

    return parse_claude_file(path)


def plan_host_session(rt: ImportSession, path: Path, kind: str, settings: ImportSettings, *, explicit: bool) -> Plan:
    """A Claude Code or Codex session that belongs here: the part its hooks have not retained (ADR-110)."""
    from ..retain.cursor import CursorError

    assert rt.identity is not None
    bank = project_bank_or_fail(rt)
    with _reading(path):
        parsed = _parse_host_file(kind, path)
    check_cwd_belongs(Path(path), parsed.cwd, rt.cwd, rt.identity.root, explicit=explicit)
    session_cwd = parsed.cwd or str(rt.cwd)
    source_file = os.path.abspath(path)
    run_id = make_run_id(
        bank,
        live_sid(session_cwd, parsed.session_id),
        settings.include_branches,
        settings.mode,
        settings.update_mode,
        source_file,
    )
    try:
        docs = build_host_documents(
            parsed,
            settings,
            _scope(rt),
            session_cwd=session_cwd,
            run_id=run_id,
            checkpoint_path=rt.resolve_path(rt.cfg.import_.checkpoint_path),
            resume=rt.cfg.import_.resume,
            lock_timeout_ms=rt.cfg.queue.lock_timeout_ms,
        )
    except CursorError as exc:
        raise ImportFailure(
            f"{path}: cannot tell what the hooks already retained of this session ({redact_error(exc)}); "
            "nothing imported: run hindsight-hooks doctor --fix in that folder, then import again"
        ) from None
    warnings = [f"{path}: {w}" for w in _host_warnings(kind, settings)]
    notes: list[str] = []
    if docs.retained_before:
        notes.append(
            f"{path}: {docs.retained_before} of its {len(parsed.messages)} message(s) are already taken care of "
            "(retained by the hooks or an earlier import, or left out while that session was read-only or "
            "ignored) and are not imported again"
        )
    return Plan(
        kind=kind,
        source_file=source_file,
        bank_id=bank,
        session_id=docs.sid,
        cwd=docs.cwd,
        settings=settings,
        documents=docs.documents,
        branch_messages=sum(end - start + 1 for start, end in docs.ranges),
        bad_lines=parsed.bad.count,
        warnings=warnings,
        bad=parsed.bad,
        notes=notes,
        claim=docs.claim,
        ranges=docs.ranges,
    )


def _host_warnings(kind: str, settings: ImportSettings) -> list[str]:
    if settings.include_branches != "all-leaves":
        return []
    return [f"a {HOST_NAMES[kind]} session is imported along its current branch only (--all-leaves does not apply)"]


def plan_chat(rt: ImportSession, path: Path) -> Plan:
    """A chat/gateway transcript: one document for the user bank, refused without one."""
    assert rt.identity is not None
    bank = rt.user_bank()
    if bank is None:
        raise ImportRefused(
            f"refusing {path}: a chat transcript has no cwd, so it cannot be proven to belong to this project; "
            "it can only go to a user bank, and none is configured (banks.user)"
        )
    try:
        transcript = parse_chat(path)
    except OSError as exc:
        raise ImportFailure(f"cannot read {path}: {type(exc).__name__}") from None
    documents = []
    if transcript.messages:
        documents.append(build_chat_document(transcript, host=rt.identity.host, redact=rt.cfg.retain.redact_secrets))
    return Plan(
        kind="chat",
        source_file=os.path.abspath(path),
        bank_id=bank,
        session_id=documents[0].session_id if documents else "",
        cwd="",
        settings=None,
        documents=documents,
        branch_messages=len(transcript.messages),
        bad_lines=transcript.bad_lines,
        bad=transcript.bad,
    )


def plan_file(rt: ImportSession, path: Path, settings: ImportSettings) -> Plan:
    """An explicit file, by its content: a Pi session, a Claude Code or Codex session, else a chat log.

    A session whose header line is damaged is refused (naming the line) rather than read as a
    chat log, which would file a project's session in the user bank.
    """
    path = Path(path)
    if path.is_dir():
        raise ImportFailure(f"{path} is a folder, not a file: name one session file (or use import-project-sessions)")
    if not path.is_file():
        raise ImportFailure(f"{path} does not exist or is not a file")
    with _reading(path):
        kind = detect_format(path)
    if kind == PI_SESSION:
        return plan_session(rt, path, settings, explicit=True)
    if kind in HOST_NAMES:
        return plan_host_session(rt, path, kind, settings, explicit=True)
    return plan_chat(rt, path)


def plan_current(rt: ImportSession, path: Path, settings: ImportSettings) -> Plan:
    """The current session's own file: a Pi session, or the Claude Code or Codex session it names."""
    with _reading(path):
        kind = detect_format(path)
    if kind in HOST_NAMES:
        return plan_host_session(rt, path, kind, settings, explicit=True)
    return plan_session(rt, path, settings, explicit=True)


# -- preview ---------------------------------------------------------------------------------------


@dataclass
class DocView:
    """A document as a preview/import reports it (no content)."""

    plan: Plan
    doc: ImportDocument
    status: str
    skip_reason: str | None = None
    unchanged: bool = False
    error: str | None = None

    def as_dict(self, *, preview: bool) -> dict[str, Any]:
        out: dict[str, Any] = {
            "document_id": self.doc.document_id,
            "leaf_id": self.doc.leaf_id,
            "bank_id": self.plan.bank_id,
            "source_file": self.plan.source_file,
            "raw_messages": self.doc.message_count,
            "projected_messages": self.doc.projected_count,
            "dropped_tool_results": self.doc.dropped_tool_results,
            "bytes": self.doc.bytes,
            "update_mode": self.doc.update_mode,
            "status": self.status,
        }
        if self.doc.chunk_index is not None:
            out["chunk_index"] = self.doc.chunk_index
        if self.doc.message_range is not None:
            out["message_range"] = {"start": self.doc.message_range[0], "end": self.doc.message_range[1]}
        if self.skip_reason:
            out["skip_reason"] = self.skip_reason
        if self.error:
            out["error"] = self.error
        out["unchanged"] = self.unchanged
        if preview:
            out["would_write"] = False
        return out

    def line(self) -> str:
        rng = f" messages {self.doc.message_range[0]}-{self.doc.message_range[1]}" if self.doc.message_range else ""
        why = f" ({self.skip_reason})" if self.skip_reason else ""
        return (
            f"- {self.doc.document_id} leaf={self.doc.leaf_id}{rng} raw={self.doc.message_count} "
            f"projected={self.doc.projected_count} dropped_tool_results={self.doc.dropped_tool_results} "
            f"bytes={self.doc.bytes} {self.doc.update_mode} {self.status}{why}"
        )


@dataclass
class Preview:
    scope: str
    plans: list[Plan]
    views: list[DocView]
    unchanged: int
    warnings: list[str]
    notes: list[str] = field(default_factory=list)

    @property
    def messages(self) -> int:
        return sum(p.branch_messages for p in self.plans)

    def summary(self, *, status: str, write: bool) -> dict[str, Any]:
        modes = sorted({p.update_mode for p in self.plans}) or ["replace"]
        return {
            "scope": self.scope,
            "files": len(self.plans),
            "messages": self.messages,
            "documents": len(self.views),
            "pending": sum(1 for v in self.views if v.status == "pending"),
            "skipped": sum(1 for v in self.views if v.status == "skipped"),
            "update_mode": ",".join(modes),
            "status": status,
            "write": "yes" if write else "no",
            "unchanged_manifest_entries": self.unchanged,
        }

    def text(self, *, title: str = "import preview") -> str:
        s = self.summary(status="preview", write=False)
        lines = [
            f"{title}: {s['scope']}",
            f"files={s['files']} messages={s['messages']} documents={s['documents']} "
            f"(pending {s['pending']}, skipped {s['skipped']}) update_mode={s['update_mode']} "
            f"unchanged={s['unchanged_manifest_entries']} status=preview write=no",
        ]
        lines += [v.line() for v in self.views[:PREVIEW_DOC_LINES]]
        if len(self.views) > PREVIEW_DOC_LINES:
            lines.append(f"… and {len(self.views) - PREVIEW_DOC_LINES} more document(s)")
        lines += [f"note: {n}" for n in self.notes]
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines)


def build_preview(rt: ImportSession, scope: str, plans: list[Plan]) -> Preview:
    """Per-document facts and the summary; reads the manifest, writes nothing."""
    manifest = Manifest(rt.resolve_path(rt.cfg.import_.manifest_path))
    resume = rt.cfg.import_.resume
    views: list[DocView] = []
    unchanged = 0
    warnings: list[str] = []
    for plan in plans:
        warnings += plan.warnings
        if plan.bad.count:
            warnings.append(plan.bad.describe(plan.source_file))
        for doc in plan.documents:
            same = manifest.unchanged(doc, plan.bank_id, plan.settings)
            unchanged += same
            if doc.status == "skipped":
                views.append(DocView(plan, doc, "skipped", doc.skip_reason, same))
            elif same and resume:
                views.append(DocView(plan, doc, "skipped", SKIP_ALREADY_IMPORTED, True))
            else:
                views.append(DocView(plan, doc, "pending", None, same))
    warnings += manifest.warnings
    notes = [n for p in plans for n in p.notes]
    return Preview(scope=scope, plans=plans, views=views, unchanged=unchanged, warnings=warnings, notes=notes)


# -- the real import -------------------------------------------------------------------------------


@dataclass
class ImportOutcome:
    """What a real import did; ``views`` carry each document's final status."""

    preview: Preview
    views: list[DocView]
    delivery_errors: dict[str, str] = field(default_factory=dict)
    enqueue_error: str | None = None
    notes: list[str] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(1 for v in self.views if v.status == status)

    @property
    def activity(self) -> str:
        if self.count("failed") or self.enqueue_error or self.delivery_errors:
            return "import-failed"
        if self.count("queued") or self.count("pending"):
            return "import-queued"
        return "imported"


def confirm(rt: ImportSession, preview: Preview) -> bool:
    """Ask ``Import``/``Cancel``; anything but ``Import`` (``None`` included) is a no."""
    title = preview.text() + "\n\nThis will enqueue historical session content for memory. Continue?"
    try:
        answer = rt.ctx.ui.select(title, list(CONFIRM_OPTIONS))
    except Exception:
        answer = None
    return answer == "Import"


def execute(rt: ImportSession, preview: Preview) -> ImportOutcome:
    """Write every plan of ``preview``: checkpoint, stale/identical handling, enqueue, flush."""
    outcome = ImportOutcome(preview=preview, views=[])
    rt.ensure_state_dir()
    manifest = Manifest(rt.resolve_path(rt.cfg.import_.manifest_path), rt.cfg.queue.lock_timeout_ms / 1000.0)
    deadline = Deadline(IMPORT_FLUSH_BUDGET_MS)
    for plan in preview.plans:
        views = [v for v in preview.views if v.plan is plan]
        _execute_plan(rt, plan, views, manifest, deadline, outcome)
        outcome.views.extend(views)
    for warning in manifest.warnings:
        rt.warn_once("import-manifest", warning)
    outcome.notes += manifest.warnings
    return outcome


def _checkpoint_header(rt: ImportSession, plan: Plan) -> dict[str, Any]:
    settings = plan.settings
    return {
        "run_id": plan.run_id(),
        "source_file": plan.source_file,
        "bank_id": plan.bank_id,
        "session_id": plan.session_id,
        "cwd": plan.cwd,
        "include_branches": plan.include_branches,
        "import_mode": plan.mode,
        "tool_results": settings.tool_results if settings else "none",
        "import_quality_profile": settings.quality_profile if settings and settings.strict else None,
        "update_mode": plan.update_mode,
        RANGES_KEY: plan.ranges,
    }


def _execute_plan(
    rt: ImportSession,
    plan: Plan,
    views: list[DocView],
    manifest: Manifest,
    deadline: Deadline,
    outcome: ImportOutcome,
) -> None:
    cfg = rt.cfg
    resume = cfg.import_.resume
    queue = rt.queue()
    cp = Checkpoint.load(rt.resolve_path(cfg.import_.checkpoint_path), _checkpoint_header(rt, plan), resume=resume)
    if cp.warning:
        rt.warn_once("import-checkpoint", cp.warning)
        outcome.notes.append(cp.warning)
    jobs: dict[str, list[DocView]] = {}
    delivered_before: list[DocView] = []

    # 1. What is already done, or already on its way.
    for view in views:
        doc = view.doc
        view.status, view.skip_reason = "pending", None
        if doc.status == "skipped":
            view.status, view.skip_reason = "skipped", doc.skip_reason
            cp.set_status(doc, "skipped", skip_reason=doc.skip_reason)
            continue
        previous = cp.document(doc.document_id) if resume else None
        same_hash = previous is not None and previous.get("content_hash") == doc.content_hash
        if resume and ((same_hash and previous and previous.get("status") == "completed") or view.unchanged):
            view.status, view.skip_reason = "skipped", SKIP_ALREADY_IMPORTED
            cp.set_status(doc, "skipped", skip_reason=SKIP_ALREADY_IMPORTED)
            continue
        if same_hash and previous and previous.get("status") == "queued":
            where, job_id = queued_state(queue, plan.bank_id, doc.document_id, doc.content)
            if where == "gone":
                view.status = "completed"
                cp.set_status(doc, "completed")
                delivered_before.append(view)
                continue
            if where == "queued" and job_id is not None:
                view.status = "queued"
                cp.set_status(doc, "queued")
                jobs.setdefault(job_id, []).append(view)
                continue
        cp.set_status(doc, "pending")
    cp.save()
    if delivered_before:
        manifest.record([entry_for(v.doc, plan.bank_id, plan.settings) for v in delivered_before])

    # 2. Stale and identical queued jobs, then enqueue.
    pending = [v for v in views if v.status == "pending"]
    stale: dict[str, str] = {}
    to_enqueue: list[DocView] = []
    for view in pending:
        match = find_queued(queue, plan.bank_id, view.doc.document_id, view.doc.content)
        if match.identical_job_id is not None:
            view.status = "queued"
            cp.set_status(view.doc, "queued")
            jobs.setdefault(match.identical_job_id, []).append(view)
        else:
            if match.stale_job_ids:
                stale[view.doc.document_id] = view.doc.content
            to_enqueue.append(view)
    if stale:
        removed = remove_stale(queue, plan.bank_id, stale)
        if removed:
            outcome.notes.append(f"removed {len(removed)} stale queued import job(s)")
    for view in to_enqueue:
        if outcome.enqueue_error is not None:
            break
        try:
            job = _job_for(rt, plan, view.doc)
            result = queue.enqueue(job, coalesce=False)
        except Exception as exc:
            outcome.enqueue_error = redact_error(exc)
            view.status, view.error = "failed", outcome.enqueue_error
            cp.set_status(view.doc, "failed", error=outcome.enqueue_error)
            cp.save()
            rt.warn_once("import-enqueue", f"import could not queue {view.doc.document_id}: {outcome.enqueue_error}")
            break
        view.status = "queued"
        cp.set_status(view.doc, "queued")
        cp.save()
        jobs.setdefault(result.job_id, []).append(view)
    cp.save()
    _claim(rt, plan, views, outcome)

    # 3. Deliver, one job at a time, stopping at the first failure.
    _flush(rt, plan, jobs, cp, manifest, deadline, outcome)


def _claim(rt: ImportSession, plan: Plan, views: list[DocView], outcome: ImportOutcome) -> None:
    """Once a host session's documents are all durably queued (or done), move the hooks'
    cursor over them, so a later ``Stop`` of that session does not retain them again (ADR-110).

    Not before: a kill in between leaves the cursor where it was, and the re-run builds the same
    documents. A cursor that cannot be written is reported; the documents stay queued (a
    message the hooks may retain once more beats a lost one).
    """
    if plan.claim is None or any(v.status in ("pending", "failed") for v in views):
        return
    try:
        plan.claim.advance()
    except Exception as exc:
        text = (
            f"{plan.source_file}: imported, but the hooks' retain cursor of this session could not be moved "
            f"({redact_error(exc)}); if the session is resumed, its imported part may be retained again"
        )
        rt.warn_once("import-cursor", text)
        outcome.notes.append(text)


def _job_for(rt: ImportSession, plan: Plan, doc: ImportDocument) -> dict[str, Any]:
    item = build_item(
        rt,
        bank_id=plan.bank_id,
        content=doc.content,
        context=doc.context,
        document_id=doc.document_id,
        update_mode=doc.update_mode,
        tags=doc.tags,
        metadata=doc.metadata,
        timestamp=doc.timestamp,
    )
    return new_job(plan.bank_id, "import", [item], rt.cfg.retain.async_)


def _flush(
    rt: ImportSession,
    plan: Plan,
    jobs: dict[str, list[DocView]],
    cp: Checkpoint,
    manifest: Manifest,
    deadline: Deadline,
    outcome: ImportOutcome,
) -> None:
    from ..retain.delivery import deliver

    waiting = dict(jobs)
    total = sum(len(v) for v in jobs.values())
    done = 0
    claim_wait_end = time.monotonic() + CLAIM_WAIT_S
    while waiting and not deadline.expired():
        budget_ms = max(1, int((deadline.remaining_s() or 0.0) * 1000))
        report = deliver(rt, banks={plan.bank_id}, budget_ms=budget_ms, max_jobs=1, force=True)
        for d in report.delivered:
            finished = waiting.pop(str(d.get("queue_job_id")), None)
            if not finished:
                continue
            for view in finished:
                view.status = "completed"
                cp.set_status(view.doc, "completed")
            cp.save()
            manifest.record([entry_for(v.doc, plan.bank_id, plan.settings) for v in finished])
            done += len(finished)
            rt.info(f"import: {done}/{total} document(s) delivered to {plan.bank_id}")
        error = report.error or report.errors.get(plan.bank_id)
        if error:
            outcome.delivery_errors[plan.bank_id] = error
            for views in waiting.values():
                for view in views:
                    view.error = error
                    cp.set_status(view.doc, "queued", error=error)
            cp.save()
            return
        if report.sent:
            continue
        # Nothing was deliverable: another flusher (the startup flush, a timer, another process)
        # may hold our jobs, or have delivered them already. Settle what we can see, and give a
        # claim in progress a short while to commit before leaving the rest queued.
        claimed = _settle(rt, plan, waiting, cp, manifest)
        if not claimed or time.monotonic() >= claim_wait_end:
            return
        time.sleep(CLAIM_POLL_S)


def _settle(
    rt: ImportSession, plan: Plan, waiting: dict[str, list[DocView]], cp: Checkpoint, manifest: Manifest
) -> bool:
    """Mark jobs another flusher delivered (or dead-lettered); True if some are claimed right now."""
    states = job_states(rt.queue(), set(waiting))
    delivered: list[DocView] = []
    for job_id, state in states.items():
        if state == "gone":
            for view in waiting.pop(job_id):
                view.status = "completed"
                cp.set_status(view.doc, "completed")
                delivered.append(view)
        elif state == "dead":
            for view in waiting.pop(job_id):
                view.status, view.error = "failed", "moved to the dead-letter queue"
                cp.set_status(view.doc, "failed", error=view.error)
    cp.save()
    if delivered:
        manifest.record([entry_for(v.doc, plan.bank_id, plan.settings) for v in delivered])
    return any(states.get(job_id) == "claimed" for job_id in waiting)
