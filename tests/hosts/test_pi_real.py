"""The real ``pi`` 0.73.1 with our extension, against a scripted Chat Completions model on loopback.

Each test builds a tmp machine (:class:`tests.hosts.pi_rpc.PiWorld`: HOME, PI_CODING_AGENT_DIR
and XDG folders in tmp), installs the extension with the real ``hindsight-hooks install pi``,
and drives ``pi --mode rpc`` as a person's client would. What reached "the model" is read from
the model server's recorded requests; what Pi kept is read from Pi's own session files; what
memory kept is read from the embedded SQLite store, the queue file, or the real Hindsight
server.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from ..plugin.hostkit import wait_until
from .model_server import ModelServer, RecordedRequest, Reply
from .model_server_chat import CHAT_ROUTE, ChatCompletions, chat_messages, message_text
from .pi_rpc import PiRpc, PiWorld, is_notice, pi_executable, serve_pids
from .readme_lines import install_line
from .test_serve_stdio import hanging_handler  # a Hindsight look-alike whose recall never answers

LOCAL = 'backend = "local"\n\n[notifications]\nstartup = false\n'
DECISION = "We decided to use Postgres 16 for the cache."
QUESTION = "Which Postgres version do we use for the cache?"


@pytest.fixture(scope="module")
def pi() -> Path:
    return pi_executable()


@pytest.fixture
def model() -> Iterator[ModelServer]:
    with ModelServer([], default_text="Noted.", dialects=(ChatCompletions(),)) as server:
        yield server


def stored_texts(world: PiWorld) -> list[str]:
    """Every string held in the embedded store's tables (the proof of what memory kept)."""
    db = Path(world.env["XDG_DATA_HOME"]) / "hindsight-hooks" / "memory.db"
    texts: list[str] = []
    with sqlite3.connect(db) as conn:
        tables = [row[0] for row in conn.execute("select name from sqlite_master where type = 'table'")]
        for table in tables:
            try:
                rows = conn.execute(f'select * from "{table}"').fetchall()
            except sqlite3.Error:
                continue
            texts.extend(value for row in rows for value in row if isinstance(value, str))
    return texts


def chats(model: ModelServer) -> list[RecordedRequest]:
    return model.requests_to(CHAT_ROUTE)


def blocks_in(request: RecordedRequest) -> list[dict[str, Any]]:
    return [m for m in chat_messages(request) if message_text(m).lstrip().startswith("<hindsight-memory>")]


def test_session_2_gets_the_block_before_its_prompt_and_pi_keeps_none(
    tmp_path: Path, pi: Path, model: ModelServer
) -> None:
    world = PiWorld(tmp_path, model.url, LOCAL)
    with PiRpc(world, pi) as first:
        first.prompt(DECISION)
        assert first.close() == 0
    assert not blocks_in(chats(model)[-1]), "session 1 had nothing to recall"
    model.clear()
    with PiRpc(world, pi) as second:
        second.prompt(QUESTION)
        assert second.close() == 0
    (request,) = chats(model)
    messages = chat_messages(request)
    assert message_text(messages[-1]) == QUESTION
    (block,) = blocks_in(request)
    assert messages[-2] is block, "append: the block goes just before the final user message"
    assert block["role"] == "user"
    assert DECISION in message_text(block)
    sessions = world.session_files()
    assert len(sessions) == 2
    assert "hindsight-memory" not in sessions[-1].read_text(encoding="utf-8")
    assert QUESTION in sessions[-1].read_text(encoding="utf-8")
    assert not any("<hindsight-memory" in text for text in stored_texts(world))


def test_mode_read_only_sent_inside_pi_stops_the_next_retain(tmp_path: Path, pi: Path, model: ModelServer) -> None:
    world = PiWorld(tmp_path, model.url, LOCAL)
    with PiRpc(world, pi) as session:
        session.prompt(DECISION)
        notice = session.command("/hindsight:mode read-only")
        assert "read-only" in notice["message"], notice
        asked = len(chats(model))
        session.prompt("We decided to use Redis 7 for the session store.")
        assert len(chats(model)) == asked + 1, "the command went to the plugin; the prompt went to the model"
        assert session.close() == 0
    texts = stored_texts(world)
    assert any("Postgres 16" in text for text in texts)
    assert not any("Redis 7" in text for text in texts)


