"""The queue's files when something broke them, through ``Host.command`` and the real CLI
(issue 9 items 12 and 13; ADR 070, ADR 071).

Real files, real killed processes: temp files left by writers killed with SIGKILL mid-rewrite are
reported by doctor and removed by the next session's first queue operation (or ``--fix``); a
dead-letter file of NULs, a directory or one nobody may read is reported instead of "dead 0";
quarantined lines count as malformed; a lock file that cannot be opened is named with what to
do, never called "lock free".
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from hindsight_hooks.hooks import assistant_message, user_message

from .cmdkit import Kit, local_kit_fixture  # noqa: F401  (fixtures)
from .test_commands_doctor import lines_of
from .unprivileged_cli import unprivileged_project

_REWRITER = """
import sys
from pathlib import Path
from hindsight_hooks.fsutil import atomic_write_bytes
target = Path(sys.argv[1])
payload = b"x" * int(sys.argv[2])
print("ready", flush=True)
while True:  # the same atomic rewrite every state file goes through, until killed
    atomic_write_bytes(target, payload)
"""

_QUEUE_REWRITER = """
import sys
from pathlib import Path
from hindsight_hooks.backends.base import BackendError
from hindsight_hooks.config_model import QueueConfig
from hindsight_hooks.queue import RetainQueue, new_job

class Down:
    name = "down"
    def retain_batch(self, bank_id, items, **kw):
        raise BackendError("retain", "transient", "server down")

queue = RetainQueue(Path(sys.argv[1]), QueueConfig(max_active_bytes=1 << 30))
item = {"content": "y" * 200_000, "context": "c", "document_id": "d", "update_mode": "append"}
for _ in range(40):
    queue.enqueue(new_job("bank", "auto", [item], True))
print("ready", flush=True)
while True:  # every flush claims and commits: two atomic rewrites of the whole queue file
    queue.flush(Down(), force=True)
