"""A damaged store file: what can be read is salvaged into a new file (ADR 189), on real SQLite
files damaged for real (pages overwritten, a file cut short), never by faking SQLite's answers."""

from __future__ import annotations

import hashlib
import json
import random
import sqlite3
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hindsight_hooks.backends.base import BackendError, MemoryHit, RecallRequest
from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.backends.local_salvage import SalvageError, rebuild_lost_units, salvage, store_problem

WORDS = ["postgres", "kafka", "redis", "queue", "deploy", "staging", "billing", "invoices", "migration", "schema",
         "rollback", "canary"]  # fmt: skip
SESSIONS = 120
TAGGED = [{"tags": ["project:a"], "match": "any_strict"}]


def _store(tmp_path: Path) -> Path:
    """Two banks of short coding sessions, each session one document tagged for its project."""
    db = tmp_path / "memory.db"
    backend = LocalBackend(db)
    rng = random.Random(5)
    for i in range(SESSIONS):
        turns = json.dumps([
            {"role": "user", "content": f"ticket{i}x asks " + " ".join(rng.choice(WORDS) for _ in range(12))},
            {"role": "assistant", "content": f"ticket{i}x answers " + " ".join(rng.choice(WORDS) for _ in range(16))},
        ])  # fmt: skip
        item = {"content": turns, "context": "c", "document_id": f"s{i}", "tags": ["project:a"],
                "metadata": {"retain_source": "auto"}, "update_mode": "replace"}  # fmt: skip
        backend.retain_batch("bank-a" if i % 2 else "bank-b", [item], operation_id=f"op{i}")
    backend.close()  # the last connection folds the WAL into the file
    assert not db.with_name(db.name + "-wal").exists() or db.with_name(db.name + "-wal").stat().st_size == 0
    return db


def _page_size(db: Path) -> int:
    return int.from_bytes(db.read_bytes()[16:18], "big")


def _root_pages(db: Path) -> dict[str, int]:
    with sqlite3.connect(db) as conn:
        return {str(n): int(p) for n, p in conn.execute("SELECT name, rootpage FROM sqlite_master WHERE rootpage > 0")}


def _overwrite(db: Path, pages: list[int], seed: int = 1) -> None:
    """Overwrite whole pages (1-based, as SQLite numbers them) with random bytes."""
    size, rng = _page_size(db), random.Random(seed)
    data = bytearray(db.read_bytes())
    for page in pages:
        data[(page - 1) * size : page * size] = rng.randbytes(size)
    db.write_bytes(bytes(data))


def _ids(db: Path) -> set[str]:
    with sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True) as conn:
        return {str(r[0]) for r in conn.execute("SELECT id FROM units")}


def _session_of(hits: list[MemoryHit]) -> list[str]:
    """The first two hits' opening words: a session's two turns, found by its ticket word."""
    return sorted((" ".join(h.text.split()[:3]) for h in hits[:2]), key=lambda t: not t.startswith("user"))


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_healthy_store_has_no_problem(tmp_path: Path) -> None:
    db = _store(tmp_path)
    before = _digest(db)
    assert store_problem(db) is None
    assert _digest(db) == before


def test_pages_overwritten_with_garbage_lose_only_what_was_on_them(tmp_path: Path) -> None:
    db = _store(tmp_path)
    original = _ids(db)
    pages = len(db.read_bytes()) // _page_size(db)
    _overwrite(db, random.Random(7).sample(range(30, pages + 1), 6))
    damaged = _digest(db)
    assert store_problem(db) is not None

    report = salvage(db, tmp_path / "fresh.db")

    fresh = tmp_path / "fresh.db"
    assert _digest(db) == damaged  # the damaged file is only read
    assert store_problem(fresh) is None
    assert oct(fresh.stat().st_mode & 0o777) == "0o600"
    salvaged = _ids(fresh)
    assert salvaged <= original  # nothing made up
    assert len(salvaged) >= len(original) // 2
    assert report.rows("units") == len(salvaged)
    assert report.damaged_regions >= 1
    backend = LocalBackend(fresh)
    try:
        for bank in ("bank-a", "bank-b"):
            hits = backend.recall(bank, RecallRequest(query="postgres rollback", tag_groups=TAGGED)).hits
            assert hits and all(h.id in original for h in hits)
    finally:
        backend.close()


