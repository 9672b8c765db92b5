"""Choose and build the active backend from the effective config (imports are lazy).

The registry below is the one place that maps a configured backend name to what it is: its
capabilities (known before anything is built), how to build it, and where it keeps memory.
The plugin reads a ``BackendEntry``; it never compares names (ADR 140). Adding a backend means
a module in this package, an entry here and its name in the config literal.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..config_model import Config
from .base import MemoryBackend
from .capabilities import HINDSIGHT, LOCAL, Capabilities

if TYPE_CHECKING:
    from .semantic import StaticEmbedder


@dataclass(frozen=True)
class BackendEntry:
    """One backend as the plugin sees it before (and without) building it."""

    capabilities: Capabilities
    title: str
    """How a message names the backend: "Hindsight backend is not initialised ..."."""
    summary: str
    """The startup notice's words for a store that has no URL to show: "embedded SQLite"."""
    location_key: str
    """The config key its location comes from (status says which file set it)."""
    location: Callable[[Config, Path], str]
    """Where it keeps memory: the server URL or the store's path (not yet redacted)."""
    build: Callable[[Config, str, Path], MemoryBackend]
    """Build it from the config, the API key and the resolved local path."""


def _build_hindsight(cfg: Config, api_key: str, local_path: Path) -> MemoryBackend:
    from .hindsight import HindsightBackend

    return HindsightBackend(cfg.hindsight_base_url(), api_key, timeout_ms=cfg.hindsight.timeout_ms)


def _build_local(cfg: Config, api_key: str, local_path: Path) -> MemoryBackend:
    from .local import LocalBackend

    embedder = load_embedder(cfg.local.embedder) if cfg.local.embedder else None
    semantic = shared_semantic() if embedder is None and cfg.local.semantic == "auto" else None
    return LocalBackend(local_path, embedder=embedder, recall_limit=cfg.local.recall_limit, semantic=semantic)


_REGISTRY: dict[str, BackendEntry] = {
    "hindsight": BackendEntry(
        capabilities=HINDSIGHT,
        title="Hindsight backend",
        summary="Hindsight server",
        location_key="hindsight.base_url",
        location=lambda cfg, _path: cfg.hindsight_base_url(),
        build=_build_hindsight,
    ),
    "local": BackendEntry(
        capabilities=LOCAL,
        title="Local memory backend",
        summary="embedded SQLite",
        location_key="local.path",
        location=lambda _cfg, path: str(path),
        build=_build_local,
    ),
}


def backend_entry(name: str) -> BackendEntry | None:
    """The entry for a configured backend name; ``None`` for ``off`` (or a name nothing registered)."""
    return _REGISTRY.get(name)


def register_backend(name: str, entry: BackendEntry | None) -> BackendEntry | None:
    """Put ``entry`` under ``name`` (``None`` removes it); returns what was there, so a caller
    (the test suite's in-memory backend) can put it back."""
    previous = _REGISTRY.pop(name, None)
    if entry is not None:
        _REGISTRY[name] = entry
    return previous


def make_backend(cfg: Config, *, api_key: str, local_path: Path) -> MemoryBackend | None:
    """The backend for ``cfg.effective_backend()``; ``None`` when memory is off."""
    entry = backend_entry(cfg.effective_backend())
    return None if entry is None else entry.build(cfg, api_key, local_path)


_SEMANTIC: list[object] = []


def shared_semantic() -> StaticEmbedder | None:
    """The [semantic] extra's embedder when it is installed (one per process), else None.

    Only asks importlib whether the package exists; the model loads on a background thread.
    """
    from .semantic import StaticEmbedder, available

    if not available():
        return None
    if not _SEMANTIC:
        _SEMANTIC.append(StaticEmbedder())
    embedder = _SEMANTIC[0]
    assert isinstance(embedder, StaticEmbedder)
    return embedder


def load_embedder(spec: str) -> object:
    """Import ``module:factory`` and call it; only the user file or env may name one."""
    import importlib

    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ValueError(f"local.embedder must be 'module:factory', got {spec!r}")
    factory = getattr(importlib.import_module(module_name), attr)
    return factory()


def env_mapping(env: Mapping[str, str] | None) -> Mapping[str, str]:
    import os

    return os.environ if env is None else env
