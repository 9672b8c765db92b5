"""The embedded store's file: opening it safely, its schema, migrations and error mapping.

Safety rules (docs/backends.md#embedded-store, docs/design.md "Files on disk"):

- A file we cannot read as *our* database — random bytes, someone else's SQLite file, or a
  schema newer than this code — is reported with a clear, permanent error naming the path and
  is never written to: memory must not be destroyed by a downgrade or a typo in ``[local] path``.
  The checks before the first write are read-only (the 16-byte header, ``user_version``,
  ``sqlite_master``).
- The file is created 0600 (it holds transcripts) inside a 0700 folder we create.
- SQLite without FTS5 cannot rank, so opening fails at once instead of at the first recall.

Bank isolation uses rowid ranges: every bank owns a *slot*, and its units live at rowids
``[slot << 40, (slot + 1) << 40)``. FTS5 can restrict a query to a rowid range inside its own
index, so a recall in one bank never ranks another bank's rows (ADR 005).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..fsutil import ensure_private_dir
from ..governance.redact import redact_text
from ..timefmt import normalize_timestamp
from .base import BackendError, ErrorKind
from .local_change_marks import MARKED_WORDS
from .local_indexed import stale_index_columns
from .local_script import unit_script_terms

SCHEMA_VERSION = 8
SLOT_BITS = 40
MAX_SLOT = (1 << (63 - SLOT_BITS)) - 1
BUSY_TIMEOUT_MS = 5000
CACHE_KIB = 8192  # per connection; ranking touches many index pages at 100k units
RANK_CONFIG_V1 = "bm25(1.0, 0.5)"  # content, context (versions 1-2; frozen in the version-1 script)
RANK_CONFIG = "bm25(1.0, 0.5, 1.0)"  # content, context, script_terms (version 3, ADR 115)


def slot_range(slot: int) -> tuple[int, int]:
    """The inclusive rowid range of a bank's units."""
    lo = slot << SLOT_BITS
    return lo, lo + (1 << SLOT_BITS) - 1


_SCHEMA_V1 = f"""
CREATE TABLE banks(
    bank_id TEXT PRIMARY KEY,
    slot INTEGER NOT NULL UNIQUE CHECK (slot BETWEEN 1 AND {MAX_SLOT}),
    created_at TEXT NOT NULL,
    retain_mission TEXT NOT NULL DEFAULT '',
    reflect_mission TEXT NOT NULL DEFAULT '',
    observations_mission TEXT NOT NULL DEFAULT ''
);
CREATE TABLE documents(
    bank_id TEXT NOT NULL REFERENCES banks(bank_id),
    document_id TEXT NOT NULL,
    original_text TEXT NOT NULL,
    context TEXT NOT NULL DEFAULT '',
    tags_json TEXT NOT NULL DEFAULT '[]',
    metadata_json TEXT NOT NULL DEFAULT '{{}}',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (bank_id, document_id)
);
CREATE TABLE units(
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    bank_id TEXT NOT NULL,
    document_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    content TEXT NOT NULL,
    context TEXT NOT NULL DEFAULT '',
    type TEXT NOT NULL CHECK (type IN ('world', 'experience')),
    source TEXT NOT NULL CHECK (source IN ('tool', 'transcript', 'import')),
    importance REAL NOT NULL CHECK (importance BETWEEN 0.0 AND 1.0),
    created_at TEXT NOT NULL,
    occurred_at TEXT,
    metadata_json TEXT NOT NULL DEFAULT '{{}}',
    valid_until TEXT,
    superseded_by TEXT,
    FOREIGN KEY (bank_id, document_id) REFERENCES documents(bank_id, document_id)
);
CREATE INDEX units_by_document ON units(bank_id, document_id, seq);
CREATE INDEX units_by_created ON units(bank_id, created_at);
-- A rowid table on purpose: SQLite 3.40's quick_check misreports NOT NULL columns of
-- WITHOUT ROWID tables as NULL, and doctor relies on quick_check.
CREATE TABLE unit_tags(
    unit_id TEXT NOT NULL REFERENCES units(id) ON DELETE CASCADE,
    bank_id TEXT NOT NULL,
    tag TEXT NOT NULL,
    PRIMARY KEY (unit_id, tag)
);
CREATE INDEX unit_tags_by_tag ON unit_tags(bank_id, tag);
CREATE VIRTUAL TABLE units_fts USING fts5(
    content, context, content='units', content_rowid='rowid', tokenize='porter unicode61'
);
INSERT INTO units_fts(units_fts, rank) VALUES ('rank', '{RANK_CONFIG_V1}');
CREATE TRIGGER units_fts_insert AFTER INSERT ON units BEGIN
    INSERT INTO units_fts(rowid, content, context) VALUES (new.rowid, new.content, new.context);
END;
CREATE TRIGGER units_fts_delete AFTER DELETE ON units BEGIN
    INSERT INTO units_fts(units_fts, rowid, content, context) VALUES ('delete', old.rowid, old.content, old.context);
END;
CREATE TRIGGER units_fts_update AFTER UPDATE OF content, context ON units BEGIN
    INSERT INTO units_fts(units_fts, rowid, content, context) VALUES ('delete', old.rowid, old.content, old.context);
    INSERT INTO units_fts(rowid, content, context) VALUES (new.rowid, new.content, new.context);
END;
CREATE TABLE operations(
    bank_id TEXT NOT NULL,
    operation_id TEXT NOT NULL,
    applied_at TEXT NOT NULL,
    items_count INTEGER NOT NULL,
    unit_ids_json TEXT NOT NULL,
    PRIMARY KEY (bank_id, operation_id)
);
CREATE INDEX operations_by_age ON operations(applied_at);
CREATE TABLE unit_vectors(
    unit_id TEXT PRIMARY KEY REFERENCES units(id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    vector BLOB NOT NULL
);
"""

