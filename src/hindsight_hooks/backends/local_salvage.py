"""Read what can still be read from a damaged embedded store into a new file (ADR 189).

A store file can be damaged by a failing disk, a sync tool that copies it while it is written, a
copy cut short or a file system that does not keep its promises. SQLite then answers "database
disk image is malformed", and the store cannot be opened at all: every hook says so once, the queue
keeps the new memories, and every older memory is out of reach. SQLite's shell has ``.recover``,
but Python's ``sqlite3`` has no such call, and a user may have no shell.

So each of our tables is read in rowid order, and the parts of the file that cannot be read are
skipped. A read stops at the first bad page; the next readable row is then found by seeking ever
further past the last good one, then back by halves, which costs a few dozen seeks per damaged
region whatever its size. The rows go into a new file that is built by the damaged file's own
schema version, so the normal open migrates it like any other file of that version. The damaged
file is only ever read (a read-only connection); this module never renames or deletes anything.
That is the command's job (``cli_repair``).

What the lost rows leave dangling is mended, never invented:

- a unit whose bank row was lost gets its bank back (the bank's slot is the unit's rowid range);
- a unit whose document row was lost gets a document whose text is its units' texts in order;
- a unit that lost its tags gets its document's tags (every unit of a document carries them);
- tags and vectors of units that were lost go with them;
- a document that kept its text but lost every unit is retained again from that text
  (:func:`rebuild_lost_units`, on the new store once it is in place): its units are derived from
  the text, so they come back as they were first made.

The search index is not copied. The new file's triggers index each unit as it is written, so
the index matches what was salvaged.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import HindsightHooksError
from .local_documents import stored_json
from .local_schema import SCHEMA_VERSION, SLOT_BITS, migrate_steps, transaction

if TYPE_CHECKING:
    from .local import LocalBackend

# Our tables in an order that lets each row's parents go first (the foreign keys are off while
# copying; the order only makes the counts read naturally). The FTS tables are left out on purpose.
TABLES = (
    "banks",
    "documents",
    "document_parts",
    "units",
    "unit_tags",
    "unit_vectors",
    "operations",
    "units_reindex",
)
MAX_ROWID = (1 << 63) - 1
_BATCH = 1000


@dataclass
class TableSalvage:
    """One table: the rows written to the new file and the damaged regions skipped while reading."""

    name: str
    rows: int = 0
    damaged_regions: int = 0


@dataclass
class SalvageReport:
    """What a salvage read and mended (printed by ``hindsight-hooks repair``)."""

    version: int
    tables: list[TableSalvage] = field(default_factory=list)
    banks_mended: int = 0
    documents_mended: int = 0
    tags_mended: int = 0
    units_untagged: int = 0  # lost their tags with their document: found by unscoped recalls only
    dangling_dropped: int = 0  # tags and vectors whose unit was lost
    documents_retained: int = 0  # kept their text, lost every unit: retained again (rebuild_lost_units)

    @property
    def damaged_regions(self) -> int:
        return sum(t.damaged_regions for t in self.tables)

    def rows(self, table: str) -> int:
        return next((t.rows for t in self.tables if t.name == table), 0)


class SalvageError(HindsightHooksError):
    """Nothing can be salvaged: the file's first page (its schema) cannot be read, or it is not ours."""


def store_problem(path: Path) -> str | None:
    """``None`` when SQLite finds nothing wrong with the file, else its first complaint.

    Read-only: ``quick_check`` reads every page of every table and index (the search index's
    tables too; FTS5's own check is a write, which a read-only connection refuses).
    """
    try:
        conn = _read_only(path)
    except sqlite3.Error as exc:
        return str(exc)
    try:
        first = str(conn.execute("PRAGMA quick_check(1)").fetchone()[0])
        return None if first == "ok" else first
    except sqlite3.Error as exc:
        return str(exc)
    finally:
        conn.close()


def salvage(damaged: Path, fresh: Path, on_table: Callable[[TableSalvage], None] | None = None) -> SalvageReport:
    """Copy every readable row of ``damaged`` into a new store at ``fresh`` (which must not exist).

    ``fresh`` is made 0600 and left complete or not at all: on any failure it is removed (it is
    ours, and it was never the store). ``on_table`` hears of each table once it is copied.
    """
    copy = fresh.with_name(fresh.name + ".read-copy")
    try:
        source, version, names = _open_source(damaged, copy)
        try:
            fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            os.close(fd)
            try:
                return _copy_into(source, fresh, version, names, on_table)
            except BaseException:
                for leftover in (fresh, fresh.with_name(fresh.name + "-journal")):
                    with contextlib.suppress(OSError):
                        leftover.unlink()
                raise
        finally:
            source.close()
    finally:
        for leftover in (copy, copy.with_name(copy.name + "-wal"), copy.with_name(copy.name + "-shm")):
            with contextlib.suppress(OSError):
                leftover.unlink()


