"""Sending the embedded store to a Hindsight server, batch by batch, and checking what arrived.

How a memory travels (ADR 150): each current embedded memory becomes one retained item whose
``document_id`` is ``hh-migrated:<memory id>`` with ``update_mode = replace``. The id is stable,
so sending a memory twice (a resumed run, a second migration) replaces it on the server rather
than adding a copy. The item carries the memory's text, context, tags, time and metadata, plus
``migrated_from_document`` / ``migrated_from_memory`` so the origin stays visible.

Batches are retained synchronously: the answer means the server has stored the batch, and only
then does the progress file move past it (ADR 151). A sync retain of 100 items took ~2.5 s on the
test server; an async one was ~3x slower end to end there, and parallel requests did not help
(the server's per-item work is the bottleneck, ADR 152).

A killed run's last request may still be running on the server when the run is resumed; the
resumed run first waits for it to land (``_settle``), so two replacements of one document never
race. After sending, every migrated bank is checked against the server's memory list (ADR 152):
a memory whose document shows nothing on the server is sent again once, then reported missing.
"""

from __future__ import annotations

import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

import orjson

from ..backends.base import BackendError, BankSpec
from ..governance.redact import redact_text, redact_value
from .source import EmbeddedSource, SourceUnit

if TYPE_CHECKING:
    from ..backends.hindsight import HindsightBackend
    from .progress import Progress

DOC_PREFIX = "hh-migrated:"
DEFAULT_BATCH = 100
MAX_BATCH = 1000
ATTEMPTS = 4
LIST_PAGE = 1000
REQUEST_TIMEOUT_S = 300.0
SETTLE_MIN_S = 5.0
SETTLE_MAX_S = 120.0
SETTLE_POLL_S = 0.5

OnProgress = Callable[[int, int], None]


def document_id_for(unit: SourceUnit) -> str:
    """The server document one embedded memory becomes: the same for every run, by design."""
    return f"{DOC_PREFIX}{unit.id}"


def item_for(unit: SourceUnit, *, redact: bool) -> dict[str, Any]:
    """The retain item for one memory; secrets redacted again on the way out (the store holds
    what redaction let through when it was written, and the patterns may have grown since)."""
    meta: dict[str, str] = {}
    for key, value in unit.metadata.items():
        meta[str(key)] = value if isinstance(value, str) else orjson.dumps(value).decode()
    meta["migrated_from_document"] = unit.document_id
    meta["migrated_from_memory"] = unit.id
    return {
        "content": redact_text(unit.text) if redact else unit.text,
        "context": redact_text(unit.context),
        "timestamp": unit.occurred_at or unit.created_at,
        "document_id": document_id_for(unit),
        "update_mode": "replace",
        "tags": list(unit.tags),
        "metadata": redact_value(meta) if redact else meta,
    }


@dataclass
class BankReport:
    bank_id: str
    memories: int
    retired_left_behind: int
    already_done: int = 0
    sent: int = 0
    on_server: int | None = None
    missing: int | None = None
    server_memories: int | None = None
    repaired: int = 0


@dataclass
class Report:
    target: str
    dry_run: bool
    banks: list[BankReport] = field(default_factory=list)
    seconds: float = 0.0
    error: str | None = None

    @property
    def complete(self) -> bool:
        return self.error is None and all(not b.missing for b in self.banks)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["complete"] = self.complete
        out["memories"] = sum(b.memories for b in self.banks)
        out["sent"] = sum(b.sent for b in self.banks)
        return out


@dataclass
class Options:
    banks: list[str] | None = None
    batch_size: int = DEFAULT_BATCH
    dry_run: bool = False
    restart: bool = False
    verify: bool = True
    redact: bool = True


