"""``Host.agent_end`` hands every plugin its own deep copy, reusing intact copies (ADR-051).

The contract: what a plugin does to the messages it gets never reaches the host or another
plugin, and a plugin always sees exactly what the host holds now. The copy of a message from
the plugin's previous run is handed out again only when neither side changed it, which is
what makes the copy cost follow the new messages.
"""

from __future__ import annotations

import math
import threading
from pathlib import Path
from typing import Any

from hindsight_hooks.hooks import Host, HostContext, Message, RecordingUI, hookimpl


class Keeper:
    """Records the lists it got; optionally vandalises them afterwards."""

    def __init__(self, vandal: bool = False) -> None:
        self.vandal = vandal
        self.runs: list[list[Message]] = []
        self.snapshots: list[list[Message]] = []

    @hookimpl
    def agent_end(self, messages: list[Message], ctx: HostContext) -> None:
        import copy

        self.runs.append(messages)
        self.snapshots.append(copy.deepcopy(messages))
        if self.vandal:
            for msg in messages:
                msg["content"] = "vandalised"
                msg.setdefault("extra", []).append(1)
            messages.append({"role": "user", "content": "planted"})


def user(n: int, **extra: Any) -> Message:
    msg: Message = {
        "role": "user",
        "content": [{"type": "text", "text": f"message {n}"}],
        "timestamp": n,
        "id": f"u{n}",
    }
    msg.update(extra)
    return msg


def host_with(tmp_path: Path, *plugins: object) -> Host:
    return Host(tmp_path, ui=RecordingUI(), plugins=list(plugins))


def test_mutations_never_reach_the_host_or_another_plugin(tmp_path: Path) -> None:
    vandal, watcher = Keeper(vandal=True), Keeper()
    host = host_with(tmp_path, vandal, watcher)
    transcript = [user(0), user(1)]
    pristine = [user(0), user(1)]
    host.agent_end(transcript)
    assert transcript == pristine
    assert watcher.snapshots[-1] == pristine
    transcript.append(user(2))
    pristine.append(user(2))
    host.agent_end(transcript)  # the vandal's old copies are damaged: it gets fresh ones
    assert transcript == pristine
    assert vandal.snapshots[-1] == pristine and watcher.snapshots[-1] == pristine
    assert all(a is not b for a, b in zip(vandal.runs[-1][: len(transcript)], transcript, strict=True))


def test_intact_copies_are_reused_and_stay_separate_from_the_host(tmp_path: Path) -> None:
    first, second = Keeper(), Keeper()
    host = host_with(tmp_path, first, second)
    transcript = [user(0), user(1)]
    host.agent_end(transcript)
    transcript.append(user(2))
    host.agent_end(transcript)
    for keeper in (first, second):
        old, new = keeper.runs
        assert new[0] is old[0] and new[1] is old[1], "unchanged messages are not copied again"
        assert all(c is not m for c, m in zip(new, transcript, strict=True))
        assert new == transcript
    assert all(a is not b for a, b in zip(first.runs[-1], second.runs[-1], strict=True)), "one copy per plugin"
    first.runs[-1][0]["content"][0]["text"] = "changed by a plugin"
    assert transcript[0] == user(0) and second.runs[-1][0] == user(0)


def test_a_message_the_host_changed_in_place_is_seen_as_it_is_now(tmp_path: Path) -> None:
    keeper = Keeper()
    host = host_with(tmp_path, keeper)
    transcript = [user(0, isError=1, usage=None), user(1)]
    host.agent_end(transcript)
    transcript[0]["isError"] = True  # == 1, but another JSON value
    host.agent_end(transcript)
    assert keeper.runs[-1][0]["isError"] is True
    transcript[0]["usage"] = {"input": 1, "output": 2.0}
    host.agent_end(transcript)
    transcript[0]["usage"]["input"], transcript[0]["usage"]["output"] = 1.0, 2  # == equal, as long as JSON
    host.agent_end(transcript)
    assert [type(v) for v in keeper.runs[-1][0]["usage"].values()] == [float, int]
    transcript[0]["usage"] = math.nan  # the same JSON bytes as None (orjson writes null)
    host.agent_end(transcript)
    assert math.isnan(keeper.runs[-1][0]["usage"])
    transcript[0]["content"][0]["text"] = "edited in place"
    transcript[1] = user(1, edited=True)  # replaced by a new object
    host.agent_end(transcript)
    assert keeper.runs[-1] == transcript
    assert keeper.runs[-1][0]["content"][0]["text"] == "edited in place"
    assert all(c is not m for c, m in zip(keeper.runs[-1], transcript, strict=True))


