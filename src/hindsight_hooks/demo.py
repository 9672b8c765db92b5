"""``hindsight-hooks demo``: the plugin in a real host, on the embedded store, in seconds.

Session 1 states a preference and a project decision; ``agent_end`` retains them through the
durable queue into a SQLite file inside a fresh folder. Session 2 starts cold and its first
turn gets them injected. Nothing leaves the machine: no server, no model, no network.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import TextIO

from .hooks import ConsoleUI, Host, assistant_message, message_text, user_message

DEMO_CONFIG = """\
# Written by `hindsight-hooks demo`: the embedded store, kept inside this folder.
backend = "local"

[local]
path = ".hindsight/memory.db"

[notifications]
startup = false
"""

SESSION_1 = [
    (
        "For tests in this repo I prefer pytest with plain asserts; never unittest classes.",
        "Noted: pytest with plain asserts, no unittest classes.",
    ),
    (
        "Decision: the response cache lives in SQLite, not Redis, because the agent must run offline.",
        "Understood: the response cache uses SQLite so it works offline; Redis is out.",
    ),
]
SESSION_2_PROMPT = "Writing the response cache tests now: which cache store did we pick, and do I prefer pytest?"


def _say(out: TextIO, text: str = "") -> None:
    print(text, file=out)


def run_demo(folder: Path | None = None, out: TextIO | None = None) -> int:
    """Run both sessions in ``folder`` (a fresh temp folder by default); returns an exit code."""
    out = out or sys.stdout
    root = Path(folder) if folder is not None else Path(tempfile.mkdtemp(prefix="hindsight-demo-"))
    root.mkdir(parents=True, exist_ok=True)
    (root / ".hindsight").mkdir(mode=0o700, exist_ok=True)
    (root / ".hindsight" / "config.toml").write_text(DEMO_CONFIG, encoding="utf-8")
    _say(out, f"hindsight-hooks demo in {root}")
    _say(out, "(embedded SQLite store at .hindsight/memory.db; no server, no model, no network)")
    _say(out)

    _say(out, "== session 1: the user states a preference and a decision")
    with Host(root, session_file=root / "session-1.jsonl", host_name="demo", ui=ConsoleUI(stream=out)) as host:
        transcript = []
        for prompt, answer in SESSION_1:
            transcript.append(user_message(prompt))
            host.context(transcript)
            transcript.append(assistant_message(answer))
            host.agent_end(transcript)
            _say(out, f"  user: {prompt}")
        _say(out, f"  retained through the queue; status: {_status(host)}")
    _say(out)

    _say(out, "== session 2: a new session; its first turn gets the memory injected")
    with Host(root, session_file=root / "session-2.jsonl", host_name="demo", ui=ConsoleUI(stream=out)) as host:
        messages = [user_message(SESSION_2_PROMPT)]
        for_model = host.context(messages)
        _say(out, f"  user: {SESSION_2_PROMPT}")
        injected = [m for m in for_model if m.get("customType") == "hindsight-recall"]
        _say(out)
        if not injected:
            _say(out, "no memory was injected: something is wrong (run `hindsight-hooks doctor`)")
            return 1
        _say(out, message_text(injected[0]))
        _say(out)
        _say(out, "== queue")
        _say(out, host.command("/hindsight:queue").text)
    _say(out)
    _say(out, "== try next")
    exe = console_script()
    for line in (
        f"cd {root}",
        f'{exe} recall "cache store"',
        f"{exe} queue --jobs",
        f"{exe} mode read-only",
        f"{exe} doctor",
        f"{exe} chat            # the reference host, offline echo model",
    ):
        _say(out, f"  {line}")
    return 0


def console_script() -> str:
    """How the person can run *this* installation's ``hindsight-hooks`` from any folder.

    The README installs into ``.venv`` without activating it, so the bare name is usually not
    on ``PATH`` (or names another installation): then the absolute path of the script next to
    this interpreter is printed instead, and the suggested commands work when pasted.
    """
    ours = Path(sys.executable).parent / "hindsight-hooks"
    if not ours.exists():
        return "hindsight-hooks"
    found = shutil.which("hindsight-hooks")
    if found is not None and Path(found).resolve() == ours.resolve():
        return "hindsight-hooks"
    return str(ours.absolute())


def _status(host: Host) -> str:
    ui = host.ctx.ui
    status = getattr(ui, "status", {})
    return str(status.get("hindsight", "-")) if isinstance(status, dict) else "-"