class Migration:
    """One run: plan from the store and the progress file, send what is left, check the server."""

    def __init__(
        self,
        source: EmbeddedSource,
        target: HindsightBackend,
        progress: Progress,
        spec_for: Callable[[str], BankSpec],
        options: Options,
        on_progress: OnProgress | None = None,
    ) -> None:
        self.source = source
        self.target = target
        self.progress = progress
        self.spec_for = spec_for
        self.opts = options
        self.on_progress = on_progress or (lambda done, total: None)
        self.batch = max(1, min(MAX_BATCH, int(options.batch_size)))

    def plan(self, target_label: str) -> Report:
        """Counts per bank (what ``--dry-run`` prints): memories, retired ones, what is done."""
        if self.opts.restart:
            self.progress.reset()
        report = Report(target_label, self.opts.dry_run)
        wanted = set(self.opts.banks or [])
        for count in self.source.banks():
            if wanted and count.bank_id not in wanted:
                continue
            state = self.progress.bank(count.bank_id)
            left = self.source.remaining(count.bank_id, state.after_rowid)
            report.banks.append(
                BankReport(count.bank_id, count.current, count.retired, already_done=count.current - left)
            )
        missing = wanted - {b.bank_id for b in report.banks}
        if missing:
            report.error = "no such bank in the embedded store: " + ", ".join(sorted(missing))
        return report

    def run(self, target_label: str) -> Report:
        started = time.monotonic()
        report = self.plan(target_label)
        if report.error or self.opts.dry_run:
            return report
        total = sum(b.memories - b.already_done for b in report.banks)
        done = 0
        self.on_progress(0, total)
        for bank in report.banks:
            state = self.progress.bank(bank.bank_id)
            if bank.memories - bank.already_done > 0:
                spec = self.spec_for(bank.bank_id)
                self._call(partial(self.target.ensure_bank, bank.bank_id, spec, timeout_s=60))
            if state.in_flight:
                self._settle(bank.bank_id, state.in_flight, state.batch_s)
            while True:
                units = self.source.units(bank.bank_id, state.after_rowid, self.batch)
                if not units:
                    break
                state.in_flight = document_id_for(units[-1])
                self.progress.save()
                began = time.monotonic()
                self._send(bank.bank_id, units)
                state.batch_s = time.monotonic() - began
                state.after_rowid = units[-1].rowid
                state.in_flight = None
                state.sent += len(units)
                self.progress.save()
                bank.sent += len(units)
                done += len(units)
                self.on_progress(done, total)
            state.finished = True
            self.progress.save()
        if self.opts.verify:
            for bank in report.banks:
                self._verify(bank)
        report.seconds = round(time.monotonic() - started, 2)
        return report

    def _send(self, bank_id: str, units: list[SourceUnit]) -> None:
        items = [item_for(u, redact=self.opts.redact) for u in units]
        self._call(
            lambda: self.target.retain_batch(
                bank_id, items, operation_id=str(uuid.uuid4()), async_=False, timeout_s=REQUEST_TIMEOUT_S
            )
        )

    def _call(self, fn: Callable[[], Any]) -> Any:
        """``fn`` again after a transient failure (sending again only replaces: ADR 150)."""
        for attempt in range(ATTEMPTS):
            try:
                return fn()
            except BackendError as exc:
                if exc.kind in ("permanent", "auth", "not_found") or attempt == ATTEMPTS - 1:
                    raise
                time.sleep(min(8.0, 0.5 * 2**attempt))
        raise AssertionError("unreachable")

    def _settle(self, bank_id: str, last_doc: str, batch_s: float) -> None:
        """Wait (bounded) for a killed run's last request to land before sending it again.

        The server finishes a request whose client died; sending the same documents while it
        still works on them could let both replacements through. The batch's last document
        appearing means that request is done; if it never arrives (the request died with the
        client) the wait ends after about twice the last batch's time.
        """
        end = time.monotonic() + min(SETTLE_MAX_S, 2 * batch_s + SETTLE_MIN_S)
        while time.monotonic() < end:
            try:
                self.target.get_document(bank_id, last_doc, timeout_s=30)
                return
            except BackendError as exc:
                if exc.kind != "not_found":
                    raise
            time.sleep(SETTLE_POLL_S)

    # -- checking the server ------------------------------------------------------------------
    def _verify(self, bank: BankReport) -> None:
        """Every migrated memory's document must show at least one memory on the server; one
        that does not is sent again once, then counted as missing (ADR 152)."""
        units = self._all_units(bank.bank_id)
        texts = self.server_texts(bank.bank_id)
        redo = [u for u in units if not texts.get(document_id_for(u))]
        if redo:
            for start in range(0, len(redo), self.batch):
                self._send(bank.bank_id, redo[start : start + self.batch])
            bank.repaired = len(redo)
            texts = self.server_texts(bank.bank_id)
        wanted = {document_id_for(u) for u in units}
        bank.missing = sum(1 for d in wanted if not texts.get(d))
        bank.on_server = len(wanted) - bank.missing
        bank.server_memories = sum(len(t) for d, t in texts.items() if d in wanted)

    def _all_units(self, bank_id: str) -> list[SourceUnit]:
        out: list[SourceUnit] = []
        after = 0
        while True:
            page = self.source.units(bank_id, after, MAX_BATCH)
            if not page:
                return out
            out.extend(page)
            after = page[-1].rowid

    def server_texts(self, bank_id: str) -> dict[str, list[str]]:
        """Every migrated document of the bank on the server with its memories' texts."""
        out: dict[str, list[str]] = defaultdict(list)
        offset = 0
        while True:
            page = self._call(
                partial(self.target.list_memories, bank_id, limit=LIST_PAGE, offset=offset, timeout_s=120)
            )
            items = [i for i in page.get("items") or [] if isinstance(i, dict)]
            for item in items:
                doc = item.get("document_id")
                if isinstance(doc, str) and doc.startswith(DOC_PREFIX):
                    out[doc].append(str(item.get("text") or ""))
            if len(items) < LIST_PAGE:
                return dict(out)
            offset += LIST_PAGE
