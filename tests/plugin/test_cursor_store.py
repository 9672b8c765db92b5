"""The persistent cursor store (docs/retain.md#cursor Persistence/Reading): real files, real child processes."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from hindsight_hooks.retain.cursor import (
    MAX_SESSIONS,
    CursorCorruptError,
    CursorLockTimeout,
    CursorState,
    CursorStore,
    FingerprintMemo,
    LegacyCursor,
    build_cursor,
    chain,
    filter_new,
    fingerprint,
    message_id,
    retained_through_index,
)
from hindsight_hooks.timefmt import iso_from_ms as iso_ms

T0 = 1_700_000_000_000
SRC = str(Path(__file__).resolve().parents[2] / "src")


def msg(i: int) -> dict[str, Any]:
    return {
        "role": "user" if i % 2 == 0 else "assistant",
        "content": f"message {i}",
        "timestamp": T0 + i,
        "id": f"m{i}",
    }


def transcript(n: int, start: int = 0) -> list[dict[str, Any]]:
    return [msg(i) for i in range(start, start + n)]


def agent_end(store: CursorStore, sid: str, msgs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """docs/retain.md#order steps 4, 5 and 8 (enqueue assumed to succeed); returns the retained delta."""
    memo = FingerprintMemo()
    delta = [msgs[i] for i in filter_new(msgs, store.get(sid), memo=memo)]
    through = retained_through_index(msgs, delta, memo=memo)
    store.advance(sid, msgs, through if through >= 0 else len(msgs) - 1, memo=memo)
    return delta


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / ".hindsight" / "retain-cursors.json"


