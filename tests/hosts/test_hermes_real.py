"""The real Hermes Agent 0.19.0 with our memory provider, against a scripted Chat Completions model on loopback.

Each test builds a tmp machine (:class:`tests.hosts.hermes_world.HermesWorld`: HOME, HERMES_HOME, XDG
folders and a project in tmp), installs the provider with the real ``hindsight-hooks install hermes``
(the README's line, run as written, in one test), and runs the real ``hermes chat -Q -q`` the way a
script would. What reached "the model" is read from the model server's recorded requests; what Hermes
kept from its own session store (``state.db``); what memory kept from the embedded SQLite store, the
queue file, or the real Hindsight server.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from ..plugin.hostkit import wait_until
from .hermes_world import HermesWorld, hermes_executable
from .model_server import ModelServer, RecordedRequest, Reply
from .model_server_chat import CHAT_ROUTE, ChatCompletions, chat_messages, message_text
from .readme_lines import install_line
from .test_pi_real import documents_text

LOCAL = 'backend = "local"\n\n[notifications]\nstartup = false\n'
DECISION = "We decided to use Redis 7 for the cache because it supports TTLs."
QUESTION = "What did we decide about the cache?"
ANSWER = "We chose Redis 7 for the cache."


@pytest.fixture(scope="module")
def hermes() -> Path:
    return hermes_executable()


def last_user_text(request: RecordedRequest) -> str:
    users = [m for m in chat_messages(request) if m.get("role") == "user"]
    return message_text(users[-1]) if users else ""


def script(request: RecordedRequest) -> Reply:
    """Session 2's question gets a call of our recall tool first, then an answer; everything else "Noted."."""
    messages = chat_messages(request)
    if QUESTION not in last_user_text(request):
        return Reply.say("Noted.")
    if not any(m.get("role") == "tool" for m in messages):
        return Reply.tool("hindsight_recall", {"query": "cache decision Redis"})
    return Reply.say(ANSWER)


def asked(model: ModelServer, text: str) -> list[RecordedRequest]:
    return [r for r in model.requests_to(CHAT_ROUTE) if text in last_user_text(r)]


def tool_names(request: RecordedRequest) -> set[str]:
    body = request.body if isinstance(request.body, dict) else {}
    return {t["function"]["name"] for t in body.get("tools", []) if isinstance(t, dict) and "function" in t}


def test_readme_install_then_session_2_gets_session_1s_decision_and_our_tool_answers_the_model(
    tmp_path: Path, hermes: Path
) -> None:
    with ModelServer(script, dialects=(ChatCompletions(),)) as model:
        world = HermesWorld(tmp_path, hermes, model.url, LOCAL, install=False)
        line = install_line("Hermes Agent")
        assert line == "hindsight-hooks install hermes"
        done = world.run_bash(line)
        assert done.returncode == 0, done.stdout + done.stderr
        status = world.hermes_cmd("memory", "status")
        assert "Provider:  hindsight_hooks" in status.stdout, status.stdout + status.stderr
        assert "hindsight_hooks  (no setup needed) ← active" in status.stdout, status.stdout

        first = world.chat(DECISION)
        assert first.returncode == 0, first.stdout + first.stderr
        assert "Noted." in first.stdout
        second = world.chat(QUESTION)
        assert second.returncode == 0, second.stdout + second.stderr
        assert ANSWER in second.stdout

        session_1 = asked(model, DECISION)
        assert session_1 and "hindsight_recall" in tool_names(session_1[0])
        session_2 = asked(model, QUESTION)
        assert len(session_2) >= 2, "the question, then the answer to our tool's result"
        prompt = last_user_text(session_2[0])
        assert prompt.startswith(QUESTION)
        block = prompt[prompt.index("<hindsight-memory>") : prompt.index("</hindsight-memory>")]
        assert "Redis 7" in block, prompt
        assert "<memory-context>" in prompt  # Hermes' own fence around what a provider recalls
        assert "<hindsight-memory>" in last_user_text(session_2[-1]), "the turn's later model calls carry it too"
        results = [message_text(m) for m in chat_messages(session_2[-1]) if m.get("role") == "tool"]
        assert any("Redis 7" in text for text in results), results

    rows = world.stored_messages()
    assert {r["role"] for r in rows} >= {"user", "assistant", "tool"}
    assert not any("hindsight-memory" in (r["content"] or "") for r in rows), "Hermes' stored messages hold no block"
    sent = [r for r in rows if r["api_content"]]
    assert all(r["role"] == "user" for r in sent)  # only the prompt-cache sidecar of the sent prompt (ADR-102)
    texts = world.stored_texts()
    assert any("Redis 7 for the cache because it supports TTLs" in t for t in texts)
    assert not any("<hindsight-memory>" in t or "memory-context" in t for t in texts), "no block was retained"


