"""Building queue items and jobs in the Hindsight wire shape (docs/retain.md#jobs, docs/tools.md#hindsight_retain,
docs/import.md).

Every writer (auto-retain, the retain tools, commands, import) goes through here so that
tags, metadata, observation scopes and redaction are applied the same way everywhere: the
full tag and metadata sets are resent on every write because the server applies the latest
call's sets to every unit of a document.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..governance import identity as ident
from ..governance.redact import redact_text, redact_value
from ..timefmt import iso_now
from .session import RetainSession

RESERVED_METADATA = ("cwd", "session_file", "session_id", "source", "retain_source", "imported")


def session_context(rt: RetainSession) -> str:
    """``Coding session (<host>) for repo "<cwd name>", session <file name>``."""
    assert rt.identity is not None
    base = f'Coding session ({rt.identity.host}) for repo "{os.path.basename(rt.cwd)}"'
    if rt.ctx.session_file is not None:
        return f"{base}, session {Path(rt.ctx.session_file).name}"
    return f"{base}, ephemeral session"


def base_metadata(rt: RetainSession, retain_source: str, imported: bool = False) -> dict[str, str]:
    assert rt.identity is not None
    meta: dict[str, str] = {"cwd": str(rt.cwd), "imported": "true" if imported else "false"}
    if rt.ctx.session_file is not None:
        meta["session_file"] = str(Path(rt.ctx.session_file).absolute())
    meta["session_id"] = rt.identity.sid
    meta["source"] = "hindsight-hooks"
    meta["retain_source"] = retain_source
    return meta


def session_tags(rt: RetainSession) -> list[str]:
    if rt.meta is None:
        return []
    return list(rt.meta.read().record.tags)


def base_tags(rt: RetainSession, extra: list[str] | None = None) -> list[str]:
    """Base tags + session tags + ``extra``, in order, de-duplicated."""
    assert rt.identity is not None
    tags = ident.base_tags(rt.identity.host, rt.identity.repo_key, rt.identity.sid, session_tags(rt))
    for t in extra or []:
        if t not in tags:
            tags.append(t)
    return tags


def observation_scopes_for(rt: RetainSession, bank_id: str) -> list[list[str]] | None:
    """The configured observation scopes expanded for ``bank_id``; None when observations are off."""
    if not rt.cfg.observations.enabled or rt.identity is None:
        return None
    values = {
        "repoKey": rt.identity.repo_key,
        "sessionId": rt.identity.sid,
        "cwdHash": ident.hash_n(str(rt.cwd), 12),
        "projectBankId": rt.identity.project_bank_id or "",
        "bankId": bank_id,
        "hostName": rt.identity.host,
    }
    try:
        return ident.expand_observation_scopes(rt.cfg.observations.scopes, values)
    except ValueError:
        return None


def build_item(
    rt: RetainSession,
    *,
    bank_id: str,
    content: str,
    context: str,
    document_id: str,
    update_mode: str,
    tags: list[str],
    metadata: dict[str, str],
    timestamp: str | None = None,
    observation_scopes: Any = None,
    entities: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """One wire item; content/context/metadata redacted when ``retain.redact_secrets``."""
    redact = rt.cfg.retain.redact_secrets
    item: dict[str, Any] = {
        "content": redact_text(content) if redact else content,
        "context": redact_text(context),
        "timestamp": timestamp or iso_now(),
        "document_id": document_id,
        "update_mode": update_mode,
        "tags": list(tags),
        "metadata": redact_value(metadata) if redact else dict(metadata),
    }
    scopes = observation_scopes if observation_scopes is not None else observation_scopes_for(rt, bank_id)
    if scopes is not None:
        item["observation_scopes"] = scopes
    if entities:
        item["entities"] = entities
    return item


def new_job(bank_id: str, source: str, items: list[dict[str, Any]], async_: bool) -> dict[str, Any]:
    """The queue job; its items made encodable first (orjson and SQLite refuse lone surrogates,
    and a job that cannot be written would block its writer on every retry). Items are almost
    always clean already (agent_end sanitised its delta): one C-speed encode check, not a walk."""
    from ..queue.jobs import new_job as make
    from ..sanitize import sanitize_if_needed

    return make(bank_id=bank_id, source=source, items=sanitize_if_needed(items), async_=async_)
