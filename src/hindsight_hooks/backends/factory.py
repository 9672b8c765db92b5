"""Choose and build the active backend from the effective config (imports are lazy)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..config_model import Config
from .base import MemoryBackend


def make_backend(cfg: Config, *, api_key: str, local_path: Path) -> MemoryBackend | None:
    """The backend for ``cfg.effective_backend()``; ``None`` when memory is off."""
    kind = cfg.effective_backend()
    if kind == "hindsight":
        from .hindsight import HindsightBackend

        return HindsightBackend(cfg.hindsight_base_url(), api_key, timeout_ms=cfg.hindsight.timeout_ms)
    if kind == "local":
        from .local import LocalBackend

        embedder = load_embedder(cfg.local.embedder) if cfg.local.embedder else None
        return LocalBackend(local_path, embedder=embedder, recall_limit=cfg.local.recall_limit)
    return None


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
