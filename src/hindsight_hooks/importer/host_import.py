"""A host's session (Claude Code, Codex) as import documents that never repeat what the hooks retained.

The same session of a command-hook agent can reach memory two ways: live, through our hooks
(``Stop`` retains the new part of the transcript into the session's live document), and later
or earlier through an import. Both must agree on which messages are already in memory, or a
session would be stored twice. They do through one record: the session's **retain cursor**,
keyed by the sid the hooks use (a hash of ``<cwd>/.hindsight/sessions/<session id>.jsonl``,
:func:`~hindsight_hooks.host_sessions.session_file_for`), kept in the session folder's
``.hindsight/retain-cursors.json``, over the very messages the hooks read (the host's own
reader, with injected blocks dropped as ``agent_end`` drops them). ADR-110.

* An import sends only the messages the cursor does not cover yet, as ordinary import
  documents (docs/import.md: curated chunks, tags, manifest, checkpoint, preview), whose ``session:``
  tag is the hooks' sid. Once every document is durably queued, it moves the cursor over
  them, so a later ``Stop`` of that session (a resumed session) retains only what is new.
* Documents are named by their place in the whole branch (``chunk-<i>-<start>-<end>``) and by
  the last message they hold (the "leaf"), so re-running an import over the same part of a
  session builds byte-identical documents.
* The checkpoint records the message ranges its run covers (``source_messages``). A run
  killed after moving the cursor but before delivering everything is resumed from those
  ranges, not from the cursor (which already covers them): the same documents again, the
  delivered ones skipped, the queued ones delivered.

The per-host parts are only the parsers (:mod:`.claude_import`, :mod:`.codex_import`), which
turn a file into a :class:`HostFile`. Pure up to reading the cursor and the checkpoint; moving
the cursor is :class:`CursorClaim`, which the runner calls.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..governance import identity as ident
from ..hooks.messages import Message
from ..host_sessions import session_file_for
from ..retain.cursor import CursorStore, filter_new
from ..timefmt import epoch_ms
from .documents import ImportDocument, ImportScope, ImportSettings, SessionFacts, branch_documents
from .jsonl_lines import numbered_objects
from .pi_session import BadLines, EmptyFileError, SessionFormatError

STATE_DIR_NAME = ".hindsight"
CURSOR_FILE = "retain-cursors.json"
RANGES_KEY = "source_messages"
"""The checkpoint field holding the ``[start, end]`` message ranges of a host session's run."""
UNFINISHED = ("pending", "queued", "failed")

Ranges = list[list[int]]


@dataclass
class HostFile:
    """One host session file, read for import: its current branch as messages, and who it is."""

    path: Path
    host: str
    session_id: str
    cwd: str | None
    started_at: str | None
    messages: list[Message]
    bad: BadLines = field(default_factory=BadLines)


def read_objects(path: Path) -> tuple[list[dict[str, Any]], BadLines]:
    """Every JSON object of ``path`` in order, and the lines that were not one.

    Raises :class:`EmptyFileError` for a file with no line and :class:`SessionFormatError` for
    one with no valid line at all (neither names content).
    """
    lines: list[dict[str, Any]] = []
    bad = BadLines()
    seen_any = False
    for lineno, obj, ends_with_newline in numbered_objects(path):
        seen_any = True
        if obj is None:
            bad.add(lineno)
            bad.truncated_tail = not ends_with_newline
            continue
        lines.append(obj)
    if not seen_any:
        raise EmptyFileError(f"{path} is empty: nothing to import")
    if not lines:
        raise SessionFormatError(f"{path}: no line is valid JSON; nothing imported")
    return lines, bad


# -- the live session's cursor ----------------------------------------------------------------------


def live_sid(session_cwd: str, session_id: str) -> str:
    """The sid the hooks give this session (``session_id`` of its never-written session file)."""
    return ident.session_id(session_file_for(Path(session_cwd), session_id), Path(session_cwd))


def cursor_path(session_cwd: str) -> Path:
    """Where the hooks of a session run in ``session_cwd`` keep its retain cursor."""
    return Path(os.path.realpath(session_cwd)) / STATE_DIR_NAME / CURSOR_FILE


@dataclass
class CursorClaim:
    """Moves the hooks' retain cursor of one session over the messages an import has queued."""

    path: Path
    sid: str
    messages: list[Message]
    through: int
    lock_timeout_ms: int = 5000

    def advance(self) -> None:
        """Raises what :meth:`CursorStore.advance` raises; the caller reports it."""
        if not self.path.parent.parent.is_dir():
            return  # the session's folder is gone: no hook will ever read this cursor
        CursorStore(self.path, self.lock_timeout_ms).advance(self.sid, self.messages, self.through)


