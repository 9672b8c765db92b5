"""A simulated 24 h server outage on the injected clock: 0 lost, 0 dead-lettered, all delivered after."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from hindsight_hooks.backends.base import BackendError
from hindsight_hooks.queue import RetainQueue

from .conftest import FakeBackend, FakeClock, job, make_cfg, read_lines


def test_day_long_outage_loses_and_dead_letters_nothing(qpath: Path) -> None:
    clock = FakeClock()
    q = RetainQueue(qpath, make_cfg(), clock=clock)  # default retry/dead-letter policy
    backend = FakeBackend()
    failures = [
        BackendError("retain", "transient", "connection refused"),
        BackendError("retain", "timeout", "request timed out after 30s"),
        BackendError("retain", "transient", "bad gateway", 502),
        BackendError("retain", "transient", "too many requests", 429),
    ]
    acked: list[str] = []
    attempts_during_outage = 0
    step = 0
    start = clock()
    while clock() - start < 24 * 3600:  # one turn per bank every 5 minutes for a day
        backend.fail_always = failures[step % len(failures)]
        for bank in ("project", "user"):
            marker = f"{bank}-{step}"
            q.enqueue(job(bank, marker, now=clock()))
            acked.append(marker)
        before = len(backend.calls)
        result = q.flush(backend, request_timeout_ms=30000)
        attempts_during_outage += len(backend.calls) - before
        assert result.sent == 0 and result.dead_lettered == 0
        assert len(backend.calls) - before <= 2  # at most the head of each bank, and only when due
        clock.advance(300)
        step += 1
    assert not Path(str(qpath) + ".dead.jsonl").exists()
    assert backend.delivered == []
    # Backlogs never burn attempts: only bank heads were ever tried.
    attempted = [x for x in read_lines(qpath) if x["attempts"] > 0]
    assert len(attempted) == 2
    assert attempts_during_outage == sum(x["attempts"] for x in attempted)

    backend.fail_always = None  # the server is back
    for _ in range(50):
        if not read_lines(qpath):
            break
        q.flush(backend)
        clock.advance(601)
    assert read_lines(qpath) == []
    assert not Path(str(qpath) + ".dead.jsonl").exists()
    delivered = Counter(backend.delivered_markers())
    assert set(delivered) == set(acked) and all(n == 1 for n in delivered.values())
    # Per bank, delivery preserved the order of the turns.
    for bank in ("project", "user"):
        order = [m for m in backend.delivered_markers() if m.startswith(bank)]
        assert order == [m for m in acked if m.startswith(bank)]
