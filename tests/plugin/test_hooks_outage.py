"""A dead or failing server through the ``Host`` harness only (issue 9 items 11 and 12; ADR 069).

A server that gives no answer at all (a refused port, a peer that accepts and hangs up) costs a
session one connection at start; after that its banks are offline for the cooldown: recall is
skipped and automatic deliveries leave the jobs queued without touching the network. A server
that *answers* with a 500 fails that one recall (one notice) and is tried again on the next
turn. Connections are counted by a real loopback socket; time bounds are generous.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hindsight_hooks.hooks import Message, RecordingUI

from .hostkit import (
    Project,
    StubHindsight,
    assistant,
    closed_port_url,
    elapsed,
    isolated,
    merged,
    statuses,
    stub_hindsight,
    user,
    wait_until,
)

__all__ = ["isolated", "stub_hindsight"]  # fixtures, re-exported for pytest

USER_BANK = "hh-user-outage-count"


class HangUpServer:
    """Accepts TCP connections and closes each at once, counting them (a server that never answers)."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self._count = 0
        self._guard = threading.Lock()
        self._thread = threading.Thread(target=self._serve, name="hang-up-server", daemon=True)
        self._thread.start()

    @property
    def accepted(self) -> int:
        with self._guard:
            return self._count

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self._guard:
                self._count += 1
            conn.close()

    def close(self) -> None:
        # shutdown wakes the blocked accept(); a bare close would leave it listening on a socket
        # whose fd number the next test's server may be given
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self._thread.join(5)
        with contextlib.suppress(OSError):
            self.sock.close()


@pytest.fixture
def hang_up_server() -> Iterator[HangUpServer]:
    server = HangUpServer()
    yield server
    server.close()


def _remote(url: str, **extra: object) -> dict[str, object]:
    return merged(
        {
            "backend": "hindsight",
            "hindsight": {"base_url": url},
            "mental_models": {"enabled": False},
            "notifications": {"startup": False},
        },
        dict(extra),
    )


def _user_bank(home: Path) -> None:
    path = home / ".config" / "hindsight-hooks" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'[banks.user]\nenabled = true\nbank_id = "{USER_BANK}"\n', encoding="utf-8")


def _turn(transcript: list[Message], n: int) -> tuple[list[Message], list[Message]]:
    prompt = user(f"outage question q{n}x about the parser", n)
    return [*transcript, prompt], [*transcript, prompt, assistant(f"outage answer r{n}x done", n)]


# -- item 11: no answer costs one connection, then the banks are offline -------------------------------


def test_a_server_that_never_answers_costs_one_connection_per_session_not_one_per_hook(
    tmp_path: Path, isolated: Path, hang_up_server: HangUpServer
) -> None:
    _user_bank(isolated)
    project = Project(tmp_path / "repo", _remote(hang_up_server.url))
    ui = RecordingUI()
    host = project.host(ui=ui)
    with elapsed() as t_start:
        host.start()
    at_start = hang_up_server.accepted
    # one GET for the project bank; no in-call retries, and the user bank is not tried again
    assert 1 <= at_start <= 2, at_start

    transcript: list[Message] = []
    with elapsed() as t_first:
        for_model, transcript = _turn(transcript, 1)
        assert host.context(for_model) == for_model
        host.agent_end(transcript)
    assert hang_up_server.accepted == at_start, "the first turn sends nothing: the banks are offline"

    for n in range(2, 6):
        for_model, transcript = _turn(transcript, n)
        host.context(for_model)
        host.agent_end(transcript)
    host.shutdown()
    assert hang_up_server.accepted == at_start, "no hook after the start touched the dead server"
    # the old client retried each GET with 1 s + 2 s + 4 s of backoff: ~3.5 s at start, ~7.7 s in
    # the first agent_end; the bounds leave a loaded machine room and still fail that
    assert t_start[0] < 2.5 and t_first[0] < 2.5, (t_start[0], t_first[0])

    jobs = project.queue_jobs()
    text = "\n".join(str(i.get("content", "")) for j in jobs for i in j["items"])
    assert all(f"q{n}x" in text and f"r{n}x" in text for n in range(1, 6)), "every turn is queued"
    assert sum(int(j.get("attempts", 0)) for j in jobs) == 0, "no delivery attempt burned a retry"
    assert statuses(ui).count("mem:offline") >= 5
    assert "mem:recalling" not in statuses(ui)
    warnings = ui.texts("warning")
    assert len([w for w in warnings if "could not reach memory bank" in w]) == 2, "one warning per bank at start"
    assert ui.texts("error") == []