def test_hermes_memory_setup_takes_it_and_uninstall_after_hermes_rewrote_config_takes_back_only_ours(
    tmp_path: Path, hermes: Path
) -> None:
    world = HermesWorld(tmp_path, hermes, "http://127.0.0.1:9", LOCAL, provider="holographic")
    setup = world.hermes_cmd("memory", "setup", "hindsight_hooks")
    assert setup.returncode == 0, setup.stdout + setup.stderr
    assert "Memory provider: hindsight_hooks" in setup.stdout
    rewritten = yaml.safe_load((world.home / "config.yaml").read_text(encoding="utf-8"))
    assert "_config_version" in rewritten, "Hermes rewrote config.yaml its own way"
    done = world.cli("uninstall", "hermes")
    assert done.returncode == 0, done.stdout + done.stderr
    after = yaml.safe_load((world.home / "config.yaml").read_text(encoding="utf-8"))
    assert after["memory"]["provider"] == "holographic", "the provider before ours is back"
    assert "hindsight-hooks" not in (after.get("plugins") or {}).get("enabled", [])
    assert after["_config_version"] == rewritten["_config_version"]
    assert not (world.home / "plugins" / "hindsight_hooks").exists()
    status = world.hermes_cmd("memory", "status")
    assert "hindsight_hooks" not in status.stdout


def test_commands_and_the_end_of_turn_hook_through_hermes_own_plugin_manager(tmp_path: Path, hermes: Path) -> None:
    """Hermes' plugin manager registers our /hindsight:* commands (from plugins.enabled); run in a session
    of the provider Hermes' own loader made, /hindsight:mode read-only stops the next retain."""
    with ModelServer([], default_text="Noted.", dialects=(ChatCompletions(),)) as model:
        world = HermesWorld(tmp_path, hermes, model.url, LOCAL)
        code = """
import json, pathlib
from hermes_cli.plugins import get_plugin_commands, get_plugin_command_handler, invoke_hook
from plugins.memory import load_memory_provider
out = {}
commands = get_plugin_commands()
out["registered"] = sorted(n for n in commands if n.startswith("hindsight"))
out["before"] = get_plugin_command_handler("hindsight:session")("")
provider = load_memory_provider("hindsight_hooks")
provider.initialize("s-commands", hermes_home="HOME", platform="cli", agent_context="primary")
out["mode"] = get_plugin_command_handler("hindsight:mode")("read-only")
out["session"] = get_plugin_command_handler("hindsight:session")("")
turn = [{"role": "user", "content": "Read-only fact: the staging host is called kestrel."},
        {"role": "assistant", "content": "Noted."}]
invoke_hook("post_llm_call", session_id="s-commands", conversation_history=turn)
queue = pathlib.Path(".hindsight/retain-queue.jsonl")
read = lambda: queue.read_text() if queue.exists() else ""
out["queue_after_read_only"] = read()
get_plugin_command_handler("hindsight:mode")("normal")
turn2 = turn + [{"role": "user", "content": "Normal fact: the build host is called osprey."},
                {"role": "assistant", "content": "Noted."}]
invoke_hook("post_llm_call", session_id="s-commands", conversation_history=turn2)
out["queue_after_normal"] = read()
provider.shutdown()
out["queue_after_shutdown"] = read()
print(json.dumps(out))
""".replace("HOME", str(world.home))
        done = world.run_python(code)
    assert done.returncode == 0, done.stdout + done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert {"hindsight", "hindsight:mode", "hindsight:session", "hindsight:queue", "hindsight:flush"} <= set(
        out["registered"]
    )
    assert "not active" in out["before"]
    assert "read-only" in out["mode"] and "read-only" in out["session"]
    assert out["queue_after_read_only"].strip() == "", "read-only: nothing queued"
    queued = out["queue_after_normal"]
    assert "osprey" in queued and "kestrel" not in queued  # the hook queued the new turn, and only on disk
    assert out["queue_after_shutdown"].strip() == "", "the provider's shutdown delivered it"
    texts = world.stored_texts()
    assert any("osprey" in t for t in texts)
    assert not any("kestrel" in t for t in texts)


# -- a session killed right after its turn ----------------------------------------------------------------
class _Blackhole(BaseHTTPRequestHandler):
    """A server that takes every request and never answers (until released)."""

    release = threading.Event()

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def _hang(self) -> None:
        self.release.wait(300)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _hang


@pytest.fixture
def blackhole() -> Iterator[str]:
    handler = type("Blackhole", (_Blackhole,), {"release": threading.Event()})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    handler.release.set()
    server.shutdown()
    server.server_close()


def hindsight_config(url: str, bank: str, timeout_ms: int = 3000) -> str:
    return (
        f'backend = "hindsight"\n\n[hindsight]\nbase_url = "{url}"\ntimeout_ms = {timeout_ms}\n\n'
        f'[banks.project]\nbank_id = "{bank}"\n\n[recall]\ntimeout_ms = {timeout_ms}\n\n'
        "[mental_models]\nenabled = false\n\n[notifications]\nstartup = false\n"
    )


def bundled_config(world: HermesWorld, url: str, bank: str) -> None:
    """Hermes' own ``hindsight`` provider, pointed at ``url`` (its config file, as `hermes memory setup` writes it)."""
    folder = world.home / "hindsight"
    folder.mkdir(exist_ok=True)
    config = {"mode": "local_external", "api_url": url, "bank_id": bank, "timeout": 3, "memory_mode": "hybrid"}
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")