# Version 2 (ADR-050): a document's text is its ``document_parts`` rows by ``seq``, blank-line
# separated, one row per retained item, so an append inserts its delta instead of rewriting
# ``documents.original_text`` (which stays, empty: SQLite rewrites a whole record on any update,
# so a large text in the ``documents`` row would make every append O(document) again). The
# migration moves each stored text into part 0 of its document, once.
_V1_TO_V2 = """
CREATE TABLE document_parts(
    bank_id TEXT NOT NULL,
    document_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (bank_id, document_id, seq),
    FOREIGN KEY (bank_id, document_id) REFERENCES documents(bank_id, document_id) ON DELETE CASCADE
);
INSERT INTO document_parts(bank_id, document_id, seq, text)
    SELECT bank_id, document_id, 0, original_text FROM documents WHERE original_text != '';
UPDATE documents SET original_text = '' WHERE original_text != '';
"""

# Version 3 (ADR 115): a third indexed column, ``units.script_terms``, holds the bigrams of text
# written without spaces and a token per emoji (``local_script.index_terms``), so 東京 finds
# 東京サーバー and 🚀 finds 🚀. FTS5 cannot add a column, so the index is dropped, created again
# with three columns and rebuilt from ``units`` (once: ~6 s per 100k units here).
_V2_TO_V3_INDEX = """
DROP TRIGGER units_fts_insert;
DROP TRIGGER units_fts_delete;
DROP TRIGGER units_fts_update;
DROP TABLE units_fts;
CREATE VIRTUAL TABLE units_fts USING fts5(
    content, context, script_terms, content='units', content_rowid='rowid', tokenize='porter unicode61'
);
INSERT INTO units_fts(units_fts, rank) VALUES ('rank', 'bm25(1.0, 0.5, 1.0)');
CREATE TRIGGER units_fts_insert AFTER INSERT ON units BEGIN
    INSERT INTO units_fts(rowid, content, context, script_terms)
        VALUES (new.rowid, new.content, new.context, new.script_terms);
END;
CREATE TRIGGER units_fts_delete AFTER DELETE ON units BEGIN
    INSERT INTO units_fts(units_fts, rowid, content, context, script_terms)
        VALUES ('delete', old.rowid, old.content, old.context, old.script_terms);
END;
CREATE TRIGGER units_fts_update AFTER UPDATE OF content, context, script_terms ON units BEGIN
    INSERT INTO units_fts(units_fts, rowid, content, context, script_terms)
        VALUES ('delete', old.rowid, old.content, old.context, old.script_terms);
    INSERT INTO units_fts(rowid, content, context, script_terms)
        VALUES (new.rowid, new.content, new.context, new.script_terms);
END;
INSERT INTO units_fts(units_fts) VALUES ('rebuild');
"""


