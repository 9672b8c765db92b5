"""Session branches → import documents, exactly as docs/import.md "Document" lays them out.

Everything that ends up in memory is decided here, as a pure function of the parsed file and
the settings, so a preview shows byte for byte what an import would send, and a re-import of
an unchanged file produces the same ids and the same content hashes (that is what makes a
re-run skip what is already in memory). Three modes:

* ``curated`` — injected recall blocks dropped, then turns chunked and projected (docs/retain.md#projection) with
  the import's tool-result policy; ``strict`` also drops noisy successful tool results;
* ``raw`` — the whole branch as one document, without injected blocks;
* ``forensic`` — the same, keeping injected blocks (the caller warns).

Content is JSON (indent 2), redacted when ``retain.redact_secrets`` is on, and hashed after
redaction, so the hash describes what was actually stored.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..config_model import Config, RetainConfig
from ..governance import identity as ident
from ..governance.redact import redact_text
from ..hooks.messages import Message
from ..retain.injected import is_injected
from ..retain.projection import ToolResultPolicy, project
from ..timefmt import epoch_ms, iso_from_ms
from .chunking import Chunk, chunk_turns
from .pi_session import BadLines, ParsedSession, read_header, resolve_parent_session
from .quality import strict_drops

PROJECTIONS = {"curated": "curated-turns-v1", "raw": "raw-v1", "forensic": "forensic-raw-v1"}
SKIP_EMPTY_CURATED = "empty-curated-projection"
SKIP_EMPTY_BRANCH = "empty-branch"
SKIP_ALREADY_IMPORTED = "already-imported"
FORENSIC_WARNING = (
    "forensic import keeps injected <hindsight-memory> blocks: recalled memory will be stored again as history"
)


@dataclass(frozen=True)
class ImportSettings:
    """The ``[import]`` config for one run (``all_leaves`` from the command overrides the config)."""

    mode: str = "curated"
    quality_profile: str = "compatible"
    turns_per_document: int = 12
    max_document_bytes: int = 80000
    include_branches: str = "current-only"
    tool_results: str = "errors-only"
    summary_max_chars: int = 500
    update_mode: str = "replace"
    redact: bool = True
    retain: RetainConfig = field(default_factory=RetainConfig)

    @classmethod
    def from_config(cls, cfg: Config, *, all_leaves: bool = False) -> ImportSettings:
        imp = cfg.import_
        return cls(
            mode=imp.mode,
            quality_profile=imp.quality_profile,
            turns_per_document=imp.turns_per_document,
            max_document_bytes=imp.max_document_bytes,
            include_branches="all-leaves" if all_leaves else imp.include_branches,
            tool_results=imp.tool_results,
            summary_max_chars=imp.tool_result_summary_max_chars,
            update_mode="replace" if imp.replace_existing_imported_docs else "append",
            redact=cfg.retain.redact_secrets,
            retain=cfg.retain,
        )

    @property
    def strict(self) -> bool:
        return self.mode == "curated" and self.quality_profile == "strict"

    @property
    def projection(self) -> str:
        return PROJECTIONS[self.mode]

    @property
    def import_profile(self) -> str | None:
        """The chunking policy, which is also part of every curated document id."""
        if self.mode != "curated":
            return None
        return f"turns-{self.turns_per_document}-bytes-{self.max_document_bytes}"


@dataclass(frozen=True)
class ImportScope:
    """Who writes: host and repo name the tags; ``cwd`` stands in for a header without one."""

    host: str
    repo_key: str
    cwd: str
    session_tags: tuple[str, ...] = ()


@dataclass
class ImportDocument:
    """One document to write (or skip), with the facts a preview reports."""

    document_id: str
    leaf_id: str
    session_id: str
    source_file: str
    cwd: str
    content: str
    content_hash: str
    context: str
    tags: list[str]
    metadata: dict[str, str]
    update_mode: str
    timestamp: str | None
    message_count: int
    projected_count: int
    dropped_tool_results: int
    injected_dropped: int = 0
    chunk_index: int | None = None
    message_range: tuple[int, int] | None = None
    status: str = "pending"
    skip_reason: str | None = None

    @property
    def bytes(self) -> int:
        return len(self.content.encode("utf-8"))

    def skipped(self, reason: str) -> ImportDocument:
        return replace(self, status="skipped", skip_reason=reason)


@dataclass
class SessionDocuments:
    """Everything a session file yields for one run."""

    source_file: str
    session_id: str
    cwd: str
    session_timestamp: str | None
    leaves: list[str]
    branch_messages: int
    documents: list[ImportDocument]
    bad_lines: int = 0
    warnings: list[str] = field(default_factory=list)
    bad: BadLines = field(default_factory=BadLines)


# -- helpers -------------------------------------------------------------------------------------


def content_hash(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def _with_timestamp(msg: Message, entry_timestamp: str | None) -> Message:
    """A message missing its epoch-ms timestamp borrows its entry's, so the content is stable."""
    if msg.get("timestamp") is not None:
        return msg
    ms = epoch_ms(entry_timestamp)
    return msg if ms is None else {**msg, "timestamp": ms}