# -- ranges ---------------------------------------------------------------------------------------


def to_ranges(indexes: list[int]) -> Ranges:
    """Sorted indexes as inclusive ``[start, end]`` runs."""
    out: Ranges = []
    for i in sorted(indexes):
        if out and i == out[-1][1] + 1:
            out[-1][1] = i
        else:
            out.append([i, i])
    return out


def from_ranges(ranges: Any, limit: int) -> list[int] | None:
    """The indexes of stored ranges, or ``None`` when they are malformed or outside ``limit``."""
    if not isinstance(ranges, list) or not ranges:
        return None
    out: list[int] = []
    for pair in ranges:
        if not (isinstance(pair, list) and len(pair) == 2 and all(type(v) is int for v in pair)):
            return None
        start, end = pair
        if not 0 <= start <= end < limit:
            return None
        out.extend(range(start, end + 1))
    return sorted(set(out))


def unfinished_ranges(checkpoint_path: Path, run_id: str, limit: int) -> list[int] | None:
    """The message indexes of this run's checkpoint, if that run left documents undelivered.

    Read-only (a preview must not even set a corrupt checkpoint aside): anything unreadable
    means "no run to resume".
    """
    try:
        data = json.loads(checkpoint_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("run_id") != run_id:
        return None
    docs = data.get("documents")
    if not isinstance(docs, dict):
        return None
    if not any(isinstance(d, dict) and d.get("status") in UNFINISHED for d in docs.values()):
        return None
    return from_ranges(data.get(RANGES_KEY), limit)


# -- documents --------------------------------------------------------------------------------------


@dataclass
class HostDocuments:
    """What one host session gives an import run."""

    sid: str
    cwd: str
    documents: list[ImportDocument]
    ranges: Ranges
    retained_before: int
    claim: CursorClaim | None
    resumed: bool = False


def _leaf(msg: Message, index: int) -> str:
    """The id of the document's last message (a Claude Code tool result's is ``<line uuid>:<call>``)."""
    raw = msg.get("id")
    return str(raw).split(":", 1)[0] if isinstance(raw, str) and raw else f"message-{index}"


def build_host_documents(
    parsed: HostFile,
    settings: ImportSettings,
    scope: ImportScope,
    *,
    session_cwd: str,
    run_id: str,
    checkpoint_path: Path,
    resume: bool,
    lock_timeout_ms: int = 5000,
) -> HostDocuments:
    """The documents for the part of ``parsed`` that is not in memory yet.

    Raises :class:`~hindsight_hooks.retain.cursor.CursorError` when the session's cursor store
    cannot be read: without it we cannot tell what the hooks retained, and guessing "nothing"
    would store the session twice.
    """
    msgs = parsed.messages
    sid = live_sid(session_cwd, parsed.session_id)
    path = cursor_path(session_cwd)
    state = CursorStore(path, lock_timeout_ms).get(sid) if path.is_file() else None
    new = filter_new(msgs, state)
    resumed = unfinished_ranges(checkpoint_path, run_id, len(msgs)) if resume else None
    if resumed:
        taken = set(resumed)
        groups = [resumed, [i for i in new if i not in taken]]
    else:
        groups = [new]
    facts = SessionFacts(
        source_file=os.path.abspath(parsed.path),
        isid=sid,
        cwd=os.path.realpath(session_cwd),
        session_timestamp=parsed.started_at,
        parent_id=None,
        parent_file=None,
        forked=False,
        host=parsed.host,
        host_session_id=parsed.session_id,
    )
    host_scope = ImportScope(host=parsed.host, repo_key=scope.repo_key, cwd=facts.cwd, session_tags=scope.session_tags)
    now_ms = epoch_ms(parsed.started_at)  # None: the session says no time (ADR 207)
    documents: list[ImportDocument] = []
    covered: list[int] = []
    for group in groups:
        if not group:
            continue
        items = [(i, msgs[i]) for i in group]
        leaf = _leaf(msgs[group[-1]], group[-1])
        documents.extend(branch_documents(items, leaf, facts, settings, host_scope, now_ms))
        covered.extend(group)
    claim = CursorClaim(path, sid, msgs, max(covered), lock_timeout_ms) if covered else None
    return HostDocuments(
        sid=sid,
        cwd=facts.cwd,
        documents=documents,
        ranges=to_ranges(covered),
        retained_before=len(msgs) - len(new),
        claim=claim,
        resumed=bool(resumed),
    )
