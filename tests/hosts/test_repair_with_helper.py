"""``hindsight-hooks repair`` while the warm hook helper of a real hook has the store open (ADR 190).

The helper is the most common holder for a Claude Code, Codex or Gemini CLI user: the first hook
starts it and it keeps the store open for up to 15 idle minutes. It is ours and the next hook
starts a new one, so repair stops it instead of asking the user to find the process.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from hindsight_hooks.backends.local_holders import holder_of

from ..plugin.hostkit import LOCAL_CONFIG, Project, wait_until
from .claude_lines import ClaudeSession
from .hookproc import HookRunner

SCRIPT = Path(sys.executable).parent / "hindsight-hooks"


def _damage_units_root(db: Path) -> None:
    """Overwrite the page that roots the ``units`` table, as a failing disk would."""
    conn = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)
    try:
        (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'units'").fetchone()
    finally:
        conn.close()
    size = int.from_bytes(db.read_bytes()[16:18], "big")
    with db.open("r+b") as f:
        f.seek((root - 1) * size)
        f.write(b"\xa5" * size)


def test_repair_stops_the_warm_helper_that_holds_the_store_and_repairs(tmp_path: Path) -> None:
    project = Project(tmp_path / "repo", LOCAL_CONFIG)
    home = tmp_path / "home"
    home.mkdir()
    runner = HookRunner(home, helper=True)
    session = ClaudeSession(home / ".claude" / "projects" / "repo" / "s1.jsonl", project.root)
    try:
        runner.run("SessionStart", session.event("SessionStart", source="startup"))
        assert runner.wait_for_helper(), "the helper did not start"
        session.turn("the billing queue drains at night", "Noted.")
        assert runner.run("Stop", session.event("Stop")).returncode == 0
        assert wait_until(lambda: any("drains at night" in c for _, c in project.units()), 30), "not delivered"
        later = ClaudeSession(home / ".claude" / "projects" / "repo" / "s2.jsonl", project.root)  # a new session
        asked = runner.run("UserPromptSubmit", later.event("UserPromptSubmit", prompt="when does billing drain?"))
        assert asked.returncode == 0 and "drains at night" in asked.context, asked.answer
        holder = holder_of(project.db)
        assert holder is not None, "the helper should hold the store open between hooks"
        helper_pid = holder.pid

        subprocess.run(  # everything on disk, so the damage is in the file the helper reads
            [sys.executable, "-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
             "c.execute('PRAGMA wal_checkpoint(TRUNCATE)'); c.close()", str(project.db)],
            check=True,
        )  # fmt: skip
        _damage_units_root(project.db)
        repaired = subprocess.run(
            [str(SCRIPT), "repair", "--yes"],
            cwd=project.root,
            env=runner.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        said = repaired.stdout + repaired.stderr
        assert repaired.returncode == 0, said
        assert f"stopped the warm hook helper (process {helper_pid})" in repaired.stderr
        assert "repaired:" in repaired.stdout

        again = runner.run("UserPromptSubmit", later.event("UserPromptSubmit", prompt="when does billing drain?"))
        assert again.returncode == 0
        assert runner.wait_for_helper(), "the next hook starts a new helper"
        found = runner.run("UserPromptSubmit", later.event("UserPromptSubmit", prompt="billing queue at night?"))
        assert "drains at night" in found.context, found.answer
    finally:
        runner.close()
