"""Automatic recall through the ``Host`` harness only (docs/recall.md, docs/retain.md#order step 2).

What the model sees is ``Host.context``'s return value; what got retained is read back from the
real SQLite store and the real queue file. The slow-server cases use real loopback sockets: a
server that accepts and never answers, nothing is patched.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from hindsight_hooks.hooks import Message, RecordingUI

from .hostkit import (
    INJECTED_MARKERS,
    HangingServer,
    Project,
    assistant,
    closed_port_url,
    elapsed,
    exchange,
    hanging_server,
    injected_block,
    isolated,
    job_text,
    local_project,
    merged,
    statuses,
    user,
    wait_until,
)

__all__ = ["hanging_server", "isolated", "local_project"]  # fixtures, re-exported for pytest


def _seed(project: Project, n: int = 1, session: str = "seed") -> None:
    """An earlier session that retained exchange ``n`` (delivered to the embedded store at once)."""
    with project.host(session) as host:
        host.agent_end(exchange(n))
    assert project.unit_count(f"q{n}x") == 1


# -- 1. the injected block reaches the model and never comes back --------------------------------------


@pytest.mark.parametrize("persisted_as", ["custom-type", "plain-text", "text-part"])
def test_injected_block_reaches_the_model_and_is_never_retained(local_project: Project, persisted_as: str) -> None:
    _seed(local_project, 1)
    ui = RecordingUI()
    host = local_project.host("s2", ui=ui)
    host.start()
    earlier = exchange(7, "warmup")
    prompt = user("what did we say about the parser question and its answer?", 8)
    history = [*earlier, prompt]

    for_model = host.context(history)

    block = injected_block(for_model)
    assert block is not None, "the recalled memory must reach the model"
    assert block["role"] == "user"
    assert block["content"].startswith("<hindsight-memory>\n")
    assert block["content"].rstrip().endswith("</hindsight-memory>")
    assert "q1x" in block["content"] and "r1x" in block["content"]
    # append position: just before the final user message, the rest untouched and in order
    assert for_model[-1] == prompt
    assert for_model[-2] is block
    assert for_model[:-2] == earlier
    assert len(history) == 3 and injected_block(history) is None, "the host's own list is not mutated"
    assert statuses(ui)[-1] == "mem:recalled:2"

    # The host keeps the block in its transcript (some do), in one of the forms the predicate knows.
    kept: Message = dict(block)
    if persisted_as == "plain-text":
        kept = {"role": "user", "content": "\n  " + block["content"], "timestamp": block["timestamp"]}
    elif persisted_as == "text-part":
        kept = {"role": "user", "content": [{"type": "text", "text": block["content"]}], "timestamp": 1}
    transcript = [*earlier, kept, prompt, assistant("we chose the recursive-descent parser r8x", 8)]
    host.agent_end(transcript)
    host.shutdown()

    # Exactly the real messages were retained: the recalled q1x/r1x were not stored a second time.
    assert local_project.unit_count("q1x") == 1
    assert local_project.unit_count("r1x") == 1
    assert local_project.unit_count("r8x") == 1
    assert local_project.unit_count("q7x") == 1
    stored = local_project.state_text()
    for marker in INJECTED_MARKERS:
        assert marker not in stored, f"{marker!r} leaked into retained state"
    assert local_project.queue_jobs() == []
    assert len(local_project.receipts()) == 2  # one per session document, content-free
    assert "q1x" not in json.dumps(local_project.receipts())


def test_block_in_the_transcript_never_reaches_the_queue(tmp_path: Path, isolated: Path) -> None:
    """With the server down the job stays queued: its payload holds the real messages only."""
    project = Project(
        tmp_path / "repo",
        {
            "backend": "hindsight",
            "hindsight": {"base_url": closed_port_url(), "timeout_ms": 500},
            "mental_models": {"enabled": False},
            "notifications": {"startup": False},
        },
    )
    block = {
        "role": "user",
        "content": "<hindsight-memory>\nBank: b\n1. recalled-zz9 secret plan\n</hindsight-memory>",
        "timestamp": 5,
        "customType": "hindsight-recall",
    }
    with project.host() as host:
        host.agent_end([user("first q1x", 1), block, assistant("reply r1x", 1)])
    (job,) = project.queue_jobs()
    text = job_text(job)
    assert "q1x" in text and "r1x" in text
    assert "recalled-zz9" not in text
    for marker in INJECTED_MARKERS:
        assert marker not in text


def test_prepend_position_puts_the_block_first(local_project: Project) -> None:
    _seed(local_project, 2)
    local_project.configure({"recall": {"injection_position": "prepend"}}, replace=False)
    with local_project.host("s2") as host:
        history = [*exchange(5), user("anything on q2x?", 6)]
        for_model = host.context(history)
    block = injected_block(for_model)
    assert block is not None and for_model[0] is block
    assert for_model[1:] == history


def test_cache_hit_returns_a_byte_identical_block_without_a_backend_call(local_project: Project) -> None:
    _seed(local_project, 3)
    ui = RecordingUI()
    with local_project.host("s2", ui=ui) as host:
        history = [user("recall q3x please", 9)]
        first = host.context(history)
        # new memory arrives, but the same prompt within the TTL reuses the first render
        host.agent_end([*history, assistant("q3x again r9x", 9)])
        again = host.context(history)
    assert injected_block(first) is not None
    assert again == first
    assert statuses(ui).count("mem:recalling") == 1


def test_cache_entries_expire_after_the_configured_ttl(local_project: Project) -> None:
    _seed(local_project, 3)
    local_project.configure({"recall": {"cache_ttl_ms": 150}}, replace=False)
    ui = RecordingUI()
    with local_project.host("s2", ui=ui) as host:
        history = [user("recall q3x please", 9)]
        first = host.context(history)
        host.agent_end([*history, assistant("q3x again r9x", 9)])
        time.sleep(0.3)
        again = host.context(history)
    assert statuses(ui).count("mem:recalling") == 2, "an expired entry is recalled again"
    old, new = injected_block(first), injected_block(again)
    assert old is not None and new is not None
    assert "r9x" not in old["content"] and "r9x" in new["content"]


def test_no_recall_unless_the_last_message_is_the_users(local_project: Project) -> None:
    _seed(local_project, 4)
    ui = RecordingUI()
    with local_project.host("s2", ui=ui) as host:
        tool_turn = [
            user("look at q4x", 1),
            assistant("calling a tool", 1),
            {"role": "toolResult", "toolName": "bash", "content": [{"type": "text", "text": "ok"}], "timestamp": 3},
        ]
        assert host.context(tool_turn) == tool_turn
    assert "mem:recalling" not in statuses(ui)


def test_subagent_never_recalls_or_retains(local_project: Project) -> None:
    _seed(local_project, 5)
    ui = RecordingUI()
    with local_project.host("sub", ui=ui, is_subagent=True) as host:
        history = [user("q5x?", 1)]
        assert host.context(history) == history
        host.agent_end([*history, assistant("sub answer r77x", 1)])
    assert local_project.unit_count("r77x") == 0
    assert "mem:recalling" not in statuses(ui)


# -- 4. a recall that hangs is cut at recall.timeout_ms; an abort cuts it at once ---------------------


def _hanging_project(tmp: Path, server: HangingServer, **extra: object) -> Project:
    config = merged(
        {
            "backend": "hindsight",
            "hindsight": {"base_url": server.url, "timeout_ms": 1500},
            "recall": {"timeout_ms": 700, "failure_cooldown_ms": 1},
            "retain": {"flush_timeout_ms": 300, "shutdown_flush_timeout_ms": 300},
            "mental_models": {"enabled": False},
            "notifications": {"startup": False},
        },
        dict(extra),
    )
    return Project(tmp / "repo", config)


def test_hanging_recall_is_cut_at_its_timeout_and_the_turn_goes_on(
    tmp_path: Path, isolated: Path, hanging_server: HangingServer
) -> None:
    project = _hanging_project(tmp_path, hanging_server)
    ui = RecordingUI()
    host = project.host(ui=ui)
    with elapsed() as t_start:
        host.start()
    assert t_start[0] < 1.5 + 1.5, "session start is bounded by the ensure budget"
    assert "mem:offline" in statuses(ui)
    time.sleep(0.05)  # the failed startup ensure cooled the bank down for 1 ms (ADR 017)
    history = [user("hello q1x", 1)]

    with elapsed() as t_recall:
        assert host.context(history) == history, "the turn goes on with the messages unchanged"
    assert 0.65 <= t_recall[0] < 0.7 + 1.5, "cut at recall.timeout_ms, below the 1.5 s request cap"
    assert statuses(ui)[-2:] == ["mem:recalling", "mem:recall-failed"]
    assert any("recall failed" in text for text in ui.texts("warning"))
    assert any(
        line.startswith("POST ") and line.endswith("/memories/recall HTTP/1.1")
        for line in hanging_server.request_lines()
    )
    # the abandoned request's connection is closed: no server work is left waiting on us
    recall_conns = hanging_server.accepted
    assert wait_until(lambda: hanging_server.hung_up >= recall_conns, timeout_s=5.0)

    with elapsed() as t_end:
        host.agent_end([*history, assistant("answer r1x", 1)])
    assert t_end[0] < 0.3 + 1.5, "delivery is bounded by retain.flush_timeout_ms"
    (job,) = project.queue_jobs()
    assert "r1x" in job_text(job), "the retain is durable even though the server hangs"
    assert statuses(ui)[-1] in ("mem:offline", "mem:retain-queued")

    with elapsed() as t_stop:
        host.shutdown()
    assert t_stop[0] < 0.3 + 1.5
    assert len(project.queue_jobs()) == 1


def test_abort_signal_cuts_a_hanging_recall_at_once(
    tmp_path: Path, isolated: Path, hanging_server: HangingServer
) -> None:
    project = _hanging_project(
        tmp_path, hanging_server, recall={"timeout_ms": 20000, "failure_cooldown_ms": 1, "store_last_recall": True}
    )
    ui = RecordingUI()
    with project.host(ui=ui) as host:
        time.sleep(0.05)  # past the 1 ms startup cooldown (ADR 017)
        history = [user("hello q2x", 2)]
        timer = threading.Timer(0.3, host.abort)
        timer.start()
        try:
            with elapsed() as t:
                for_model = host.context(history)
        finally:
            timer.cancel()
    assert for_model == history
    assert t[0] < 0.3 + 1.5, "an abort returns long before recall.timeout_ms"
    assert statuses(ui)[statuses(ui).index("mem:recalling") + 1] == "mem:idle"
    assert not (project.state / "last-recall.json").exists(), "an aborted recall writes no snapshot"


def test_a_failed_recall_never_overwrites_a_good_snapshot(local_project: Project) -> None:
    """The snapshot records a good recall; a later recall in which every bank fails keeps it."""
    _seed(local_project, 6)
    local_project.configure({"recall": {"store_last_recall": True}}, replace=False)
    with local_project.host("s2") as host:
        assert injected_block(host.context([user("about q6x", 1)])) is not None
    snap_path = local_project.state / "last-recall.json"
    snap = json.loads(snap_path.read_text(encoding="utf-8"))
    assert snap["failed"] == 0 and "q6x" in snap["rendered"]
    assert "q6x" in snap["query"]
    assert oct(snap_path.stat().st_mode & 0o777) == "0o600"
    before = snap_path.read_bytes()

    # the same project now points at a server that is down: every bank fails, the turn goes on
    local_project.configure(
        {
            "backend": "hindsight",
            "hindsight": {"base_url": closed_port_url(), "timeout_ms": 500},
            "recall": {"store_last_recall": True, "failure_cooldown_ms": 1},
            "mental_models": {"enabled": False},
            "notifications": {"startup": False},
        }
    )
    ui = RecordingUI()
    with local_project.host("s3", ui=ui) as host:
        time.sleep(0.05)  # past the 1 ms cooldown the failed startup ensure started (ADR 017)
        history = [user("about q6x again", 2)]
        assert host.context(history) == history
    assert "mem:recall-failed" in statuses(ui)
    assert snap_path.read_bytes() == before


def test_role_labels_are_not_search_words_on_the_embedded_store(local_project: Project) -> None:
    """The query body reads ``user: …``/``assistant: …``; as search words those labels would make
    every stored message of that role a hit (each unit starts with its label), so unrelated
    memories would be injected. Only the real words may match."""
    with local_project.host("earlier") as host:
        host.agent_end([user("lunch plans for friday", 1), assistant("pizza sounds fine", 1)])
    with local_project.host("now") as host:
        history = [user("which registry?", 2)]  # a short first prompt: few words, so no coverage cut
        assert injected_block(host.context(history)) is None, "no shared words, nothing injected"
        host.agent_end([*history, assistant("the internal registry", 2)])
        found = injected_block(host.context([*history, assistant("ok", 2), user("remind me of the lunch plans", 3)]))
    assert found is not None and "lunch plans for friday" in str(found["content"])
    assert "internal registry" not in str(found["content"]), "a message sharing only its role label is not a hit"