def test_a_file_cut_short_is_read_up_to_where_it_stops(tmp_path: Path) -> None:
    """A copy cut off mid-page: SQLite refuses even the schema of such a file, so the salvage
    reads a padded copy of it (removed afterwards) and skips the pages that were cut off."""
    db = _store(tmp_path)
    original = _ids(db)
    db.write_bytes(db.read_bytes()[: int(len(db.read_bytes()) * 0.6) + 123])
    with pytest.raises(BackendError, match="malformed"):
        LocalBackend(db).recall("bank-a", RecallRequest(query="postgres"))
    cut = _digest(db)

    report = salvage(db, tmp_path / "fresh.db")

    assert _digest(db) == cut
    assert sorted(p.name for p in tmp_path.iterdir() if "read-copy" in p.name) == []
    salvaged = _ids(tmp_path / "fresh.db")
    assert 0 < len(salvaged) < len(original) and salvaged <= original
    assert report.damaged_regions >= 1
    assert store_problem(tmp_path / "fresh.db") is None


def test_a_file_cut_short_keeps_the_commits_still_in_its_wal(tmp_path: Path) -> None:
    """A copy of a live store: the newest session is only in the WAL beside the cut file. With a
    WAL, SQLite takes the file's length from it and reads the schema without a padded copy."""
    db = _store(tmp_path)
    holder = sqlite3.connect(db)  # another process's connection: closing the store folds nothing back
    holder.execute("SELECT count(*) FROM banks").fetchone()  # it has the WAL open from here on
    try:
        backend = LocalBackend(db)
        turns = json.dumps([{"role": "user", "content": "ticket999x the newest session decided on canary deploys"}])
        backend.retain_batch("bank-a", [{"content": turns, "context": "c", "document_id": "s999", "tags": ["project:a"],
                                         "metadata": {"retain_source": "auto"}}], operation_id="op999")  # fmt: skip
        backend.close()
        copied = tmp_path / "copy"
        copied.mkdir()
        for suffix in ("", "-wal"):
            (copied / f"memory.db{suffix}").write_bytes(db.with_name(db.name + suffix).read_bytes())
    finally:
        holder.close()
    cut = copied / "memory.db"
    assert (copied / "memory.db-wal").stat().st_size > 0
    cut.write_bytes(cut.read_bytes()[: int(len(cut.read_bytes()) * 0.6) + 123])

    salvage(cut, copied / "fresh.db")

    backend = LocalBackend(copied / "fresh.db")
    try:
        hits = backend.recall("bank-a", RecallRequest(query="ticket999x", tag_groups=TAGGED)).hits
        assert [h.text for h in hits] == ["user: ticket999x the newest session decided on canary deploys"]
    finally:
        backend.close()


def test_lost_bank_and_document_rows_are_mended_from_the_units(tmp_path: Path) -> None:
    db = _store(tmp_path)
    roots = _root_pages(db)
    _overwrite(db, [roots["banks"], roots["documents"]])

    report = salvage(db, tmp_path / "fresh.db")

    assert report.rows("banks") == 0 and report.banks_mended == 2
    assert report.rows("documents") == 0 and report.documents_mended == SESSIONS
    assert report.units_untagged == 0  # their tags rows were readable
    backend = LocalBackend(tmp_path / "fresh.db")
    try:
        hits = backend.recall("bank-a", RecallRequest(query="ticket7x answers", tag_groups=TAGGED)).hits
        assert _session_of(hits) == ["user: ticket7x asks", "assistant: ticket7x answers"]
    finally:
        backend.close()


def test_lost_tags_come_back_from_their_document(tmp_path: Path) -> None:
    """A project's recall filters by tags: units that lost theirs would never be found again."""
    db = _store(tmp_path)
    units = len(_ids(db))
    roots = _root_pages(db)
    _overwrite(db, [roots["unit_tags"]])

    report = salvage(db, tmp_path / "fresh.db")

    assert report.rows("unit_tags") == 0 and report.tags_mended == units
    backend = LocalBackend(tmp_path / "fresh.db")
    try:
        hits = backend.recall("bank-b", RecallRequest(query="ticket8x asks", tag_groups=TAGGED)).hits
        assert hits[0].text.startswith("user: ticket8x asks")
    finally:
        backend.close()


