"""The embedded store's writes and file handling on real SQLite files (docs/backends.md#embedded-store)."""

from __future__ import annotations

import json
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from hindsight_hooks.backends.base import BackendError, BankSpec, MemoryBackend, RecallRequest
from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.backends.local_schema import SCHEMA_VERSION
from hindsight_hooks.backends.local_write import document_text, hash16
from tests.backends.test_local_support import (
    T0_ISO,
    Clock,
    assert_refused_untouched,
    file_digest,
    item,
    make,
    messages_json,
    raw,
)


def texts(backend: LocalBackend, bank: str) -> list[str]:
    return sorted(h.text for h in backend.list_units(bank, 1000, 0))


def test_implements_the_protocol(tmp_path: Path) -> None:
    backend = make(tmp_path)
    assert isinstance(backend, MemoryBackend)
    assert backend.name == "local"
    health = backend.health()
    assert health["status"] == "ok" and health["schema_version"] == SCHEMA_VERSION


def test_file_is_private_and_settings_hold(tmp_path: Path) -> None:
    path = tmp_path / "data" / "hh" / "memory.db"
    backend = LocalBackend(path)
    backend.retain_batch("b", [item("hello world", "d1")], operation_id="op")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    for sibling in path.parent.iterdir():  # -wal / -shm hold transcript pages too
        assert stat.S_IMODE(sibling.stat().st_mode) == 0o600, sibling.name
    conn = raw(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert {"banks", "documents", "units", "unit_tags", "units_fts", "operations", "unit_vectors"} <= tables
    assert "unit_tags_by_tag" in tables
    own = backend._conn()
    assert own.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert own.execute("PRAGMA busy_timeout").fetchone()[0] == 5000


def test_ensure_bank_inserts_missions_once(tmp_path: Path) -> None:
    backend = make(tmp_path)
    spec = BankSpec(retain_mission="keep facts", reflect_mission="answer", observations_mission="notice")
    assert backend.ensure_bank("proj", spec) is True
    assert backend.ensure_bank("proj", BankSpec(retain_mission="other")) is False
    row = (
        raw(backend.path)
        .execute("SELECT retain_mission, reflect_mission, observations_mission FROM banks WHERE bank_id='proj'")
        .fetchone()
    )
    assert row == ("keep facts", "answer", "notice")
    assert backend.bank_exists("proj") and not backend.bank_exists("nope")


def test_banks_never_see_each_other(tmp_path: Path) -> None:
    backend = make(tmp_path)
    backend.retain_batch("alpha", [item("the deploy script lives in ops", "d")], operation_id="1")
    backend.retain_batch("beta", [item("the deploy script lives in tools", "d")], operation_id="2")
    hits_a = backend.recall("alpha", RecallRequest(query="deploy script"))
    hits_b = backend.recall("beta", RecallRequest(query="deploy script"))
    assert [h.text for h in hits_a.hits] == ["the deploy script lives in ops"]
    assert [h.text for h in hits_b.hits] == ["the deploy script lives in tools"]
    with pytest.raises(BackendError) as info:
        backend.recall("gamma", RecallRequest(query="deploy script"))
    assert info.value.kind == "not_found"  # as the server's 404: the caller re-ensures the bank
    backend.ensure_bank("gamma", BankSpec())
    assert backend.recall("gamma", RecallRequest(query="deploy script")).hits == []
    unit_id = hits_a.hits[0].id
    assert unit_id is not None
    assert backend.get_unit("beta", unit_id) is None
    assert backend.forget_unit("beta", unit_id) is False
    assert backend.get_unit("alpha", unit_id) is not None


def test_unit_attributes_by_origin(tmp_path: Path) -> None:
    backend = make(tmp_path)
    transcript = messages_json(("user", "remember the staging url"), ("assistant", "noted the staging url"))
    imported = json.dumps({"source": "session-import", "messages": [{"role": "user", "content": "old staging note"}]})
    backend.retain_batch(
        "b",
        [
            item("staging lives at stage.example", "e", source="tool"),
            item("staging via command", "c", source="command"),
            item(transcript, "s", source="auto", mode="append"),
            item(imported, "i", source="import"),
        ],
        operation_id="op",
    )
    by_doc: dict[str | None, set[tuple[str | None, str | None, float | None]]] = {}
    for hit in backend.list_units("b", 100, 0):
        by_doc.setdefault(hit.document_id, set()).add((hit.type, hit.source, hit.importance))
    assert by_doc["e"] == {("world", "tool", 0.75)}
    assert by_doc["c"] == {("world", "tool", 0.75)}
    assert by_doc["s"] == {("experience", "transcript", 0.65)}
    assert by_doc["i"] == {("experience", "import", 0.65)}
    assert texts(backend, "b").count("user: remember the staging url") == 1


def test_unit_ids_follow_the_formula(tmp_path: Path) -> None:
    backend = make(tmp_path)
    out = backend.retain_batch("b", [item("one fact", "doc", timestamp=T0_ISO)], operation_id="op")
    assert out.items_count == 1
    assert out.unit_ids == [hash16("b" + "doc" + "one fact" + T0_ISO + "0")]
    hit = backend.get_unit("b", out.unit_ids[0])
    assert hit is not None and hit.created_at == T0_ISO and hit.document_id == "doc"


def test_replace_deletes_the_documents_units(tmp_path: Path) -> None:
    backend = make(tmp_path)
    backend.retain_batch("b", [item("first version of the note", "doc", tags=["t1"])], operation_id="1")
    backend.retain_batch("b", [item("second version of the note", "doc", tags=["t2"])], operation_id="2")
    assert texts(backend, "b") == ["second version of the note"]
    assert backend.recall("b", RecallRequest(query="first")).hits == []
    conn = raw(backend.path)
    assert document_text(conn, "b", "doc") == "second version of the note"
    assert {r[0] for r in conn.execute("SELECT tag FROM unit_tags")} == {"t2"}


def test_append_rewrites_tags_and_metadata_of_all_units(tmp_path: Path) -> None:
    backend = make(tmp_path)
    first = messages_json(("user", "alpha message"))
    second = messages_json(("user", "beta message"))
    backend.retain_batch(
        "b", [item(first, "s", mode="append", tags=["old"], source="auto", metadata={"k": "1"})], operation_id="1"
    )
    backend.retain_batch(
        "b", [item(second, "s", mode="append", tags=["new", "x"], source="auto", metadata={"k": "2"})], operation_id="2"
    )
    units = backend.list_units("b", 10, 0)
    assert sorted(u.text for u in units) == ["user: alpha message", "user: beta message"]
    assert all(u.tags == ["new", "x"] for u in units)
    conn = raw(backend.path)
    assert {r[0] for r in conn.execute("SELECT metadata_json FROM units")} == {
        json.dumps({"retain_source": "auto", "k": "2"}, separators=(",", ":"))
    }
    assert sorted(r[0] for r in conn.execute("SELECT tag FROM unit_tags")) == ["new", "new", "x", "x"]
    assert document_text(conn, "b", "s") == first + "\n\n" + second
    assert [r[0] for r in conn.execute("SELECT text FROM document_parts ORDER BY seq")] == [first, second]
    scoped = backend.recall("b", RecallRequest(query="alpha", tag_groups=[{"tags": ["new"], "match": "any_strict"}]))
    assert [h.text for h in scoped.hits] == ["user: alpha message"]
    assert backend.recall("b", RecallRequest(query="alpha", tag_groups=[{"tags": ["old"]}])).hits == []


def test_items_of_one_document_in_one_batch_are_all_kept(tmp_path: Path) -> None:
    backend = make(tmp_path)
    backend.retain_batch("b", [item("stale fact", "shared")], operation_id="0")
    backend.retain_batch("b", [item("fact one", "shared"), item("fact two", "shared")], operation_id="1")
    assert texts(backend, "b") == ["fact one", "fact two"]


def test_same_operation_id_is_applied_once(tmp_path: Path) -> None:
    backend = make(tmp_path)
    batch = [item(messages_json(("user", "retry me")), "s", mode="append", source="auto")]
    first = backend.retain_batch("b", batch, operation_id="job-1")
    again = backend.retain_batch("b", batch, operation_id="job-1")
    assert again.items_count == first.items_count == 1
    assert again.unit_ids == first.unit_ids
    assert texts(backend, "b") == ["user: retry me"]
    backend.retain_batch("b", batch, operation_id="job-2")
    assert texts(backend, "b") == ["user: retry me", "user: retry me"]
    reopened = LocalBackend(backend.path)
    assert reopened.retain_batch("b", batch, operation_id="job-1").unit_ids == first.unit_ids
    assert len(texts(reopened, "b")) == 2


def test_invalid_item_rejects_the_whole_batch(tmp_path: Path) -> None:
    backend = make(tmp_path)
    with pytest.raises(BackendError) as info:
        backend.retain_batch("b", [item("fine", "d1"), {"content": 5, "document_id": "d2"}], operation_id="op")
    assert info.value.kind == "permanent" and "item 1" in info.value.detail
    assert texts(backend, "b") == []
    with pytest.raises(BackendError):
        backend.retain_batch("b", [item("fine", "d1", mode="merge")], operation_id="op")
    with pytest.raises(BackendError) as blank:
        backend.retain_batch("b", [item("fine", "d1"), item(" \n\t", "d2")], operation_id="op")
    assert blank.value.kind == "permanent" and "item 1" in blank.value.detail
    with pytest.raises(BackendError):
        backend.retain_batch("b", [], operation_id="op")


def test_constraint_violation_is_permanent_and_rolls_back_the_batch(tmp_path: Path) -> None:
    backend = make(tmp_path)
    backend.ensure_bank("other", BankSpec())
    colliding = hash16("b" + "d2" + "second" + T0_ISO + "0")
    conn = raw(backend.path)
    conn.execute("PRAGMA foreign_keys = OFF")
    conn.execute(
        "INSERT INTO units(rowid, id, bank_id, document_id, seq, content, type, source, importance, created_at) "
        "VALUES (?, ?, 'other', 'x', 0, 'planted', 'world', 'tool', 0.5, ?)",
        ((2 << 40) + 7, colliding, T0_ISO),
    )
    with pytest.raises(BackendError) as info:
        backend.retain_batch(
            "b", [item("first", "d1", timestamp=T0_ISO), item("second", "d2", timestamp=T0_ISO)], operation_id="op"
        )
    assert info.value.kind == "permanent"
    assert "second" not in info.value.detail and "first" not in info.value.detail
    assert conn.execute("SELECT count(*) FROM units WHERE bank_id='b'").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM documents WHERE bank_id='b'").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM operations").fetchone()[0] == 0


