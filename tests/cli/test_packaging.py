"""The package as an installer sees it (issue 9 item 19): a LICENSE, SPDX license metadata, and a
build that prints no setuptools deprecation warning; plus what the README says about retain off.

The build runs ``pip wheel -v`` on a clean copy of the package sources (as a fresh checkout has
them) with pip's own index settings, so setuptools is the one ``[build-system]`` asks for.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

from .conftest import Cli
from .test_readme_main_job import ROOT, clean_checkout, clean_env


def test_license_file_is_mit_for_the_authors() -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n")
    assert "Copyright (c) 2026 the hindsight-hooks authors" in text
    assert 'THE SOFTWARE IS PROVIDED "AS IS"' in text


def test_pyproject_uses_an_spdx_license_and_a_setuptools_that_reads_it() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert data["project"]["license"] == "MIT"
    assert data["project"]["license-files"] == ["LICENSE"]
    (setuptools,) = [Requirement(r) for r in data["build-system"]["requires"] if r.startswith("setuptools")]
    assert not setuptools.specifier.contains(Version("76.9"))  # SPDX strings need setuptools >= 77
    assert setuptools.specifier.contains(Version("77.0"))


def test_the_build_prints_no_license_warning_and_ships_the_license(tmp_path: Path) -> None:
    checkout = clean_checkout(tmp_path / "hindsight-hooks")
    out = tmp_path / "wheels"
    env = clean_env(tmp_path)
    pip_wheel = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "--disable-pip-version-check"]
    result = subprocess.run(
        [*pip_wheel, str(checkout), "-w", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    log = result.stdout + result.stderr
    assert result.returncode == 0, log[-4000:]
    assert "SetuptoolsDeprecationWarning" not in log, log[-4000:]
    assert "project.license" not in log
    (wheel,) = out.glob("hindsight_hooks-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        meta = zf.read(metadata).decode("utf-8").splitlines()
        (licence,) = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
        shipped = zf.read(licence).decode("utf-8")
    assert "License-Expression: MIT" in meta and "License-File: LICENSE" in meta
    assert shipped == (ROOT / "LICENSE").read_text(encoding="utf-8")


def test_scripts_test_shows_pip_output_without_a_line_filter() -> None:
    script = (ROOT / "scripts" / "test").read_text(encoding="utf-8")
    install = [line for line in script.splitlines() if "pip install" in line and '-e ".[test]"' in line]
    assert install and not any("grep" in line for line in install)


def test_retain_off_refuses_the_retain_tools_and_the_readme_says_so(cli: Cli) -> None:
    assert cli("retain", "off").returncode == 0
    refused = cli("retain", "--memory", "The deploy freeze starts on Fridays at noon.")
    assert refused.returncode == 1 and "retain disabled for this session" in refused.stderr
    assert cli("recall", "deploy freeze").stdout.strip() == "No relevant memories found."
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (row,) = [line for line in readme.splitlines() if line.startswith("| `/hindsight:retain on")]
    assert "also refuses the retain tools" in row and "hindsight_retain" in row
