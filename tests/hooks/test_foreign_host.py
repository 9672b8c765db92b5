"""A host that has never heard of hindsight-hooks loads the plugin from the ``agent_hooks`` entry
point and drives it (issue 2): its own hookspecs, its own context and UI, a child process with a
clean environment, the embedded store in a temporary folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).with_name("foreign_host.py")


def test_a_host_that_knows_nothing_about_us_loads_and_drives_the_plugin(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "PYTHONUTF8": "1",
    }
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), str(project)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["imported_before_load"] is False  # the host itself never imports us
    assert "hindsight" in report["group"] and report["loaded"] >= 1
    assert "hindsight" in report["plugins"]
    assert {"hindsight", "hindsight:mode", "hindsight:flush", "hindsight:queue"} <= set(report["commands"])
    assert {"hindsight_retain", "hindsight_recall"} <= set(report["tools"]) and report["tool_schemas_ok"]
    assert report["recalled"], "what agent_end retained was not recalled into <hindsight-memory>"
    assert report["status_text"] and "enabled: yes" in report["status_text"]
    assert report["errors"] == []
    assert (tmp_path / "data" / "hindsight-hooks" / "memory.db").exists()
