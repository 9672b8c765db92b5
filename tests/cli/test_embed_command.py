"""``hindsight-hooks embed``: backfill with progress, interrupted by a real SIGINT, resumed (ADR 116)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.backends.local_embedding import count_missing
from hindsight_hooks.backends.semantic import MODEL_LABEL

from ..chat.conftest import SCRIPT

UNITS = 20_000


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HINDSIGHT_", "XDG_"))}
    env.update(HOME=str(tmp_path / "home"), XDG_DATA_HOME=str(tmp_path / "data"),
               XDG_CONFIG_HOME=str(tmp_path / "config"), HF_HUB_OFFLINE="1")  # fmt: skip
    return env


def _store(tmp_path: Path) -> Path:
    path = tmp_path / "data" / "hindsight-hooks" / "memory.db"
    lexical = LocalBackend(path)  # written without the extra: no vectors at all
    for start in range(0, UNITS, 2000):
        items = [{"content": f"note {i}: the database cluster {i % 97} runs Postgres", "document_id": f"d{i}"}
                 for i in range(start, start + 2000)]  # fmt: skip
        lexical.retain_batch("b", items, operation_id=f"bulk-{start}")
    lexical.close()
    return path


def _cli(*args: str) -> list[str]:
    return [str(SCRIPT), *args]


def test_embed_is_interrupted_by_ctrl_c_and_resumes(tmp_path: Path) -> None:
    path = _store(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    env = _env(tmp_path)
    proc = subprocess.Popen(_cli("embed", "--cwd", str(project)), env=env, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    lines = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        lines.append(line)
        if line.startswith("embedding: ") and not line.startswith("embedding: 0/"):
            proc.send_signal(signal.SIGINT)  # Ctrl-C once some batches are in
            break
    rest = proc.stderr.read()
    assert proc.wait(60) == 1, [*lines, rest]
    assert "interrupted after" in rest and "run `hindsight-hooks embed` again" in rest
    conn = sqlite3.connect(str(path))
    left, total = count_missing(conn, MODEL_LABEL)
    assert total == UNITS and 0 < left < UNITS
    # the true count, even when Ctrl-C lands between a batch's commit and its report
    assert f"interrupted after {UNITS - left} of {UNITS} vectors" in rest

    done = subprocess.run(_cli("embed", "--cwd", str(project), "--json"), env=env, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["written"] == left and report["without_vector"] == 0 and report["units"] == UNITS
    assert f"embedding: {left}/{left} (100 %)" in done.stderr
    check = subprocess.run(_cli("embed", "--cwd", str(project), "--check", "--json"), env=env,
                           capture_output=True, text=True, timeout=120)  # fmt: skip
    assert json.loads(check.stdout)["without_vector"] == 0


def test_embed_says_what_is_missing(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    out = subprocess.run(_cli("embed", "--cwd", str(project)), env=_env(tmp_path), capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    assert out.returncode == 1 and "no embedded store at" in out.stderr and out.stdout == ""


def test_embed_recomputes_damaged_vectors(tmp_path: Path) -> None:
    """A vector that recall cannot use (wrong size, NaN or inf) is counted by --check and computed
    again by embed from its unit, which stays as it was."""
    import numpy as np

    from hindsight_hooks.backends.semantic import DIM, StaticEmbedder

    path = tmp_path / "data" / "hindsight-hooks" / "memory.db"
    store = LocalBackend(path, semantic=StaticEmbedder())
    facts = ["we run Postgres 16", "Redis is our cache", "the deploy script lives in ops", "lunch is at noon"]
    store.retain_batch("b", [{"content": t, "document_id": f"d{i}"} for i, t in enumerate(facts)], operation_id="op")
    assert store.wait_for_vectors(120)
    store.close()
    conn = sqlite3.connect(str(path), isolation_level=None)
    before = dict(conn.execute("SELECT unit_id, vector FROM unit_vectors").fetchall())
    ids = [r[0] for r in conn.execute("SELECT id FROM units ORDER BY rowid")]
    for uid, blob in zip(ids, [np.full(DIM, np.nan, dtype=np.float16).tobytes(), b"\x00\x01",
                               np.full(DIM, -np.inf, dtype=np.float16).tobytes()], strict=False):  # fmt: skip
        conn.execute("UPDATE unit_vectors SET vector = ? WHERE unit_id = ?", (blob, uid))
    units_before = conn.execute("SELECT id, content FROM units ORDER BY rowid").fetchall()
    project = tmp_path / "project"
    project.mkdir()
    env = _env(tmp_path)

    check = subprocess.run(_cli("embed", "--cwd", str(project), "--check"), env=env, capture_output=True,
                           text=True, timeout=120)  # fmt: skip
    assert check.returncode == 0, check.stderr
    assert "0 of 4 units have no vector yet" in check.stdout
    assert "3 stored vectors are damaged" in check.stdout
    done = subprocess.run(_cli("embed", "--cwd", str(project), "--json"), env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["written"] == 3
    after = dict(conn.execute("SELECT unit_id, vector FROM unit_vectors").fetchall())
    assert after == before  # the same model recomputes the same vectors
    assert conn.execute("SELECT id, content FROM units ORDER BY rowid").fetchall() == units_before
    again = subprocess.run(_cli("embed", "--cwd", str(project), "--check", "--json"), env=env,
                           capture_output=True, text=True, timeout=120)  # fmt: skip
    assert json.loads(again.stdout)["damaged"] == 0
    conn.close()


def _damage(path: Path, how: str) -> None:
    """Break a healthy store the way a user's disk or hands do (the audit's five cases)."""
    for extra in (Path(f"{path}-wal"), Path(f"{path}-shm")):
        extra.unlink(missing_ok=True)
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "random bytes":
        path.write_bytes(os.urandom(len(data)))
    elif how == "directory":
        path.unlink()
        path.mkdir()
    elif how == "schema 99":
        conn = sqlite3.connect(str(path))
        conn.execute("PRAGMA user_version = 99")
        conn.commit()
        conn.close()
    elif how == "read-only":
        os.chmod(path, 0o444)


def _snapshot(path: Path) -> bytes | None:
    return None if path.is_dir() else path.read_bytes()


_DAMAGE = [
    ("truncated", "malformed"),
    ("random bytes", "is not a SQLite database"),
    ("directory", "is a directory"),
    ("schema 99", "schema version 99"),
]


# ``--check`` only reads, so a read-only store is no failure there: it is in the ``embed`` cases only.
@pytest.mark.parametrize(
    ("args", "how", "says"),
    [(("embed",), h, s) for h, s in [*_DAMAGE, ("read-only", "readonly")]]
    + [(("embed", "--check"), h, s) for h, s in _DAMAGE],
)
def test_embed_on_a_damaged_store_is_one_clear_line(tmp_path: Path, args: tuple[str, ...], how: str, says: str) -> None:
    """Before: ``LocalBackend(...)`` was built outside any ``try``, so these printed a traceback.
    Now: one line naming the store and the problem, exit 1, and the file is exactly as it was.
    Root ignores mode bits, so the child runs without CAP_DAC_OVERRIDE (as tests/queue do)."""
    from ..queue.test_lock import _without_file_permission_override

    path = tmp_path / "data" / "hindsight-hooks" / "memory.db"
    store = LocalBackend(path)
    store.retain_batch("b", [{"content": f"note {i} on Postgres", "document_id": f"d{i}"} for i in range(40)],
                       operation_id="op")  # fmt: skip
    store.close()
    _damage(path, how)
    before = _snapshot(path)
    project = tmp_path / "project"
    project.mkdir()
    out = subprocess.run(_cli(*args, "--cwd", str(project)), env=_env(tmp_path), capture_output=True, text=True,
                         timeout=120, check=False, preexec_fn=_without_file_permission_override)  # fmt: skip
    assert out.returncode == 1, out.stderr
    assert "Traceback" not in out.stderr
    errors = [line for line in out.stderr.splitlines() if not line.startswith("embedding: ")]
    assert len(errors) == 1, out.stderr
    assert errors[0].startswith("hindsight-hooks: embed: ") and str(path) in errors[0] and says in errors[0]
    assert _snapshot(path) == before
    assert path.exists()


def test_embed_with_nothing_to_do_says_so(tmp_path: Path) -> None:
    """A store whose units all have vectors printed "embedding: 0/1 (0 %)" (a total of 0 drawn
    as 1), which reads as a stuck run."""
    path = tmp_path / "data" / "hindsight-hooks" / "memory.db"
    store = LocalBackend(path)
    store.retain_batch("b", [{"content": "we run Postgres 16", "document_id": "d"}], operation_id="op")
    store.close()
    project = tmp_path / "project"
    project.mkdir()
    first = subprocess.run(_cli("embed", "--cwd", str(project)), env=_env(tmp_path), capture_output=True, text=True,
                           timeout=120, check=False)  # fmt: skip
    assert first.returncode == 0 and "embedding: 1/1 (100 %)" in first.stderr, first.stderr
    again = subprocess.run(_cli("embed", "--cwd", str(project)), env=_env(tmp_path), capture_output=True, text=True,
                           timeout=120, check=False)  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert again.stderr == "embedding: nothing to embed, every unit has its vector\n"


def test_progress_grows_its_total_instead_of_passing_it(capsys: pytest.CaptureFixture[str]) -> None:
    """Memories retained while ``embed`` runs are embedded too; the line read "25/20 (100 %)"."""
    from hindsight_hooks.cli_progress import Progress

    bar = Progress("embedding", 20)
    bar.show(10)
    bar.show(25)
    bar.end()
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["embedding: 10/20 (50 %)", "embedding: 25/25 (100 %)"]
