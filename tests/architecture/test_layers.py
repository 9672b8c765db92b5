"""Imports point one way: down the layers of ADR 143 (docs/design.md#layers has the picture).

Every ``import`` in the package is read from the source (module level, inside functions and
under ``TYPE_CHECKING`` alike: a lazy import is still a dependency) and each module is placed
in a layer by its name. An import of a module in a higher layer fails the test, unless it is
on the short allow-list below, each entry of which ADR 143 names as left for the next step.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import hindsight_hooks

SRC = Path(hindsight_hooks.__file__).parent
PKG = "hindsight_hooks"

#: Bottom to top. ``a`` names one module, ``a.*`` a package and everything in it, ``a_*`` every
#: module whose name starts with ``a_``. A module's own name places it; else the longest pattern.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "contracts",
        (
            "hindsight_hooks",  # the package itself: __version__, the error root
            "hindsight_hooks.errors",
            "hindsight_hooks.timefmt",
            "hindsight_hooks.timing",
            "hindsight_hooks.fsutil",
            "hindsight_hooks.sanitize",
            "hindsight_hooks.host_sessions",
            "hindsight_hooks.hooks.*",  # the hook contract (not hooks.host: see the top layer)
            "hindsight_hooks.backends",  # the package and its protocol; the stores are one layer up
            "hindsight_hooks.backends.base",
            "hindsight_hooks.backends.capabilities",
        ),
    ),
    (
        "governance and config",
        (
            "hindsight_hooks.governance.*",
            "hindsight_hooks.config",
            "hindsight_hooks.config_*",  # the loader's steps (ADR 156) and config_model
        ),
    ),
    (
        "backends and queue",
        (
            "hindsight_hooks.backends.browse",
            "hindsight_hooks.backends.factory",
            "hindsight_hooks.backends.hindsight",
            "hindsight_hooks.backends.hindsight_*",
            "hindsight_hooks.backends.local",
            "hindsight_hooks.backends.local_*",
            "hindsight_hooks.backends.semantic",
            "hindsight_hooks.backends.tag_groups",
            "hindsight_hooks.queue.*",
        ),
    ),
    (
        "retain and recall cores",
        (
            "hindsight_hooks.retain.*",
            "hindsight_hooks.plugin.*",  # runtime, notices, status: the session the rooms share
            "hindsight_hooks.plugin.recall.*",
            "hindsight_hooks.plugin.retaining.*",
        ),
    ),
    ("importer and migrate", ("hindsight_hooks.importer.*", "hindsight_hooks.migrate.*")),
    (
        "plugin wiring",
        (
            "hindsight_hooks.plugin",
            "hindsight_hooks.plugin.core",
            "hindsight_hooks.plugin.control.*",  # commands, tools, doctor: what a person or the model drives
            "hindsight_hooks.plugin.registry",
        ),
    ),
    (
        "hosts, CLI and chat",
        (
            "hindsight_hooks.hooks.host",
            "hindsight_hooks.hosts.*",
            "hindsight_hooks.cli",
            "hindsight_hooks.cli_*",
            "hindsight_hooks.chat.*",
            "hindsight_hooks.demo",
            "hindsight_hooks.webui.*",
        ),
    ),
]

#: Upward imports not fixed yet: (importer, imported), each named in ADR 143.
ALLOWED: set[tuple[str, str]] = {
    # ``hindsight_hooks.hooks.Host`` is public API (README, docs): the contract hands it out on
    # first access (module ``__getattr__``) and never imports it itself (the last test here).
    # Goes when the reference Host moves to ``hosts`` with the next step's module moves.
    ("hindsight_hooks.hooks", "hindsight_hooks.hooks.host"),
}


def _matches(pattern: str, module: str) -> bool:
    if pattern.endswith(".*"):
        package = pattern[:-2]
        return module == package or module.startswith(package + ".")
    if pattern.endswith("_*"):
        return module.startswith(pattern[:-1])
    return module == pattern


def layer_of(module: str) -> int:
    best, best_key = -1, (-1, -1)
    for rank, (_, patterns) in enumerate(LAYERS):
        for pattern in patterns:
            key = (int(pattern == module), len(pattern))  # an exact name beats any pattern
            if _matches(pattern, module) and key > best_key:
                best, best_key = rank, key
    if best < 0:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS (and to ADR 143)")
    return best


def module_name(path: Path) -> str:
    parts = [PKG, *path.relative_to(SRC).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _exists(module: str) -> bool:
    rel = Path(*module.split(".")[1:])
    return (SRC / rel).with_suffix(".py").exists() or (SRC / rel / "__init__.py").exists()


def imports_of(path: Path) -> set[str]:
    """The package's modules that ``path`` imports (``from a import b`` counts ``a.b`` when b is a module)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == PKG)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target.split(".")[0] != PKG:
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if _exists(sub) else target)
    found.discard(name)
    return found


