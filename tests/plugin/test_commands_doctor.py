"""``/hindsight:doctor`` through ``Host.command`` (docs/commands.md "Doctor checks", "--fix").

One ok/warn/fail line per check; every non-ok line says what to do; no content ever; ``--fix``
repairs what is safe and reports each action, moving corrupt files aside instead of deleting.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

from .cmdkit import Kit, closed_port_url, hs_kit_fixture, kit_fixture, local_kit_fixture, sid_of  # noqa: F401  (fixtures)

SECRET_CONTENT = "Doctor must never print this memory about the zebra budget."


def lines_of(text: str) -> dict[str, str]:
    """``name -> whole line`` for the check lines (``fixed:`` lines are left out)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith(("ok ", "warn ", "fail ")):
            name = line.split(None, 1)[1].split(":", 1)[0]
            out.setdefault(name, line)
    return out


def test_a_healthy_project_is_all_ok(kit: Kit) -> None:
    host = kit.host()
    stored = host.call_tool("hindsight_retain", {"items": [{"content": SECRET_CONTENT}]})  # async on Hindsight
    assert not stored.is_error
    if kit.backend == "hindsight":
        status = host.command("/hindsight").data
        assert status is not None
        (op,) = status["last_receipt"]["operation_ids"]
        assert kit.store.wait_operation(kit.project_bank, op, timeout_s=30, poll_s=0.05)["status"] == "completed"
    r = host.command("/hindsight:doctor")
    assert r.level == "info", r.text
    checks = lines_of(r.text)
    assert all(line.startswith("ok ") for line in checks.values()), r.text
    assert " — " not in r.text  # ok lines carry no advice
    expected = {"config", "state folder", "queue", "temp files", "cursor", "session meta", "import manifest"}
    expected |= {"import checkpoint"}
    if kit.backend == "hindsight":
        expected |= {"server", "server version", f"bank {kit.project_bank}", f"bank {kit.user_bank}", "writes"}
        assert "api 1.1.0; features: " in checks["server version"]
        assert checks["writes"] == "ok   writes: 1 recent async operation(s) verified"
        assert "health healthy" in checks["server"]
    else:
        expected |= {"local store", "recall by meaning"}
        assert checks["local store"] == "ok   local store: quick_check ok, FTS5 ok"
        assert checks["recall by meaning"].startswith("ok   recall by meaning: on (wordllama-")
    assert set(checks) == expected
    assert "lock free" in checks["queue"]
    assert "zebra" not in r.text
    j = host.command("/hindsight:doctor --json")
    data = json.loads(j.text)
    assert data == j.data and data["status"] == "ok" and data["actions"] == []
    assert all(set(c) == {"name", "status", "detail", "fix"} for c in data["checks"])
    assert "zebra" not in j.text
    u = host.command("/hindsight:doctor --all")
    assert (u.level, u.text) == ("warning", "usage: /hindsight:doctor [--json] [--fix]")


def test_server_down_is_a_failure_with_what_to_do(hs_kit: Kit) -> None:
    hs_kit.configure(sections={"hindsight": {"timeout_ms": 1000}})
    hs_kit.use_url(closed_port_url())
    r = hs_kit.host().command("/hindsight:doctor")
    assert r.level == "error"
    server = lines_of(r.text)["server"]
    assert server.startswith("fail server: ") and server.endswith(" — start the server or fix hindsight.base_url")


