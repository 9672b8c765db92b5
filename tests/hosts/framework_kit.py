"""What the in-process framework tests share (pydantic-ai, the OpenAI Agents SDK, LangChain).

Each framework test runs the real library with our adapter against a model that records what it is sent,
in a tmp project on the embedded store (``tests/plugin/hostkit.py``'s ``Project``), and then looks at the
real files. The trouble cases are real too: a loopback port with nothing listening (a broken backend), a
loopback socket that accepts and never answers (a hanging server), and state files full of garbage.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hindsight_hooks.hooks import Host, RecordingUI
from hindsight_hooks.host_sessions import session_file_for
from hindsight_hooks.hosts.inprocess import Bounds

from ..plugin.hostkit import LOCAL_CONFIG, HangingServer, Project, closed_port_url, isolated, merged  # noqa: F401
from .model_server import ModelServer
from .model_server_chat import CHAT_ROUTE, ChatCompletions, chat_messages, message_text

DECISION = "We decided to use Redis 7 for the session cache, with a 15 minute TTL."
"""What session 1 states; session 2 must be shown it in our block."""

DECISION_MARK = "Redis 7 for the session cache"
QUESTION = "What did we decide about the session cache?"
BLOCK_MARKERS = ("<hindsight-memory>", "</hindsight-memory>", "&lt;hindsight-memory&gt;", "Relevant prior memory")

SLACK_S = 8.0
"""Framework overhead on a loaded 2-core machine, on top of the bounds the adapter promises."""

TIGHT: dict[str, Any] = {
    "notifications": {"startup": False},
    "hindsight": {"timeout_ms": 1500},
    "recall": {"timeout_ms": 1500},
    "retain": {"flush_timeout_ms": 1500, "shutdown_flush_timeout_ms": 500},
    "queue": {"lock_timeout_ms": 1000},
}
"""Small limits for the trouble cases, so a run's worst case is a few seconds."""


def has_block(text: str) -> bool:
    return any(marker in text for marker in BLOCK_MARKERS)


@pytest.fixture
def isolated_home(tmp_path: Path, isolated: Path, monkeypatch: pytest.MonkeyPatch) -> Path:  # noqa: F811
    """hostkit's ``isolated`` HOME and XDG folders (no Hindsight settings from the caller), the frameworks'
    trace exports off, and the cwd in the tmp folder. A test module using it imports ``isolated`` too."""
    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")  # the Agents SDK would export traces
    monkeypatch.setenv("LANGSMITH_TRACING", "false")
    monkeypatch.chdir(tmp_path)
    return isolated


@pytest.fixture
def project(tmp_path: Path, isolated_home: Path) -> Project:
    """A project on the embedded store (the database in the project's own ``.hindsight``)."""
    return Project(tmp_path / "repo", LOCAL_CONFIG)


@pytest.fixture
def server() -> Iterator[ModelServer]:
    """A scripted Chat Completions server with no replies yet (the Agents SDK and LangChain tests)."""
    with ModelServer([], dialects=(ChatCompletions(),)) as srv:
        yield srv


def stored_text(project: Project) -> str:
    """Everything memory holds for the project: the store's documents and units."""
    return "\n".join([t for _, _, t in project.documents()] + [c for _, c in project.units()])


def recall_in_new_session(project: Project, query: str) -> str:
    """What a fresh session of the project gets from the recall tool (through the public Host)."""
    where = session_file_for(project.root, "check")
    with Host(project.root, session_file=where, host_name="check", ui=RecordingUI()) as host:
        return host.call_tool("hindsight_recall", {"query": query}).text


