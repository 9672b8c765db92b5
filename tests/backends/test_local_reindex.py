"""Units a process of an older version writes after the store was migrated get their indexed
words from the next retain of this version (ADR 182), on real SQLite files.

The older writer is played by a second connection issuing the version-5 code's own ``INSERT``
(its column list has no ``search_text``) and the older edit's ``UPDATE`` of the content alone,
which is exactly what such a process sends to the migrated file.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hindsight_hooks.backends.local_indexed import indexed_columns
from hindsight_hooks.backends.local_reindex import REINDEX_BATCH
from hindsight_hooks.backends.local_schema import slot_range
from hindsight_hooks.backends.local_script import unit_script_terms
from hindsight_hooks.backends.local_write import hash16
from tests.backends.test_local_provenance import texts
from tests.backends.test_local_support import T0_ISO, item, make, messages_json, raw

SESSION = 'Coding session (pi) for repo "billing", session a.jsonl'


def older_insert(conn: sqlite3.Connection, rowid: int, content: str, source: str = "transcript") -> None:
    """A unit as the version-5 code inserted it: no ``search_text``, script terms of the content."""
    conn.execute(
        "INSERT INTO documents(bank_id, document_id, original_text, created_at, updated_at) "
        "VALUES ('b', 'old-session', '', ?, ?) ON CONFLICT DO NOTHING",
        (T0_ISO, T0_ISO),
    )
    conn.execute(
        "INSERT INTO units(rowid, id, bank_id, document_id, seq, content, context, type, source, importance, "
        "created_at, script_terms) VALUES (?, ?, 'b', 'old-session', ?, ?, ?, 'experience', ?, 0.65, ?, ?)",
        (rowid, hash16(f"{rowid}:{content}"), rowid, content, SESSION, source, T0_ISO, unit_script_terms(content, "")),
    )


def noted(path: Path) -> int:
    conn = raw(path)
    try:
        return int(conn.execute("SELECT count(*) FROM units_reindex").fetchone()[0])
    finally:
        conn.close()


def matches(path: Path, query: str) -> int:
    conn = raw(path)
    try:
        return int(conn.execute("SELECT count(*) FROM units_fts WHERE units_fts MATCH ?", (query,)).fetchone()[0])
    finally:
        conn.close()


def test_units_an_older_process_writes_are_healed_by_the_next_retain(tmp_path: Path) -> None:
    backend = make(tmp_path)
    turn = messages_json(("user", "which port does billing use?"), ("assistant", "Billing listens on 4821."))
    backend.retain_batch("b", [item(turn, "s1", source="auto", context=SESSION)], operation_id="ours")
    path = tmp_path / "memory.db"
    assert noted(path) == 0  # what this version writes carries its words: nothing to heal
    top = slot_range(1)[0] + 1000
    old = sqlite3.connect(str(path), isolation_level=None)
    older_insert(old, top, "user: review the parser of the user table")
    older_insert(old, top + 1, 'assistant: [toolCall read] {"file_path": "billing/rates.py"}')
    older_insert(old, top + 2, "a note the model wrote: the user table has an email column", source="tool")
    old.close()
    # As written, the labels and keys are indexed again: "user", "assistant" and "file" match them.
    assert noted(path) == 2 and matches(path, "assistant") == 1 and matches(path, "file") == 1
    assert matches(path, "user") == 2  # the label, and the model's note that says "user"

    backend.retain_batch("b", [item("the deploy runs on Fridays", "n1")], operation_id="next")
    assert noted(path) == 0
    assert matches(path, "assistant") == 0 and matches(path, "file") == 0 and matches(path, "path") == 0
    assert matches(path, "user") == 2  # "the user table", twice: what they say, not their label
    assert texts(backend, "rates") == ['assistant: [toolCall read] {"file_path": "billing/rates.py"}']
    assert texts(backend, "parser") == ["user: review the parser of the user table"]
    assert backend.quick_check() == []
    backend.close()


def test_an_older_edit_of_the_content_is_healed_too(tmp_path: Path) -> None:
    backend = make(tmp_path)
    turn = messages_json(("user", "the cache is Redis"))
    backend.retain_batch("b", [item(turn, "s1", source="auto", context=SESSION)], operation_id="ours")
    path = tmp_path / "memory.db"
    old = sqlite3.connect(str(path), isolation_level=None)
    old.execute("UPDATE units SET content = 'user: the cache is Memcached' WHERE content = 'user: the cache is Redis'")
    old.close()
    # The index still holds the words from before the edit: "Redis" is found, "Memcached" is not.
    assert noted(path) == 1 and matches(path, "redis") == 1 and matches(path, "memcached") == 0

    backend.retain_batch("b", [item("unrelated", "n1")], operation_id="next")
    assert noted(path) == 0 and matches(path, "redis") == 0 and matches(path, "user") == 0
    assert texts(backend, "Memcached") == ["user: the cache is Memcached"]
    assert backend.quick_check() == []
    backend.close()


def test_a_long_older_session_heals_a_batch_per_retain_and_a_deleted_unit_is_only_forgotten(
    tmp_path: Path,
) -> None:
    backend = make(tmp_path)
    backend.retain_batch("b", [item("first", "n0")], operation_id="ours")
    path = tmp_path / "memory.db"
    top = slot_range(1)[0] + 10_000
    old = sqlite3.connect(str(path), isolation_level=None)
    old.execute("BEGIN")
    for n in range(REINDEX_BATCH + 10):
        older_insert(old, top + n, f"user: message number {n}")
    old.execute("COMMIT")
    old.execute("DELETE FROM units WHERE rowid = ?", (top,))
    old.close()
    assert noted(path) == REINDEX_BATCH + 10
    backend.retain_batch("b", [item("second", "n1")], operation_id="one")
    assert noted(path) == 10
    backend.retain_batch("b", [item("third", "n2")], operation_id="two")
    assert noted(path) == 0 and matches(path, "user") == 0
    assert backend.quick_check() == []
    backend.close()


_CONTENTS = st.sampled_from(
    [
        "user: review the parser",
        "assistant: done, the parser passes",
        'assistant: [toolCall bash] {"command": "pytest -q", "description": "run tests"}',
        "Note: a line with a colon early",
        "plain words with no label",
        "user: 東京サーバーを再起動した",
    ]
)
_STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("old insert"), _CONTENTS, st.sampled_from(["transcript", "import", "tool"])),
        st.tuples(st.just("old edit"), _CONTENTS, st.just("")),
        st.tuples(st.just("delete"), st.just(""), st.just("")),
        st.tuples(st.just("retain"), _CONTENTS, st.just("")),
    ),
    max_size=12,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_STEPS)
def test_whatever_an_older_process_does_two_retains_later_every_unit_holds_its_words(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, str, str]]
) -> None:
    folder = tmp_path_factory.mktemp("reindex")
    backend = make(folder)
    backend.retain_batch("b", [item("first", "n0")], operation_id="first")
    path = folder / "memory.db"
    top = slot_range(1)[0] + 100_000
    for n, (step, content, source) in enumerate(steps):
        if step == "retain":
            backend.retain_batch(
                "b", [item(messages_json(("user", content)), f"r{n}", source="auto")], operation_id=f"r{n}"
            )
            continue
        old = sqlite3.connect(str(path), isolation_level=None)
        if step == "old insert":
            older_insert(old, top + n, content, source)
        elif step == "old edit":  # as the version-5 edit wrote it: the content and its script terms
            old.execute(
                "UPDATE units SET content = ?, script_terms = ? WHERE rowid = (SELECT max(rowid) FROM units)",
                (content, unit_script_terms(content, "")),
            )
        else:
            old.execute("DELETE FROM units WHERE rowid = (SELECT max(rowid) FROM units)")
        old.close()
    backend.retain_batch("b", [item("last", "n1")], operation_id="last")
    conn = raw(path)
    rows = conn.execute("SELECT content, source, context, search_text, script_terms FROM units").fetchall()
    assert conn.execute("SELECT count(*) FROM units_reindex").fetchone()[0] == 0
    conn.close()
    for content, source, context, search, terms in rows:
        assert (search, terms) == indexed_columns(content, source, context or ""), content
    assert backend.quick_check() == []
    backend.close()
