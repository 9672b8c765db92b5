"""A host that knows nothing about hindsight-hooks: pluggy, the stdlib and the published contract.

Run as a script in a child process (``python foreign_host.py <project-dir>``). It never imports
``hindsight_hooks``: it declares the six hookspecs itself (same project name, same argument
names, as docs/design.md publishes them), loads whatever the ``agent_hooks`` entry-point group offers,
builds its own duck-typed ``ctx`` and UI, and drives one retain-then-recall conversation. It
prints one JSON report on stdout for the test to check, and exits 0 unless the host itself broke.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from importlib.metadata import entry_points
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pluggy

hookspec = pluggy.HookspecMarker("agent_hooks")


class Specs:
    @hookspec
    def session_start(self, ctx: Any) -> None: ...

    @hookspec
    def context(self, messages: list[dict[str, Any]], ctx: Any) -> list[dict[str, Any]] | None: ...

    @hookspec
    def agent_end(self, messages: list[dict[str, Any]], ctx: Any) -> None: ...

    @hookspec
    def shutdown(self, ctx: Any) -> None: ...

    @hookspec
    def register_commands(self) -> list[Any]: ...

    @hookspec
    def register_tools(self) -> list[Any]: ...


class MyUI:
    """This host's own UI: it just remembers what it was told."""

    def __init__(self) -> None:
        self.notices: list[tuple[str, str]] = []
        self.status: dict[str, str | None] = {}

    def notify(self, text: str, level: str = "info") -> None:
        self.notices.append((level, text))

    def set_status(self, key: str, text: str | None) -> None:
        self.status[key] = text

    def select(self, title: str, options: list[str]) -> str | None:
        return None


def make_context(cwd: Path, ui: MyUI) -> SimpleNamespace:
    """This host's own context: a bare namespace with just the attributes the contract names
    (it cannot be weakly referenced, which the plugin must cope with)."""
    return SimpleNamespace(
        cwd=cwd,
        session_file=cwd / "sessions" / "s1.jsonl",
        host_name="foreignhost",
        ui=ui,
        signal=threading.Event(),
        is_subagent=False,
    )


def main() -> int:
    cwd = Path(sys.argv[1])
    pm = pluggy.PluginManager("agent_hooks")
    pm.add_hookspecs(Specs)
    imported_before_load = "hindsight_hooks" in sys.modules
    group = [ep.name for ep in entry_points(group="agent_hooks")]
    loaded = pm.load_setuptools_entrypoints("agent_hooks")
    ui = MyUI()
    ctx = make_context(cwd, ui)
    pm.hook.session_start(ctx=ctx)
    commands = [c for batch in pm.hook.register_commands() for c in batch]
    tools = [t for batch in pm.hook.register_tools() for t in batch]
    now = int(time.time() * 1000)
    transcript: list[dict[str, Any]] = [
        {"role": "user", "content": "Our build uses the zebrafish compiler flag -Ozz", "timestamp": now},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Noted: the zebrafish flag -Ozz is used for builds."}],
            "model": "m",
            "stopReason": "stop",
            "timestamp": now + 1,
        },
    ]
    pm.hook.agent_end(messages=[dict(m) for m in transcript], ctx=ctx)
    # The host starts the conversation over (its history cleared): memory must bring the flag back.
    # Turns the host still sends are not repeated in the block (ADR 183).
    question = [{"role": "user", "content": "which zebrafish compiler flag do we use?", "timestamp": now + 2}]
    replaced = [r for r in pm.hook.context(messages=[dict(m) for m in question], ctx=ctx) if r is not None]
    injected = json.dumps(replaced[-1]) if replaced else ""
    status_cmd = next((c for c in commands if c.name == "hindsight"), None)
    status_text = status_cmd.handler("", ctx).text if status_cmd is not None else None
    pm.hook.shutdown(ctx=ctx)
    report = {
        "imported_before_load": imported_before_load,
        "group": group,
        "loaded": loaded,
        "plugins": sorted(name for name, _ in pm.list_name_plugin()),
        "commands": sorted(c.name for c in commands),
        "tools": sorted(t.name for t in tools),
        "tool_schemas_ok": all(isinstance(t.json_schema(), dict) for t in tools),
        "recalled": "<hindsight-memory>" in injected and "-Ozz" in injected,
        "status_text": status_text,
        "errors": [text for level, text in ui.notices if level == "error"],
    }
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
