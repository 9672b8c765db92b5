"""The marks of what a change leaves behind, kept in the index when a unit is written (ADR 209):
computed by every writer and given to a version-7 file's units by the migration; on real SQLite
files."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hindsight_hooks.backends.base import RecallRequest
from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.backends.local_indexed import indexed_columns
from hindsight_hooks.backends.local_schema import SCHEMA_VERSION
from tests.backends.test_local_support import make, raw
from tests.backends.test_local_time_spans import said


@pytest.mark.parametrize(
    ("content", "marks"),
    [
        ("user: We switched from pnpm to bun this week.", "zzleftpnpm"),
        ("user: Redis is out; Memcached from now on.", "zzleftredi"),
        ("user: We use MkDocs instead of Sphinx since Monday.", "zzleftsphinx"),
        ("user: we removed the Redis stream consumer", "zzgoneredi"),
        ("user: Let's switch from pnpm to bun.", "zzleftpnpm"),  # a decision said as it is taken
        ("user: we should migrate off Heroku this quarter", "zzleftheroku"),
        ("user: we're moving off Jenkins next sprint", "zzleftjenkin"),
        ("user: replace the old handler, move from the cache to the disk", ""),  # code, not a decision
        ("user: Ab jetzt MkDocs statt Sphinx.", "zzleftsphinx"),
        ("user: The cache is Redis.", ""),  # announces no change
        ("user: moved the meeting to Friday", ""),  # announces a change, names nothing left behind
        ("user: we chose arrow instead of writing our own.", ""),  # what was not done is not a thing left
        ("toolResult: - replaced Jenkins with Actions in 3 files", ""),  # a tool's output decides nothing
        ('assistant: [toolCall bash] {"command": "sed -i s/redis/memcached/ # instead of redis"}', ""),
        # In the passive, the word after the verb is not what was given up (ADR 211): describing code.
        ("assistant: runs of whitespace are replaced by a single space", ""),
        ("assistant: whitespace characters are replaced single space", ""),
        ("assistant: this module will be removed in Python 3.14", ""),
        ("assistant: the getter should be replaced inspect.getsource", ""),
        ("assistant: the file was already removed symlinks stay", ""),
        ("assistant: tabs expanded and newlines removed instead", ""),  # an adverb, not a thing
        ("user: we've already removed Redis from the stack", "zzgoneredi"),  # active: a decision
        ("user: Jenkins was replaced by Buildkite", ""),  # the thing is before the verb: not marked
        # A decision said as it is taken, with its lead (ADR 211); without one it describes code.
        ("user: Let’s drop Redis and use Memcached.", "zzleftredi"),
        ("user: We'll replace Jenkins with Buildkite next sprint.", "zzleftjenkin"),
        ("user: we are removing the Redis consumer", "zzgoneredi"),
        ("user: We decided to ditch Opsgenie.", "zzgoneopsgeni"),
        ("user: time to drop Python 3.8", "zzleftpython"),
        ("assistant: drop the table users, then remove self from the list", ""),
    ],
)
def test_a_change_carries_the_marks_of_what_it_leaves_behind(content: str, marks: str) -> None:
    _, script_terms = indexed_columns(content, "transcript", "")
    assert [t for t in script_terms.split() if t.startswith(("zzleft", "zzgone"))] == marks.split()


def test_marks_sit_beside_the_script_terms_of_the_same_text() -> None:
    _, script_terms = indexed_columns("user: 東京サーバー instead of 大阪", "transcript", "")
    assert script_terms.split()[-1] == "zzleft大阪" and "東京" in script_terms.split()


def marks_in(path: Path) -> int:
    conn = raw(path)
    try:
        return int(conn.execute("SELECT count(*) FROM units WHERE instr(script_terms, 'zzleft') > 0").fetchone()[0])
    finally:
        conn.close()


SWITCH = ("s2", "2026-11-20T10:00:00Z", "We switched from pnpm to bun this week.")
PNPM = ("s1", "2026-09-24T10:00:00Z", "pnpm is our package manager.")


def as_version_7(path: Path) -> None:
    """The file as version 7 wrote it: no marks."""
    conn = sqlite3.connect(str(path), isolation_level=None)
    for rowid, terms in conn.execute("SELECT rowid, script_terms FROM units").fetchall():
        kept = " ".join(t for t in str(terms).split() if not t.startswith(("zzleft", "zzgone")))
        conn.execute("UPDATE units SET script_terms = ? WHERE rowid = ?", (kept, rowid))
    conn.execute("PRAGMA user_version = 7")
    conn.close()


def test_a_version_7_file_gets_its_marks_when_opened(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    said(make(tmp_path), PNPM, SWITCH).close()
    as_version_7(path)
    assert marks_in(path) == 0

    backend = LocalBackend(path)
    assert raw(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 8
    assert marks_in(path) == 1
    hits = backend.recall("b", RecallRequest(query="which package manager do we use?", query_timestamp=SWITCH[1]))
    assert [h.text for h in hits.hits] == [
        "user: We switched from pnpm to bun this week.",
        "user: pnpm is our package manager.",
    ]


def test_an_edit_that_makes_a_memory_a_change_marks_it(tmp_path: Path) -> None:
    backend = said(make(tmp_path), PNPM, ("s2", "2026-11-20T10:00:00Z", "We use bun now."))
    unit = next(h for h in backend.list_units("b", 10, 0) if "bun" in h.text)
    assert unit.id is not None
    backend.update_unit("b", unit.id, content="user: We switched from pnpm to bun this week.")
    assert marks_in(tmp_path / "memory.db") == 1


def test_the_marks_held_are_kept_per_connection_and_read_again_when_the_file_changes(tmp_path: Path) -> None:
    from hindsight_hooks.backends.local_change_marks import marks_held

    backend = said(make(tmp_path), PNPM)
    conns = [sqlite3.connect(str(tmp_path / "memory.db")) for _ in range(20)]  # more than are kept
    assert all(marks_held(conn) == frozenset() for conn in conns)
    said(backend, SWITCH)  # another connection commits: each sees the new mark
    assert all(marks_held(conn) == {"zzleftpnpm"} for conn in conns)
    for conn in conns:
        conn.close()