"""


def _kill_mid_write(script: str, target: Path, *args: str) -> Path:
    """Run a real writer and SIGKILL it while its temp file exists; returns that temp file.

    The kill races the writer's rename: seen a moment before, the temp file may be renamed away by
    the time the signal lands (more likely on a loaded machine). It also races the first write:
    landed just after the temp file was created, it leaves the file empty (seen once in CI, with
    a fuzz run beside it). Neither run is a write cut in the middle, so the empty file is removed
    and a fresh writer is started, up to a bound."""
    for _ in range(50):
        left = _one_kill(script, target, *args)
        if left:
            assert len(left) == 1, "a killed writer leaves at most its one temp file behind"
            if left[0].stat().st_size > 0:
                return left[0]
            left[0].unlink()
    raise AssertionError("the writer was never killed while its temp file existed (50 tries)")


def _one_kill(script: str, target: Path, *args: str) -> list[Path]:
    proc = subprocess.Popen([sys.executable, "-c", script, str(target), *args], stdout=subprocess.PIPE, text=True)
    prefix = f"{target.name}.{proc.pid}."
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        end = time.monotonic() + 30
        while time.monotonic() < end:
            temps = [p for p in target.parent.iterdir() if p.name.startswith(prefix) and p.name.endswith(".tmp")]
            if temps:
                os.kill(proc.pid, signal.SIGKILL)
                break
            time.sleep(0.001)
    finally:
        proc.kill()
        proc.wait(timeout=10)
    return [p for p in target.parent.iterdir() if p.name.startswith(prefix) and p.name.endswith(".tmp")]


def _backdate(path: Path, seconds: float) -> None:
    old = time.time() - seconds
    os.utime(path, (old, old))


def test_temp_files_of_killed_writers_are_reported_and_the_next_session_removes_them(local_kit: Kit) -> None:
    kit = local_kit
    state = kit.state
    queue_tmp = _kill_mid_write(_QUEUE_REWRITER, kit.queue_file)
    cursor_tmp = _kill_mid_write(_REWRITER, state / "retain-cursors.json", str(4 << 20))
    assert queue_tmp.stat().st_size > 0 and cursor_tmp.stat().st_size > 0

    host = kit.host(start=False)  # no session yet: nothing has opened the queue
    report = host.command("/hindsight:doctor")
    check = lines_of(report.text)["temp files"]
    # before: doctor had no such check and said ok
    assert check.startswith("warn temp files: 2 temp file(s), ") and "left by killed writers" in check
    assert queue_tmp.name in check and cursor_tmp.name in check
    assert check.endswith("run /hindsight:doctor --fix to remove them (they hold nothing acknowledged)")
    host.shutdown()

    _backdate(cursor_tmp, 60)  # its writer is dead; past the grace for files of other locks
    with kit.host("s2") as host:  # the next session's first queue operation cleans up
        host.agent_end([user_message("a turn after the crash"), assistant_message("noted")])
        assert not queue_tmp.exists() and not cursor_tmp.exists()
        assert lines_of(host.command("/hindsight:doctor").text)["temp files"] == "ok   temp files: none left behind"


def test_doctor_fix_removes_dead_writers_temp_files_and_keeps_a_live_writers(local_kit: Kit) -> None:
    kit = local_kit
    dead_tmp = _kill_mid_write(_REWRITER, kit.state / "retain-receipts.json", str(1 << 20))
    _backdate(dead_tmp, 60)
    live_tmp = kit.state / f"retain-receipts.json.{os.getpid()}.0123abcd.tmp"  # a writer still at work
    live_tmp.write_bytes(b"in progress")
    host = kit.host(start=False)
    fixed = host.command("/hindsight:doctor --fix")
    assert f"fixed: removed {dead_tmp} (left by pid " in fixed.text
    assert not dead_tmp.exists() and live_tmp.exists()
    check = lines_of(fixed.text)["temp files"]
    assert "1 temp file(s)" in check and "1 may still be in use" in check


def test_a_dead_letter_file_of_nuls_or_a_directory_is_reported_and_fix_moves_it_aside(local_kit: Kit) -> None:
    kit = local_kit
    dead_file = kit.queue_file.with_name(kit.queue_file.name + ".dead.jsonl")
    dead_file.write_bytes(b"\0" * 4096)
    host = kit.host()
    queue = lines_of(host.command("/hindsight:doctor").text)["queue"]
    # before: "ok   queue: active 0, dead 0, malformed 0; lock free"
    assert queue.startswith("warn queue: ") and "dead-letter file has 1 unreadable line(s)" in queue
    fixed = host.command("/hindsight:doctor --fix")
    assert f"fixed: moved {dead_file} to " in fixed.text and not dead_file.exists()
    assert [p for p in kit.state.iterdir() if p.name.startswith(dead_file.name + ".corrupt-")]

    dead_file.mkdir()
    r = host.command("/hindsight:doctor")
    queue = lines_of(r.text)["queue"]
    assert queue.startswith("fail queue: ") and "dead-letter file unreadable: " in queue
    assert "not a regular file" in queue and "--fix to move it aside" in queue
    assert r.level == "error"
    q = host.command("/hindsight:queue")
    assert q.level == "warning" and "dead-letter file error: " in q.text
    host.command("/hindsight:doctor --fix")
    assert not dead_file.exists()


def test_quarantined_lines_count_as_malformed_in_doctor_and_queue(local_kit: Kit) -> None:
    kit = local_kit
    kit.queue_file.write_bytes(b'{"not": "a job"}\n\x00\x01 torn line\n')
    host = kit.host()
    flushed = host.command("/hindsight:flush")
    assert flushed.data is not None and flushed.data["quarantined"] == 2
    q = host.command("/hindsight:queue")
    # before: "malformed: 0" once the flush had moved the lines to the quarantine file
    assert f"malformed: 2 (2 quarantined in {kit.queue_file}.malformed.jsonl)" in q.text.splitlines()
    queue = lines_of(host.command("/hindsight:doctor").text)["queue"]
    assert "malformed 2 (2 quarantined in retain-queue.jsonl.malformed.jsonl)" in queue
    status = host.command("/hindsight").text
    assert "malformed=2" in status


def test_doctor_names_an_unusable_lock_file_instead_of_calling_it_free(local_kit: Kit) -> None:
    kit = local_kit
    host = kit.host()
    host.agent_end([user_message("fill the queue lock's owner record"), assistant_message("ok")])
    lock = kit.queue_file.with_name(kit.queue_file.name + ".lock")
    lock.unlink()
    lock.mkdir()
    r = host.command("/hindsight:doctor")
    queue = lines_of(r.text)["queue"]
    assert "lock free" not in queue and "lock held by" not in queue
    assert queue.startswith("fail queue: ") and f"lock file unusable: cannot open lock file {lock}" in queue
    assert "it is a directory: remove it (the lock file holds no data)" in queue
    q = host.command("/hindsight:queue")
    assert q.level == "warning" and f"lock error: cannot open lock file {lock}" in q.text


def test_mode_000_lock_and_dead_letter_files_through_the_cli(tmp_path: Path) -> None:
    """A user who may not open the files (mode 000): every command answers at once and doctor
    says which file cannot be opened and what to do (root is held to the mode bits here too)."""
    state, cli = unprivileged_project(tmp_path)

    assert cli("retain", "a fact before the files broke").returncode == 0
    lock = state / "retain-queue.jsonl.lock"
    dead = state / "retain-queue.jsonl.dead.jsonl"
    dead.write_bytes(b"")
    os.chmod(lock, 0o000)
    os.chmod(dead, 0o000)

    start = time.monotonic()
    retain = cli("retain", "a fact while the lock is unopenable")
    took = time.monotonic() - start
    assert "cannot open lock file" in retain.stdout + retain.stderr
    assert took < 4.0, "the lock is not polled for lock_timeout_ms (5 s) per queue operation"

    doctor = cli("doctor", "--json")
    data = json.loads(doctor.stdout)
    (queue,) = [c for c in data["checks"] if c["name"] == "queue"]
    assert queue["status"] == "fail"
    assert f"lock file unusable: cannot open lock file {lock} (EACCES: Permission denied)" in queue["detail"]
    assert f"chmod 600 {lock}" in queue["detail"] and "lock free" not in queue["detail"]
    assert "dead-letter file unreadable: " in queue["detail"] and "EACCES" in queue["detail"]
