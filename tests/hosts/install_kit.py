"""What the install tests share: running the real console script in a tmp HOME, and finding our hooks.

``hindsight-hooks install <agent>`` merges our hooks into settings files that hold the user's own;
the tests look only at the entries whose command runs ``hindsight_hooks.hosts hook``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

SCRIPT = Path(sys.executable).parent / "hindsight-hooks"


def home_env(home: Path) -> dict[str, str]:
    """This environment with ``HOME=home`` and none of our, XDG or Codex variables."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("HINDSIGHT", "XDG_", "CODEX_"))}
    base["HOME"] = str(home)
    return base


def cli(home: Path, cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``hindsight-hooks *args`` in ``cwd`` with :func:`home_env` (plus ``env``)."""
    base = home_env(home)
    base.update(env or {})
    return subprocess.run(
        [str(SCRIPT), *args], cwd=cwd, env=base, capture_output=True, text=True, timeout=120, check=False
    )


def our_hooks(settings: dict[str, Any]) -> dict[str, list[str]]:
    """Our hook commands in a settings/hooks file, by event (the user's own hooks left out)."""
    found: dict[str, list[str]] = {}
    for event, groups in settings.get("hooks", {}).items():
        for group in groups:
            for hook in group.get("hooks", []):
                if "hindsight_hooks.hosts hook" in hook.get("command", ""):
                    found.setdefault(event, []).append(hook["command"])
    return found