class _Unreadable(SalvageError):
    """The schema could not be read: worth one more try through a padded copy."""


def _open_source(damaged: Path, copy: Path) -> tuple[sqlite3.Connection, int, set[str]]:
    """A read-only connection to the damaged file, or else to a padded copy of it (a file cut
    short holds fewer pages than its header and schema name, and SQLite then refuses to read even
    the schema; in the copy the pages that were cut off read as damaged, and are skipped like any
    other), with the file's schema version and tables."""
    first: BaseException
    try:
        source = _read_only(damaged)
    except sqlite3.Error as exc:
        first = exc
    else:
        try:
            version, names = _schema_of(source)
            return source, version, names
        except _Unreadable as exc:
            source.close()
            first = exc
        except BaseException:
            source.close()
            raise
    if not _padded_copy(damaged, copy):
        raise SalvageError(_cannot(first))
    try:
        source = _read_only(copy)
    except sqlite3.Error:
        raise SalvageError(_cannot(first)) from None
    try:
        version, names = _schema_of(source)
    except BaseException:
        source.close()
        raise
    return source, version, names


def _cannot(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, SalvageError) else f"the file cannot be read at all ({exc})"


def _padded_copy(damaged: Path, copy: Path) -> bool:
    """Copy ``damaged`` to ``copy`` (0600), padded with zeroed pages up to the page count its header
    names, with its free-page list emptied; False when it has no SQLite header to go by."""
    try:
        with damaged.open("rb") as f:
            header = f.read(100)
        size = damaged.stat().st_size
    except OSError:
        return False
    if len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
        return False
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    if page_size < 512 or page_size & (page_size - 1):
        return False
    pages = max(int.from_bytes(header[28:32], "big"), -(-size // page_size))
    fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out, damaged.open("rb") as src:
        shutil.copyfileobj(src, out, 1 << 20)
        out.truncate(pages * page_size)
        out.seek(28)
        out.write(pages.to_bytes(4, "big") + bytes(8))  # the page count; no free-page list
    return True


def _read_only(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True, isolation_level=None, timeout=5)
    conn.execute("PRAGMA cell_size_check = ON")  # damaged cells are reported, not read as rows
    conn.execute("PRAGMA mmap_size = 0")
    return conn


def _schema_of(source: sqlite3.Connection) -> tuple[int, set[str]]:
    try:
        version = int(source.execute("PRAGMA user_version").fetchone()[0])
        names = {str(r[0]) for r in source.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.Error as exc:
        raise _Unreadable(f"the file's schema cannot be read ({exc})") from None
    if version > SCHEMA_VERSION:
        raise SalvageError(f"the file has schema version {version}, newer than this hindsight-hooks ({SCHEMA_VERSION})")
    if version < 1 or "units" not in names:
        raise SalvageError("the file is not a hindsight-hooks memory store")
    return version, names


def _copy_into(
    source: sqlite3.Connection,
    fresh: Path,
    version: int,
    names: set[str],
    on_table: Callable[[TableSalvage], None] | None,
) -> SalvageReport:
    target = sqlite3.connect(str(fresh), isolation_level=None)
    try:
        target.execute("PRAGMA foreign_keys = OFF")  # lost parents are mended after the copy
        report = SalvageReport(version)
        with transaction(target):
            migrate_steps(target, 0, version)
            for table in TABLES:
                if table not in names:
                    continue
                columns = _shared_columns(source, target, table)
                if not columns:
                    continue
                copied = TableSalvage(table)
                _copy_table(source, target, table, columns, copied)
                report.tables.append(copied)
                if on_table is not None:
                    on_table(copied)
            _mend(target, report)
            target.execute(f"PRAGMA user_version = {version}")
    finally:
        target.close()
    return report


def _shared_columns(source: sqlite3.Connection, target: sqlite3.Connection, table: str) -> list[str]:
    def names(conn: sqlite3.Connection) -> list[str]:
        return [str(r[1]) for r in conn.execute(f"PRAGMA table_info({table})")]

    try:
        have = set(names(source))
    except sqlite3.Error:
        return []
    return [c for c in names(target) if c in have]


def _copy_table(
    source: sqlite3.Connection, target: sqlite3.Connection, table: str, columns: list[str], copied: TableSalvage
) -> None:
    listed = ", ".join(f'"{c}"' for c in columns)
    insert = f"INSERT OR IGNORE INTO {table}({listed}) VALUES ({', '.join('?' * len(columns))})"
    batch: list[tuple[Any, ...]] = []
    for row in _readable_rows(source, table, listed, copied):
        batch.append(row)
        if len(batch) >= _BATCH:
            copied.rows += _insert(target, insert, batch)
            batch = []
    if batch:
        copied.rows += _insert(target, insert, batch)


def _insert(target: sqlite3.Connection, insert: str, rows: list[tuple[Any, ...]]) -> int:
    """Insert rows that meet the table's constraints; a row a damaged page garbled (a NULL where
    text belongs, a type the CHECK refuses) is left out by ``OR IGNORE``."""
    return max(0, target.executemany(insert, rows).rowcount)  # the rows themselves, not the index's


def _readable_rows(
    source: sqlite3.Connection, table: str, listed: str, copied: TableSalvage
) -> Iterator[tuple[Any, ...]]:
    """Every row of ``table`` that can be read, in rowid order (``listed`` columns, without the rowid).

    A scan stops at the first page that cannot be read, and at a row whose rowid does not come
    after the last one (a garbled page can hand back rows out of order); it then goes on from
    the next row that can be read (:func:`_next_readable`), and each such skip counts as one
    damaged region. Every restart begins past the last, so the reading always ends.
    """
    scan = f"SELECT rowid, {listed} FROM {table} WHERE rowid >= ? ORDER BY rowid"
    start = -MAX_ROWID - 1
    while True:
        last: int | None = None
        try:
            for row in source.execute(scan, (start,)):
                rowid = int(row[0])
                if rowid < start or (last is not None and rowid <= last):
                    break  # out of order: the page it came from is garbled
                last = rowid
                yield tuple(row[1:])
            else:
                return
        except (sqlite3.DatabaseError, ValueError, OverflowError):
            pass  # a damaged page, or a row whose text is not UTF-8
        copied.damaged_regions += 1
        # Past the last row read; or past the row the scan began at, when even that one failed.
        done = start if last is None else last
        if done >= MAX_ROWID:
            return
        found = _next_readable(source, table, done)
        if found is None:
            return
        start = max(found, done + 1)


def _next_readable(source: sqlite3.Connection, table: str, after: int) -> int | None:
    """The first rowid past ``after`` (exclusive) from which the table can be read, or None.

    Seeks at ``after`` + 1, 2, 4, … until a seek returns a row, then halves the gap back to the
    first place a seek succeeds: the rows before it are on the damaged pages.
    """

    def seek(at: int) -> int | bool | None:
        """The rowid a seek at ``at`` lands on, None past the end, False when it cannot be read."""
        try:
            row = source.execute(f"SELECT rowid FROM {table} WHERE rowid >= ? ORDER BY rowid LIMIT 1", (at,)).fetchone()
        except sqlite3.DatabaseError:
            return False
        return None if row is None else int(row[0])

    step, bad = 1, after
    while True:
        at = min(after + step, MAX_ROWID)
        landed = seek(at)
        if landed is not False:
            break
        if at >= MAX_ROWID:
            return None
        bad, step = at, step * 2
    good = at
    while good - bad > 1:  # the first seek that works lies in (bad, good]
        middle = (bad + good) // 2
        probe = seek(middle)
        if probe is False:
            bad = middle
        else:
            good, landed = middle, probe
    return None if landed is None else int(landed)


def _mend(target: sqlite3.Connection, report: SalvageReport) -> None:
    """Give salvaged units the bank, document and tags that were lost with other pages."""
    report.dangling_dropped = _changes(
        target,
        "DELETE FROM unit_tags WHERE unit_id NOT IN (SELECT id FROM units)",
        "DELETE FROM unit_vectors WHERE unit_id NOT IN (SELECT id FROM units)",
    )
    report.banks_mended = _changes(
        target,
        f"INSERT OR IGNORE INTO banks(bank_id, slot, created_at) SELECT bank_id, min(rowid) >> {SLOT_BITS}, "
        "min(created_at) FROM units WHERE bank_id NOT IN (SELECT bank_id FROM banks) GROUP BY bank_id",
    )
    lost_documents = (
        "FROM units AS u WHERE NOT EXISTS (SELECT 1 FROM documents AS d "
        "WHERE d.bank_id = u.bank_id AND d.document_id = u.document_id)"
    )
    report.units_untagged = int(  # their tags went with their document: only an unscoped recall finds them
        target.execute(
            f"SELECT count(*) {lost_documents} AND NOT EXISTS (SELECT 1 FROM unit_tags AS t WHERE t.unit_id = u.id)"
        ).fetchone()[0]
    )
    has_parts = target.execute("SELECT 1 FROM sqlite_master WHERE name = 'document_parts'").fetchone() is not None
    if has_parts:  # version 2 on: a document's text is its parts (ADR 050)
        target.execute(
            "INSERT OR IGNORE INTO document_parts(bank_id, document_id, seq, text) "
            "SELECT bank_id, document_id, 0, group_concat(content, char(10) || char(10)) FROM "
            f"(SELECT u.bank_id, u.document_id, u.content {lost_documents} ORDER BY u.seq) "
            "GROUP BY bank_id, document_id"
        )
    text = "''" if has_parts else "group_concat(content, char(10) || char(10))"
    report.documents_mended = _changes(
        target,
        "INSERT INTO documents(bank_id, document_id, original_text, metadata_json, created_at, updated_at) "
        f"SELECT bank_id, document_id, {text}, min(metadata_json), min(created_at), max(created_at) FROM "
        f"(SELECT u.* {lost_documents} ORDER BY u.seq) GROUP BY bank_id, document_id",
    )
    report.tags_mended = _changes(
        target,
        "INSERT OR IGNORE INTO unit_tags(unit_id, bank_id, tag) SELECT u.id, u.bank_id, j.value "
        "FROM units AS u JOIN documents AS d ON d.bank_id = u.bank_id AND d.document_id = u.document_id, "
        "json_each(CASE WHEN json_valid(d.tags_json) THEN d.tags_json ELSE '[]' END) AS j "
        "WHERE NOT EXISTS (SELECT 1 FROM unit_tags AS t WHERE t.unit_id = u.id)",
    )


def _changes(target: sqlite3.Connection, *statements: str) -> int:
    """Run ``statements``; how many rows they changed in all (no trigger fires on these tables)."""
    return sum(max(0, target.execute(statement).rowcount) for statement in statements)


def rebuild_lost_units(backend: LocalBackend, stamp: str) -> int:
    """Retain again, through the store's own write path, each document that kept its text but lost
    every unit; returns how many. Each retained part of the text is one item again, in order, so
    a session's turns come back as they were first stored (``stamp`` keeps the operation ids new)."""
    conn = _read_only(backend.path)
    try:
        parts = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'document_parts'").fetchone() is not None
        lost = conn.execute(
            "SELECT d.bank_id, d.document_id, d.original_text, d.context, d.tags_json, d.metadata_json, d.created_at "
            "FROM documents AS d WHERE NOT EXISTS "
            "(SELECT 1 FROM units AS u WHERE u.bank_id = d.bank_id AND u.document_id = d.document_id) "
            "ORDER BY d.bank_id, d.created_at, d.document_id"
        ).fetchall()
        plan: list[tuple[str, str, list[str], dict[str, Any]]] = []
        for bank_id, document_id, original, context, tags, metadata, created in lost:
            texts = [str(original)] if original else []
            if parts:
                texts += [
                    str(r[0])
                    for r in conn.execute(
                        "SELECT text FROM document_parts WHERE bank_id = ? AND document_id = ? ORDER BY seq",
                        (bank_id, document_id),
                    )
                ]
            texts = [t for t in texts if t.strip()]
            if texts:
                item = {"context": context or "", "document_id": document_id, "timestamp": created,
                        "tags": stored_json(tags, list), "metadata": stored_json(metadata, dict)}  # fmt: skip
                plan.append((str(bank_id), str(document_id), texts, item))
    finally:
        conn.close()
    for bank_id, document_id, texts, item in plan:
        for k, text in enumerate(texts):
            mode = "replace" if k == 0 else "append"
            batch = [{**item, "content": text, "update_mode": mode}]
            backend.retain_batch(bank_id, batch, operation_id=f"repair:{stamp}:{document_id}:{k}")
    return len(plan)
