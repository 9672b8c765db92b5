"""A unit is searched by what it says and its turn terms, never by its provenance (ADR 179).

The context every writer gives an item is provenance: ``Coding session (claude-code) for repo
"billing", session 4f1c.jsonl`` for every turn of a session and every memory the model stores in
it; so is a message's role label, ``user: `` on half the bank. When the index held them, a prompt
that said "code", "session", "user", "claude" or the repo's name matched every memory of the bank,
and a small bank injected all of them, related or not.

Schema 6 indexes a message without its label and only the turn terms of the context; a version-5
file (built by the pinned migrations, filled as the version-5 writer filled it) is rebuilt once
on open, losing nothing.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from hindsight_hooks.backends.base import RecallRequest
from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.backends.local_indexed import indexed_content, search_text_of
from hindsight_hooks.backends.local_schema import _V5_TO_V6_INDEX, MIGRATIONS, SCHEMA_VERSION, _statements, slot_range
from hindsight_hooks.backends.local_script import unit_script_terms
from hindsight_hooks.backends.local_windows import neighbour_of
from hindsight_hooks.backends.local_write import hash16
from tests.backends.test_local_support import T0_ISO, item, make, messages_json, migrated_at_once, raw

SESSION = 'Coding session (claude-code) for repo "billing", session 4f1c-2026.jsonl'
FACTS = [
    "we run Postgres 16 on the main cluster",
    "the launch is on Friday",
    "the parser rejects tabs in indentation",
    "login tokens expire after 15 minutes",
]


def texts(backend: LocalBackend, query: str) -> list[str]:
    return [h.text for h in backend.recall("b", RecallRequest(query=query)).hits]


def stored(backend: LocalBackend) -> LocalBackend:
    for n, fact in enumerate(FACTS):
        backend.retain_batch("b", [item(fact, f"d{n}", context=SESSION)], operation_id=f"op{n}")
    return backend


def test_words_of_the_item_context_find_nothing(tmp_path: Path) -> None:
    backend = stored(make(tmp_path))
    for query in ("coding session", "claude code", "billing", "jsonl", "4f1c", "2026", "repo"):
        assert texts(backend, query) == [], query
    backend.close()


def test_a_prompt_that_says_code_or_session_gets_only_what_it_is_about(tmp_path: Path) -> None:
    backend = stored(make(tmp_path))
    assert texts(backend, "can you review the code in the parser?") == [FACTS[2]]
    assert texts(backend, "the login session keeps expiring") == [FACTS[3]]
    assert texts(backend, "which Postgres version runs in billing?") == [FACTS[0]]
    backend.close()


def test_the_context_is_kept_and_shown_as_provenance(tmp_path: Path) -> None:
    backend = stored(make(tmp_path))
    conn = raw(backend.path)
    assert {row[0] for row in conn.execute("SELECT context FROM units")} == {SESSION}
    assert sorted(u.text for u in backend.list_units("b", 10, 0)) == sorted(FACTS)
    backend.close()


def test_turn_terms_are_still_searched(tmp_path: Path) -> None:
    """ADR 052: a reply is found by its prompt's words; the context's words still are not."""
    backend = make(tmp_path)
    turn = messages_json(("user", "which port should the billing service use?"), ("assistant", "Use 4821."))
    backend.retain_batch("b", [item(turn, "s", source="auto", context=SESSION)], operation_id="op")
    assert texts(backend, "port") == ["user: which port should the billing service use?", "assistant: Use 4821."]
    assert texts(backend, "claude session") == []
    backend.close()


def test_a_role_label_is_not_searched(tmp_path: Path) -> None:
    backend = make(tmp_path)
    turns = messages_json(
        ("user", "which database do we run?"),
        ("assistant", "We run Postgres 16."),
        ("user", "how should the parser treat tabs?"),
        ("assistant", "It rejects them."),
    )
    backend.retain_batch("b", [item(turns, "s", source="auto", context=SESSION)], operation_id="op")
    assert texts(backend, "add a user table with an email column") == []
    assert texts(backend, "the assistant should answer in French") == []
    assert texts(backend, "what did the assistant say about the parser?") == [
        "user: how should the parser treat tabs?",
        "assistant: It rejects them.",
    ]
    # A memory the model wrote is searched as written: its first word is no label.
    backend.retain_batch("b", [item("user: prefers dark mode", "m", context=SESSION)], operation_id="m")
    assert texts(backend, "user") == ["user: prefers dark mode"]
    backend.close()


def test_words_after_a_nul_are_searched(tmp_path: Path) -> None:
    """A tool's output in a transcript may hold a NUL; FTS5 indexes past it, and so must the
    view that cuts the role label off (SQLite's text functions would stop there)."""
    backend = make(tmp_path)
    turn = messages_json(("user", "dump the header"), ("toolResult", "magic\x00kestrel bytes"))
    backend.retain_batch(
        "b", [item(turn, "s", source="auto", context=SESSION + "\x1eheader\x00dump")], operation_id="1"
    )
    assert texts(backend, "kestrel") == ["toolResult: magic\x00kestrel bytes"]
    assert backend.quick_check() == []
    backend.close()


LABELS = st.sampled_from(
    ["user", "assistant", "toolResult", "a b", "", "x" * 40, "x" * 41, "東京" * 7, "u\x00r", "Note"]
)


@given(
    label=LABELS,
    sep=st.sampled_from([": ", ":", " : ", ": : "]),
    rest=st.text(max_size=30),
    source=st.sampled_from(["transcript", "import", "tool"]),
    context=st.lists(st.text(max_size=12), max_size=3).map("\x1e".join),
)
def test_the_index_and_the_coverage_rule_read_the_same_text(
    label: str, sep: str, rest: str, source: str, context: str
) -> None:
    """A row as the writers store it (``search_text_of``) gives the index, through the view, the
    words ``indexed_content`` defines and the turn terms ``neighbour_of`` reads, which are also
    what the coverage rule reads."""
    content = f"{label}{sep}{rest}"
    conn = sqlite3.connect(":memory:")
    view = next(s for s in _statements(_V5_TO_V6_INDEX) if s.startswith("CREATE VIEW"))
    conn.execute(
        "CREATE TABLE units(rowid INTEGER PRIMARY KEY, content TEXT, context TEXT, source TEXT, "
        "script_terms TEXT, search_text TEXT)"
    )
    conn.execute(view)
    conn.execute(
        "INSERT INTO units(content, context, source, script_terms, search_text) VALUES (?, ?, ?, '', ?)",
        (content, context, source, search_text_of(content, source)),
    )
    row = conn.execute("SELECT content, context FROM units_searched").fetchone()
    assert row == (indexed_content(content, source), neighbour_of(context))
    conn.close()


def tool_turn() -> str:
    calls = [
        {"type": "toolCall", "id": "1", "name": "read", "arguments": {"file_path": "tests/test_login.py"}},
        {"type": "toolCall", "id": "2", "name": "bash", "arguments": {"command": "grep -rn PORT billing/",
                                                                       "description": "find the port"}},
    ]  # fmt: skip
    return json.dumps(
        [{"role": "user", "content": "fix the flaky login test"}, {"role": "assistant", "content": calls}]
    )


def test_a_tool_call_is_searched_by_its_argument_values_not_its_keys(tmp_path: Path) -> None:
    backend = make(tmp_path)
    backend.retain_batch("b", [item(tool_turn(), "s", source="auto", context=SESSION)], operation_id="op")
    shown = 'assistant: [toolCall read] {"file_path":"tests/test_login.py"}\n[toolCall bash] '
    assert texts(backend, "which command builds the docs?") == []
    assert texts(backend, "update the file path of the config") == []
    assert texts(backend, "read the description and write a bash script") == []
    hits = texts(backend, "billing PORT")
    assert len(hits) == 1 and hits[0].startswith(shown)  # shown as stored, keys and all
    assert texts(backend, "test_login") == [hits[0]]
    backend.close()


def test_tool_call_arguments_that_are_not_whole_json_lose_only_their_keys() -> None:
    cut = 'assistant: [toolCall bash] {"command":"grep -rn \\"PORT\\" billing/","timeout":'
    assert indexed_content(cut, "transcript") == '{ "grep -rn \\"PORT\\" billing/", '
    deep = "[" * 900 + '"kestrel"' + "]" * 900
    assert indexed_content(f"assistant: [toolCall x] {deep}", "transcript") == "kestrel"
    assert indexed_content("assistant: [toolCall x]", "transcript") == ""
    assert indexed_content('[toolCall bash] {"command":"ls"}', "tool") == '[toolCall bash] {"command":"ls"}'


def test_text_without_spaces_in_the_context_is_not_searched(tmp_path: Path) -> None:
    backend = make(tmp_path)
    context = 'Coding session (pi) for repo "東京プロジェクト", session a.jsonl'
    backend.retain_batch("b", [item("deploy finished", "d1", context=context)], operation_id="1")
    backend.retain_batch("b", [item("東京サーバーを再起動した", "d2", context=context)], operation_id="2")
    assert texts(backend, "東京") == ["東京サーバーを再起動した"]
    assert raw(backend.path).execute("SELECT script_terms FROM units WHERE content = 'deploy finished'").fetchone() == (
        "",
    )
    backend.close()


def test_an_edit_and_a_delete_keep_the_index_in_step(tmp_path: Path) -> None:
    backend = stored(make(tmp_path))
    unit = next(u for u in backend.list_units("b", 10, 0) if u.text == FACTS[1])
    assert unit.id is not None
    backend.update_unit("b", unit.id, content="the launch moved to Monday")
    assert texts(backend, "Monday") == ["the launch moved to Monday"] and texts(backend, "Friday") == []
    assert backend.delete_document("b", "d0") == 1
    assert texts(backend, "Postgres") == []
    assert backend.quick_check() == []
    backend.close()


# -- a version-5 file --------------------------------------------------------------------------------


def build_v5(path: Path) -> None:
    """A version-5 store as the version-5 code wrote it: the whole context indexed, its script terms
    computed from the whole context, a reply with its prompt's terms after the separator."""
    conn = sqlite3.connect(str(path), isolation_level=None)
    for step in MIGRATIONS[:5]:
        if callable(step):
            step(conn)
        else:
            for statement in _statements(step):
                conn.execute(statement)
    conn.execute("PRAGMA user_version = 5")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("INSERT INTO banks(bank_id, slot, created_at) VALUES ('b', 1, ?)", (T0_ISO,))
    context = 'Coding session (pi) for repo "東京プロジェクト", session a.jsonl'
    rows = [
        ("n1", "we run Postgres 16 on the main cluster", context, "tool"),
        ("n2", "the launch is on Friday", context, "tool"),
        ("s", "assistant: Use 4821.", context + "\x1e" + "port billing service", "transcript"),
        ("s", 'assistant: [toolCall bash] {"command":"grep -rn kestrel"}', context, "transcript"),
    ]
    for seq, (doc, content, ctx, source) in enumerate(rows):
        conn.execute(
            "INSERT INTO documents(bank_id, document_id, original_text, created_at, updated_at) "
            "VALUES ('b', ?, '', ?, ?) ON CONFLICT DO NOTHING",
            (doc, T0_ISO, T0_ISO),
        )
        conn.execute(
            "INSERT INTO units(rowid, id, bank_id, document_id, seq, content, context, type, source, importance, "
            "created_at, script_terms) VALUES (?, ?, 'b', ?, ?, ?, ?, 'world', ?, 0.75, ?, ?)",
            (
                slot_range(1)[0] + seq,
                hash16(doc + content),
                doc,
                seq,
                content,
                ctx,
                source,
                T0_ISO,
                unit_script_terms(content, ctx),  # version 5 took the whole context
            ),
        )
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def test_a_version_5_file_stops_searching_contexts_and_keeps_everything(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    build_v5(path)
    before = raw(path)
    assert before.execute("SELECT count(*) FROM units_fts WHERE units_fts MATCH 'session'").fetchone()[0] == 4
    assert before.execute("SELECT count(*) FROM units_fts WHERE units_fts MATCH 'assistant'").fetchone()[0] == 2
    assert before.execute("SELECT count(*) FROM units WHERE script_terms != ''").fetchone()[0] == 4
    units_before = before.execute("SELECT rowid, id, content, context FROM units ORDER BY rowid").fetchall()
    before.close()

    backend = LocalBackend(path)
    conn = raw(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("SELECT rowid, id, content, context FROM units ORDER BY rowid").fetchall() == units_before
    assert conn.execute("SELECT count(*) FROM units WHERE script_terms != ''").fetchone()[0] == 0
    assert texts(backend, "session") == [] and texts(backend, "東京") == []
    assert texts(backend, "Postgres") == ["we run Postgres 16 on the main cluster"]
    assert texts(backend, "port") == ["assistant: Use 4821."]  # its turn terms are still searched
    assert texts(backend, "assistant command") == []  # a role label, a tool call's key
    assert texts(backend, "kestrel") == ['assistant: [toolCall bash] {"command":"grep -rn kestrel"}']
    assert conn.execute("SELECT count(*) FROM units WHERE search_text IS NOT NULL").fetchone()[0] == 2
    assert backend.quick_check() == []
    # New writes go through the new triggers.
    backend.retain_batch("b", [item("the session cookie is HttpOnly", "new", context=SESSION)], operation_id="after")
    assert texts(backend, "session") == ["the session cookie is HttpOnly"]
    assert backend.quick_check() == []
    backend.close()


def test_a_version_5_file_opened_by_many_processes_is_migrated_once(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    build_v5(path)
    backend = migrated_at_once(tmp_path, path, "osprey")
    assert texts(backend, "Friday") == ["the launch is on Friday"]
    backend.close()


def test_the_migration_reads_what_the_index_holds(tmp_path: Path) -> None:
    """The index's content table is the view, so a rebuild gives the same index the triggers did."""
    backend = stored(make(tmp_path))
    backend.close()
    conn = raw(tmp_path / "memory.db")
    conn.execute("INSERT INTO units_fts(units_fts) VALUES ('rebuild')")
    conn.execute("INSERT INTO units_fts(units_fts, rank) VALUES ('integrity-check', 1)")
    assert conn.execute("SELECT count(*) FROM units_fts WHERE units_fts MATCH 'session'").fetchone()[0] == 0
    reopened = make(tmp_path)
    assert texts(reopened, "parser") == [FACTS[2]]
    reopened.close()
