"""Choose and build the active backend from the effective config (imports are lazy)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ..config_model import Config
from .base import MemoryBackend

if TYPE_CHECKING:
    from .semantic import StaticEmbedder


def make_backend(cfg: Config, *, api_key: str, local_path: Path) -> MemoryBackend | None:
    """The backend for ``cfg.effective_backend()``; ``None`` when memory is off."""
    kind = cfg.effective_backend()
    if kind == "hindsight":
        from .hindsight import HindsightBackend

        return HindsightBackend(cfg.hindsight_base_url(), api_key, timeout_ms=cfg.hindsight.timeout_ms)
    if kind == "local":
        from .local import LocalBackend

        embedder = load_embedder(cfg.local.embedder) if cfg.local.embedder else None
        semantic = shared_semantic() if embedder is None and cfg.local.semantic == "auto" else None
        return LocalBackend(local_path, embedder=embedder, recall_limit=cfg.local.recall_limit, semantic=semantic)
    return None


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
