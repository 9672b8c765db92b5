"""Units an older version wrote after the store was migrated get their indexed words (ADR 182).

Schema 6 keeps the words the index holds of a unit in ``units.search_text`` (ADR 179), and every
writer of this version stores them. A process of an older version that was running when a newer
one migrated the file (a Pi bridge, an MCP server, the hook helper: each lives as long as its
session) keeps writing units without them, and the index would then take those units' role
labels and tool-call keys: "user", "file", "command" would match them again. Schema 7's triggers
note such units in ``units_reindex``; each retain of this version computes the words of a few of
them in its own transaction, so the store heals as soon as this version writes again.
"""

from __future__ import annotations

import sqlite3

from .local_indexed import stale_index_columns

REINDEX_BATCH = 256
"""At most this many noted units per retain: a long session of an old process is healed over a
few retains, and no retain pays for more than a few milliseconds of it."""


def reindex_older_writes(conn: sqlite3.Connection) -> int:
    """Compute the indexed words of up to :data:`REINDEX_BATCH` noted units, inside the caller's
    write transaction; returns how many changed. A unit deleted since is only un-noted."""
    noted = conn.execute(
        "SELECT r.unit_rowid, u.content, u.source, u.context, u.search_text, u.script_terms "
        "FROM units_reindex r LEFT JOIN units u ON u.rowid = r.unit_rowid LIMIT ?",
        (REINDEX_BATCH,),
    ).fetchall()
    if not noted:
        return 0
    updates = stale_index_columns(noted)
    conn.executemany("UPDATE units SET search_text = ?, script_terms = ? WHERE rowid = ?", updates)
    conn.executemany("DELETE FROM units_reindex WHERE unit_rowid = ?", [(row[0],) for row in noted])
    return len(updates)
