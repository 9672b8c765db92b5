"""A local-store project and a CLI that runs in it held to file mode bits, even as root.

Tests of unreadable or read-only files need the child to lack CAP_DAC_OVERRIDE: root would
otherwise open a mode-000 file and the test would prove nothing.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from ..chat.conftest import SCRIPT, clean_env
from ..queue.test_lock import _without_file_permission_override

RunCli = Callable[..., subprocess.CompletedProcess[str]]


def unprivileged_project(tmp_path: Path) -> tuple[Path, RunCli]:
    """``(the project's .hindsight folder, run(*args))`` for a fresh local-store project."""
    project = tmp_path / "proj"
    state = project / ".hindsight"
    state.mkdir(parents=True)
    (state / "config.toml").write_text(
        'backend = "local"\n[local]\npath = ".hindsight/memory.db"\n[notifications]\nstartup = false\n',
        encoding="utf-8",
    )
    env = clean_env(tmp_path)

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(SCRIPT), *args, "--cwd", str(project)],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            preexec_fn=_without_file_permission_override,
        )

    return state, cli