def test_documents_that_lost_every_unit_are_retained_again_from_their_text(tmp_path: Path) -> None:
    db = _store(tmp_path)
    roots = _root_pages(db)
    _overwrite(db, [roots["units"]])
    report = salvage(db, tmp_path / "fresh.db")
    assert report.rows("units") == 0 and report.rows("documents") == SESSIONS

    backend = LocalBackend(tmp_path / "fresh.db")
    try:
        assert rebuild_lost_units(backend, "t") == SESSIONS
        hits = backend.recall("bank-a", RecallRequest(query="ticket9x answers", tag_groups=TAGGED)).hits
        assert _session_of(hits) == ["user: ticket9x asks", "assistant: ticket9x answers"]
        assert rebuild_lost_units(backend, "t2") == 0  # nothing is lost any more
    finally:
        backend.close()
    with sqlite3.connect(tmp_path / "fresh.db") as conn:  # the sessions' two turns each, as first stored
        assert conn.execute("SELECT count(*) FROM units").fetchone()[0] == 2 * SESSIONS


def test_a_file_with_nothing_readable_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    db.write_bytes(random.Random(3).randbytes(40_000))
    with pytest.raises(SalvageError, match="cannot be read"):
        salvage(db, tmp_path / "fresh.db")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memory.db"]


def test_a_file_whose_schema_page_is_gone_is_refused(tmp_path: Path) -> None:
    db = _store(tmp_path)
    _overwrite(db, [1])
    with pytest.raises(SalvageError):
        salvage(db, tmp_path / "fresh.db")
    assert not (tmp_path / "fresh.db").exists()


@dataclass(frozen=True)
class Stored:
    """One store's bytes and unit ids (no repr: a failing example prints its arguments)."""

    data: bytes = field(repr=False)
    ids: frozenset[str] = field(repr=False)


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Stored:
    """Built once: each example damages its own copy."""
    db = _store(tmp_path_factory.mktemp("stored"))
    return Stored(db.read_bytes(), frozenset(_ids(db)))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    pages=st.lists(st.integers(min_value=2, max_value=400), min_size=1, max_size=12, unique=True),
    fill=st.sampled_from(["random", "zeros", "ones"]),
    cut=st.one_of(st.none(), st.floats(min_value=0.05, max_value=0.99)),
)
def test_any_damage_salvages_only_real_rows_into_a_sound_file(
    tmp_path: Path, stored: Stored, pages: list[int], fill: str, cut: float | None
) -> None:
    """Whatever pages are damaged and wherever the file is cut: the salvage ends, or refuses with
    a ``SalvageError``; what it writes passes SQLite's check, opens as a store, and holds only
    memories that were there."""
    data, original = stored.data, stored.ids
    size = int.from_bytes(data[16:18], "big")
    damaged = bytearray(data)
    rng = random.Random(sum(pages))
    for page in (p for p in pages if p * size <= len(damaged)):
        block = {"random": rng.randbytes(size), "zeros": bytes(size), "ones": b"\xff" * size}[fill]
        damaged[(page - 1) * size : page * size] = block
    if cut is not None:
        damaged = damaged[: int(len(damaged) * cut)]
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    db = folder / "memory.db"
    db.write_bytes(bytes(damaged))
    try:
        salvage(db, folder / "fresh.db")
    except SalvageError:
        assert not (folder / "fresh.db").exists()
        return
    assert db.read_bytes() == bytes(damaged)
    assert store_problem(folder / "fresh.db") is None
    assert _ids(folder / "fresh.db") <= original
    LocalBackend(folder / "fresh.db").close()  # it opens as a store


def test_a_store_from_a_newer_version_is_refused_as_it_is(tmp_path: Path) -> None:
    db = _store(tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA user_version = 99")
    with pytest.raises(SalvageError, match="newer than this hindsight-hooks"):
        salvage(db, tmp_path / "fresh.db")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("fresh")) == []