def _omit_images(msg: Message) -> Message:
    """Raw documents keep messages as they are, except image bytes, which are never retained."""
    content = msg.get("content")
    if not isinstance(content, list) or not any(isinstance(p, dict) and p.get("type") == "image" for p in content):
        return msg
    parts: list[Any] = []
    for part in content:
        if isinstance(part, dict) and part.get("type") == "image":
            placeholder: dict[str, Any] = {"type": "image"}
            if isinstance(part.get("mimeType"), str):
                placeholder["mimeType"] = part["mimeType"]
            placeholder["omitted"] = True
            parts.append(placeholder)
        else:
            parts.append(part)
    return {**msg, "content": parts}


def _message_iso(msg: Message | None) -> str | None:
    if msg is None:
        return None
    ts = msg.get("timestamp")
    if isinstance(ts, int | float) and not isinstance(ts, bool):
        try:
            return iso_from_ms(int(ts))
        except (OverflowError, ValueError):
            return None
    return ts if isinstance(ts, str) and ts else None


def dump_content(doc: dict[str, Any]) -> str:
    return json.dumps(
        {k: v for k, v in doc.items() if v is not None},
        indent=2,
        ensure_ascii=False,
        default=lambda v: f"<{type(v).__qualname__}>",
    )


def session_cwd(parsed: ParsedSession, fallback: str) -> str:
    """The header's cwd after realpath (relative to the file's folder if relative), else ``fallback``."""
    cwd = parsed.header.cwd
    if not cwd:
        return fallback
    return os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(parsed.path)), cwd))


def parent_session_id(parent_file: str | None, raw_parent: str | None) -> str | None:
    """The parent's isid: its header id when the file is readable, else the sid of its path."""
    if parent_file is not None:
        header = None
        try:
            header = read_header(Path(parent_file))
        except OSError:
            header = None
        return ident.import_session_id(header.id if header else None, Path(parent_file))
    if raw_parent:
        return ident.import_session_id(raw_parent, Path(raw_parent))
    return None


# -- building --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SessionFacts:
    """What every document of one session says about the session (ids, file, folder, parent).

    ``host``/``host_session_id`` are set for sessions recorded by another agent (a Claude Code
    transcript): the content and metadata then name the agent and its own session id. They are
    left out (``None``) for Pi sessions, whose documents stay byte for byte as before.
    """

    source_file: str
    isid: str
    cwd: str
    session_timestamp: str | None
    parent_id: str | None
    parent_file: str | None
    forked: bool
    host: str | None = None
    host_session_id: str | None = None


