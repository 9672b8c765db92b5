"""The words a change leaves behind, kept in the index as marks (ADR 209).

"We switched from pnpm to bun this week" names pnpm as what it left behind. Recall finds such a
change through the word (``local_successors``): the question found "pnpm is our package manager",
and the newer unit that left pnpm behind is put above it. Read from the text at every recall, that
cost ~1.6 ms on a coding agent's bank (every match saying "replace" or "removed" had to be read
and parsed), so each unit's own left-behind words are computed once, when it is written, and kept
as marks in its ``script_terms`` column: ``zzleft<stem>`` for a word left behind ("from pnpm",
"instead of Jenkins", "Redis is out"), ``zzgone<stem>`` for a word named as removed ("removed the
Redis consumer", ADR 188). A recall then asks the index for the marks of its hits' words: a few
rows of exact matches.

The marks are tokens no text says; the index's tokenizer stems them the same way on both sides, so
the query finds what the write stored. Every writer computes a unit's indexed columns through
``local_indexed.indexed_columns``, so every unit written by this version carries its marks.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable
from functools import lru_cache

from .local_text import porter_stem
from .local_time import announces_change, content_stems, left_behind_words, removed

LEFT_MARK = "zzleft"
GONE_MARK = "zzgone"
# One of these is in the indexed words of every unit that can carry a mark (the FTS statement the
# migration to version 8 and the older-writer trigger use to find them; stems match every form).
MARKED_WORDS = (
    "switched", "moved", "migrated", "instead", "replaced", "dropped", "longer", "rather", "decided", "out",
    "removed", "ditched", "statt", "anstatt", "lieu", "lugar", "vez", "invece", "plaats", "вместо", "zamiast",
    "замість",
)  # fmt: skip


def decided_marks(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """The stems ``text`` marks: what it leaves behind and what it removes, as a decision says them
    (both empty for a text that announces no change, nearly every unit). "switched from",
    "replaced", "removed"; "replace the handler", "remove self", "X rather than Y" describe code as
    often as a change of mind, and in a bank of source lines marked one unit in a hundred."""
    if not announces_change(text):
        return frozenset(), frozenset()
    # "instead of writing our own", "rather than waiting": a verb's -ing form names what was not
    # done, not a thing that was chosen and left; marked, every such unit would match the hits that
    # say the verb, and each mark is one more word in its row's bm25 length.
    named = [word for word in left_behind_words(text, decided=True) if not word.lower().endswith("ing")]
    left = content_stems(" ".join(named)) if named else frozenset()
    return left, removed(text, decided=True)


def change_marks(words: str) -> str:
    """The marks of a unit's indexed words (:func:`decided_marks`), as the index keeps them."""
    left, gone = decided_marks(words)
    return " ".join([*(LEFT_MARK + stem for stem in sorted(left)), *(GONE_MARK + stem for stem in sorted(gone))])


# The index's terms, read through FTS5's vocabulary table: a temporary one per connection (no
# schema change; a read transaction may create it).
_VOCAB = "temp.hindsight_marks_vocab"
_CREATE_VOCAB = f"CREATE VIRTUAL TABLE IF NOT EXISTS {_VOCAB} USING fts5vocab(main, units_fts, row)"


def marks_held(conn: sqlite3.Connection) -> frozenset[str]:
    """Every mark the file's index holds (as the index stems it), read once per change to the file.

    Why first: each term an FTS5 query names costs a lookup in every index segment (~0.04 ms
    each here, even for a term no unit has), so asking for two marks of 24 stems cost ~1.9 ms.
    The marks a file holds are few; one range read of the index's vocabulary (0.02–0.25 ms) lists
    them, and only the stems among them are asked for (usually none). The list is kept per
    connection until the file changes (``PRAGMA data_version`` for other connections' commits,
    ``total_changes`` for this one's), so a turn whose store nobody wrote to reads nothing."""
    version = (int(conn.execute("PRAGMA data_version").fetchone()[0]), conn.total_changes)
    kept = _HELD.get(id(conn))
    if kept is not None and kept[0] is conn and kept[1] == version:
        return kept[2]
    try:
        rows = conn.execute(_MARKS_IN_VOCAB).fetchall()
    except sqlite3.OperationalError:
        conn.execute(_CREATE_VOCAB)
        rows = conn.execute(_MARKS_IN_VOCAB).fetchall()
    held = frozenset(str(row[0]) for row in rows)
    with _HELD_LOCK:  # the recall's own thread and a helper thread may both get here
        if len(_HELD) >= _HELD_MAX and id(conn) not in _HELD:
            del _HELD[next(iter(_HELD))]
        _HELD[id(conn)] = (conn, version, held)
    return held


# id(connection) → (the connection, its file's version, the marks): the connection is held, so its
# id is not reused while it is kept; a process has a few connections (one per thread that reads).
_HELD: dict[int, tuple[sqlite3.Connection, tuple[int, int], frozenset[str]]] = {}
_HELD_MAX = 16
_HELD_LOCK = threading.Lock()


def marked(held: frozenset[str], stems: Iterable[str]) -> list[str]:
    """The ``stems`` that some unit marks as left behind or removed (``held``: :func:`marks_held`)."""
    if not held:
        return []
    return [stem for stem in stems if not held.isdisjoint(_indexed_marks(stem))]


@lru_cache(maxsize=4096)
def _indexed_marks(stem: str) -> tuple[str, str]:
    """The two marks of ``stem`` as the index stems them (a recall asks for ~24 stems, mostly the
    same from one turn to the next)."""
    return porter_stem(LEFT_MARK + stem), porter_stem(GONE_MARK + stem)


# Both marks sort between these two terms ("zzgone…" < "zzleft…" < "zzlefu").
_MARKS_IN_VOCAB = f"SELECT term FROM {_VOCAB} WHERE term >= '{GONE_MARK}' AND term < 'zzlefu'"


def marks_expression(stems: Iterable[str]) -> str:
    """The FTS5 expression that finds the units leaving behind (or removing) any of ``stems``."""
    return " OR ".join(f'"{mark}{stem}"' for stem in stems for mark in (LEFT_MARK, GONE_MARK))