def write_json(path: Path, doc: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")


# ----------------------------------------------------------------------------- basics


def test_round_trip_and_restart(store_path: Path) -> None:
    store = CursorStore(store_path, clock=lambda: T0)
    assert store.get("s1") is None and dict(store.read().sessions) == {}
    msgs = transcript(5)
    assert agent_end(store, "s1", msgs) == msgs
    assert agent_end(store, "s1", msgs) == []
    restarted = CursorStore(store_path)  # a new object on the same file = a restart
    got = restarted.get("s1")
    assert got == build_cursor(msgs, 4, updated_at=iso_ms(T0))
    longer = msgs + transcript(2, start=5)
    assert agent_end(restarted, "s1", longer) == longer[5:]


def test_advance_no_op_writes_nothing(store_path: Path) -> None:
    store = CursorStore(store_path)
    store.advance("s", transcript(2), 2)
    store.advance("s", transcript(2), -1)
    assert not store_path.exists() and not store_path.parent.exists()


def test_files_are_private_and_canonical(store_path: Path) -> None:
    store = CursorStore(store_path, clock=lambda: T0)
    store.advance("s1", transcript(3), 2)
    assert stat.S_IMODE(store_path.stat().st_mode) == 0o600
    assert stat.S_IMODE(store_path.parent.stat().st_mode) == 0o700
    lock = store_path.with_name("retain-cursors.json.lock")
    assert lock.exists() and stat.S_IMODE(lock.stat().st_mode) & 0o077 == 0
    data = store_path.read_bytes()
    doc = json.loads(data)
    assert data == json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()
    assert list(doc) == ["version", "sessions"] and doc["version"] == 3
    entry = doc["sessions"]["s1"]
    assert list(entry) == [
        "index",
        "chain_hash",
        "id_chain_hash",
        "tail_start",
        "message_ids",
        "fingerprints",
        "updated_at",
    ]
    assert entry["updated_at"] == "2023-11-14T22:13:20.000Z"
    # Atomic writes leave no temp file behind.
    assert sorted(p.name for p in store_path.parent.iterdir()) == ["retain-cursors.json", "retain-cursors.json.lock"]


def test_tail_is_bounded_to_200_messages(store_path: Path) -> None:
    store = CursorStore(store_path)
    store.advance("s", transcript(1000), 999)
    entry = json.loads(store_path.read_bytes())["sessions"]["s"]
    assert entry["tail_start"] == 800 and len(entry["fingerprints"]) == len(entry["message_ids"]) == 200


# ----------------------------------------------------------------------------- reading table


@pytest.mark.parametrize("doc", [[], [1, 2, 3], "text", 5, None, {}, {"version": 3}, {"version": 3, "sessions": ["x"]}])
def test_json_of_the_wrong_shape_is_corrupt_not_an_empty_store(store_path: Path, doc: Any) -> None:
    """Nothing we write looks like this: reading it as empty would re-retain every session (ADR-066)."""
    write_json(store_path, doc)
    store = CursorStore(store_path)
    with pytest.raises(CursorCorruptError, match="not a cursor store"):
        store.read()
    with pytest.raises(CursorCorruptError):
        store.advance("s", transcript(2), 1)
    assert json.loads(store_path.read_bytes()) == doc, "never overwritten"


def test_recovery_moves_the_store_aside_and_marks_the_fresh_one(store_path: Path) -> None:
    store = CursorStore(store_path, clock=lambda: 1234)
    write_json(store_path, [1, 2, 3])
    moved = store.recover_from_corrupt()
    assert moved is not None
    target, reason = moved
    assert target == store_path.with_name("retain-cursors.json.corrupt-1234") and "JSON array" in reason
    assert json.loads(target.read_bytes()) == [1, 2, 3]
    assert store.recover_from_corrupt() is None, "a readable store is left alone"
    snapshot = store.read()
    assert dict(snapshot.sessions) == {} and snapshot.recovered_from == target.name
    store.advance("s", transcript(2), 1)  # the mark survives later writes
    assert store.read().recovered_from == target.name and stat.S_IMODE(store_path.stat().st_mode) == 0o600
    store_path.write_bytes(b"{again")  # a second loss in the same millisecond keeps both files
    second = store.recover_from_corrupt()
    assert second is not None and second[0].name == "retain-cursors.json.corrupt-1234-1"


def test_a_store_moved_aside_by_someone_else_still_counts_as_recovered(store_path: Path) -> None:
    write_json(store_path, "x")
    store_path.rename(store_path.with_name("retain-cursors.json.corrupt-99"))  # /hindsight:doctor --fix
    assert CursorStore(store_path).read().recovered_from == "retain-cursors.json.corrupt-99"
    assert CursorStore(store_path.with_name("other.json")).read().recovered_from is None


@pytest.mark.parametrize(
    "data",
    [b'{"version":3,"sessions":{"s":{"index":', b"\xff\xfe not utf-8", b'{"version": 9, "sessions": {}}'],
)
def test_corrupt_store(store_path: Path, data: bytes) -> None:
    secret = b"sk-live-SECRET-1234567890"
    store_path.parent.mkdir(parents=True)
    store_path.write_bytes(data + secret)
    store = CursorStore(store_path)
    with pytest.raises(CursorCorruptError) as info:
        store.read()
    assert str(store_path) in str(info.value) and "SECRET" not in str(info.value)
    assert info.value.path == store_path
    with pytest.raises(CursorCorruptError):
        store.get("s")
    # An advance never overwrites what it cannot read.
    with pytest.raises(CursorCorruptError):
        store.advance("s", transcript(2), 1)
    assert store_path.read_bytes() == data + secret


def test_future_version_is_corrupt_not_overwritten(store_path: Path) -> None:
    write_json(store_path, {"version": 4, "sessions": {}})
    with pytest.raises(CursorCorruptError, match="unsupported version"):
        CursorStore(store_path).get("s")


def test_quarantine_moves_a_corrupt_store_aside(store_path: Path) -> None:
    store = CursorStore(store_path, clock=lambda: 1234)
    store.advance("s", transcript(2), 1)
    assert store.quarantine_corrupt() is None  # a readable store is left alone
    store_path.write_bytes(b"{broken")
    moved = store.quarantine_corrupt()
    assert moved == store_path.with_name("retain-cursors.json.corrupt-1234")
    assert moved.read_bytes() == b"{broken" and not store_path.exists()
    assert agent_end(store, "s", transcript(2)) == transcript(2)


def test_orjson_refusals_still_parse(store_path: Path) -> None:
    # An escaped lone surrogate is valid JSON for json.loads, not for orjson.
    msgs = [{"role": "user", "content": "x", "id": "\ud800"}]
    store = CursorStore(store_path)
    store.advance("s", msgs, 0)
    assert agent_end(CursorStore(store_path), "s", msgs) == []


def test_invalid_v3_entries_are_dropped_with_a_warning(store_path: Path) -> None:
    good = build_cursor(transcript(3), 2, updated_at=iso_ms(T0)).to_json()
    bad = {
        "neg": {**good, "index": -1},
        "bool": {**good, "index": True},
        "tail": {**good, "tail_start": 1},
        "arrays": {**good, "fingerprints": good["fingerprints"][:2]},
        "types": {**good, "message_ids": [1, 2, 3]},
        "hash": {**good, "chain_hash": None},
        "when": {**good, "updated_at": 5},
        "shape": {"something": "else"},
        "scalar": 42,
        "legacy": {"legacy_fingerprints": "nope"},
    }
    write_json(store_path, {"version": 3, "sessions": {"good": good, **bad}})
    store = CursorStore(store_path)
    snapshot = store.read()
    assert list(snapshot.sessions) == ["good"]
    assert len(snapshot.warnings) == len(bad)
    for sid in bad:
        assert any(repr(sid) in w for w in snapshot.warnings)
    store.read()
    assert store.warnings == list(snapshot.warnings)  # collected once, not per read
    store.advance("other", transcript(1), 0)
    assert set(json.loads(store_path.read_bytes())["sessions"]) == {"good", "other"}


def v2_entry(msgs: list[dict[str, Any]]) -> dict[str, Any]:
    """A v2 cursor as an older version wrote it: full arrays, no tail_start, no updated_at."""
    fps, ids = [fingerprint(m) for m in msgs], [message_id(m) for m in msgs]
    return {
        "index": len(msgs) - 1,
        "chain_hash": chain(fps, len(fps) - 1),
        "id_chain_hash": chain(ids, len(ids) - 1),
        "message_ids": ids,
        "fingerprints": fps,
    }


def test_v2_entries_migrate_without_a_burst(store_path: Path) -> None:
    msgs = transcript(303)
    write_json(store_path, {"version": 2, "sessions": {"s": v2_entry(msgs[:300]), "small": v2_entry(msgs[:5])}})
    store = CursorStore(store_path)
    got = store.get("s")
    assert isinstance(got, CursorState)
    assert got.tail_start == 100 and got.fingerprints == tuple(fingerprint(m) for m in msgs[100:300])
    assert got == build_cursor(msgs, 299)
    small = store.get("small")
    assert isinstance(small, CursorState) and small.tail_start == 0 and len(small.message_ids) == 5
    assert agent_end(store, "s", msgs) == msgs[300:]  # no burst
    doc = json.loads(store_path.read_bytes())
    assert doc["version"] == 3 and doc["sessions"]["s"]["tail_start"] == 103
    assert doc["sessions"]["small"]["tail_start"] == 0


def test_v2_entry_with_short_arrays_keeps_a_shorter_tail(store_path: Path) -> None:
    msgs = transcript(50)
    entry = v2_entry(msgs)
    entry["message_ids"], entry["fingerprints"] = entry["message_ids"][-10:], entry["fingerprints"][-10:]
    write_json(store_path, {"version": 2, "sessions": {"s": entry}})
    store = CursorStore(store_path)
    got = store.get("s")
    assert isinstance(got, CursorState) and (got.index, got.tail_start) == (49, 40)
    longer = msgs + transcript(2, start=50)
    assert agent_end(store, "s", longer) == longer[50:]
    rebuilt = store.get("s")
    assert rebuilt == build_cursor(longer, 51, updated_at=rebuilt.updated_at if rebuilt else None)


def test_v1_store_becomes_legacy_without_a_burst(store_path: Path) -> None:
    msgs = transcript(53)
    write_json(store_path, {"sessions": {"s": [fingerprint(m) for m in msgs[:50]], "empty": [], "junk": [1, 2]}})
    store = CursorStore(store_path)
    assert store.get("s") == LegacyCursor(tuple(fingerprint(m) for m in msgs[:50]))
    assert store.get("empty") is None and store.get("junk") is None
    assert agent_end(store, "s", msgs) == msgs[50:]
    doc = json.loads(store_path.read_bytes())
    assert doc["version"] == 3 and doc["sessions"]["s"]["index"] == 52
    assert agent_end(store, "s", msgs) == []


def test_v3_legacy_entries_survive_other_writes(store_path: Path) -> None:
    legacy = {"legacy_fingerprints": [fingerprint(msg(0))]}
    write_json(store_path, {"version": 3, "sessions": {"old": legacy}})
    store = CursorStore(store_path)
    store.advance("new", transcript(1), 0)
    assert json.loads(store_path.read_bytes())["sessions"]["old"] == legacy


# ----------------------------------------------------------------------------- cap


def test_at_most_500_sessions_oldest_dropped(store_path: Path) -> None:
    entry = build_cursor(transcript(1), 0).to_json()
    sessions = {f"s{i:03d}": {**entry, "updated_at": iso_ms(T0 + 1000 * i)} for i in range(MAX_SESSIONS)}
    sessions["s007"]["updated_at"] = iso_ms(T0 - 5)  # the oldest, though not first in the file
    del sessions["s003"]["updated_at"]  # no timestamp counts as oldest of all
    write_json(store_path, {"version": 3, "sessions": sessions})
    store = CursorStore(store_path, clock=lambda: T0 + 10_000_000)
    store.advance("fresh", transcript(2), 1)
    kept = json.loads(store_path.read_bytes())["sessions"]
    assert len(kept) == MAX_SESSIONS and "fresh" in kept and "s003" not in kept and "s007" in kept
    store.advance("fresh2", transcript(2), 1)
    kept = json.loads(store_path.read_bytes())["sessions"]
    assert len(kept) == MAX_SESSIONS and "s007" not in kept and "s000" in kept


def test_cap_never_drops_the_session_being_written(store_path: Path) -> None:
    store = CursorStore(store_path, clock=lambda: T0)  # every write has the same timestamp
    entry = build_cursor(transcript(1), 0).to_json()
    write_json(
        store_path,
        {"version": 3, "sessions": {f"s{i}": {**entry, "updated_at": iso_ms(T0 + 1)} for i in range(MAX_SESSIONS)}},
    )
    store.advance("late", transcript(1), 0)  # older than every other entry, still kept
    kept = json.loads(store_path.read_bytes())["sessions"]
    assert len(kept) == MAX_SESSIONS and "late" in kept


# ----------------------------------------------------------------------------- real processes

CHILD_PRELUDE = f"""
import sys, time
sys.path.insert(0, {SRC!r})
from pathlib import Path
from hindsight_hooks.retain.cursor import CursorStore
T0 = {T0}
def transcript(n):
    return [{{"role": "user", "content": f"message {{i}}", "timestamp": T0 + i, "id": f"m{{i}}"}} for i in range(n)]
"""


def run_child(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD_PRELUDE + textwrap.dedent(code), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_two_processes_advancing_different_sessions_lose_nothing(store_path: Path, tmp_path: Path) -> None:
    go = tmp_path / "go"
    code = """
        path, sid, n, go = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
        store = CursorStore(path)
        print("ready", flush=True)
        while not go.exists():
            time.sleep(0.001)
        for k in range(1, n + 1):
            store.advance(sid, transcript(k), k - 1)
        print("done")
    """
    rounds = 60
    children = [run_child(code, str(store_path), sid, str(rounds), str(go)) for sid in ("alpha", "beta")]
    for child in children:  # both imported and waiting: the writes really overlap
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    go.touch()
    for child in children:
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
        assert out.strip() == "done"
    store = CursorStore(store_path)
    for sid in ("alpha", "beta"):
        got = store.get(sid)
        assert isinstance(got, CursorState) and got.index == rounds - 1


def test_lock_timeout_when_another_process_holds_the_lock(store_path: Path) -> None:
    store_path.parent.mkdir(parents=True)
    holder = run_child(
        """
        import filelock
        lock = filelock.FileLock(sys.argv[1])
        with lock:
            print("held", flush=True)
            time.sleep(30)
        """,
        str(store_path.with_name("retain-cursors.json.lock")),
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        store = CursorStore(store_path, lock_timeout_ms=150)
        started = time.monotonic()
        with pytest.raises(CursorLockTimeout, match=r"retain-cursors\.json\.lock"):
            store.advance("s", transcript(1), 0)
        assert time.monotonic() - started < 5
        assert not store_path.exists()
    finally:
        holder.kill()
        holder.communicate()
    CursorStore(store_path).advance("s", transcript(1), 0)  # the OS lock died with its holder


def test_kill_9_mid_write_never_leaves_a_torn_store(store_path: Path) -> None:
    """A writer killed at random moments: the store always parses, and every advance the child
    reported as finished is still there (atomic replace + fsync before the report)."""
    code = """
        path, start = Path(sys.argv[1]), int(sys.argv[2])
        store = CursorStore(path)
        k = start
        while True:
            k += 1
            store.advance("s", transcript(k), k - 1)
            print(k, flush=True)
    """
    reached = 0
    for kill in range(6):
        child = run_child(code, str(store_path), str(reached))
        assert child.stdout is not None
        first = child.stdout.readline()  # the child is writing (start-up time is not counted)
        time.sleep(0.02 + 0.03 * kill)
        child.send_signal(signal.SIGKILL)
        out, err = child.communicate()
        reported = [int(line) for line in (first + out).split()]
        assert reported, err
        got = CursorStore(store_path).get("s")  # never CursorCorruptError
        assert isinstance(got, CursorState) and got.index >= reported[-1] - 1
        reached = got.index + 1
    assert reached > 6
    leftovers = [p for p in store_path.parent.iterdir() if p.name.endswith(".tmp")]
    assert len(leftovers) <= 6  # at most one per kill; the store itself is never torn
    for tmp in leftovers:
        assert os.stat(tmp).st_mode & 0o077 == 0