def build_session_documents(parsed: ParsedSession, settings: ImportSettings, scope: ImportScope) -> SessionDocuments:
    """The documents of ``parsed`` under ``settings`` (current branch, or one set per leaf)."""
    source_file = os.path.abspath(parsed.path)
    leaves = parsed.leaves()
    current = parsed.current_leaf()
    if settings.include_branches == "all-leaves":
        targets = leaves
    else:
        targets = [current] if current is not None else []
    parent_file = resolve_parent_session(parsed.header, parsed.path)
    facts = SessionFacts(
        source_file=source_file,
        isid=ident.import_session_id(parsed.header.id, Path(source_file)),
        cwd=session_cwd(parsed, scope.cwd),
        session_timestamp=parsed.header.timestamp,
        parent_id=parent_session_id(parent_file, parsed.header.parent_session),
        parent_file=parent_file,
        forked=settings.include_branches == "all-leaves" and len(leaves) > 1,
    )
    now_ms = epoch_ms(parsed.header.timestamp)  # None: the session says no time (ADR 207)
    documents: list[ImportDocument] = []
    branch_messages = 0
    for leaf in targets:
        branch = parsed.branch(leaf)
        branch_messages += len(branch.messages)
        pairs = zip(branch.messages, branch.entry_timestamps, strict=True)
        items = [(i, _with_timestamp(m, ts)) for i, (m, ts) in enumerate(pairs)]
        documents.extend(branch_documents(items, leaf, facts, settings, scope, now_ms))
    warnings = [FORENSIC_WARNING] if settings.mode == "forensic" and documents else []
    return SessionDocuments(
        source_file=source_file,
        session_id=facts.isid,
        cwd=facts.cwd,
        session_timestamp=facts.session_timestamp,
        leaves=leaves,
        branch_messages=branch_messages,
        documents=documents,
        bad_lines=parsed.bad_lines,
        warnings=warnings,
        bad=parsed.bad,
    )


def branch_documents(
    items: list[tuple[int, Message]],
    leaf: str,
    facts: SessionFacts,
    settings: ImportSettings,
    scope: ImportScope,
    now_ms: int | None,
) -> list[ImportDocument]:
    """The documents of one branch (or one part of it): ``items`` are ``(branch index, message)``.

    Curated mode chunks them; raw and forensic make one document. The indexes need not start
    at 0: an import that only sends what the hooks have not retained yet passes the rest of
    the branch, and the chunk ranges keep naming positions in the whole branch.
    """
    if settings.mode == "curated":
        return _curated(items, leaf, facts, settings, scope, now_ms)
    return [_whole_branch(items, leaf, facts, settings, scope)]


def _curated(
    items: list[tuple[int, Message]],
    leaf: str,
    facts: SessionFacts,
    settings: ImportSettings,
    scope: ImportScope,
    now_ms: int | None,
) -> list[ImportDocument]:
    kept = [(i, m) for i, m in items if not is_injected(m)]
    injected = len(items) - len(kept)
    drops = strict_drops(kept) if settings.strict else {}
    chunks = chunk_turns(
        kept, turns_per_document=settings.turns_per_document, max_document_bytes=settings.max_document_bytes
    )
    policy: ToolResultPolicy = settings.tool_results  # type: ignore[assignment]
    out: list[ImportDocument] = []
    for chunk in chunks:
        source = [m for i, m in chunk.items if i not in drops]
        projected = project(
            source,
            settings.retain,
            now_ms=0 if now_ms is None else now_ms,
            undated=now_ms is None,  # a message without a time then keeps none: never 1970 (ADR 207)
            tool_result_policy=policy,
            summary_max_chars=settings.summary_max_chars,
        )
        raw_results = sum(1 for m in chunk.messages if m.get("role") == "toolResult")
        kept_results = sum(1 for m in projected if m.get("role") == "toolResult")
        doc = _document(
            facts,
            settings,
            scope,
            leaf=leaf,
            chunk=chunk,
            messages=projected,
            message_count=len(chunk.items),
            dropped_tool_results=raw_results - kept_results,
            timestamp=_message_iso(chunk.messages[-1]) if chunk.items else None,
        )
        doc.injected_dropped = injected if chunk.index == 0 else 0
        out.append(doc.skipped(SKIP_EMPTY_CURATED) if not projected else doc)
    return out


