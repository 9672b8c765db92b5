"""``hindsight-hooks migrate --to hindsight`` against the REAL test server, with a kill -9 half-way.

The proof of issue 15 part 3: 10,000 embedded memories, a real child process running the CLI,
killed with SIGKILL at a random point after some batches have landed, then the same command
again. Afterwards the server holds every memory exactly once: as many memories as the store
holds, and each (document, text) pair of the store exactly once among the server's memories
(ADR 150-152).

The bank is created ``verbatim`` (``make_bank``) so the mock LLM stores each item's text as one
memory; that makes "exactly once" something the server's list can show memory for memory.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import hindsight_hooks
from hindsight_hooks.backends.hindsight import HindsightBackend
from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.backends.local_bank_io import import_records
from hindsight_hooks.migrate.progress import FILE_NAME
from hindsight_hooks.plugin.control.memories_jsonl import Parsed

from ..chat.conftest import clean_env

pytestmark = pytest.mark.integration

MakeBank = Callable[..., str]
TOTAL = 10_000
BATCH = 250
SRC = str(Path(hindsight_hooks.__file__).resolve().parents[1])
RUN_CLI = "import sys; from hindsight_hooks.cli import main; sys.exit(main())"


def seed_store(path: Path, bank: str, n: int) -> dict[str, str]:
    """``n`` memories in 10-memory documents, written in one import; returns id → text."""
    parsed = Parsed()
    texts: dict[str, str] = {}
    for d in range((n + 9) // 10):
        parsed.documents.append(
            {
                "document_id": f"hh-session:s{d}",
                "text": "",
                "tags": ["repo:migrate", f"session:s{d}"],
                "metadata": {"session_id": f"s{d}"},
                "created_at": "2026-03-01T10:00:00.000Z",
            }
        )
    for i in range(n):
        unit_id = f"u{i:05d}-{uuid.uuid4().hex[:8]}"
        texts[unit_id] = f"Memory {i}: the build of module {i % 97} uses toolchain {i % 13} (café, 東京)."
        parsed.memories.append(
            {
                "id": unit_id,
                "document_id": f"hh-session:s{i // 10}",
                "seq": i % 10,
                "text": texts[unit_id],
                "tags": ["repo:migrate", f"session:s{i // 10}"],
                "metadata": {"session_id": f"s{i // 10}"},
                "created_at": "2026-03-01T10:00:00.000Z",
            }
        )
    backend = LocalBackend(path)
    try:
        report = import_records(backend, bank, parsed.documents, parsed.memories, lambda _record: False)
        assert report["memories_added"] == n
    finally:
        backend.close()
    return texts


def cli(project: Path, *args: str) -> list[str]:
    return [sys.executable, "-c", RUN_CLI, "migrate", "--to", "hindsight", "--cwd", str(project), *args]


def child_env(tmp: Path) -> dict[str, str]:
    env = clean_env(tmp)
    env["PYTHONPATH"] = SRC  # this checkout's code, not whatever the venv has installed
    return env


def read_progress(project: Path) -> dict[str, Any]:
    try:
        data = json.loads((project / ".hindsight" / FILE_NAME).read_text())
    except (OSError, ValueError):
        return {}
    (entry,) = data["runs"].values()
    return dict(entry["banks"])


def server_memories(backend: HindsightBackend, bank: str) -> list[dict[str, Any]]:
    """Every memory of the bank in ONE list request: the server orders by time with no
    tie-break, so paging a bank whose memories share a timestamp with ``offset`` may skip some."""
    page = backend.list_memories(bank, limit=TOTAL + 1000, timeout_s=300)
    assert page["total"] == len(page["items"])
    return list(page["items"])


def test_ten_thousand_memories_survive_a_kill_9_and_land_exactly_once(
    hindsight_url: str, hindsight_backend: HindsightBackend, make_bank: MakeBank, tmp_path: Path
) -> None:
    bank = make_bank("hh-migrate")
    store = tmp_path / "memory.db"
    texts = seed_store(store, bank, TOTAL)
    project = tmp_path / "project"
    project.mkdir()
    args = cli(project, "--url", hindsight_url, "--store", str(store), "--bank", bank)
    args += ["--batch-size", str(BATCH)]
    env = child_env(tmp_path)

    rng = random.Random()
    kill_after = rng.randint(3, 12) * BATCH  # a random point after some batches...
    started = time.monotonic()
    child = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        while True:
            sent = read_progress(project).get(bank, {}).get("sent", 0)
            if sent >= kill_after:
                break
            assert child.poll() is None, child.communicate()
            assert time.monotonic() - started < 600, "the first run made no progress"
            time.sleep(0.05)
        time.sleep(rng.uniform(0.0, 3.0))  # ...and a random moment inside the next batch's request
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        assert child.stdout is not None and child.stderr is not None
        child.stdout.close()
        child.stderr.close()
    assert child.returncode == -signal.SIGKILL
    at_kill = read_progress(project)[bank]
    assert 0 < at_kill["sent"] < TOTAL, at_kill

    resumed = subprocess.run([*args, "--json"], env=env, capture_output=True, text=True, timeout=1200, check=False)
    elapsed = time.monotonic() - started
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    summary = json.loads(resumed.stdout)
    (report,) = summary["banks"]
    assert summary["complete"] is True
    assert report["to_send"] == TOTAL - at_kill["sent"]  # the resumed run did not start over...
    assert report["sent"] == report["to_send"]
    assert report["documents_on_server"] == TOTAL // 10 and report["missing_documents"] == 0
    assert report["memories_found"] == TOTAL and report["server_memories"] == TOTAL
    assert report["memories_repeated"] == 0
    assert "migrating:" in resumed.stderr  # progress on stderr, the summary alone on stdout

    memories = server_memories(hindsight_backend, bank)
    on_server = Counter((m["document_id"], m["text"]) for m in memories)
    assert len(memories) == TOTAL, f"{len(memories)} memories on the server for {TOTAL} migrated"
    assert on_server == Counter((f"hh-session:s{int(uid[1:6]) // 10}", text) for uid, text in texts.items())
    assert max(on_server.values()) == 1
    for memory in memories:
        assert "repo:migrate" in memory["tags"] and memory["metadata"]["session_id"] == memory["document_id"][11:]
    print(f"\nmigrated {TOTAL} memories with a kill -9 after {at_kill['sent']} in {elapsed:.0f} s")


def test_switch_config_after_a_complete_run_points_the_project_at_the_server(
    hindsight_url: str, hindsight_backend: HindsightBackend, make_bank: MakeBank, tmp_path: Path
) -> None:
    from hindsight_hooks.config import load_config

    bank = make_bank("hh-migrate-switch")
    store = tmp_path / "memory.db"
    texts = seed_store(store, bank, 30)
    project = tmp_path / "project"
    (project / ".hindsight").mkdir(parents=True)
    old = '[recall]\nbudget = "high"\n'
    (project / ".hindsight" / "config.toml").write_text(old)
    args = cli(project, "--url", hindsight_url, "--store", str(store), "--switch-config")
    out = subprocess.run(args, env=child_env(tmp_path), capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    assert f"project config now uses the server: {project / '.hindsight' / 'config.toml'}" in out.stdout
    (backup,) = (project / ".hindsight").glob("config.toml.bak-*")
    assert backup.read_text() == old
    loaded = load_config(project, env={"HOME": str(tmp_path / "home")})
    assert loaded.config.effective_backend() == "hindsight"
    assert loaded.config.hindsight_base_url() == hindsight_url and loaded.config.recall.budget == "high"
    memories = server_memories(hindsight_backend, bank)
    assert sorted(m["text"] for m in memories) == sorted(texts.values())
