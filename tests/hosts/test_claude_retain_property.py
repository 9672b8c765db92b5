"""Property: whatever a Claude Code session does between Stop hooks (turns, tool calls, our block
injected, rewinds, compactions, repeated Stops, hook processes that start over), every message
on its current branch is retained exactly once and no line of our block ever is.

Each hook call is the real ``answer_event`` with a fresh ``Host`` (as a new hook process has),
on a real project with the embedded store; delivery is the real worker, run to completion.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hindsight_hooks.hosts.claude_code import ADAPTER
from hindsight_hooks.hosts.hookcmd import FreshHosts, answer_event
from hindsight_hooks.hosts.worker import run as deliver_run

from ..plugin.hostkit import LOCAL_CONFIG, Project
from .claude_lines import ClaudeSession

BLOCK = "<hindsight-memory>\nRelevant prior memory.\nqqblockline memory from before\n</hindsight-memory>"
KINDS = ["turn", "turn", "turn+block", "tool", "stop", "stop", "rewind", "compact"]
OPS = st.lists(st.sampled_from(KINDS), max_size=12)
CONFIG = {**LOCAL_CONFIG, "retain": {"content": {"tool_result": ["error", "content"]}}}
"""Tool output is kept too, so every kind of message the reader produces is counted."""


def _stop(session: ClaudeSession, deliver: bool) -> None:
    def later(hook: object) -> bool:
        return False  # delivered by the test itself, below, when it wants

    raw = json.dumps(session.event("Stop")).encode()
    answer = answer_event(ADAPTER, "Stop", raw, hosts=FreshHosts(), deliver=later)
    assert answer == {} or "systemMessage" not in answer, answer
    if deliver:
        deliver_run(session.cwd, "claude-code", None, None)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS, deliver_each=st.booleans())
def test_each_message_of_the_current_branch_is_retained_once(ops: list[str], deliver_each: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="hh-prop-") as tmp:
        base = Path(tmp)
        project = Project(base / "repo", CONFIG)
        session = ClaudeSession(base / "home" / "s.jsonl", project.root)
        forks: list[str] = []
        live: list[str] = []  # markers on the current branch, in order
        for counter, op in enumerate(ops, start=1):
            marker = f"mk{counter}x"
            if op in ("turn", "turn+block"):
                forks.append(str(session.leaf))
                session.turn(f"question {marker}q", f"answer {marker}a", block=BLOCK if op == "turn+block" else None)
                live += [f"{marker}q", f"{marker}a"]
            elif op == "tool":
                forks.append(str(session.leaf))
                session.user(f"run it {marker}q")
                call = session.tool_call("Bash", {"command": f"echo {marker}c"})
                session.tool_result(call, f"out {marker}r")
                session.say(f"done {marker}a")
                live += [f"{marker}q", f"{marker}c", f"{marker}r", f"{marker}a"]
            elif op == "stop":
                _stop(session, deliver_each)
            elif op == "rewind" and forks:
                fork = forks.pop(len(forks) // 2)
                # the branch from ``fork`` on: keep the live markers written before it
                keep = _markers_before(session, fork)
                live = [m for m in live if m in keep]
                session.user(f"edited {marker}q", parent=fork)
                session.say(f"edited answer {marker}a")
                live += [f"{marker}q", f"{marker}a"]
                forks = [f for f in forks if f in _uuids_before(session, fork)]
            elif op == "compact" and session.leaf is not None:
                session.compact(f"Summary zzsummary{counter}")
        _stop(session, True)
        units = [content for _, content in project.units()]
        for m in live:
            found = sum(1 for u in units if m in u)
            assert found == 1, f"{m} retained {found} times after {ops}"
        assert not any("qqblockline" in u or "hindsight-memory" in u or "zzsummary" in u for u in units)


def _lines(session: ClaudeSession) -> list[dict[str, object]]:
    return [json.loads(line) for line in session.path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _uuids_before(session: ClaudeSession, fork: str) -> set[str]:
    """The uuids on the chain from the root to ``fork`` (inclusive)."""
    by_uuid = {str(obj.get("uuid")): obj for obj in _lines(session) if obj.get("uuid")}
    out: set[str] = set()
    node = by_uuid.get(fork)
    while node is not None:
        uid = str(node.get("uuid"))
        out.add(uid)
        parent = node.get("parentUuid") or node.get("logicalParentUuid")
        node = by_uuid.get(str(parent)) if parent else None
    return out


def _markers_before(session: ClaudeSession, fork: str) -> set[str]:
    keep = _uuids_before(session, fork)
    text = " ".join(json.dumps(obj) for obj in _lines(session) if str(obj.get("uuid")) in keep)
    return {word.strip('".,\\') for word in text.split() if word.startswith("mk") or "mk" in word}


def test_a_file_cut_down_to_its_last_turns_retains_only_what_is_new(tmp_path: Path) -> None:
    project = Project(tmp_path / "repo", CONFIG)
    session = ClaudeSession(tmp_path / "home" / "s.jsonl", project.root)
    for i in range(4):
        session.turn(f"question k{i}q", f"answer k{i}a")
    _stop(session, True)
    lines = _lines(session)
    kept = lines[len(lines) // 2 :]  # an outside tool kept only the newer half of the file
    for obj in kept:
        if obj.get("uuid"):
            obj["parentUuid"] = None
            break
    session.path.write_text("".join(json.dumps(obj) + "\n" for obj in kept), encoding="utf-8")
    session.turn("question k9q", "answer k9a")
    _stop(session, True)
    units = [content for _, content in project.units()]
    for marker in [*(f"k{i}{r}" for i in range(4) for r in "qa"), "k9q", "k9a"]:
        assert sum(1 for u in units if marker in u) == 1, marker