def test_locked_database_is_transient_and_nothing_is_lost(tmp_path: Path) -> None:
    backend = make(tmp_path)
    blocker = raw(backend.path)
    blocker.execute("BEGIN IMMEDIATE")
    with pytest.raises(BackendError) as info:
        backend.retain_batch("b", [item("queued fact", "d")], operation_id="op", timeout_s=0.2)
    assert info.value.kind == "transient"
    blocker.execute("ROLLBACK")
    backend.retain_batch("b", [item("queued fact", "d")], operation_id="op", timeout_s=0.2)
    assert texts(backend, "b") == ["queued fact"]


def test_edit_forget_invalidate(tmp_path: Path) -> None:
    clock = Clock()
    backend = make(tmp_path, clock)
    ids = backend.retain_batch(
        "b", [item("the build uses make", "d1"), item("the build uses ninja", "d2")], operation_id="op"
    ).unit_ids
    make_id, ninja_id = ids
    assert backend.update_unit("b", make_id, content="the build uses bazel now", importance=1.7) is True
    updated = backend.get_unit("b", make_id)
    assert updated is not None and updated.text == "the build uses bazel now" and updated.importance == 1.0
    assert [h.id for h in backend.recall("b", RecallRequest(query="bazel")).hits] == [make_id]
    assert backend.recall("b", RecallRequest(query="make")).hits == []
    assert backend.update_unit("b", "missing", importance=0.1) is False
    with pytest.raises(BackendError):
        backend.update_unit("b", make_id)
    with pytest.raises(BackendError):
        backend.update_unit("b", make_id, content="   ")

    assert backend.invalidate_unit("b", ninja_id, replacement_id=make_id) is True
    assert [h.id for h in backend.recall("b", RecallRequest(query="build")).hits] == [make_id]
    row = raw(backend.path).execute("SELECT valid_until, superseded_by FROM units WHERE id=?", (ninja_id,)).fetchone()
    assert row == (T0_ISO, make_id)
    assert [h.id for h in backend.list_units("b", 10, 0)] == [make_id]
    assert {h.id for h in backend.list_units("b", 10, 0, include_invalid=True)} == {make_id, ninja_id}
    assert backend.get_unit("b", ninja_id) is not None

    assert backend.forget_unit("b", make_id) is True
    assert backend.forget_unit("b", make_id) is False
    assert backend.get_unit("b", make_id) is None
    assert backend.recall("b", RecallRequest(query="bazel")).hits == []
    conn = raw(backend.path)
    assert conn.execute("SELECT count(*) FROM unit_tags WHERE unit_id=?", (make_id,)).fetchone()[0] == 0