def test_fix_repairs_modes_gitignore_and_moves_corrupt_files_aside(kit: Kit) -> None:
    host = kit.host()
    host.command("/hindsight:tag add x")  # writes this session's meta file
    state = kit.state
    meta = state / "session-meta" / f"{sid_of(kit)}.json"
    cursor = state / "retain-cursors.json"
    manifest = state / "import-manifest.json"
    meta.write_text('{"retained": true, "mode": "bogus"}', encoding="utf-8")
    cursor.write_text("{truncated", encoding="utf-8")
    manifest.write_text("[]", encoding="utf-8")
    os.chmod(state, 0o755)
    os.chmod(cursor, 0o644)
    (state / ".gitignore").unlink()

    r = host.command("/hindsight:doctor")
    assert r.level == "error"
    checks = lines_of(r.text)
    folder = checks["state folder"]
    assert folder.startswith("warn state folder: folder mode 0o755") and "no .gitignore" in folder
    assert folder.endswith(" — run /hindsight:doctor --fix")
    assert checks["cursor"].startswith(f"fail cursor: {cursor} is corrupt") and "--fix" in checks["cursor"]
    assert checks["session meta"].startswith(f"fail session meta: {meta.name} fails closed (mode is missing")
    assert "/hindsight:mode normal" in checks["session meta"]
    assert checks["import manifest"].startswith(f"fail import manifest: {manifest} is corrupt (not a JSON object)")
    assert "bogus" not in r.text and "truncated" not in r.text

    fixed = host.command("/hindsight:doctor --fix")
    actions = [line for line in fixed.text.splitlines() if line.startswith("fixed: ")]
    assert f"fixed: chmod 700 {state}" in actions
    assert f"fixed: chmod 600 {cursor}" in actions
    assert any(a.startswith(f"fixed: created {state / '.gitignore'}") for a in actions), actions
    for path in (cursor, meta, manifest):
        assert any(a.startswith(f"fixed: moved {path} to {path}.corrupt-") for a in actions), (path, actions)
        assert not path.exists() and len(list(path.parent.glob(path.name + ".corrupt-*"))) == 1
    assert fixed.data is not None and len(fixed.data["actions"]) == len(actions)
    assert stat.S_IMODE(state.stat().st_mode) == 0o700 and (state / ".gitignore").exists()
    again = host.command("/hindsight:doctor")
    assert again.level == "info", again.text
    assert host.command("/hindsight:session").text.startswith("mode=normal recall=on retain=on")


def test_config_warnings_and_an_unusable_store(local_kit: Kit) -> None:
    local_kit.configure(sections={"queue": {"max_attempts": "five"}})
    local_kit.store.close()
    for suffix in ("", "-wal", "-shm"):
        local_kit.db.with_name(local_kit.db.name + suffix).unlink(missing_ok=True)
    local_kit.db.mkdir()
    r = local_kit.host().command("/hindsight:doctor")
    assert r.level == "error"
    checks = lines_of(r.text)
    assert checks["config"].startswith("warn config: 1 warning(s): ") and "queue.max_attempts" in checks["config"]
    assert checks["config"].endswith(" — correct or remove the named keys")
    assert checks["backend"].startswith("fail backend: ")
    assert checks["backend"].endswith(" — check the config and the store path")


_HOLDER = """
import sys, time
from pathlib import Path
from hindsight_hooks.config_model import QueueConfig
from hindsight_hooks.queue import RetainQueue
queue = RetainQueue(Path(sys.argv[1]), QueueConfig())
with queue.lock.hold():
    print("held", flush=True)
    sys.stdin.read()
"""


def test_doctor_names_the_queue_lock_holder(kit: Kit) -> None:
    host = kit.host()
    assert "lock free" in lines_of(host.command("/hindsight:doctor").text)["queue"]
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(kit.queue_file)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        queue = lines_of(host.command("/hindsight:doctor").text)["queue"]
        assert f"lock held by pid {proc.pid} on {socket.gethostname()} since 20" in queue
    finally:
        proc.kill()
        proc.wait(timeout=10)
    assert "lock free" in lines_of(host.command("/hindsight:doctor").text)["queue"]


