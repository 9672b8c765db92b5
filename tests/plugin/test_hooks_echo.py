"""Recalled memory quoted back by the model is not retained again (issue 9 item 5, ADR-065).

Through the ``Host`` harness only, on the embedded store (a real SQLite file): session 1
retains a fact; session 2 is given it in the ``<hindsight-memory>`` block, and the reply quotes
the block — whole, HTML-escaped as some hosts write it back, or only its memory lines. What the
store holds afterwards is read straight from the SQLite file.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

from hindsight_hooks.hooks import Message

from .hostkit import Project, assistant, injected_block, isolated, local_project, user

__all__ = ["isolated", "local_project"]  # fixtures, re-exported for pytest

FACT_Q = "the staging database listens on port 6543 zq1x"
FACT_A = "noted: staging uses port 6543 for postgres zr1x"
ECHO_MARKERS = ("<hindsight-memory>", "&lt;hindsight-memory&gt;", "Relevant prior memory", "hindsight-recall")


def _seed(project: Project) -> None:
    with project.host("seed") as host:
        host.agent_end([user(FACT_Q, 1), assistant(FACT_A, 1)])
    assert project.unit_count("zq1x") == 1 and project.unit_count("zr1x") == 1


def _memory_lines(block: str) -> list[str]:
    """The block's memory lines, exactly as the model was shown them."""
    return [ln for ln in block.split("\n") if "zq1x" in ln or "zr1x" in ln or ln.startswith("Bank: ")]


def _quote(block: str, how: str) -> str:
    if how == "raw":  # what the chat host's echo model writes
        return f"echo: I was given 1 memory block(s):\n{block}\n\necho: you said: which port? own-words-zz7"
    if how == "escaped":  # a host that HTML-escapes what it shows, written back
        return f"I was given:\n{html.escape(block, quote=False)}\nSo: own-words-zz7"
    # the model copies the memory lines into its answer, without the wrapper
    return "From what I remember:\n" + "\n".join(_memory_lines(block)) + "\nMy own conclusion: own-words-zz7"


def _assert_nothing_echoed(project: Project) -> None:
    assert project.unit_count("zq1x") == 1, project.units()
    assert project.unit_count("zr1x") == 1, project.units()
    stored = project.state_text()
    for marker in ECHO_MARKERS:
        assert marker not in stored, f"{marker!r} was retained"


@pytest.mark.parametrize("how", ["raw", "escaped", "partial"])
@pytest.mark.parametrize("same_process", [True, False], ids=["one-runtime", "hook-per-runtime"])
def test_a_reply_quoting_the_block_is_not_retained_back(local_project: Project, how: str, same_process: bool) -> None:
    _seed(local_project)
    prompt = user("which port does the staging database use?", 2)
    host = local_project.host("s2")
    host.start()
    block = injected_block(host.context([prompt]))
    assert block is not None and "zq1x" in block["content"] and "zr1x" in block["content"]
    if not same_process:  # a host that runs every hook in a fresh process: a new runtime retains
        host.shutdown()
        host = local_project.host("s2")
        host.start()
    host.agent_end([prompt, assistant(_quote(block["content"], how), 2)])
    host.shutdown()

    _assert_nothing_echoed(local_project)
    assert local_project.unit_count("own-words-zz7") == 1, "the reply's own words are still retained"

    with local_project.host("s3") as later:
        found = later.call_tool("hindsight_recall", {"query": "staging database port own-words-zz7"}).text
    assert "own-words-zz7" in found
    for marker in ECHO_MARKERS:
        assert marker not in found


def test_quoted_block_is_stripped_from_every_role(local_project: Project) -> None:
    local_project.configure({"retain": {"content": {"tool_result": ["error", "content"]}}}, replace=False)
    _seed(local_project)
    prompt = user("which port does the staging database use?", 2)
    with local_project.host("s2") as host:
        block = injected_block(host.context([prompt]))
        assert block is not None
        text = block["content"]
        call: Message = {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": f"echo '{text}'"}}],
            "timestamp": 1_700_000_003_000,
        }
        result: Message = {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "bash",
            "content": [{"type": "text", "text": f"$ cat notes\n{text}\nexit 0 tool-zz8"}],
            "isError": False,
            "timestamp": 1_700_000_003_500,
        }
        pasted = user(f"look what you were shown: {text} user-zz9", 4)
        custom: Message = {
            "role": "note",
            "customType": "scratch",
            "content": f"scratch: {text} custom-zz6",
            "timestamp": 5,
        }
        host.agent_end([prompt, call, result, pasted, custom, assistant("done reply-zz5", 5)])

    _assert_nothing_echoed(local_project)
    for own in ("tool-zz8", "user-zz9", "custom-zz6", "reply-zz5"):
        assert local_project.unit_count(own) == 1, own


def _session_line(entry_id: str, parent: str | None, message: Message) -> str:
    return json.dumps({"type": "message", "id": entry_id, "parentId": parent, "message": message})


def test_recall_cleanup_counts_and_prunes_blocks_quoted_in_replies(local_project: Project) -> None:
    _seed(local_project)
    prompt = user("which port does the staging database use?", 2)
    with local_project.host("s2") as host:
        block = injected_block(host.context([prompt]))
    assert block is not None
    text = block["content"]
    lines = [
        json.dumps({"type": "session", "id": "old", "cwd": str(local_project.root)}),
        _session_line("a", None, prompt),
        _session_line("b", "a", {"role": "user", "content": text, "customType": "hindsight-recall"}),
        _session_line("c", "b", assistant(_quote(text, "raw"), 2)),
        _session_line("d", "c", assistant(_quote(text, "escaped"), 3)),
        _session_line("e", "d", user("thanks, nothing quoted here", 4)),
    ]
    old = local_project.root / "sessions" / "old.jsonl"
    old.parent.mkdir(parents=True, exist_ok=True)
    old.write_text("\n".join(lines) + "\n", encoding="utf-8")

    with local_project.host("s4") as host:
        scan = host.command(f"/hindsight:recall-cleanup {old}")
        assert scan.data is not None
        assert (scan.data["count"], scan.data["lines"]) == (3, [3, 4, 5]), scan.text
        assert scan.data["injected"] == [3] and scan.data["quoted"] == [4, 5]
        assert "3 persisted recall block(s)" in scan.text and "2 quoted" in scan.text

        pruned = host.command(f"/hindsight:recall-cleanup {old} --prune")
        assert pruned.data is not None and (pruned.data["pruned"], pruned.data["cut"]) == (1, 2), pruned.text
        assert Path(pruned.data["backup"]).read_text(encoding="utf-8") == "\n".join(lines) + "\n"
        rescan = host.command(f"/hindsight:recall-cleanup {old}")
        assert rescan.data is not None and rescan.data["count"] == 0

    entries = {e["id"]: e for e in (json.loads(x) for x in old.read_text(encoding="utf-8").splitlines())}
    assert set(entries) == {"old", "a", "c", "d", "e"}
    assert entries["c"]["parentId"] == "a"  # re-parented past the removed block
    for entry_id in ("c", "d"):
        reply = entries[entry_id]["message"]["content"][0]["text"]
        assert "own-words-zz7" in reply and "zq1x" not in reply
        assert "hindsight-memory" not in reply
