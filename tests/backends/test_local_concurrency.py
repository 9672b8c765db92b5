"""Real child processes on one SQLite file: concurrent writers lose nothing; kill -9 tears nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from hindsight_hooks.backends.base import RecallRequest
from hindsight_hooks.backends.local import LocalBackend
from tests.backends.test_local_support import first_writes_at_once, raw

ROOT = Path(__file__).resolve().parents[2]

WRITER = r"""
import json, sys, time
from hindsight_hooks.backends.local import LocalBackend
path, name, count, ready, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
backend = LocalBackend(path)
open(ready, "w").close()
while not __import__("os").path.exists(go):
    time.sleep(0.005)
for i in range(count):
    content = json.dumps([{"role": "user", "content": f"{name} says message {i}"},
                          {"role": "assistant", "content": f"{name} answers message {i}"}])
    items = [
        {"content": content, "context": "c", "document_id": f"hh-session:{name}", "update_mode": "append",
         "tags": [f"writer:{name}"], "metadata": {"retain_source": "auto"}},
        {"content": f"{name} explicit fact {i}", "context": "c", "document_id": f"hh-explicit:{name}:{i}",
         "update_mode": "replace", "tags": [f"writer:{name}"], "metadata": {"retain_source": "tool"}},
    ]
    backend.retain_batch("shared", items, operation_id=f"{name}-{i}")
    if i % 10 == 0:
        backend.recall("shared", __import__("hindsight_hooks.backends.base", fromlist=["RecallRequest"])
                       .RecallRequest(query=f"{name} message"))
print("done", flush=True)
"""


def _spawn(args: list[str]) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    LocalBackend(path).close()
    count = 120
    go = tmp_path / "go"
    procs = {name: _spawn([str(path), name, str(count), str(tmp_path / f"{name}.ready"), str(go)]) for name in "AB"}
    deadline = time.monotonic() + 60
    while not all((tmp_path / f"{n}.ready").exists() for n in "AB"):
        assert time.monotonic() < deadline, "writers did not start"
        time.sleep(0.01)
    go.touch()
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, f"writer {name} failed: {err[-2000:]}"
        assert out.strip() == "done"
    conn = raw(path)
    assert conn.execute("SELECT count(*) FROM operations").fetchone()[0] == 2 * count
    for name in "AB":
        per_writer = conn.execute(
            "SELECT count(*) FROM units u JOIN unit_tags t ON t.unit_id = u.id WHERE t.tag = ?", (f"writer:{name}",)
        ).fetchone()[0]
        assert per_writer == 3 * count  # two message units + one explicit unit per batch
    backend = LocalBackend(path)
    assert backend.quick_check() == []
    hits = backend.recall("shared", RecallRequest(query="answers 77", max_tokens=10_000))
    # both writers' replies are found; an explicit fact on the same words may outrank them (importance)
    assert {"assistant: A answers message 77", "assistant: B answers message 77"} <= {h.text for h in hits.hits[:4]}


def test_kill_9_mid_writes_leaves_whole_batches_only(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    LocalBackend(path).close()
    go = tmp_path / "go"
    go.touch()
    proc = _spawn([str(path), "K", "100000", str(tmp_path / "K.ready"), str(go)])
    deadline = time.monotonic() + 60
    conn = raw(path)
    while conn.execute("SELECT count(*) FROM operations").fetchone()[0] < 20:
        assert time.monotonic() < deadline and proc.poll() is None, "writer did not make progress"
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    backend = LocalBackend(path)
    assert backend.quick_check() == []
    applied = conn.execute("SELECT operation_id, unit_ids_json FROM operations").fetchall()
    assert len(applied) >= 20
    unit_ids = {r[0] for r in conn.execute("SELECT id FROM units")}
    recorded = [uid for _, ids in applied for uid in json.loads(ids)]
    assert set(recorded) == unit_ids  # every unit belongs to a recorded batch, every recorded unit exists
    assert len(recorded) == 3 * len(applied)


def test_processes_creating_the_store_at_once_create_the_schema_once_and_lose_nothing(tmp_path: Path) -> None:
    """Several hosts starting together on a machine with no store yet: each one creates/migrates
    under ``BEGIN IMMEDIATE`` and re-reads the version inside it, so exactly one builds the schema,
    none fails on "table already exists", and every first write lands."""
    from hindsight_hooks.backends.local_schema import SCHEMA_VERSION

    path = tmp_path / "store" / "memory.db"
    names = [f"P{n}" for n in range(6)]
    first_writes_at_once(
        tmp_path,
        path,
        names,
        "shared",
        {"content": "{name} was here", "context": "c", "document_id": "{name}", "update_mode": "replace"},
    )
    conn = raw(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'units'").fetchone()[0] == 1
    assert sorted(r[0] for r in conn.execute("SELECT document_id FROM documents")) == sorted(names)
    backend = LocalBackend(path)
    assert backend.quick_check() == []
    backend.close()