def test_a_refused_port_costs_the_first_hook_well_under_a_second(tmp_path: Path, isolated: Path) -> None:
    project = Project(tmp_path / "repo", _remote(closed_port_url()))
    ui = RecordingUI()
    host = project.host(ui=ui)
    with elapsed() as t_start:
        host.start()
    transcript: list[Message] = []
    for_model, transcript = _turn(transcript, 1)
    with elapsed() as t_first:
        host.context(for_model)
        host.agent_end(transcript)
    with elapsed() as t_stop:
        host.shutdown()
    # before: 3.6 s start, 7.7 s first agent_end (GET retries with backoff on a refused port)
    assert t_start[0] < 2.0 and t_first[0] < 1.0 and t_stop[0] < 1.0, (t_start[0], t_first[0], t_stop[0])
    assert len(project.queue_jobs()) == 1


def test_a_delivery_that_gets_no_answer_takes_the_bank_offline_for_the_cooldown(
    tmp_path: Path, isolated: Path, hang_up_server: HangUpServer
) -> None:
    """Once the start's cooldown is over, the next delivery tries once; getting no answer again
    starts a new cooldown, so the following turns send nothing. (Recall is off here so that only
    deliveries talk to the server.)"""
    config = _remote(hang_up_server.url, recall={"enabled": False, "failure_cooldown_ms": 1500})
    project = Project(tmp_path / "repo", config)
    ui = RecordingUI()
    with project.host(ui=ui) as host:
        at_start = hang_up_server.accepted
        time.sleep(1.6)  # the start's cooldown ends
        transcript: list[Message] = []
        _prompt, transcript = _turn(transcript, 1)
        host.agent_end(transcript)
        after_first = hang_up_server.accepted
        for n in range(2, 5):
            _prompt, transcript = _turn(transcript, n)
            host.agent_end(transcript)
        after_turns = hang_up_server.accepted
        jobs = project.queue_jobs()
    assert after_first - at_start in (1, 2), "the first delivery after the cooldown tried once"
    assert after_turns == after_first, "the failed delivery took the bank offline: later turns send nothing"
    assert sum(int(j.get("attempts", 0)) for j in jobs) == 1
    assert len([w for w in ui.texts("warning") if "retain to bank" in w]) == 1


# -- item 12: a 5xx is an answer: fail that recall, try again next turn ----------------------------------


def test_one_http_500_fails_that_recall_only_and_the_next_turn_recalls_again(
    tmp_path: Path, isolated: Path, stub_hindsight: StubHindsight
) -> None:
    stub_hindsight.memories = [{"text": "Stub memory: ship on Fridays."}]
    project = Project(
        tmp_path / "repo", _remote(stub_hindsight.url, retain={"enabled": False}, recall={"failure_cooldown_ms": 30000})
    )
    ui = RecordingUI()
    with project.host(ui=ui) as host:
        stub_hindsight.recall_errors = [500]
        first = [user("when do we ship?", 1)]
        assert host.context(first) == first, "the failed recall injects nothing"
        assert statuses(ui)[-1] == "mem:recall-failed", (
            statuses(ui),
            ui.texts("warning"),
            stub_hindsight.request_lines(),
        )
        second = host.context([user("and what day again?", 2)])
        assert second is not None and "Stub memory: ship on Fridays." in str(second)
    recalls = [line for line in stub_hindsight.request_lines() if "/memories/recall" in line]
    assert len(recalls) == 2, "the second turn tried the server again"
    assert "mem:offline" not in statuses(ui)
    failures = [w for w in ui.texts("warning") if "recall failed" in w]
    assert len(failures) == 1 and "stub recall error 500" in failures[0], failures