def _unit_chunks(conn: sqlite3.Connection, columns: str, size: int) -> Iterator[list[Any]]:
    """Every unit's ``(rowid, *columns)`` in rowid order, ``size`` rows at a time: a big store's
    text does not fit in memory at once. Rows may be updated between chunks (not deleted)."""
    last = -(1 << 62)
    while rows := conn.execute(
        f"SELECT rowid, {columns} FROM units WHERE rowid > ? ORDER BY rowid LIMIT ?", (last, size)
    ).fetchall():
        last = int(rows[-1][0])
        yield rows


def _v2_to_v3(conn: sqlite3.Connection) -> None:
    """Add ``units.script_terms``, fill it for the units that have such text, rebuild the index."""
    conn.execute("ALTER TABLE units ADD COLUMN script_terms TEXT NOT NULL DEFAULT ''")
    for rows in _unit_chunks(conn, "content, context", 2000):
        # Version 3 indexed the whole context; version 6 narrows it to the turn terms and recomputes.
        updates = [(terms, rowid) for rowid, content, context in rows if (terms := unit_script_terms(content, context))]
        # The old index's triggers watch content and context only: this update fires none of them.
        conn.executemany("UPDATE units SET script_terms = ? WHERE rowid = ?", updates)
    for statement in _statements(_V2_TO_V3_INDEX):
        conn.execute(statement)


# Version 4 (ADR 116): vector rows numbered by AUTOINCREMENT, so a number is never used twice. Each
# process keeps a bank's vectors in memory and reads only rows numbered above the last it saw;
# with plain rowids a re-embedded unit could come back under a deleted row's number and be missed.
_V3_TO_V4 = """
CREATE TABLE unit_vectors_v4(
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    unit_id TEXT NOT NULL UNIQUE REFERENCES units(id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    vector BLOB NOT NULL
);
INSERT INTO unit_vectors_v4(unit_id, model, vector) SELECT unit_id, model, vector FROM unit_vectors ORDER BY rowid;
DROP TABLE unit_vectors;
ALTER TABLE unit_vectors_v4 RENAME TO unit_vectors;
"""


def _v4_to_v5(conn: sqlite3.Connection) -> None:
    """A unit's ``created_at`` becomes when it was said (its ``occurred_at``) where that is known.

    Before version 5 a unit kept its retain item's time, so a resumed session's older messages
    carried the day they were stored: a question about the day they were said missed them, and
    browsing by date disagreed with the dates it showed (ADR 174). No index trigger watches
    ``created_at``; ``units_by_created`` follows the update.
    """
    for rows in _unit_chunks(conn, "occurred_at, created_at", 5000):
        updates = [
            (said, rowid)
            for rowid, occurred, created in rows
            if occurred and (said := normalize_timestamp(occurred)) is not None and said != created
        ]
        conn.executemany("UPDATE units SET created_at = ? WHERE rowid = ?", updates)


# Version 6 (ADR 179): a unit is searched by what it says and by its turn terms (ADR 052), not by
# its provenance. Its item's context ("Coding session (<host>) for repo "<name>", session <file>")
# is the same for every unit of a session; a message's role label ("user: "), a tool call's marker
# and its argument keys ("file_path", "command") recur on most units: a query that said "code",
# "session", "user", "file" or the repo's name matched every such memory. ``units.search_text``
# holds the words of the message the index takes (``local_indexed``), when they differ from the
# content; the view ``units_searched`` gives the index that text and, as its ``context``, only the
# part of ``units.context`` after the separator (char 30, cut as bytes: SQLite's text functions
# stop at a NUL, FTS5 does not). The triggers index what the view gives (a BEFORE trigger takes a
# row's old values out, an AFTER trigger puts its new ones in), so FTS5's 'rebuild' and its index
# check see exactly what the triggers index.
_V5_TO_V6_DROP = """
DROP TRIGGER units_fts_insert;
DROP TRIGGER units_fts_delete;
DROP TRIGGER units_fts_update;
DROP TRIGGER IF EXISTS units_fts_unindex;
DROP TABLE units_fts;
DROP VIEW IF EXISTS units_searched;
"""
_V5_TO_V6_INDEX = """
CREATE VIEW units_searched(rid, content, context, script_terms) AS
    SELECT rowid,
        coalesce(search_text, content),
        CASE WHEN instr(CAST(context AS BLOB), X'1E') > 0
            THEN CAST(substr(CAST(context AS BLOB), instr(CAST(context AS BLOB), X'1E') + 1) AS TEXT)
            ELSE '' END,
        script_terms
    FROM units;
CREATE VIRTUAL TABLE units_fts USING fts5(
    content, context, script_terms, content='units_searched', content_rowid='rid', tokenize='porter unicode61'
);
INSERT INTO units_fts(units_fts, rank) VALUES ('rank', 'bm25(1.0, 0.5, 1.0)');
CREATE TRIGGER units_fts_insert AFTER INSERT ON units BEGIN
    INSERT INTO units_fts(rowid, content, context, script_terms)
        SELECT rid, content, context, script_terms FROM units_searched WHERE rid = new.rowid;
END;
CREATE TRIGGER units_fts_delete BEFORE DELETE ON units BEGIN
    INSERT INTO units_fts(units_fts, rowid, content, context, script_terms)
        SELECT 'delete', rid, content, context, script_terms FROM units_searched WHERE rid = old.rowid;
END;
CREATE TRIGGER units_fts_unindex BEFORE UPDATE OF content, context, script_terms, search_text ON units BEGIN
    INSERT INTO units_fts(units_fts, rowid, content, context, script_terms)
        SELECT 'delete', rid, content, context, script_terms FROM units_searched WHERE rid = old.rowid;
END;
CREATE TRIGGER units_fts_update AFTER UPDATE OF content, context, script_terms, search_text ON units BEGIN
    INSERT INTO units_fts(rowid, content, context, script_terms)
        SELECT rid, content, context, script_terms FROM units_searched WHERE rid = new.rowid;
END;
INSERT INTO units_fts(units_fts) VALUES ('rebuild');
"""