def test_a_scripted_call_of_the_recall_tool_returns_the_memory_to_the_model(tmp_path: Path, pi: Path) -> None:
    def script(request: RecordedRequest) -> Reply:
        messages = chat_messages(request)
        if messages and messages[-1].get("role") == "tool":
            return Reply.say("It is Postgres 16.")
        if QUESTION in message_text(messages[-1]) if messages else False:
            return Reply.tool("hindsight_recall", {"query": "Postgres version for the cache"})
        return Reply.say("Noted.")

    with ModelServer(script, dialects=(ChatCompletions(),)) as model:
        world = PiWorld(tmp_path, model.url, LOCAL)
        with PiRpc(world, pi) as first:
            first.prompt(DECISION)
            first.close()
        model.clear()
        with PiRpc(world, pi) as second:
            second.prompt(QUESTION)
            second.close()
        requests = chats(model)
    offered = {tool["function"]["name"] for tool in (requests[0].body or {}).get("tools", [])}
    assert {"hindsight_recall", "hindsight_retain", "hindsight_reflect"} <= offered
    assert len(requests) == 2, "the tool call, then the answer to its result"
    tool_messages = [m for m in chat_messages(requests[1]) if m.get("role") == "tool"]
    assert len(tool_messages) == 1
    assert "Postgres 16" in message_text(tool_messages[0])


def documents_text(backend: Any, bank: str) -> str:
    """The original text of every document in ``bank`` on the real Hindsight server."""
    listed = backend.list_documents(bank, timeout_s=30)
    ids = [str(item["id"]) for item in listed.get("items", []) if isinstance(item, dict) and "id" in item]
    return "\n".join(str(backend.get_document(bank, doc, timeout_s=30).get("original_text", "")) for doc in ids)


@pytest.mark.integration
def test_kill_9_of_serve_during_a_turn_finishes_the_turn_and_delivers_every_acknowledged_job(
    tmp_path: Path, pi: Path, hindsight_url: str, hindsight_backend: Any, make_bank: Any
) -> None:
    holder: dict[str, Any] = {"pi": None, "killed": []}

    def script(request: RecordedRequest) -> Reply:
        if "Kill point" in request.text() and not holder["killed"]:
            for pid in serve_pids(holder["pi"]):
                os.kill(pid, signal.SIGKILL)
                holder["killed"].append(pid)
        return Reply.say("Noted.")

    bank = make_bank("hh-pi")
    config = (
        f'backend = "hindsight"\n\n[hindsight]\nbase_url = "{hindsight_url}"\n\n'
        f'[banks.project]\nbank_id = "{bank}"\n\n[mental_models]\nenabled = false\n\n'
        '[retain]\ndelivery = "coalesced"\n\n[notifications]\nstartup = false\n'
    )
    with ModelServer(script, dialects=(ChatCompletions(),)) as model:
        world = PiWorld(tmp_path, model.url, config)
        with PiRpc(world, pi) as session:
            holder["pi"] = session.proc.pid
            session.prompt(DECISION)
            acknowledged = world.queue_lines()
            assert acknowledged, "coalesced delivery: the turn's job is queued on disk, not yet delivered"
            session.prompt("Kill point: we also chose Redis 7 for the session store.")
            assert holder["killed"], "the serve process was killed while the model was answering"
            stopped = [n for n in session.notices() if "stopped" in n["message"]]
            assert len(stopped) == 1, session.notices()
            session.prompt("One more: container images are built on Alpine.")
            assert any("restarted" in n["message"] for n in session.notices())
            assert len(serve_pids(session.proc.pid)) == 1
            assert session.close() == 0
        assert len(chats(model)) == 3, "every turn reached the model"
    assert world.queue_lines() == [], "every queued job was delivered after the restart"
    # Delivered means the server accepted the async retain; its worker appends it to the session's
    # document a moment later (seen: 0.5 s after the queue emptied), so the check waits for it.
    facts = ("Postgres 16", "Redis 7", "Alpine")
    wait_until(lambda: all(fact in documents_text(hindsight_backend, bank) for fact in facts), 60, 0.5)
    stored = documents_text(hindsight_backend, bank)
    for fact in facts:
        assert fact in stored, (fact, stored[:2000])


def test_a_missing_python_is_one_clear_message_and_pi_runs_as_if_the_extension_were_absent(
    tmp_path: Path, pi: Path, model: ModelServer
) -> None:
    world = PiWorld(tmp_path, model.url, LOCAL)
    settings = world.extension_dir / "hindsight.json"
    settings.write_text(json.dumps({"python": str(tmp_path / "no-such-python")}), encoding="utf-8")
    with PiRpc(world, pi) as session:
        session.prompt(DECISION)
        session.prompt(QUESTION)
        assert session.close() == 0
    notices = [e for e in session.events if is_notice(e)]
    assert len(notices) == 1, notices
    assert notices[0]["notifyType"] == "error"
    assert "no-such-python" in notices[0]["message"] and "hindsight-hooks install pi" in notices[0]["message"]
    requests = chats(model)
    assert len(requests) == 2
    for request in requests:
        assert not blocks_in(request)
        names = {tool["function"]["name"] for tool in (request.body or {}).get("tools", [])}
        assert not any(name.startswith("hindsight") for name in names)