def command_in_session(project: Project, session_id: str, *args: str) -> str:
    """``hindsight-hooks <args> --session-file .hindsight/sessions/<id>.jsonl`` run in the project, as the
    README tells a user to reach a framework's session from a shell (the real console script)."""
    cli = Path(sys.executable).with_name("hindsight-hooks")
    where = f".hindsight/sessions/{session_id}.jsonl"
    proc = subprocess.run(
        [str(cli), *args, "--session-file", where], cwd=project.root, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


# --------------------------------------------------------------------------- trouble


@dataclass
class Trouble:
    """One way memory can go wrong under a framework's run, set up in ``project``."""

    name: str
    project: Project
    server: HangingServer | None = None

    def bound_s(self, *, runs: int, model_calls: int, tool_calls: int = 0) -> float:
        """The most the adapter may add to ``runs`` runs: the session start, a recall per model call, a
        retain per run and each tool call at its bound, plus :data:`SLACK_S` for the framework itself."""
        b = Bounds.for_project(self.project.root)
        return b.start_s + model_calls * b.recall_s + runs * b.retain_s + tool_calls * b.tool_s + SLACK_S

    def was_met(self) -> bool:
        """The plugin really ran into the trouble: it waited on the hanging server, or moved a corrupt
        state file aside (it never deletes what it cannot parse); a refused port leaves no trace."""
        if self.name == "hanging-server":
            return self.server is not None and self.server.accepted > 0
        if self.name == "corrupt-state":
            names = [p.name for p in self.project.state.rglob("*")]
            return any(".corrupt" in n or n.endswith(".malformed.jsonl") for n in names)
        return True

    def close(self) -> None:
        if self.server is not None:
            self.server.close()


TROUBLES = ("broken-backend", "hanging-server", "corrupt-state")


def make_trouble(name: str, root: Path) -> Trouble:
    """``broken-backend``: a server URL where nothing listens; ``hanging-server``: one that accepts and
    never answers; ``corrupt-state``: every state file of a used project replaced by garbage."""
    if name == "broken-backend":
        config = merged(TIGHT, {"backend": "hindsight", "hindsight": {"base_url": closed_port_url()}})
        return Trouble(name, Project(root, config))
    if name == "hanging-server":
        server = HangingServer()
        config = merged(TIGHT, {"backend": "hindsight", "hindsight": {"base_url": server.url}})
        return Trouble(name, Project(root, config), server)
    if name == "corrupt-state":
        project = Project(root, merged(LOCAL_CONFIG, TIGHT))
        corrupt_state(project)
        return Trouble(name, project)
    raise ValueError(name)


def corrupt_state(project: Project) -> None:
    state = project.state
    (state / "retain-cursors.json").write_bytes(b"{not json")
    (state / "retain-queue.jsonl").write_bytes(b'{"half a job"\n\x00\xff garbage\n')
    (state / "retain-receipts.json").write_bytes(b"[[[")
    for folder in ("session-meta", "injected-lines"):
        (state / folder).mkdir(exist_ok=True)
        for name in ("x.json", "y.json"):
            (state / folder / name).write_bytes(b"\xff\xfe not json")
    (state / "memory.db").write_bytes(b"this is not a SQLite database\x00" * 64)


def assert_trouble_cost_at_most_the_bound(trouble: Trouble, took: float, server: ModelServer) -> None:
    """After two runs under ``trouble`` against the scripted chat server (3 model calls, one call of the
    recall tool): the plugin met the trouble, the runs took at most the bound, the tool answered and the
    run went on, and no request carried a block."""
    assert trouble.was_met(), trouble.name
    assert took < trouble.bound_s(runs=2, model_calls=3, tool_calls=1), (trouble.name, took)
    assert len(role_texts(chat_requests(server)[-1], "tool")) == 1  # the tool answered, the run went on
    assert not any(has_block(t) for r in chat_requests(server) for t in role_texts(r, "user"))


@pytest.fixture(params=TROUBLES)
def trouble(request: pytest.FixtureRequest, tmp_path: Path, isolated_home: Path) -> Iterator[Trouble]:
    made = make_trouble(str(request.param), tmp_path / "repo")
    yield made
    made.close()


# --------------------------------------------------------------------------- README snippets

SNIPPET_ANSWER = "Redis 7, with a 15 minute TTL."


def state_decision_in_a_host(project: Project) -> None:
    """Session 1, through the public Host: the decision is stated and retained."""
    where = session_file_for(project.root, "earlier")
    ui = RecordingUI()
    with Host(project.root, session_file=where, host_name="earlier", ui=ui) as host:
        host.agent_end([{"role": "user", "content": DECISION}, {"role": "assistant", "content": "Noted."}])
    assert DECISION_MARK in stored_text(project), (ui.notices, ui.status_history, project.queue_jobs())


def run_readme_snippet(heading: str, project: Project, home: Path) -> tuple[subprocess.CompletedProcess[str], str]:
    """Run the README's snippet for ``heading`` as written, in ``project``, as a child process whose
    OpenAI-compatible endpoint (``OPENAI_BASE_URL``) is the scripted server; returns the process and
    every request body the model was sent."""
    from .model_server import ModelServer, Reply
    from .model_server_chat import ChatCompletions
    from .model_server_openai import OpenAIResponses

    script = project.root / "snippet.py"
    script.write_text(readme_snippet(heading), encoding="utf-8")
    with ModelServer([Reply.say(SNIPPET_ANSWER)], dialects=(ChatCompletions(), OpenAIResponses())) as srv:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HINDSIGHT_"))}
        env.update(
            HOME=str(home),
            XDG_CONFIG_HOME=str(home / ".config"),
            XDG_DATA_HOME=str(home / ".local" / "share"),
            OPENAI_BASE_URL=srv.url + "/v1",
            OPENAI_API_KEY="test-key",
            OPENAI_AGENTS_DISABLE_TRACING="1",
            LANGSMITH_TRACING="false",
        )
        proc = subprocess.run(
            [sys.executable, str(script)], cwd=project.root, env=env, capture_output=True, text=True, timeout=300
        )
        sent = "\n".join(r.text() for r in srv.requests if r.method == "POST")
    return proc, sent


def assert_readme_snippet_runs(heading: str, project: Project, home: Path) -> None:
    """The README's snippet for ``heading``, run as written after session 1, answers and was shown
    session 1's decision in our block."""
    state_decision_in_a_host(project)
    proc, sent = run_readme_snippet(heading, project, home)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == SNIPPET_ANSWER
    assert "<hindsight-memory>" in sent and DECISION_MARK in sent  # session 1's decision reached the model


def assert_stored_without_block(project: Project, *said: str) -> None:
    """Memory holds session 1's decision, the question and ``said``, no block text, and the decision
    once (the recall tool's answer was not retained back)."""
    stored = stored_text(project)
    assert DECISION_MARK in stored and QUESTION in stored
    assert all(text in stored for text in said), said
    assert not has_block(stored)
    assert project.unit_count(DECISION_MARK) == 1


def chat_requests(server: ModelServer) -> list[list[dict[str, Any]]]:
    """The messages of every Chat Completions request the scripted server was sent."""
    return [chat_messages(r) for r in server.requests_to(CHAT_ROUTE)]


def role_texts(messages: list[dict[str, Any]], role: str) -> list[str]:
    """The text of each chat message of ``role``."""
    return [message_text(m) for m in messages if m.get("role") == role]


def assert_block_before_the_question_in_both_calls(server: ModelServer) -> None:
    """Session 2 made two Chat Completions calls (the recall tool's, then the answer): the first has
    our block just before the question, the second the same block again and the tool's answer, and
    the recall tool was offered."""
    first, second = chat_requests(server)
    users = role_texts(first, "user")
    assert has_block(users[-2]) and DECISION_MARK in users[-2]  # our block, just before the question
    assert users[-1] == QUESTION
    assert [t for t in role_texts(second, "user") if has_block(t)] == [users[-2]]  # again after the tool call
    (tool_answer,) = role_texts(second, "tool")
    assert DECISION_MARK in tool_answer  # the recall tool's result reached the model
    offered = [t["function"]["name"] for t in server.requests_to(CHAT_ROUTE)[0].body["tools"]]
    assert "hindsight_recall" in offered


def readme_snippet(heading: str) -> str:
    """The first fenced ``python`` block under the README heading ``heading`` (any level), as written."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    at = re.search(r"^#+ " + re.escape(heading) + r"\s*$", readme, flags=re.MULTILINE)
    assert at is not None, f"README has no heading {heading!r}"
    block = re.search(r"^```python\n(.*?)^```", readme[at.end() :], flags=re.MULTILINE | re.DOTALL)
    assert block is not None, f"README section {heading!r} has no python block"
    return block.group(1)