def _v5_to_v6(conn: sqlite3.Connection) -> None:
    """Search units without their provenance: ``search_text`` and script terms from the words the
    index takes, and the index rebuilt over ``units_searched`` (once: ~2.3 s per 100k units here)."""
    for statement in _statements(_V5_TO_V6_DROP):  # no trigger fires on the updates below
        conn.execute(statement)
    if "search_text" not in {str(row[1]) for row in conn.execute("PRAGMA table_info(units)")}:
        conn.execute("ALTER TABLE units ADD COLUMN search_text TEXT")
    for rows in _unit_chunks(conn, "content, source, context, search_text, script_terms", 2000):
        updates = stale_index_columns(rows)  # search_text was just added: NULL, as version 5 had none
        conn.executemany("UPDATE units SET search_text = ?, script_terms = ? WHERE rowid = ?", updates)
    for statement in _statements(_V5_TO_V6_INDEX):
        conn.execute(statement)


# Version 7 (ADR 182): a process of version 6 or older that outlives the migration still writes
# its units the old way, with no ``search_text``, so the index would take their role labels and
# tool-call keys. These triggers note such a unit (a labelled source, no indexed words of its own,
# and a label or a tool call in its text; any unit whose content an edit changed while its words
# stayed as they were), and the next retain of this version computes its words
# (``local_reindex``). A unit this version inserts rarely matches: it stores its words whenever
# they differ from the content; an edit of a memory the model wrote is checked once for nothing.
_V6_TO_V7 = """
CREATE TABLE IF NOT EXISTS units_reindex (unit_rowid INTEGER PRIMARY KEY);

CREATE TRIGGER IF NOT EXISTS units_note_unindexed AFTER INSERT ON units
WHEN NEW.search_text IS NULL AND NEW.source IN ('transcript', 'import')
  AND (instr(substr(NEW.content, 1, 40), ': ') > 0 OR instr(NEW.content, '[toolCall ') > 0)
BEGIN
  INSERT OR IGNORE INTO units_reindex(unit_rowid) VALUES (NEW.rowid);
END;

CREATE TRIGGER IF NOT EXISTS units_note_unindexed_edit AFTER UPDATE OF content ON units
WHEN NEW.search_text IS OLD.search_text AND NEW.content IS NOT OLD.content
BEGIN
  INSERT OR IGNORE INTO units_reindex(unit_rowid) VALUES (NEW.rowid);
END;
"""

# Version 8 (ADR 209): each unit's ``script_terms`` ends with the marks of what it leaves behind
# as a change (``local_change_marks``). The migration finds the units that can carry one through
# the index (one of the words such a change is said with) and recomputes their indexed columns.
# A process of version 7 that outlives the migration writes its units without marks: a change it
# stores is found by its words only, until it is edited or re-imported. A trigger noting such
# units cost every insert ~40 µs of text scanning and noted 3 in 10 of this version's own units.


