"""The import checkpoint: the state of the current run, document by document (docs/import.md).

``{version:1, run_id, source_file, bank_id, session_id, cwd, include_branches, import_mode,
tool_results, import_quality_profile?, update_mode, started_at, updated_at,
documents:{<id>:{document_id, leaf_id, content_hash, message_count, status, skip_reason?,
error?, updated_at}}}`` with status ``pending|queued|completed|failed|skipped``.

One run at a time: a different ``run_id`` (another file, another mode, another bank) starts
a fresh checkpoint. The run id names every choice that changes which documents exist, so
resuming never mixes documents built under different rules. It is saved after every status
change, so a run killed at any point resumes from what is on disk.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..governance.redact import redact_text
from ..timefmt import iso_now
from .documents import ImportDocument
from .state_file import load_state, save_state

VERSION = 1
STATUSES = ("pending", "queued", "completed", "failed", "skipped")
_WS = re.compile(r"\s")


def make_run_id(bank_id: str, isid: str, include_branches: str, mode: str, update_mode: str, source_file: str) -> str:
    """``hh-import:<bank>:<isid>:<include_branches>:<mode>:<update_mode>:<source_file>``, whitespace → ``_``."""
    return _WS.sub("_", f"hh-import:{bank_id}:{isid}:{include_branches}:{mode}:{update_mode}:{source_file}")


def _valid(data: Any) -> bool:
    return (
        isinstance(data, dict)
        and data.get("version") == VERSION
        and isinstance(data.get("run_id"), str)
        and isinstance(data.get("documents"), dict)
        and all(isinstance(v, dict) and v.get("status") in STATUSES for v in data["documents"].values())
    )


class Checkpoint:
    """The checkpoint of one run; ``load`` reuses the file only for the same run id and ``resume``."""

    def __init__(self, path: Path, data: dict[str, Any], warning: str | None = None, resumed: bool = False) -> None:
        self.path = Path(path)
        self.data = data
        self.warning = warning
        self.resumed = resumed

    @classmethod
    def load(cls, path: Path, header: dict[str, Any], *, resume: bool) -> Checkpoint:
        """The run's checkpoint: the stored one when it is the same run and ``resume``, else fresh.

        ``header`` holds the run-level fields (``run_id``, ``source_file``, ``bank_id``, ...).
        Reading may set a corrupt file aside; nothing else is written until ``save``.
        """
        loaded = load_state(Path(path), _valid, "import checkpoint")
        now = iso_now()
        if resume and loaded.data is not None and loaded.data.get("run_id") == header["run_id"]:
            data = loaded.data
            data.update({k: v for k, v in header.items() if v is not None})
            return cls(path, data, loaded.warning, resumed=True)
        data = {"version": VERSION}
        data.update({k: v for k, v in header.items() if v is not None})
        data.update({"started_at": now, "updated_at": now, "documents": {}})
        return cls(path, data, loaded.warning)

    @property
    def run_id(self) -> str:
        return str(self.data["run_id"])

    def document(self, document_id: str) -> dict[str, Any] | None:
        doc = self.data["documents"].get(document_id)
        return doc if isinstance(doc, dict) else None

    def set_status(
        self,
        doc: ImportDocument,
        status: str,
        *,
        skip_reason: str | None = None,
        error: str | None = None,
    ) -> None:
        """Record a document's status (in memory; call ``save`` to persist)."""
        assert status in STATUSES
        now = iso_now()
        entry: dict[str, Any] = {
            "document_id": doc.document_id,
            "leaf_id": doc.leaf_id,
            "content_hash": doc.content_hash,
            "message_count": doc.message_count,
            "status": status,
        }
        if skip_reason:
            entry["skip_reason"] = skip_reason
        if error:
            entry["error"] = redact_text(error)[:500]
        entry["updated_at"] = now
        self.data["documents"][doc.document_id] = entry
        self.data["updated_at"] = now

    def save(self) -> None:
        save_state(self.path, self.data)
