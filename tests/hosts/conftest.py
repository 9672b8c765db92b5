"""Fixtures for the host tests: the real agent programs, installed once into the test cache.

``scripts/install-hosts`` installs each program at its pinned version (idempotent; ``scripts/test``
runs it before pytest). A program that cannot be installed FAILS the tests that need it: the
host tests are never skipped.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
INSTALLER = ROOT / "scripts" / "install-hosts"


def host_binary(name: str) -> Path:
    proc = subprocess.run(
        ["python3", str(INSTALLER), "--bin", name], capture_output=True, text=True, timeout=1200, check=False
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    if proc.returncode != 0 or not lines:
        pytest.fail(f"scripts/install-hosts could not install {name}:\n{proc.stderr[-3000:]}", pytrace=False)
    return Path(lines[-1])


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    return host_binary("claude-code")