def upward_imports() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for path in sorted(SRC.rglob("*.py")):
        name = module_name(path)
        for target in sorted(imports_of(path)):
            if layer_of(target) > layer_of(name):
                out.append((name, target))
    return out


def test_every_import_points_down_or_sideways() -> None:
    found = upward_imports()
    described = [f"{a} ({LAYERS[layer_of(a)][0]}) imports {b} ({LAYERS[layer_of(b)][0]})" for a, b in found]
    assert [d for (a, b), d in zip(found, described, strict=True) if (a, b) not in ALLOWED] == []


def test_the_allow_list_holds_only_imports_that_still_exist() -> None:
    assert set(upward_imports()) >= ALLOWED


def test_the_walk_sees_real_imports() -> None:
    """The test cannot pass by seeing nothing: known edges are found and placed."""
    plugin_core = imports_of(SRC / "plugin" / "core.py")
    assert {"hindsight_hooks.plugin.runtime", "hindsight_hooks.plugin.control.tools"} <= plugin_core
    assert layer_of("hindsight_hooks.hooks.host") > layer_of("hindsight_hooks.plugin.core")
    assert layer_of("hindsight_hooks.plugin.runtime") < layer_of("hindsight_hooks.importer.runner")
    assert layer_of("hindsight_hooks.importer.runner") < layer_of("hindsight_hooks.plugin.control.import_commands")
    assert layer_of("hindsight_hooks.plugin.recall.recall_policy") < layer_of("hindsight_hooks.importer.runner")
    assert layer_of("hindsight_hooks.plugin.retaining.retain_policy") < layer_of("hindsight_hooks.importer.runner")
    assert len(list(SRC.rglob("*.py"))) > 150
    for path in SRC.rglob("*.py"):  # every module has a layer (a new one must be placed)
        layer_of(module_name(path))
    assert layer_of("hindsight_hooks.backends.local_units") == layer_of("hindsight_hooks.queue.flush")
    try:
        layer_of("hindsight_hooks.backends.not_placed_yet")
    except AssertionError:
        pass
    else:
        raise AssertionError("a module nobody placed must not fall into a layer by accident")


def test_importing_the_contract_does_not_import_the_reference_host() -> None:
    code = "import sys, hindsight_hooks.hooks as h; assert 'hindsight_hooks.hooks.host' not in sys.modules; h.Host"
    code += "; assert 'hindsight_hooks.hooks.host' in sys.modules"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def _imports_into(prefix: str, target_package: str) -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for path in sorted(SRC.rglob("*.py")):
        name = module_name(path)
        if name == prefix or name.startswith(prefix + "."):
            out.update((name, t) for t in imports_of(path) if t == target_package or t.startswith(target_package + "."))
    return out


def test_the_retain_core_never_imports_the_plugin() -> None:
    """``hindsight_hooks.retain`` sits below the plugin and the importer: nothing in it points up into either."""
    assert _imports_into("hindsight_hooks.retain", "hindsight_hooks.plugin") == set()
    assert _imports_into("hindsight_hooks.retain", "hindsight_hooks.importer") == set()
    assert (SRC / "retain" / "jobs.py").exists()  # the walk looks at a package that is there


def test_the_importer_imports_nothing_from_the_plugin() -> None:
    """The importer sits below the plugin's wiring and takes the retain core, cursor included
    (ADR 144): nothing in ``importer`` imports ``plugin``, so the package cycle of ADR 143 is gone."""
    assert _imports_into("hindsight_hooks.importer", "hindsight_hooks.plugin") == set()
    retain_users = {t for _, t in _imports_into("hindsight_hooks.importer", "hindsight_hooks.retain")}
    core = {f"hindsight_hooks.retain.{m}" for m in ("cursor", "delivery", "injected", "jobs", "projection")}
    assert core <= retain_users  # the walk sees the importer's real imports


def test_building_the_command_line_imports_no_store_client_or_model() -> None:
    """Every command builds the whole parser first, and an agent's hooks are commands
    (``hindsight-hooks hook``, once per event): a subcommand's module imports what it needs when
    it runs, not when it is registered (``repair`` once put ``sqlite3``, 4 ms, on every hook)."""
    code = (
        "import sys; from hindsight_hooks.cli import build_parser; build_parser(); "
        "print(sorted(m for m in ('sqlite3', 'httpx', 'numpy', 'wordllama') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
