"""A claim names its claimant process: a flush killed while delivering frees its jobs at once.

Real child processes claim a job and block inside delivery; the parent kills them with SIGKILL
(reaped, or left a zombie) and flushes: the job is delivered at once, not after ``claim_ttl_ms``.
A claimant that still runs, or one this machine cannot judge (another boot, a claim written by
an older version), keeps the time limit.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from hindsight_hooks.queue import RetainQueue
from hindsight_hooks.queue.claims import CLAIMANT_FIELD, claimant, claimant_gone, live_claim
from hindsight_hooks.timefmt import iso_ms

from .conftest import FakeBackend, job, make_cfg, read_lines

FORK = mp.get_context("fork")
TTL_MS = 120_000  # the default: far longer than any of these tests may wait


def _claim_and_hang(qpath: str) -> None:
    """In a child: flush, and block forever inside the delivery of the first job."""
    backend = FakeBackend()
    backend.on_call = lambda call: time.sleep(3600)
    RetainQueue(Path(qpath), make_cfg(claim_ttl_ms=TTL_MS)).flush(backend)


def _start_claimant(qpath: Path) -> Any:
    child = FORK.Process(target=_claim_and_hang, args=(str(qpath),))
    child.start()
    end = time.monotonic() + 30
    while time.monotonic() < end and not any(x.get("claim_token") for x in read_lines(qpath)):
        time.sleep(0.01)
    lines = read_lines(qpath)
    assert lines and lines[0].get("claim_token"), "the child never claimed the job"
    return child


def _queue(qpath: Path) -> RetainQueue:
    return RetainQueue(qpath, make_cfg(claim_ttl_ms=TTL_MS))


@pytest.mark.parametrize("reaped", [True, False], ids=["reaped", "zombie"])
def test_a_job_claimed_by_a_flush_killed_with_sigkill_is_delivered_by_the_next_flush_at_once(
    qpath: Path, reaped: bool
) -> None:
    acked = _queue(qpath).enqueue(job("bank-a", "one")).job_id
    child = _start_claimant(qpath)
    assert child.pid is not None
    assert read_lines(qpath)[0][CLAIMANT_FIELD] != claimant()  # the child's own name
    os.kill(child.pid, signal.SIGKILL)
    if reaped:
        child.join(10)
    else:  # killed but not waited for: a zombie until the join below
        end = time.monotonic() + 10
        while time.monotonic() < end and not claimant_gone(read_lines(qpath)[0][CLAIMANT_FIELD]):
            time.sleep(0.01)
    backend = FakeBackend()
    result = _queue(qpath).flush(backend)
    child.join(10)
    assert backend.delivered_ids() == [acked]
    assert result.sent == 1 and result.in_flight == 0
    assert read_lines(qpath) == []


def test_a_flush_that_still_runs_keeps_its_claim(qpath: Path) -> None:
    _queue(qpath).enqueue(job("bank-a", "one"))
    child = _start_claimant(qpath)
    try:
        backend = FakeBackend()
        result = _queue(qpath).flush(backend)
        assert backend.calls == []  # never sent twice at once
        assert result.in_flight == 1 and result.sent == 0
    finally:
        assert child.pid is not None
        os.kill(child.pid, signal.SIGKILL)
        child.join(10)


def _claimed(by: object, at: float) -> dict[str, Any]:
    out = {**job("bank-a", "x"), "claimed_at": iso_ms(at), "claim_token": "t"}
    if by is not None:
        out[CLAIMANT_FIELD] = by
    return out


def _here() -> str:
    boot = Path("/proc/sys/kernel/random/boot_id").read_text(encoding="ascii").strip()
    namespace = os.readlink("/proc/self/ns/pid")  # "pid:[4026531836]"
    return f"{boot}/{namespace[5:-1]}"


@pytest.mark.parametrize(
    "by",
    [
        None,  # written by an older version: no claimant
        "another-machine-boot-id:1:1",
        "",
        "not a claimant",
        12,
        "x:0:",
        "x:-4:",
    ],
)
def test_claims_whose_claimant_cannot_be_judged_keep_the_time_limit(by: object) -> None:
    now = time.time()
    assert not claimant_gone(by)
    assert live_claim(_claimed(by, now - 1), now, TTL_MS / 1000)
    assert not live_claim(_claimed(by, now - TTL_MS / 1000 - 1), now, TTL_MS / 1000)


def test_this_process_is_not_gone_and_a_reused_pid_is_not_the_claimant() -> None:
    me = claimant()
    assert not claimant_gone(me)
    here, pid, started = me.split(":")
    assert here == _here() and pid == str(os.getpid()) and started.isdigit()
    # the same pid started at another moment: a different process took the number
    assert claimant_gone(f"{here}:{pid}:{int(started) + 1}")
    # the same pid and start in another pid namespace (a container sharing the folder): not judged
    boot, _, namespace = here.partition("/")
    assert not claimant_gone(f"{boot}/{int(namespace) + 1}:{pid}:{int(started) + 1}")
    assert not claimant_gone(f"{boot}:{pid}:{int(started) + 1}")  # no namespace: not judged


def test_a_forked_child_names_itself() -> None:
    parent = claimant()
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report its own name, then leave without running pytest's teardown
        os.write(writer, claimant().encode())
        os._exit(0)
    os.close(writer)
    try:
        name = os.read(reader, 200).decode()
    finally:
        os.close(reader)
        os.waitpid(pid, 0)
    assert name and name != parent and name.split(":")[1] == str(pid)
    assert claimant_gone(name)  # it has exited and been reaped


def test_the_claim_is_released_with_its_claimant(qpath: Path) -> None:
    """A failed delivery releases the claim: no field of it stays on the job."""
    from .conftest import transient

    q = _queue(qpath)
    q.enqueue(job("bank-a", "one"))
    backend = FakeBackend()
    backend.fail_next = [transient()]
    q.flush(backend)
    (line,) = read_lines(qpath)
    assert line["attempts"] == 1
    assert not {"claimed_at", "claim_token", CLAIMANT_FIELD} & line.keys()
    assert orjson.dumps(line)  # still one clean line