def test_a_python_without_hindsight_hooks_says_why(tmp_path: Path, pi: Path, model: ModelServer) -> None:
    world = PiWorld(tmp_path, model.url, LOCAL)
    bare = "/usr/bin/python3"  # the system Python: no hindsight-hooks installed in it
    (world.extension_dir / "hindsight.json").write_text(json.dumps({"python": bare}), encoding="utf-8")
    with PiRpc(world, pi) as session:
        session.prompt(DECISION)
        assert session.close() == 0
    (notice,) = [e for e in session.events if is_notice(e)]
    assert "could not run hindsight-hooks" in notice["message"]
    assert "hindsight_hooks" in notice["message"]  # the interpreter's own last line: No module named ...
    assert len(chats(model)) == 1


def test_a_slow_python_costs_the_turn_its_memory_not_the_turn(tmp_path: Path, pi: Path, model: ModelServer) -> None:
    handler = hanging_handler()
    hang = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    hang.daemon_threads = True
    threading.Thread(target=hang.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{hang.server_address[1]}"
        config = f'backend = "hindsight"\n[hindsight]\nbase_url = "{url}"\n[recall]\ntimeout_ms = 120000\n'
        world = PiWorld(tmp_path, model.url, config)
        settings = json.loads((world.extension_dir / "hindsight.json").read_text(encoding="utf-8"))
        settings["deadlinesMs"] = {"context": 1500}
        (world.extension_dir / "hindsight.json").write_text(json.dumps(settings), encoding="utf-8")
        with PiRpc(world, pi) as session:
            began = time.monotonic()
            session.prompt(QUESTION)
            took = time.monotonic() - began
            session.prompt(DECISION)
            slow = [n for n in session.notices() if "did not answer context" in n["message"]]
            session.close()
        assert took < 60, "the turn went on after the context deadline, not after the recall's 120 s"
        assert len(slow) == 1, session.notices()
        assert len(chats(model)) == 2
        assert not any(blocks_in(r) for r in chats(model))
    finally:
        handler.release.set()
        hang.shutdown()
        hang.server_close()


def test_the_readme_install_line_as_written_gives_pi_memory(tmp_path: Path, pi: Path, model: ModelServer) -> None:
    line = install_line("Pi")
    assert line == "hindsight-hooks install pi"
    world = PiWorld(tmp_path, model.url, LOCAL, install=False)
    env = {**world.env, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{world.env['PATH']}"}
    done = subprocess.run(["bash", "-c", line], cwd=world.project, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (world.extension_dir / "index.ts").is_file()
    with PiRpc(world, pi) as session:
        session.prompt(DECISION)
        assert session.close() == 0
    offered = {tool["function"]["name"] for tool in (chats(model)[0].body or {}).get("tools", [])}
    assert "hindsight_recall" in offered
    assert any("Postgres 16" in text for text in stored_texts(world))


def test_asked_when_something_began_pi_gets_the_oldest_first(tmp_path: Path, pi: Path, model: ModelServer) -> None:
    """ADR 226 through the real host: two sessions about the billing migration, its start and then its
    end; a third session's "When did we first talk about …?" sends a block whose first item is the start."""
    started = "Start the billing migration: move the invoices to the new schema."
    finished = "Finish the billing migration and drop the old invoice tables."
    text = _block_asked_after(PiWorld(tmp_path, model.url, LOCAL), pi, model, [started, finished],
                              "When did we first talk about the billing migration?")  # fmt: skip
    assert started in text and finished in text
    assert text.index(started) < text.index(finished), text


def test_a_word_no_memory_says_pi_gets_the_memory_said_in_other_words(
    tmp_path: Path, pi: Path, model: ModelServer
) -> None:
    """ADR 233 through the real host: session 1 says when the daily sync is; session 2's "When is the
    standup?" (no word of it) sends a block that holds it."""
    said = "Our daily sync is at 9:30, keep my mornings free before it."
    assert said in _block_asked_after(PiWorld(tmp_path, model.url, LOCAL), pi, model, [said], "When is the standup?")


def _block_asked_after(world: PiWorld, pi: Path, model: ModelServer, sessions: list[str], question: str) -> str:
    """The text of the one block a new Pi session's ``question`` sent the model, after a session of
    its own for each of ``sessions`` (one prompt each)."""
    for said in sessions:
        with PiRpc(world, pi) as session:
            session.prompt(said)
            assert session.close() == 0
    model.clear()
    with PiRpc(world, pi) as asking:
        asking.prompt(question)
        assert asking.close() == 0
    (request,) = chats(model)
    (block,) = blocks_in(request)
    return message_text(block)