@pytest.mark.integration
def test_killed_right_after_a_turn_ours_delivers_it_at_the_next_start_the_bundled_provider_loses_it(
    tmp_path: Path, hermes: Path, blackhole: str, hindsight_url: str, hindsight_backend: Any, make_bank: Any
) -> None:
    """Session 1 talks to a server that never answers and is SIGKILLed the moment its answer is printed;
    session 2 talks to the real Hindsight server. Ours had the turn on disk and delivers it; Hermes'
    bundled provider held it in memory only (ADR-103)."""
    ours_bank, bundled_bank = make_bank("hh-hermes"), make_bank("hh-bundled")
    with ModelServer([], default_text="Noted.", dialects=(ChatCompletions(),)) as model:
        ours = HermesWorld(tmp_path / "ours", hermes, model.url, hindsight_config(blackhole, ours_bank))
        out, _ = ours.chat_killed_after_answer(DECISION)
        assert "Noted." in out
        queued = ours.queue_lines()
        assert len(queued) == 1, "the turn was on disk when Hermes printed its answer"
        assert "Redis 7" in queued[0]
        ours.write_config(hindsight_config(hindsight_url, ours_bank, timeout_ms=30000))
        later = ours.chat("Good morning.")
        assert later.returncode == 0, later.stdout + later.stderr

        bundled = HermesWorld(tmp_path / "bundled", hermes, model.url, LOCAL, install=False, provider="hindsight")
        bundled_config(bundled, blackhole, bundled_bank)
        status = bundled.hermes_cmd("memory", "status")
        assert "hindsight  (" in status.stdout and "← active" in status.stdout, status.stdout + status.stderr
        out, _ = bundled.chat_killed_after_answer(DECISION)
        assert "Noted." in out
        bundled_config(bundled, hindsight_url, bundled_bank)
        later = bundled.chat("Good morning.")
        assert later.returncode == 0, later.stdout + later.stderr
        assert len(asked(model, "Good morning.")) == 2

    assert ours.queue_lines() == [], "the next session's start delivered the killed session's turn"
    # An accepted async retain lands in the document a moment later: wait for it, bounded.
    decision = "Redis 7 for the cache because it supports TTLs"
    assert wait_until(lambda: decision in documents_text(hindsight_backend, ours_bank), 60, 0.5)
    assert wait_until(lambda: "Good morning" in documents_text(hindsight_backend, bundled_bank), 60, 0.5)
    kept_by_bundled = documents_text(hindsight_backend, bundled_bank)
    assert "Good morning" in kept_by_bundled, "the bundled provider works against this server"
    assert "Redis 7" not in kept_by_bundled, "the bundled provider lost the killed session's turn"


# -- a broken backend, a hanging server and a corrupt state file -------------------------------------------
def _corrupt_state(world: HermesWorld) -> None:
    state = world.project / ".hindsight"
    (state / "retain-cursors.json").write_text("{not json", encoding="utf-8")
    (state / "retain-queue.jsonl").write_text('{"half a job\n', encoding="utf-8")
    (state / "session-meta").mkdir(exist_ok=True)
    (state / "injected-lines").mkdir(exist_ok=True)
    (state / "injected-lines" / "x.json").write_text("\x00\x01", encoding="utf-8")


@pytest.mark.parametrize("trouble", ["refused", "hanging", "corrupt"])
def test_a_broken_backend_a_hanging_server_or_corrupt_state_never_breaks_a_hermes_turn(
    tmp_path: Path, hermes: Path, blackhole: str, trouble: str
) -> None:
    with ModelServer([], default_text="Noted.", dialects=(ChatCompletions(),)) as model:
        if trouble == "refused":
            config = hindsight_config("http://127.0.0.1:9", "hh-refused")
        elif trouble == "hanging":
            config = hindsight_config(blackhole, "hh-hanging")
        else:
            config = LOCAL
        world = HermesWorld(tmp_path, hermes, model.url, config)
        if trouble == "corrupt":
            _corrupt_state(world)
        started = time.monotonic()
        done = world.chat(DECISION)
        elapsed = time.monotonic() - started
        assert done.returncode == 0, done.stdout + done.stderr
        assert "Noted." in done.stdout
        assert "Traceback" not in done.stderr, done.stderr
        assert len(asked(model, DECISION)) == 1, "the turn reached the model once"
        assert elapsed < 150, elapsed  # generous: Hermes' own start-up plus our bounded waits
    if trouble == "corrupt":
        assert any("Redis 7 for the cache" in t for t in world.stored_texts()), "memory recovered and retained"
        kept_aside = [p.name for p in (world.project / ".hindsight").iterdir() if ".corrupt" in p.name]
        assert kept_aside, "the damaged cursor store was moved aside, not deleted"
    else:
        assert any("Redis 7" in line for line in world.queue_lines()), "undelivered, but queued on disk"
