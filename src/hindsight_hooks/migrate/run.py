"""Sending the embedded store to a Hindsight server, batch by batch, and checking what arrived.

How memories travel (ADR 150): a document of the embedded store becomes the server document
with the same id, retained with ``update_mode = replace``: one item per current memory, in
order, all of a document in one request. Sending a document twice (a resumed run, a second
migration) replaces it on the server rather than adding a copy. Each item carries the memory's
text, context, tags, time and metadata. No per-memory origin id is added: the server sometimes
gives every memory of a document the first item's metadata (seen on 1.1.0), so such an id
could point at the wrong memory; the check matches memories by document and text instead.

Batches are retained synchronously: the answer means the server has stored the batch, and only
then does the progress file move past it (ADR 151). Whole documents per request is also what
makes it fast: the server works per document, and 250 memories in 25 documents took 1.8 s on
the test server against 6.5 s as 250 documents (ADR 152).

A killed run's last request may still be running on the server when the run is resumed; the
resumed run first waits for it to land (``_settle``), so two replacements of one document never
race. After sending, every migrated bank is checked against the server's memory list (ADR 152): a
document the server does not have is sent again once, then reported missing.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

import orjson

from ..backends.base import BackendError, BankSpec
from ..backends.local_documents import START, EmbeddedSource, SourceDocument, SourceUnit
from ..governance.redact import redact_text, redact_value
from ..timefmt import epoch_from_iso, iso_from_epoch

if TYPE_CHECKING:
    from ..backends.hindsight import HindsightBackend
    from .progress import BankProgress, Progress

DEFAULT_BATCH = 100
MAX_BATCH = 1000
ATTEMPTS = 4
LIST_PAGE = 1000
REQUEST_TIMEOUT_S = 300.0
SETTLE_MIN_S = 5.0
SETTLE_MAX_S = 120.0
SETTLE_POLL_S = 0.5
SINGLE_LIST_MAX = 20_000

OnProgress = Callable[[int, int], None]


def item_for(unit: SourceUnit, *, redact: bool) -> dict[str, Any]:
    """The retain item for one memory; secrets redacted again on the way out (the store holds
    what redaction let through when it was written, and the patterns may have grown since)."""
    meta: dict[str, str] = {}
    for key, value in unit.metadata.items():
        meta[str(key)] = value if isinstance(value, str) else orjson.dumps(value).decode()
    return {
        "content": redact_text(unit.text) if redact else unit.text,
        "context": redact_text(unit.context),
        "timestamp": unit.occurred_at or unit.created_at,
        "document_id": unit.document_id,
        "update_mode": "replace",
        "tags": list(unit.tags),
        "metadata": redact_value(meta) if redact else meta,
    }


@dataclass
class BankReport:
    """One bank in the summary; the check's fields stay ``None`` when it did not run."""

    bank_id: str
    memories: int
    documents: int
    retired_left_behind: int
    to_send: int = 0
    sent: int = 0
    documents_on_server: int | None = None
    missing_documents: int | None = None
    memories_found: int | None = None
    server_memories: int | None = None
    memories_repeated: int | None = None
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
        return self.error is None and all(not b.missing_documents for b in self.banks)

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
    settle_min_s: float = SETTLE_MIN_S
    single_list_max: int = SINGLE_LIST_MAX


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
        """Counts per bank (what ``--dry-run`` prints): memories, retired ones, what is left to send."""
        if self.opts.restart:
            self.progress.reset()
        report = Report(target_label, self.opts.dry_run)
        wanted = set(self.opts.banks or [])
        for count in self.source.banks():
            if wanted and count.bank_id not in wanted:
                continue
            state = self.progress.banks.get(count.bank_id)
            left = count.current if state is None else self.source.remaining(count.bank_id, state.cursor, state.since)
            report.banks.append(BankReport(count.bank_id, count.current, count.documents, count.retired, left))
        missing = wanted - {b.bank_id for b in report.banks}
        if missing:
            report.error = "no such bank in the embedded store: " + ", ".join(sorted(missing))
        return report

    def run(self, target_label: str) -> Report:
        started = time.monotonic()
        report = self.plan(target_label)
        if report.error or self.opts.dry_run:
            return report
        total = sum(b.to_send for b in report.banks)
        done = 0
        self.on_progress(0, total)
        for bank in report.banks:
            state = self.progress.bank(bank.bank_id)
            if state.pass_started is None:
                state.pass_started = iso_from_epoch(time.time())
                self.progress.save()
            if bank.to_send:
                spec = self.spec_for(bank.bank_id)
                self._call(partial(self.target.ensure_bank, bank.bank_id, spec, timeout_s=60))
            if state.in_flight:
                self._settle(bank.bank_id, state.in_flight, state.in_flight_at, state.batch_s)
            while True:
                docs = self.source.documents(bank.bank_id, state.cursor, state.since, self.batch)
                if not docs:
                    break
                sent = self._send_recorded(bank.bank_id, state, docs)
                bank.sent += sent
                done += sent
                self.on_progress(done, total)
            state.since, state.pass_started, state.cursor = state.pass_started, None, START
            self.progress.save()
        if self.opts.verify:
            for bank in report.banks:
                self._verify(bank)
        report.seconds = round(time.monotonic() - started, 2)
        return report

    def _send_recorded(self, bank_id: str, state: BankProgress, docs: list[SourceDocument]) -> int:
        """Send a batch with ``in_flight`` written first and the cursor moved only after the answer."""
        units = [u for d in docs for u in d.units]
        if units:
            state.in_flight, state.in_flight_at = units[-1].document_id, time.time()
            self.progress.save()
            began = time.monotonic()
            self._send(bank_id, units)
            state.batch_s = time.monotonic() - began
        state.cursor = docs[-1].cursor
        state.in_flight, state.in_flight_at = None, 0.0
        state.sent += len(units)
        self.progress.save()
        return len(units)

    def _send(self, bank_id: str, units: list[SourceUnit]) -> None:
        """One retain request, sent again after a transient failure, but only once the failed
        attempt can no longer be running on the server (``_settle``): a timed-out request may
        still be at work there, like a killed run's (ADR 151)."""
        items = [item_for(u, redact=self.opts.redact) for u in units]
        for attempt in range(ATTEMPTS):
            sent_at, began = time.time(), time.monotonic()
            try:
                self.target.retain_batch(
                    bank_id, items, operation_id=str(uuid.uuid4()), async_=False, timeout_s=REQUEST_TIMEOUT_S
                )
                return
            except BackendError as exc:
                if exc.kind in ("permanent", "auth", "not_found") or attempt == ATTEMPTS - 1:
                    raise
                self._settle(bank_id, units[-1].document_id, sent_at, time.monotonic() - began)
                time.sleep(min(8.0, 0.5 * 2**attempt))

    def _call(self, fn: Callable[[], Any]) -> Any:
        """``fn`` again after a transient failure: for reads and bank creation, which are safe to repeat."""
        for attempt in range(ATTEMPTS):
            try:
                return fn()
            except BackendError as exc:
                if exc.kind in ("permanent", "auth", "not_found") or attempt == ATTEMPTS - 1:
                    raise
                time.sleep(min(8.0, 0.5 * 2**attempt))
        raise AssertionError("unreachable")

    def _settle(self, bank_id: str, last_doc: str, sent_at: float, batch_s: float) -> None:
        """Wait (bounded) for an earlier request (a killed run's, a timed-out attempt's) to land
        before its documents are sent again.

        The server finishes a request whose client went away; sending the same documents while
        it still works on them could let two replacements of one document through. The batch's
        last document written at or after ``sent_at`` means that request is done; if that never
        happens (the request died with the client) the wait ends after about twice the last
        batch's time. Clocks that disagree only make the wait run to its bound.
        """
        end = time.monotonic() + min(SETTLE_MAX_S, 2 * batch_s + self.opts.settle_min_s)
        while time.monotonic() < end:
            try:
                doc = self.target.get_document(bank_id, last_doc, timeout_s=30)
            except BackendError as exc:
                if exc.kind not in ("not_found", "transient", "timeout"):
                    raise
            else:
                updated = epoch_from_iso(str(doc.get("updated_at") or doc.get("created_at") or ""))
                if updated is None or updated >= sent_at:
                    return
            time.sleep(SETTLE_POLL_S)

    # -- checking the server ------------------------------------------------------------------
    def _verify(self, bank: BankReport) -> None:
        """Every migrated document must be on the server; one that is not is sent again once,
        then counted as missing (ADR 152). Memory counts are reported, not judged: a bank with
        model extraction may make more or fewer memories of a text than it was given."""
        docs = self.source.all_documents(bank.bank_id)
        wanted = {d.document_id for d in docs}
        if not wanted:  # nothing current to find (the server bank may not even exist)
            bank.missing_documents = bank.documents_on_server = 0
            bank.memories_found = bank.server_memories = bank.memories_repeated = 0
            return
        texts, seen = self.server_texts(bank.bank_id, wanted)
        absent = {d for d in wanted - seen if not self._has_document(bank.bank_id, d)}
        redo = [d for d in docs if d.document_id in absent]
        if redo:
            spec = self.spec_for(bank.bank_id)
            self._call(partial(self.target.ensure_bank, bank.bank_id, spec, timeout_s=60))
        for start in range(0, len(redo), self.batch):
            self._send(bank.bank_id, [u for d in redo[start : start + self.batch] for u in d.units])
        if redo:
            bank.repaired = sum(len(d.units) for d in redo)
            texts, seen = self.server_texts(bank.bank_id, wanted)
            absent = {d for d in absent if d not in seen and not self._has_document(bank.bank_id, d)}
        bank.missing_documents = len(absent)
        bank.documents_on_server = len(wanted) - len(absent)
        found = repeated = 0
        for doc in docs:
            sent = Counter(str(item_for(u, redact=self.opts.redact)["content"]) for u in doc.units)
            there = texts.get(doc.document_id, Counter())
            found += sum((sent & there).values())
            repeated += sum(n - sent[t] for t, n in there.items() if t in sent and n > sent[t])
        bank.memories_found = found
        bank.memories_repeated = repeated
        bank.server_memories = sum(sum(c.values()) for c in texts.values())

    def _has_document(self, bank_id: str, document_id: str) -> bool:
        try:
            self._call(partial(self.target.get_document, bank_id, document_id, timeout_s=60))
        except BackendError as exc:
            if exc.kind == "not_found":
                return False
            raise
        return True

    def server_texts(self, bank_id: str, documents: set[str]) -> tuple[dict[str, Counter[str]], set[str]]:
        """The texts of the server's memories in each of the migrated documents (how often each).

        The server lists newest first with no tie-break, and memories stored by one request
        share their times, so walking a bank page by page with ``offset`` can skip some and
        repeat others. So the list is read in one request (one query, one snapshot) up to
        ``single_list_max`` memories, and document by document above that.
        """
        try:
            first = self._call(partial(self.target.list_memories, bank_id, limit=1, offset=0, timeout_s=120))
        except BackendError as exc:
            if exc.kind == "not_found":  # the bank is gone from the server: nothing of it is there
                return {}, set()
            raise
        total = first.get("total") if isinstance(first.get("total"), int) else None
        out: dict[str, Counter[str]] = {}
        if total is not None and total <= self.opts.single_list_max:
            page = self._call(partial(self.target.list_memories, bank_id, limit=total + LIST_PAGE, timeout_s=300))
            self._collect(page, documents, out)
        else:
            for doc in sorted(documents):
                page = self._call(
                    partial(self.target.list_memories, bank_id, document_id=doc, limit=10_000, timeout_s=120)
                )
                self._collect(page, documents, out)
        return out, set(out)

    @staticmethod
    def _collect(page: dict[str, Any], documents: set[str], out: dict[str, Counter[str]]) -> None:
        for item in page.get("items") or []:
            doc = item.get("document_id") if isinstance(item, dict) else None
            if isinstance(doc, str) and doc in documents:
                out.setdefault(doc, Counter())[str(item.get("text") or "")] += 1
