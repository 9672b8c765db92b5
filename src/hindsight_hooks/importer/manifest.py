"""The import manifest: what has been delivered, by document (docs/import.md "Manifest").

``{version:1, imports:{<document id>:{document_id, bank_id, source_file, imported_at,
content_hash, message_count, leaf_id, session_id, cwd, include_branches, import_mode,
tool_results, import_quality_profile?, projection_version?, import_profile?, chunk_index?,
message_range?, update_mode}}}``.

It is updated after each delivery, and outlives the single-run checkpoint: importing many
files (discovery) or going back to an earlier file still knows what is already in memory, so
an unchanged document is not sent again (ADR-014). Updates are read-modify-write under a file
lock so two imports in two processes never lose each other's entries. No content is stored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from filelock import FileLock

from ..fsutil import FILE_MODE, ensure_private_dir
from ..timefmt import iso_now
from .documents import ImportDocument, ImportSettings
from .state_file import load_state, save_state

VERSION = 1


def _valid(data: Any) -> bool:
    return (
        isinstance(data, dict)
        and data.get("version") == VERSION
        and isinstance(data.get("imports"), dict)
        and all(isinstance(v, dict) for v in data["imports"].values())
    )


def entry_for(doc: ImportDocument, bank_id: str, settings: ImportSettings | None) -> dict[str, Any]:
    """The manifest entry of a delivered document (``settings`` is ``None`` for chat imports)."""
    entry: dict[str, Any] = {
        "document_id": doc.document_id,
        "bank_id": bank_id,
        "source_file": doc.source_file,
        "imported_at": iso_now(),
        "content_hash": doc.content_hash,
        "message_count": doc.message_count,
        "leaf_id": doc.leaf_id,
        "session_id": doc.session_id,
        "cwd": doc.cwd,
        "include_branches": settings.include_branches if settings else "transcript",
        "import_mode": settings.mode if settings else "chat",
        "tool_results": settings.tool_results if settings else "none",
    }
    if settings is not None:
        if settings.strict:
            entry["import_quality_profile"] = settings.quality_profile
        entry["projection_version"] = settings.projection
        if settings.import_profile:
            entry["import_profile"] = settings.import_profile
    if doc.chunk_index is not None:
        entry["chunk_index"] = doc.chunk_index
    if doc.message_range is not None:
        entry["message_range"] = {"start": doc.message_range[0], "end": doc.message_range[1]}
    entry["update_mode"] = doc.update_mode
    return entry


class Manifest:
    """The manifest at ``path``; ``warnings`` collects corrupt-file notices for the caller."""

    def __init__(self, path: Path, lock_timeout_s: float = 5.0) -> None:
        self.path = Path(path)
        self.lock_timeout_s = lock_timeout_s
        self.warnings: list[str] = []
        self._imports: dict[str, dict[str, Any]] | None = None

    def imports(self) -> dict[str, dict[str, Any]]:
        """The entries as last read (read once, lazily; never writes)."""
        if self._imports is None:
            self._imports = self._read(set_aside_corrupt=False)
        return self._imports

    def unchanged(self, doc: ImportDocument, bank_id: str, settings: ImportSettings | None) -> bool:
        """Delivered before to the same bank with the same content, update mode and branch scope.

        The branch scope matters although it is not in the content: it changes the tags
        (``forked:true``) and metadata the document was stored with.
        """
        entry = self.imports().get(doc.document_id)
        return (
            entry is not None
            and entry.get("bank_id") == bank_id
            and entry.get("content_hash") == doc.content_hash
            and entry.get("update_mode") == doc.update_mode
            and entry.get("include_branches") == (settings.include_branches if settings else "transcript")
        )

    def record(self, entries: list[dict[str, Any]]) -> None:
        """Add or replace entries (by document id), durably."""
        if not entries:
            return
        ensure_private_dir(self.path.parent)
        with FileLock(str(self.path) + ".lock", timeout=self.lock_timeout_s, mode=FILE_MODE):
            imports = self._read(set_aside_corrupt=True)
            for entry in entries:
                imports[str(entry["document_id"])] = entry
            save_state(self.path, {"version": VERSION, "imports": imports})
            self._imports = imports

    def _read(self, *, set_aside_corrupt: bool) -> dict[str, dict[str, Any]]:
        if not set_aside_corrupt:
            # A preview must write nothing, not even the corrupt file's rename.
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
            except FileNotFoundError:
                return {}
            except (OSError, ValueError):
                self.warnings.append(f"import manifest {self.path} is corrupt; it will be recreated on import")
                return {}
            if not _valid(data):
                self.warnings.append(f"import manifest {self.path} is corrupt; it will be recreated on import")
                return {}
            return dict(data["imports"])
        loaded = load_state(self.path, _valid, "import manifest")
        if loaded.warning:
            self.warnings.append(loaded.warning)
        return dict(loaded.data["imports"]) if loaded.data is not None else {}
