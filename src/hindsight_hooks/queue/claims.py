"""Who claimed a job, and whether that flush can still finish it (ADR 178).

Why: a claim reserves a job for one flush while it delivers. A flush that dies before it commits
(the agent SIGKILLs its MCP server a moment after SIGTERM; a laptop lid; ``kill -9``) leaves the
claim behind, and a time limit alone (``claim_ttl_ms``, two minutes) kept that job, and every
later job of its bank, away from every other flush for that long: the turn the user just had was
not in memory for the next prompt. So each claim also names its claimant process, and a claim
whose claimant is known to be gone is abandoned at once.

"Known to be gone" is decided only for a process that this one can see by its pid: on Linux
the claimant is ``boot id/pid namespace:pid:start time`` (``/proc``), so a pid reused by a newer
process is not mistaken for the claimant, and a container that shares the project folder (same
kernel, other pids) judges none of the host's claims; elsewhere ``host name:pid:`` with a
signal-0 probe. A zombie (killed, not yet reaped) is gone. Anything that cannot be decided
(another machine or container sharing the folder, a claim from an older version with no
claimant, ``/proc`` unreadable) keeps the time limit: a claim is never taken from a flush that
may still be running.
"""

from __future__ import annotations

import functools
import os
import time
from typing import Any

from ..timefmt import parse_iso

CLAIMANT_FIELD = "claimed_by"
_PROC = "/proc"


@functools.lru_cache(maxsize=1)
def _linux_here() -> str | None:
    """``boot id/pid namespace`` of this process (its pids mean the same processes), or None
    when ``/proc`` does not say."""
    try:
        with open(f"{_PROC}/sys/kernel/random/boot_id", encoding="ascii") as fh:
            boot = fh.read().strip()
        namespace = os.readlink(f"{_PROC}/self/ns/pid")
    except OSError:
        return None
    digits = "".join(ch for ch in namespace if ch.isdigit())
    return f"{boot}/{digits}" if boot and digits and ":" not in boot else None


def _stat(pid: int) -> tuple[str, str] | None:
    """``(state, start time)`` of a process from ``/proc/<pid>/stat``; None when it has none."""
    try:
        with open(f"{_PROC}/{pid}/stat", "rb") as fh:
            raw = fh.read().decode("ascii", "replace")
    except OSError:
        return None
    # "pid (comm) state ppid ..." where comm may hold spaces and parentheses: split after the last ')'
    fields = raw[raw.rfind(")") + 2 :].split()
    return (fields[0], fields[19]) if len(fields) > 19 else None


def _this_process() -> str:
    pid = os.getpid()
    here = _linux_here()
    stat = _stat(pid) if here is not None else None
    if here is not None and stat is not None:
        return f"{here}:{pid}:{stat[1]}"
    return f"{os.uname().nodename}:{pid}:"


_claimant: tuple[int, str] | None = None


def claimant() -> str:
    """This process as a claim names it (computed once per process; a forked child has its own)."""
    global _claimant
    pid = os.getpid()
    if _claimant is None or _claimant[0] != pid:
        _claimant = (pid, _this_process())
    return _claimant[1]


ALIVE_FOR_S = 0.05
"""How long a claimant found running is taken to be running without asking ``/proc`` again: a
flush goes through every claimed job (thousands during an import), and they share a claimant."""
_judged: dict[str, tuple[bool, float]] = {}


def claimant_gone(name: object) -> bool:
    """True only when ``name`` is a process this one can see by its pid that no longer runs.
    A claimant named with its start time, once gone, is gone for good, so that answer is kept;
    one named by its pid alone may be a new process next time."""
    if not isinstance(name, str):
        return False
    seen = _judged.get(name)
    now = time.monotonic()
    if seen is not None and ((seen[0] and not name.endswith(":")) or now - seen[1] < ALIVE_FOR_S):
        return seen[0]
    gone = _judge(name)
    if len(_judged) >= 1024:
        _judged.clear()
    _judged[name] = (gone, now)
    return gone


def _judge(name: str) -> bool:
    where, _, rest = name.partition(":")
    pid_text, _, started = rest.partition(":")
    if not pid_text.isdigit() or int(pid_text) <= 0:
        return False
    pid = int(pid_text)
    here = _linux_here()
    if here is not None and started and where == here:
        stat = _stat(pid)
        return stat is None or stat[0] in ("Z", "X") or stat[1] != started
    if here is None and not started and where == os.uname().nodename:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except OSError:  # EPERM: it runs, as another user
            return False
    return False


def live_claim(job: dict[str, Any], now: float, ttl_s: float) -> bool:
    """Another flush may still be delivering this job: claimed less than ``ttl_s`` ago, by a
    claimant not known to be gone."""
    claimed_at = parse_iso(job.get("claimed_at"))
    if claimed_at is None or now - claimed_at >= ttl_s:
        return False
    return not claimant_gone(job.get(CLAIMANT_FIELD))


def release(job: dict[str, Any]) -> None:
    """Remove the claim fields from ``job`` (in place)."""
    for key in ("claimed_at", "claim_token", CLAIMANT_FIELD):
        job.pop(key, None)