def _whole_branch(
    items: list[tuple[int, Message]],
    leaf: str,
    facts: SessionFacts,
    settings: ImportSettings,
    scope: ImportScope,
) -> ImportDocument:
    keep_injected = settings.mode == "forensic"
    messages = [_omit_images(m) for _, m in items if keep_injected or not is_injected(m)]
    doc = _document(
        facts,
        settings,
        scope,
        leaf=leaf,
        chunk=None,
        messages=messages,
        message_count=len(messages),
        dropped_tool_results=0,
        timestamp=_message_iso(messages[-1]) if messages else None,
    )
    doc.injected_dropped = len(items) - len(messages)
    return doc.skipped(SKIP_EMPTY_BRANCH) if not messages else doc


def _document(
    facts: SessionFacts,
    settings: ImportSettings,
    scope: ImportScope,
    *,
    leaf: str,
    chunk: Chunk | None,
    messages: list[Any],
    message_count: int,
    dropped_tool_results: int,
    timestamp: str | None,
) -> ImportDocument:
    strict = settings.quality_profile if settings.strict else None
    if chunk is not None:
        doc_id = ident.import_document_id(
            facts.isid,
            leaf,
            ident.CuratedChunk(
                settings.turns_per_document, settings.max_document_bytes, chunk.index, chunk.start, chunk.end
            ),
        )
    else:
        doc_id = ident.import_document_id(facts.isid, leaf)
    body: dict[str, Any] = {
        "source": "session-import",
        "host": facts.host,
        "host_session_id": facts.host_session_id,
        "session_file": facts.source_file,
        "cwd": facts.cwd,
        "session_id": facts.isid,
        "parent_session_id": facts.parent_id,
        "parent_session_file": facts.parent_file,
        "branch_leaf_id": leaf,
        "projection": settings.projection,
        "import_quality_profile": strict,
        "chunk_index": chunk.index if chunk is not None else None,
        "message_range": {"start": chunk.start, "end": chunk.end} if chunk is not None else None,
        "projected_message_count": len(messages),
        "messages": messages,
    }
    content = dump_content(body)
    if settings.redact:
        content = redact_text(content)
    digest = content_hash(content)
    context = f"Historical session import from {os.path.basename(facts.source_file)}, branch {leaf}"
    if chunk is not None:
        context += f", chunk {chunk.index}"
    tags = ident.base_tags(scope.host, scope.repo_key, facts.isid, list(scope.session_tags))
    tags += [f"branch:{leaf}", "import:historical", "imported:true", f"document:{doc_id}"]
    if facts.parent_id:
        tags.append(f"parent:{facts.parent_id}")
    if facts.forked:
        tags.append("forked:true")
    meta: dict[str, str | None] = {
        "session_file": facts.source_file,
        "imported": "true",
        "cwd": facts.cwd,
        "session_id": facts.isid,
        "parent_session_id": facts.parent_id,
        "parent_session_file": facts.parent_file,
        "branch_leaf_id": leaf,
        "import_mode": settings.mode,
        "import_quality_profile": strict,
        "projection_version": settings.projection,
        "import_profile": settings.import_profile,
        "chunk_index": str(chunk.index) if chunk is not None else None,
        "message_range_start": str(chunk.start) if chunk is not None else None,
        "message_range_end": str(chunk.end) if chunk is not None else None,
        "content_hash": digest,
        "include_branches": settings.include_branches,
        "tool_results": settings.tool_results,
        "session_timestamp": facts.session_timestamp,
        "host": facts.host,
        "host_session_id": facts.host_session_id,
        "source": "hindsight-hooks",
        "retain_source": "import",
    }
    return ImportDocument(
        document_id=doc_id,
        leaf_id=leaf,
        session_id=facts.isid,
        source_file=facts.source_file,
        cwd=facts.cwd,
        content=content,
        content_hash=digest,
        context=context,
        tags=ident.dedupe(tags),
        metadata={k: v for k, v in meta.items() if v is not None},
        update_mode=settings.update_mode,
        timestamp=timestamp,
        message_count=message_count,
        projected_count=len(messages),
        dropped_tool_results=dropped_tool_results,
        chunk_index=chunk.index if chunk is not None else None,
        message_range=(chunk.start, chunk.end) if chunk is not None else None,
    )