def test_invalidate_without_replacement_expires_the_unit(tmp_path: Path) -> None:
    backend = make(tmp_path)
    (uid,) = backend.retain_batch("b", [item("temporary flag enabled", "d")], operation_id="op").unit_ids
    assert backend.invalidate_unit("b", uid) is True
    assert backend.recall("b", RecallRequest(query="temporary flag")).hits == []


def test_list_units_pages_and_filters(tmp_path: Path) -> None:
    clock = Clock()
    backend = make(tmp_path, clock)
    for i in range(5):
        clock.now += 10
        tags = ["repo:a"] if i % 2 == 0 else ["repo:b"]
        backend.retain_batch("b", [item(f"fact number {i}", f"d{i}", tags=tags)], operation_id=f"op{i}")
    page1 = backend.list_units("b", 2, 0)
    page2 = backend.list_units("b", 2, 2)
    assert [h.text for h in page1] == ["fact number 4", "fact number 3"]
    assert [h.text for h in page2] == ["fact number 2", "fact number 1"]
    only_a = backend.list_units("b", 10, 0, [{"tags": ["repo:a"], "match": "any_strict"}])
    assert [h.text for h in only_a] == ["fact number 4", "fact number 2", "fact number 0"]
    with pytest.raises(BackendError):
        backend.list_units("b", 10, 0, [{"tags": "repo:a"}])


