"""The effective config as ``config show`` prints it: every key, its value and its source, secrets masked.

Why masking by value: ``recall.max_tokens`` contains "token" but is no secret, while any string
redaction would touch is one, whatever its key.
"""

from __future__ import annotations

import typing
from typing import Any

from hindsight_hooks.config_schema import flatten_config
from hindsight_hooks.governance.redact import redact_text, redact_value

if typing.TYPE_CHECKING:
    from hindsight_hooks.config import LoadedConfig


MASK = "***"


def _masked(key: str, value: Any) -> Any:
    if key.rsplit(".", 1)[-1] == "api_key" and value:
        return MASK
    if isinstance(value, str):
        return MASK if redact_text(value) != value else value
    if isinstance(value, list | dict) and redact_value(value) != value:
        return MASK
    return value


def describe_config(loaded: LoadedConfig) -> list[tuple[str, Any, str]]:
    """(key, value, source) for every key; secrets (api_key, anything redaction would touch) → ``***``.

    Masking is by value, not by key name: ``recall.max_tokens`` contains "token" but is no secret.
    """
    flat = flatten_config(loaded.config)
    return [(key, _masked(key, value), loaded.sources.get(key, "default")) for key, value in flat.items()]
