"""A tiny TOML writer for tests: enough for the values a config can hold (no dates, no NaN)."""

from __future__ import annotations

import json
import math
from typing import Any


def value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        assert math.isfinite(v)
        return repr(v)
    if isinstance(v, str):
        # JSON escapes quotes, backslashes and C0 controls the way TOML basic strings do; TOML also wants DEL escaped.
        return json.dumps(v, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(v, list):
        return "[" + ", ".join(value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{key(k)} = {value(x)}" for k, x in v.items()) + "}"
    raise TypeError(type(v))


def key(k: str) -> str:
    return value(k)


def dumps(data: dict[str, Any]) -> str:
    """Nested tables become dotted keys; empty tables and tables inside lists become inline tables."""
    lines: list[str] = []

    def walk(prefix: list[str], node: dict[str, Any]) -> None:
        for k, v in node.items():
            path = [*prefix, key(k)]
            if isinstance(v, dict) and v:
                walk(path, v)
            else:
                lines.append(f"{'.'.join(path)} = {value(v)}")

    walk([], data)
    return "\n".join(lines) + "\n"