def test_delete_document(tmp_path: Path) -> None:
    backend = make(tmp_path)
    backend.retain_batch("b", [item("para one\n\n" + "x " * 2500 + "\n\npara three", "big")], operation_id="1")
    backend.retain_batch("b", [item("keep me", "small")], operation_id="2")
    assert backend.delete_document("b", "big") == 3
    assert texts(backend, "b") == ["keep me"]
    assert backend.delete_document("b", "big") == 0
    assert raw(backend.path).execute("SELECT count(*) FROM documents").fetchone()[0] == 1


def test_quick_check_reports_healthy_store(tmp_path: Path) -> None:
    backend = make(tmp_path)
    backend.retain_batch("b", [item("a healthy fact", "d", tags=["t"])], operation_id="1")
    assert backend.quick_check() == []


def test_quick_check_finds_a_broken_fts_index(tmp_path: Path) -> None:
    backend = make(tmp_path)
    backend.retain_batch("b", [item("indexed fact", "d")], operation_id="1")
    conn = raw(backend.path)
    conn.execute("DROP TRIGGER units_fts_update")
    conn.execute("UPDATE units SET content = 'silently changed'")
    problems = backend.quick_check()
    assert problems and "FTS5" in problems[0]


def test_reads_never_write(tmp_path: Path) -> None:
    backend = make(tmp_path)
    backend.retain_batch("b", [item("readonly check fact", "d", tags=["t"])], operation_id="1")
    watcher = raw(backend.path)
    watcher.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before_version = watcher.execute("PRAGMA data_version").fetchone()[0]
    wal = backend.path.with_name(backend.path.name + "-wal")
    before = (file_digest(backend.path), file_digest(wal))
    backend.recall("b", RecallRequest(query="readonly fact", tag_groups=[{"tags": ["t"]}]))
    backend.list_units("b", 10, 0)
    backend.get_unit("b", "x")
    backend.health()
    backend.bank_exists("b")
    assert (file_digest(backend.path), file_digest(wal)) == before
    assert watcher.execute("PRAGMA data_version").fetchone()[0] == before_version


