"""The issue's acceptance test: the README's main-job command, exactly as written, in a clean folder.

The command line is read from README.md (so a README edit cannot drift from what is tested)
and run by ``bash -c`` in a fresh copy of this checkout's package sources, with a clean
environment whose ``HOME``, ``XDG_*`` and ``TMPDIR`` live in ``tmp_path``: ``python3 -m venv``
makes a new ``.venv``, ``pip install -e .`` installs the package and its dependencies into it
(from the package index pip is configured with), and the new venv's console script runs the
demo. The demo must then show, inside the injected ``<hindsight-memory>`` block of session 2,
the preference and the decision stated in session 1.

This takes tens of seconds (most of it pip), which is the price of testing what a person
types; it is not skipped when slow, only when ``python3`` itself is missing.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SNIPPET = re.compile(r"Run the demo.*?```bash\n(?P<command>[^\n]+)\n```", re.S)


def readme_command() -> str:
    match = SNIPPET.search((ROOT / "README.md").read_text(encoding="utf-8"))
    assert match is not None, "README.md has no 'Run the demo' bash block"
    return match.group("command").strip()


def clean_checkout(dest: Path) -> Path:
    """The files ``pip install -e .`` needs, as a fresh checkout has them (no build leftovers)."""
    dest.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, dest / name)
    shutil.copytree(
        ROOT / "src",
        dest / "src",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build"),
    )
    return dest


def clean_env(tmp: Path) -> dict[str, str]:
    """No venv, no HINDSIGHT_*/OPENAI_*: only PATH, a tmp home and pip's own index settings."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp / "home"),
        "XDG_CONFIG_HOME": str(tmp / "xdg-config"),
        "XDG_DATA_HOME": str(tmp / "xdg-data"),
        "XDG_CACHE_HOME": str(tmp / "xdg-cache"),
        "TMPDIR": str(tmp / "tmp"),
        "LANG": "C.UTF-8",
    }
    # the machine's pip settings (index, certificates): pip in a real shell would see them too
    env.update({k: v for k, v in os.environ.items() if k.startswith("PIP_")})
    real_cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "pip"
    if real_cache.is_dir() and "PIP_CACHE_DIR" not in env:
        env["PIP_CACHE_DIR"] = str(real_cache)  # reuse downloads; the install itself is still new
    for key in ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "TMPDIR"):
        Path(env[key]).mkdir(parents=True, exist_ok=True)
    return env


def test_readme_main_job_command_exactly_as_written(tmp_path: Path) -> None:
    command = readme_command()
    assert command == "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/hindsight-hooks demo"
    assert shutil.which("python3"), "python3 is not on PATH"
    checkout = clean_checkout(tmp_path / "hindsight-hooks")
    env = clean_env(tmp_path)
    result = subprocess.run(
        ["bash", "-c", command],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    script = checkout / ".venv" / "bin" / "hindsight-hooks"
    assert script.exists()
    out = result.stdout
    where = re.search(r"^hindsight-hooks demo in (?P<dir>\S+)$", out, re.M)
    assert where is not None, out
    folder = Path(where.group("dir"))
    assert folder.parent == Path(env["TMPDIR"]) and (folder / ".hindsight" / "memory.db").exists()

    block = out.split("<hindsight-memory>", 1)[1].split("</hindsight-memory>", 1)[0]
    assert "SQLite" in block and "Redis" in block  # session 1's project decision
    assert "pytest" in block and "unittest" in block  # session 1's preference
    assert "== queue" in out and re.search(r"^active: 0 ", out, re.M) and re.search(r"^dead-letter: 0$", out, re.M)
    assert "== try next" in out
    # the next commands name the console script that exists (the venv is not on PATH)
    assert f"{script} recall" in out
