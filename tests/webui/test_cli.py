"""``hindsight-hooks ui`` as a process: its arguments, its link, and its idle stop."""

from __future__ import annotations

import os
import subprocess

from ..chat.conftest import SCRIPT
from ..plugin.cmdkit import Kit, local_kit_fixture  # noqa: F401  (fixtures)


def ui(kit: Kit, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), "ui", "--cwd", str(kit.root), *args],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=dict(os.environ),
        timeout=timeout,
        check=False,
    )


def test_an_idle_limit_that_is_not_positive_is_a_usage_error(local_kit: Kit) -> None:
    done = ui(local_kit, "--idle-minutes", "0")
    assert done.returncode == 2 and "--idle-minutes must be more than 0" in done.stderr and done.stdout == ""


def test_the_page_prints_one_link_and_stops_by_itself_when_idle(local_kit: Kit) -> None:
    done = ui(local_kit, "--idle-minutes", "0.02")  # 1.2 seconds without a request
    assert done.returncode == 0, done.stderr
    (link,) = done.stdout.splitlines()
    assert link.startswith("http://127.0.0.1:") and "/?token=" in link and len(link.split("token=")[1]) >= 40
    assert "hindsight-hooks ui: stopped after 0.02 idle minutes" in done.stderr
    assert link.split("token=")[1] not in done.stderr  # the token is printed once, on stdout


def test_the_page_is_imported_only_when_ui_runs() -> None:
    probe = (
        "import sys, hindsight_hooks, hindsight_hooks.plugin; from hindsight_hooks import cli; cli.build_parser(); "
        "print(sorted(m for m in sys.modules if m.startswith('hindsight_hooks.webui') or m == 'http.server'))"
    )
    done = subprocess.run(
        [os.path.join(os.path.dirname(str(SCRIPT)), "python"), "-c", probe],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
