"""``/hindsight:memories export|import|markdown``: a bank as a file a person owns (ADR 133).

- ``export [FILE]`` writes the bank as JSONL: a header line, then every document and every
  memory with its tags, metadata, timestamps and edit history (``memories_jsonl``).
- ``import FILE`` reads such a file into the bank. On the embedded store it is lossless (the
  ids, times and documents come back as they were) and idempotent: what the store already
  holds is skipped, so importing twice adds nothing. Tombstones are honoured: what was
  forgotten is not brought back by an old export. On a Hindsight server the documents are
  retained again through the queue (the server extracts its memories from them again).
- ``markdown [FILE]`` writes a Markdown view of the bank, grouped by document and date, to read
  in any editor; it is regenerated on demand and never read back.

Files go to ``.hindsight/exports/`` unless a path is given, and are written 0600 (they hold
what the store holds).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...backends.base import BackendError
from ...fsutil import atomic_write_bytes, ensure_private_dir
from ...hooks import CommandResult

if TYPE_CHECKING:
    from ..runtime import SessionRuntime
    from .memories import Args


def run_transfer(rt: SessionRuntime, sub: str, args: Args) -> CommandResult:
    from .memories import ArgError, bank_of

    bank = bank_of(rt, args)
    if len(args.words) > 1:
        raise ArgError(f"{sub} takes at most one file")
    given = Path(os.path.expanduser(args.words[0])) if args.words else None
    if given is not None and not given.is_absolute():
        given = Path(rt.cwd) / given
    backend = rt.backend()
    if backend is None:
        raise BackendError(sub, "permanent", rt.backend_error or rt.not_initialised_message())
    if sub == "import":
        if given is None:
            raise ArgError("import needs the file to read")
        return _import(rt, backend, bank, given)
    from . import memories_jsonl

    stamp = time.strftime("%Y%m%dT%H%M%S")
    if sub == "export":
        path = given or _default(rt, f"{bank}-{stamp}.jsonl")
        lines = memories_jsonl.export_lines(backend, bank)
        atomic_write_bytes(path, b"".join(lines), 0o600)
        counts = memories_jsonl.count_kinds(lines)
        data = {"bank_id": bank, "path": str(path), **counts}
        text = f"exported bank {bank}: {counts['memories']} memories, {counts['documents']} documents → {path}"
        return CommandResult(text, "info", data)
    path = given or _default(rt, f"{bank}.md")
    markdown, n = memories_jsonl.markdown_view(backend, bank)
    atomic_write_bytes(path, markdown.encode("utf-8"), 0o600)
    return CommandResult(
        f"wrote {n} memories of bank {bank} as Markdown → {path}",
        "info",
        {"bank_id": bank, "path": str(path), "memories": n},
    )


def _default(rt: SessionRuntime, name: str) -> Path:
    folder = rt.ensure_state_dir() / "exports"
    ensure_private_dir(folder)
    return folder / name


def _import(rt: SessionRuntime, backend: Any, bank: str, path: Path) -> CommandResult:
    from . import memories_jsonl

    try:
        raw = path.read_bytes()
    except OSError as exc:
        return CommandResult(f"cannot read {path}: {exc.strerror}", "error", {"path": str(path)})
    parsed = memories_jsonl.parse_export(raw)
    if parsed.error is not None:
        return CommandResult(f"{path} is not a memories export: {parsed.error}", "error", {"path": str(path)})
    rt.ensure_bank(bank)
    report = memories_jsonl.import_parsed(rt, backend, bank, parsed)
    data: dict[str, Any] = {"bank_id": bank, "path": str(path), **report}
    text = (
        f"imported into bank {bank}: {report['memories_added']} memories and {report['documents_added']} documents "
        f"added; {report['skipped']} already there, {report['forgotten']} forgotten (tombstoned)"
    )
    if parsed.bad_lines:
        text += f"; {parsed.bad_lines} unreadable line(s) ignored"
        data["bad_lines"] = parsed.bad_lines
    if report.get("note"):
        text += f"\n{report['note']}"
    return CommandResult(text, "warning" if parsed.bad_lines else "info", data)