def test_a_shorter_or_different_transcript_is_copied_whole(tmp_path: Path) -> None:
    keeper = Keeper()
    host = host_with(tmp_path, keeper)
    transcript = [user(0), user(1), user(2)]
    host.agent_end(transcript)
    host.agent_end(transcript[1:])  # a window: the head objects differ
    assert keeper.runs[-1] == transcript[1:]
    assert all(c is not o for c in keeper.runs[-1] for o in keeper.runs[0])
    host.agent_end(transcript[:2])  # a shorter branch
    assert keeper.runs[-1] == transcript[:2]
    blob: Message = {"role": "user", "content": "x", "raw": b"\x00bytes"}  # not JSON: always copied
    host.agent_end([blob])
    host.agent_end([blob])
    assert keeper.runs[-1] == [blob] and keeper.runs[-1][0] is not keeper.runs[-2][0]


def test_concurrent_runs_never_share_copies(tmp_path: Path) -> None:
    entered, release = threading.Event(), threading.Event()
    seen: list[list[Message]] = []

    class Slow:
        @hookimpl
        def agent_end(self, messages: list[Message], ctx: HostContext) -> None:
            seen.append(messages)
            if len(seen) == 2:  # the second run waits inside the plugin
                entered.set()
                release.wait(10)

    host = host_with(tmp_path, Slow())
    transcript = [user(0), user(1)]
    host.agent_end(transcript)  # primes the cache
    worker = threading.Thread(target=host.agent_end, args=(transcript,))
    worker.start()
    assert entered.wait(10)
    host.agent_end(transcript)  # runs while the second one holds its copies
    release.set()
    worker.join(10)
    assert len(seen) == 3
    assert all(a is not b for a, b in zip(seen[1], seen[2], strict=True))
    assert seen[1] == seen[2] == transcript


class ContextPlugin:
    """Scribbles on the list it gets; returns it with one message added when ``inject``."""

    def __init__(self, inject: bool) -> None:
        self.inject = inject
        self.got: list[list[Message]] = []

    @hookimpl
    def context(self, messages: list[Message], ctx: HostContext) -> list[Message] | None:
        self.got.append(messages)
        messages[0]["content"] = "scribbled"
        if not self.inject:
            return None
        return [*messages, {"role": "user", "content": "block"}]


def test_context_copies_the_transcript_once_when_a_plugin_replaces_it(tmp_path: Path, monkeypatch: Any) -> None:
    from hindsight_hooks.hooks import host as host_module

    copies: list[object] = []
    real = host_module.deep_copy

    def counting(value: Any) -> Any:
        copies.append(value)
        return real(value)

    monkeypatch.setattr(host_module, "deep_copy", counting)
    transcript = [user(0), user(1)]
    injector = ContextPlugin(inject=True)
    out = host_with(tmp_path, injector).context(transcript)
    assert len(copies) == 1
    assert out[-1]["content"] == "block" and out is not transcript
    assert transcript == [user(0), user(1)] and injector.got[0] is not transcript

    # Nobody replaces it: the result is a copy of the host's messages, not the plugins' lists.
    copies.clear()
    a, b = ContextPlugin(inject=False), ContextPlugin(inject=False)
    out = host_with(tmp_path, a, b).context(transcript)
    assert len(copies) == 3  # one per plugin and one for the result
    assert out == [user(0), user(1)] and out is not transcript
    assert all(out is not got[0] for got in (a.got, b.got)) and a.got[0] is not b.got[0]
    assert b.got[0][0]["content"] == "scribbled" and transcript == [user(0), user(1)]

    # No plugin at all: the one copy made up front is the result.
    copies.clear()
    out = host_with(tmp_path).context(transcript)
    assert len(copies) == 1 and out == transcript and out is not transcript
