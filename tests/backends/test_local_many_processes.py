"""One store file, several processes, a process with several backends on it: no write is lost.

The warm hook helper keeps a backend per session open while it opens the next one, and the MCP
server of the same agent session opens and closes the same file. POSIX locks belong to the
process, and closing *any* descriptor of the file drops all of them: if opening a backend read the
file with a plain ``open()``, the other process's last close would see nobody else connected,
checkpoint and delete the WAL, and the first process would go on writing into the deleted file
(its rows invisible to everyone, and gone when it exits). These tests run real child processes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hindsight_hooks.backends.local import LocalBackend

from .test_local_support import item

ROOT = Path(__file__).resolve().parents[2]

_OTHER_PROCESS = r"""
import sys
from hindsight_hooks.backends.local import LocalBackend
backend = LocalBackend(sys.argv[1])
backend.retain_batch("b", [{"content": sys.argv[2], "document_id": sys.argv[2]}], operation_id=sys.argv[2])
backend.close()
"""

_COUNT = r"""
import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM units").fetchone()[0])
"""


def _child(script: str, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    out = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, env=env,
                         timeout=120, check=True)  # fmt: skip
    return out.stdout.strip()


def test_a_second_backend_in_a_process_keeps_the_first_ones_writes_visible(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    first = LocalBackend(path)
    first.retain_batch("b", [item("session one said Postgres 16", "d1")], operation_id="1")
    second = LocalBackend(path)  # a new session's backend, while the first is still open
    _child(_OTHER_PROCESS, str(path), "the MCP server retained this")  # opens and closes the file
    assert (path.parent / "memory.db-wal").exists(), "another process deleted the WAL under our connections"
    first.retain_batch("b", [item("session one said Redis for sessions", "d2")], operation_id="2")
    second.retain_batch("b", [item("session two said SQLite for tests", "d3")], operation_id="3")
    assert _child(_COUNT, str(path)) == "4"
    first.close()
    second.close()
    assert _child(_COUNT, str(path)) == "4"


def test_a_store_opened_again_and_again_beside_a_long_lived_one_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    helper = LocalBackend(path)
    helper.retain_batch("b", [item("the first memory", "d0")], operation_id="0")
    for n in range(1, 6):
        LocalBackend(path).close()  # a per-event backend in the same process
        _child(_OTHER_PROCESS, str(path), f"from another process {n}")
        helper.retain_batch("b", [item(f"the helper's memory {n}", f"h{n}")], operation_id=f"h{n}")
        assert _child(_COUNT, str(path)) == str(1 + 2 * n)
    helper.close()