def test_a_5xx_at_start_does_not_cool_the_banks_down(
    tmp_path: Path, isolated: Path, stub_hindsight: StubHindsight
) -> None:
    stub_hindsight.memories = [{"text": "Stub memory: the parser is hand-written."}]
    stub_hindsight.down = True  # every request gets a 503 while this is set
    project = Project(tmp_path / "repo", _remote(stub_hindsight.url, retain={"enabled": False}))
    ui = RecordingUI()
    with project.host(ui=ui) as host:
        assert statuses(ui)[-1] == "mem:offline"
        stub_hindsight.down = False
        out = host.context([user("how is the parser built?", 1)])
        assert out is not None and "Stub memory" in str(out), "the first turn recalls: a 503 is not an outage"


# -- item 14: /hindsight:flush while another flush is running -----------------------------------------


def _queue_turns_while_down(tmp_path: Path, turns: int) -> Project:
    """A session against a refused port: every turn is queued, none attempted (the bank is offline)."""
    project = Project(tmp_path / "repo", _remote(closed_port_url(), recall={"enabled": False}))
    transcript: list[Message] = []
    with project.host("down") as host:
        for n in range(1, turns + 1):
            _prompt, transcript = _turn(transcript, n)
            host.agent_end(transcript)
    assert len(project.queue_jobs()) == turns
    return project


def test_flush_while_the_startup_flush_runs_waits_for_it_and_sends_the_rest(
    tmp_path: Path, isolated: Path, stub_hindsight: StubHindsight
) -> None:
    project = _queue_turns_while_down(tmp_path, 4)
    stub_hindsight.retain_delay_s = 0.6  # a slow server: the startup flush is mid-request
    project.configure(_remote(stub_hindsight.url, recall={"enabled": False}))
    with project.host("up") as host:  # its startup flush claims the bank's first job
        assert wait_until(lambda: any("/memories" in line for line in stub_hindsight.request_lines()), 10)
        flushed = host.command("/hindsight:flush")
        # before: "sent 0, dead-lettered 0, remaining 4, ..." (the bank was blocked by the claim)
        assert flushed.text.startswith("a flush was already running (this session's background flush); waited ")
        assert flushed.text.endswith("then: sent 3, dead-lettered 0, remaining 0, quarantined 0, waiting 0")
        assert flushed.data is not None and flushed.data["waited_for"] == "this session's background flush"
        assert flushed.data["in_flight"] == 0 and flushed.level == "info"
    assert project.queue_jobs() == []
    retains = [line for line in stub_hindsight.request_lines() if line.startswith("POST") and "/memories" in line]
    assert len(retains) == 4, "each job sent once: the explicit flush never raced the startup flush"


_OTHER_FLUSHER = """
import sys, time
from pathlib import Path
from hindsight_hooks.config_model import QueueConfig
from hindsight_hooks.queue import RetainQueue

class Slow:
    name = "slow"
    def retain_batch(self, bank_id, items, **kw):
        print("delivering", flush=True)
        time.sleep(float(sys.argv[2]))
        return {"success": True, "items_count": len(items)}

RetainQueue(Path(sys.argv[1]), QueueConfig()).flush(Slow(), max_jobs=1)
"""


def test_flush_while_another_process_flushes_waits_for_its_claim(
    tmp_path: Path, isolated: Path, stub_hindsight: StubHindsight
) -> None:
    project = _queue_turns_while_down(tmp_path, 3)
    project.configure(_remote(stub_hindsight.url, recall={"enabled": False}, retain={"enabled": False}))
    other = subprocess.Popen(
        [sys.executable, "-c", _OTHER_FLUSHER, str(project.queue_path), "1.0"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert other.stdout is not None and other.stdout.readline().strip() == "delivering"
        with project.host("up") as host:
            flushed = host.command("/hindsight:flush")
    finally:
        other.wait(timeout=30)
    assert flushed.text.startswith("a flush was already running (another session or process); waited ")
    assert flushed.text.endswith("then: sent 2, dead-lettered 0, remaining 0, quarantined 0, waiting 0")
    assert project.queue_jobs() == []