def _v7_to_v8(conn: sqlite3.Connection) -> None:
    """Mark the units already stored that announce a change."""
    expression = " OR ".join(f'"{word}"' for word in MARKED_WORDS)
    rowids = [int(r[0]) for r in conn.execute("SELECT rowid FROM units_fts WHERE units_fts MATCH ?", (expression,))]
    for start in range(0, len(rowids), 2000):
        chunk = rowids[start : start + 2000]
        rows = conn.execute(
            "SELECT rowid, content, source, context, search_text, script_terms FROM units "
            f"WHERE rowid IN ({', '.join('?' for _ in chunk)})",
            chunk,
        ).fetchall()
        conn.executemany(
            "UPDATE units SET search_text = ?, script_terms = ? WHERE rowid = ?", stale_index_columns(rows)
        )


Migration = str | Callable[[sqlite3.Connection], None]

# MIGRATIONS[v] upgrades a database at user_version v to v + 1; index 0 creates the version-1
# schema. Published entries never change (files in the wild were built by them): a change to
# the schema is a new entry and a version bump. An entry is a SQL script, or a function for a
# step that needs Python (version 3 computes each unit's script terms).
MIGRATIONS: tuple[Migration, ...] = (
    _SCHEMA_V1,
    _V1_TO_V2,
    _v2_to_v3,
    _V3_TO_V4,
    _v4_to_v5,
    _v5_to_v6,
    _V6_TO_V7,
    _v7_to_v8,
)
assert len(MIGRATIONS) == SCHEMA_VERSION
assert f"'{RANK_CONFIG}'" in _V2_TO_V3_INDEX and f"'{RANK_CONFIG}'" in _V5_TO_V6_INDEX


def store_error(operation: str, path: Path, problem: str, kind: ErrorKind = "permanent") -> BackendError:
    return BackendError(operation, kind, f"local memory store {path}: {problem}")


def check_fts5() -> None:
    """Fail clearly when this Python's SQLite lacks FTS5 (nothing else works without it)."""
    probe = sqlite3.connect(":memory:")
    try:
        probe.execute("CREATE VIRTUAL TABLE fts5_probe USING fts5(x)")
    except sqlite3.Error as exc:
        raise BackendError(
            "open",
            "permanent",
            f"the SQLite library of this Python ({sqlite3.sqlite_version}) has no FTS5; "
            f"the local memory backend needs it ({redact_text(str(exc))})",
        ) from None
    finally:
        probe.close()


def prepare_file(path: Path) -> None:
    """Create the folder (0700) and an empty file (0600) if missing; refuse non-SQLite files.

    Only reads an existing file. An empty file is a fresh database to SQLite and is accepted.
    """
    parent = path.parent
    if not parent.exists():
        try:
            ensure_private_dir(parent)
        except OSError as exc:
            raise store_error("open", path, f"cannot create its folder ({exc.strerror})", "transient") from None
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    except OSError as exc:
        raise store_error("open", path, f"cannot create the file ({exc.strerror})", "transient") from None
    else:
        os.close(fd)
        return
    if path.is_dir():
        raise store_error("open", path, "is a directory, not a database file")
    # The header is read through SQLite, never with a plain open(): closing any descriptor of the
    # file drops every POSIX lock this process holds on it, so another process's last close would
    # then delete the WAL under our live connections and later writes would go to a deleted file
    # (docs/backends.md#one-file-many-processes). SQLite keeps its own descriptors safe.
    try:
        probe = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True, isolation_level=None, timeout=0)
    except sqlite3.Error as exc:
        raise store_error("open", path, f"cannot be read ({exc}){repair_hint(exc)}", "transient") from None
    try:
        probe.execute("PRAGMA schema_version").fetchone()
    except sqlite3.DatabaseError as exc:
        text = str(exc).lower()
        if "not a database" in text:
            raise store_error(
                "open", path, "is not a SQLite database (left untouched; move it away or fix [local] path)"
            ) from None
        if "locked" not in text and "busy" not in text:  # a lock is the bounded open's to wait for
            raise store_error("open", path, f"cannot be read ({exc}){repair_hint(exc)}", "transient") from None
    finally:
        probe.close()


def connect(path: Path) -> sqlite3.Connection:
    """A connection in autocommit mode (we issue BEGIN ourselves) with the docs/backends.md#embedded-store settings."""
    try:
        conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000)
    except sqlite3.Error as exc:
        raise map_error("open", exc, path) from None
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        conn.execute("PRAGMA temp_store = MEMORY")
    except sqlite3.Error as exc:
        conn.close()
        raise map_error("open", exc, path) from None
    return conn


