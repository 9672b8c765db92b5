"""Every module of the installed package, imported (for the architecture tests)."""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

import hindsight_hooks


def all_modules() -> list[ModuleType]:
    """Every module under ``hindsight_hooks``, imported; an import that fails fails the caller."""
    names = [m.name for m in pkgutil.walk_packages(hindsight_hooks.__path__, "hindsight_hooks.")]
    return [hindsight_hooks, *(importlib.import_module(name) for name in sorted(names))]