def test_a_write_the_server_no_longer_knows_is_not_called_verified(hs_kit: Kit) -> None:
    """A receipt proves acceptance only: an operation the server reports ``not_found`` did not land.

    The bank is deleted after the write completed (a server reset looks the same): doctor must
    name the operation as lost instead of counting it as verified.
    """
    from hindsight_hooks.backends.base import BankSpec

    host = hs_kit.host()
    assert not host.call_tool("hindsight_retain", {"items": [{"content": SECRET_CONTENT}], "async": True}).is_error
    status = host.command("/hindsight").data
    assert status is not None
    (op,) = status["last_receipt"]["operation_ids"]
    assert hs_kit.store.wait_operation(hs_kit.project_bank, op, timeout_s=30, poll_s=0.05)["status"] == "completed"
    hs_kit.store.delete_bank(hs_kit.project_bank, timeout_s=30)
    spec = BankSpec(retain_extraction_mode="verbatim", enable_observations=False)
    assert hs_kit.store.ensure_bank(hs_kit.project_bank, spec, timeout_s=30)
    assert hs_kit.store.get_operation(hs_kit.project_bank, op, timeout_s=30)["status"] == "not_found"
    r = host.command("/hindsight:doctor")
    writes = lines_of(r.text)["writes"]
    assert writes.startswith("warn writes: 1 async operation(s) did not land: "), writes
    assert f"{op} in {hs_kit.project_bank} is unknown to the server" in writes
    assert "(0 recent async operation(s) verified)" in writes and "retain them again" in writes
    assert r.level == "warning" and "zebra" not in r.text


def test_doctor_says_when_stored_vectors_are_damaged(local_kit: Kit) -> None:
    """Recall by meaning leaves a damaged vector out silently (the memory is found by its words);
    doctor is where the user hears of it, and what fixes it."""
    from hindsight_hooks.backends.local import LocalBackend
    from hindsight_hooks.backends.semantic import StaticEmbedder

    local_kit.store.close()
    store = LocalBackend(local_kit.db, semantic=StaticEmbedder())
    fact = {"content": "we run Postgres 16", "document_id": "d"}
    store.retain_batch(local_kit.project_bank, [fact], operation_id="o")
    assert store.wait_for_vectors(120)
    store.close()
    conn = sqlite3.connect(str(local_kit.db), isolation_level=None)
    conn.execute("UPDATE unit_vectors SET vector = x'0001'")
    conn.close()
    checks = lines_of(local_kit.host().command("/hindsight:doctor").text)
    line = checks["recall by meaning"]
    assert line.startswith("warn recall by meaning: on (") and "1 stored vectors are damaged" in line
    assert line.endswith(" — run hindsight-hooks embed: it computes them again from their memories")


def test_a_read_only_store_is_called_read_only_not_damaged(tmp_path: Path) -> None:
    """A healthy store with mode 0444: doctor said "FTS5 index: … attempt to write a readonly
    database — restore the database from a backup", advice that throws good data away. FTS5's
    integrity check is an INSERT that SQLite 3.40 refuses on a read-only file, so the store is now
    reported as read-only with the chmod that fixes it. Root ignores mode bits, so the child runs
    without CAP_DAC_OVERRIDE (as tests/queue and test_commands_queue_files do)."""
    from .unprivileged_cli import unprivileged_project

    state, cli = unprivileged_project(tmp_path)

    assert cli("retain", "the build runs on Postgres 16").returncode == 0
    db = state / "memory.db"
    assert cli("doctor").returncode == 0
    for extra in (Path(f"{db}-wal"), Path(f"{db}-shm")):
        if extra.exists():
            os.chmod(extra, 0o444)
    os.chmod(db, 0o444)
    before = db.read_bytes()

    doctor = cli("doctor", "--json")
    (store,) = [c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "local store"]
    assert store["status"] == "fail"
    assert store["detail"].startswith(f"read-only: {db} cannot be written"), store
    assert f"chmod u+w {db}" in store["fix"] and "not damaged" in store["fix"]
    assert "restore" not in store["detail"] + store["fix"] and "FTS5 index:" not in store["detail"]

    retain = cli("retain", "a fact while the store is read-only")
    assert f"read-only store: make it writable with chmod u+w {db}" in retain.stdout + retain.stderr
    assert db.read_bytes() == before