def ensure_schema(conn: sqlite3.Connection, path: Path) -> int:
    """Verify the file is ours and at most our version; create or migrate it forward.

    Returns the version found before migrating (0 = new). Nothing is written unless the
    version is older than ours and the file holds either nothing or our own tables.
    """
    try:
        found = _read_version(conn, path)
        if found == SCHEMA_VERSION:
            conn.execute("PRAGMA journal_mode = WAL")
            return found
        with transaction(conn, "BEGIN IMMEDIATE"):
            found = _read_version(conn, path)  # another process may have migrated meanwhile
            migrate_steps(conn, found, SCHEMA_VERSION)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("PRAGMA journal_mode = WAL")
        return found
    except sqlite3.Error as exc:
        raise map_error("open", exc, path) from None


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection, begin: str = "BEGIN") -> Iterator[None]:
    """One transaction on an autocommit connection: committed when the block ends, rolled back
    (and the error raised on) when it fails or is interrupted."""
    conn.execute(begin)
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
        raise


def migrate_steps(conn: sqlite3.Connection, start: int, stop: int) -> None:
    """Bring a file at ``start`` to ``stop`` (0 = an empty file), inside the caller's transaction."""
    for version in range(start, stop):
        step = MIGRATIONS[version]
        if callable(step):
            step(conn)
            continue
        for statement in _statements(step):
            conn.execute(statement)


def _read_version(conn: sqlite3.Connection, path: Path) -> int:
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise store_error(
            "open",
            path,
            f"has schema version {version}, newer than this hindsight-hooks understands ({SCHEMA_VERSION}); "
            "upgrade hindsight-hooks (the file was left untouched)",
        )
    if version == 0:
        names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        if names and "banks" not in names:
            raise store_error("open", path, "is a SQLite database of another program (left untouched)")
    return version


def _statements(script: str) -> list[str]:
    """Split a migration script into complete statements (triggers contain inner semicolons)."""
    out: list[str] = []
    buf = ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            if buf.strip():
                out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out


_READ_ONLY_MARKERS = ("readonly", "read-only file system")


def is_read_only(exc: BaseException) -> bool:
    """SQLite (or the OS) refused a write because the file, its folder or the mount is read-only."""
    text = (exc.detail if isinstance(exc, BackendError) else str(exc)).lower()
    return any(m in text for m in _READ_ONLY_MARKERS)


REPAIR_HINT = "`hindsight-hooks repair` salvages what can be read"


def repair_hint(exc: BaseException) -> str:
    """What to do about a damaged file (ADR 189); nothing for any other failure."""
    return f"; {REPAIR_HINT}" if "malformed" in str(exc).lower() else ""


def read_only_hint(path: Path) -> str:
    """What to do about a read-only store: never "restore from a backup" (the data is fine)."""
    return f"make it writable with chmod u+w {path}; its folder must be writable too"


_TRANSIENT_MARKERS = ("locked", "busy", "disk i/o", "database or disk is full", "unable to open", "readonly")
_CORRUPT_MARKERS = ("malformed", "not a database", "file is encrypted")


def classify(exc: BaseException) -> ErrorKind:
    """Busy/locked/IO/full → transient (the queue retries); constraint and everything else → permanent."""
    if isinstance(exc, sqlite3.IntegrityError):
        return "permanent"
    text = str(exc).lower()
    if "interrupted" in text:
        return "timeout"
    if any(m in text for m in _CORRUPT_MARKERS):
        return "permanent"
    if isinstance(exc, sqlite3.OperationalError) and any(m in text for m in _TRANSIENT_MARKERS):
        return "transient"
    return "permanent"


def map_error(operation: str, exc: BaseException, path: Path) -> BackendError:
    """A ``BackendError`` for a sqlite3 failure: classified, redacted, never carrying row content."""
    if isinstance(exc, BackendError):
        return exc
    kind = classify(exc)
    detail = redact_text(str(exc))[:300]
    if any(m in detail.lower() for m in _CORRUPT_MARKERS):
        detail += f" (the file was left untouched; {REPAIR_HINT})"
    elif is_read_only(exc):
        detail += f" (read-only store: {read_only_hint(path)})"
    return store_error(operation, path, detail, kind)
