"""One memory across hosts: a decision stated in the real Claude Code is recalled by the real Pi.

Both programs run in the same project folder with the same HOME and XDG folders (so the same
embedded store), each with our integration installed by its README line: Claude Code's hooks
retain session 1, and Pi's first request in that folder carries the decision in our block.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from . import test_claude_code_real as claude_real
from .model_server import AnthropicMessages, ModelServer
from .model_server_chat import CHAT_ROUTE, ChatCompletions, chat_messages, message_text
from .pi_rpc import PiRpc, PiWorld, pi_executable
from .readme_lines import install_line
from .real_agents import SCRIPT, runtime
from .test_pi_real import LOCAL, stored_texts

__all__ = ["runtime"]  # the hook helper's socket folder (a fixture)
Claude = claude_real.Claude
DECISION = "We decided to use Postgres 16 for the cache."
QUESTION = "Which Postgres version do we use for the cache?"


def test_a_decision_retained_from_claude_code_is_recalled_by_pi(
    tmp_path: Path, claude_bin: Path, runtime: Path
) -> None:
    with ModelServer(default_text="Noted.", dialects=(AnthropicMessages(), ChatCompletions())) as server:
        world = PiWorld(tmp_path, server.url, LOCAL, install=False)
        home = tmp_path / "home"
        home.mkdir(exist_ok=True)
        claude = Claude(claude_bin, world.project, home, server, runtime)
        for key in ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
            world.env[key] = claude.env[key]  # one person, one machine: the same store for both
        path = f"{SCRIPT.parent}{os.pathsep}{os.environ.get('PATH', '')}"
        for agent, env in (("Claude Code", claude.env), ("Pi", world.env)):
            done = subprocess.run(
                ["bash", "-c", install_line(agent)],
                cwd=world.project,
                env={**env, "PATH": path},
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            assert done.returncode == 0, done.stdout + done.stderr
        claude.run(DECISION)
        deadline = time.monotonic() + 60
        while not any("Postgres 16" in t for t in stored_texts(world)) and time.monotonic() < deadline:
            time.sleep(0.2)  # Claude Code's Stop hook delivers in the background
        assert any("Postgres 16" in t for t in stored_texts(world))
        with PiRpc(world, pi_executable()) as session:
            session.prompt(QUESTION)
            assert session.close() == 0
        (request,) = server.requests_to(CHAT_ROUTE)
    messages = chat_messages(request)
    assert message_text(messages[-1]) == QUESTION
    assert message_text(messages[-2]).startswith("<hindsight-memory>")
    assert "Postgres 16" in message_text(messages[-2])