def test_each_thread_gets_its_own_connection(tmp_path: Path) -> None:
    backend = make(tmp_path)
    seen: list[int] = []
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            seen.append(id(backend._conn()))
            for i in range(20):
                backend.retain_batch("b", [item(f"thread {n} fact {i}", f"t{n}-{i}")], operation_id=f"{n}-{i}")
                backend.recall("b", RecallRequest(query=f"thread {n}"))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(set(seen)) == 4
    assert len(texts(backend, "b")) == 80
    backend.close()
    assert len(texts(backend, "b")) == 80  # reopens lazily after close


def test_a_new_thread_takes_over_the_connection_of_one_that_ended(tmp_path: Path) -> None:
    """A host that serves each request on a thread of its own (the warm helper) must not open,
    and leave open, one connection per request; one left inside a transaction is not taken."""
    backend = make(tmp_path)
    backend.retain_batch("b", [item("the billing port is 4821", "d")], operation_id="op")
    seen: list[int] = []
    found: list[list[str]] = []

    def in_thread(work: Callable[[], None]) -> None:
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()

    def request() -> None:
        seen.append(id(backend._conn()))
        found.append([h.text for h in backend.recall("b", RecallRequest(query="billing port")).hits])

    for _ in range(5):
        in_thread(request)
    assert len(set(seen)) == 1
    assert found == [["the billing port is 4821"]] * 5
    in_thread(lambda: backend._conn().execute("BEGIN"))  # ends with its connection in a transaction
    in_thread(request)
    assert len(set(seen)) == 2 and found[-1] == ["the billing port is 4821"]
    backend.close()


# -- files we must not touch -------------------------------------------------------------------------


def test_random_bytes_file_is_refused_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    path.write_bytes(os.urandom(8192))
    assert_refused_untouched(path, "not a SQLite database")


def test_garbage_after_a_sqlite_header_is_refused_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    path.write_bytes(b"SQLite format 3\x00" + os.urandom(8192))
    assert_refused_untouched(path)


def test_newer_schema_version_is_refused_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    backend = LocalBackend(path)
    backend.retain_batch("b", [item("from the future", "d")], operation_id="1")
    backend.close()
    conn = raw(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    assert_refused_untouched(path, "newer")


def test_another_programs_database_is_refused_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    conn = raw(path)
    conn.execute("CREATE TABLE notes(x)")
    conn.close()
    assert_refused_untouched(path, "another program")


def test_existing_empty_file_becomes_a_store(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    path.touch()
    backend = LocalBackend(path)
    backend.retain_batch("b", [item("fresh start", "d")], operation_id="1")
    assert texts(backend, "b") == ["fresh start"]


def test_damaged_data_pages_are_a_clear_permanent_error_and_the_file_is_never_written(tmp_path: Path) -> None:
    """A store whose schema page is intact but whose data pages rotted (disk fault, partial copy):
    opening works, yet every recall and retain fails ``permanent`` naming the file, and nothing is
    written to it — not even the failed batch — so a backup tool or ``.recover`` still sees what
    the disk holds."""
    path = tmp_path / "memory.db"
    backend = LocalBackend(path)
    for n in range(40):
        backend.retain_batch("b", [item(f"fact {n} about kestrels and ospreys " * 20, f"d{n}")], operation_id=str(n))
    backend.close()
    conn = raw(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the store stays in WAL mode, as we always leave it
    conn.close()
    page = 4096
    data = bytearray(path.read_bytes())
    pages = len(data) // page
    assert pages > 20
    for n in range(pages - 12, pages):  # the newest leaf pages; page 1 (schema) stays intact
        data[n * page : (n + 1) * page] = os.urandom(page)
    path.write_bytes(bytes(data))
    before = file_digest(path)
    backend = LocalBackend(path)
    try:
        with pytest.raises(BackendError) as info:
            backend.recall("b", RecallRequest(query="kestrels ospreys"))
        assert info.value.kind == "permanent"
        assert str(path) in str(info.value) and "malformed" in str(info.value) and "untouched" in str(info.value)
        with pytest.raises(BackendError) as info:
            backend.retain_batch("b", [item("a new fact", "fresh")], operation_id="after-damage")
        assert info.value.kind == "permanent" and "untouched" in str(info.value)
    finally:
        backend.close()
    assert file_digest(path) == before
    wal = path.with_name(path.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0  # the failed batch left no frame to checkpoint later
