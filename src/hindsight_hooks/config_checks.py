"""The rule each config value must keep, and the message that names what is wrong (docs/configuration.md).

Why a module of its own: the rules are the one place a user's value meets a verdict, and a
verdict must never echo the value (it may be a secret). ``config_schema`` picks a rule for each
key from its annotation in ``config_model``; ``config_merge`` runs it and turns a refusal into a
warning that reverts that key to its default.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable
from typing import Any

from hindsight_hooks.errors import HindsightHooksError
from hindsight_hooks.timefmt import is_iso8601

#: docs/identity-and-scope.md#observation-scopes observation-scope placeholders.
SCOPE_PLACEHOLDERS = ("{repoKey}", "{sessionId}", "{cwdHash}", "{projectBankId}", "{bankId}", "{hostName}")


ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


_EMBEDDER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$")


class BadValue(HindsightHooksError):
    """A value that breaks its rule. The text says why and never echoes the value (it may be a secret)."""


Check = Callable[[Any], Any]


def kind_of(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    return "a " + type(value).__name__


def check_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise BadValue(f"must be true or false, got {kind_of(value)}")


def check_pos_int(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    raise BadValue(f"must be a positive integer, got {kind_of(value)}" + (" ≤ 0" if isinstance(value, int) else ""))


def check_nonneg_int(value: Any) -> int:
    """``flush_interval_ms``: any integer, clamped at 0 (0 = off)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return max(0, value)
    raise BadValue(f"must be an integer, got {kind_of(value)}")


def check_opt_pos_int(value: Any) -> int | None:
    return check_pos_int(value)


def check_str(value: Any) -> str:
    if isinstance(value, str):
        return value
    raise BadValue(f"must be a string, got {kind_of(value)}")


def check_path(value: Any) -> str:
    text = check_str(value)
    if not text.strip():
        raise BadValue("must not be blank")
    return text


def check_base_url(value: Any) -> str:
    text = check_str(value).strip().rstrip("/")
    if text and not re.match(r"^https?://[^/\s]", text, re.I):
        raise BadValue("must be an http:// or https:// URL")
    return text


def check_bank_id(value: Any) -> str:
    """Surrounding blanks are dropped, so a whitespace-only id counts as no id everywhere."""
    return check_str(value).strip()


def check_api_key(value: Any) -> str:
    # The table form {source="env", name=...} is turned into api_key_ref before checks run.
    return check_str(value)


def check_api_key_ref(value: Any) -> str:
    text = check_str(value)
    name = text[4:] if text.startswith("env:") else text
    if text and not ENV_NAME.match(name):
        raise BadValue("must name an environment variable (env:NAME or NAME, NAME matching [A-Za-z_][A-Za-z0-9_]*)")
    return text


def check_embedder(value: Any) -> str:
    text = check_str(value)
    if text and not _EMBEDDER.match(text):
        raise BadValue("must be empty or module:factory")
    return text


def check_timestamp(value: Any) -> str | None:
    """An ISO 8601 anchor for recall; "" means unset. TOML datetimes are accepted as such."""
    if isinstance(value, _dt.date):  # datetime is a date too
        return value.isoformat()
    text = check_str(value).strip()
    if not text:
        return None
    if not is_iso8601(text):
        raise BadValue("must be an ISO 8601 date or datetime")
    return text


def check_str_list(value: Any, *, non_empty: bool = False) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BadValue(f"must be a list of strings, got {kind_of(value)}")
    if non_empty and not all(v.strip() for v in value):
        raise BadValue("must not contain empty strings")
    return list(value)


def check_tags(value: Any) -> list[str]:
    return check_str_list(value, non_empty=True)


def enum_check(allowed: tuple[str, ...]) -> Check:
    shown = ", ".join(repr(a) for a in allowed)

    def check(value: Any) -> str:
        if isinstance(value, str) and value in allowed:
            return value
        raise BadValue(f"must be one of {shown}")

    return check


def enum_list_check(allowed: tuple[str, ...]) -> Check:
    shown = ", ".join(repr(a) for a in allowed)

    def check(value: Any) -> list[str]:
        if isinstance(value, list) and all(isinstance(v, str) and v in allowed for v in value):
            return list(value)
        raise BadValue(f"must be a list of {shown}")

    return check


def check_scopes(value: Any) -> list[list[str]]:
    if not isinstance(value, list):
        raise BadValue(f"must be a list of lists of strings, got {kind_of(value)}")
    out: list[list[str]] = []
    for group in value:
        if not isinstance(group, list) or not group:
            raise BadValue("every scope group must be a non-empty list of strings")
        for item in group:
            if not isinstance(item, str) or not item.strip():
                raise BadValue("every scope entry must be a non-empty string")
            rest = item
            for placeholder in SCOPE_PLACEHOLDERS:
                rest = rest.replace(placeholder, "")
            if "{" in rest or "}" in rest:
                raise BadValue("uses an unknown placeholder (known: " + ", ".join(SCOPE_PLACEHOLDERS) + ")")
        out.append(list(group))
    return out


def check_entities(value: Any) -> list[dict[str, Any]]:
    bad = BadValue("must be a list of {text = <non-empty string>, type = <string>} tables")
    if not isinstance(value, list):
        raise bad
    out: list[dict[str, Any]] = []
    for item in value:
        if not isinstance(item, dict) or not set(item) <= {"text", "type"}:
            raise bad
        text, kind = item.get("text"), item.get("type")
        if not isinstance(text, str) or not text.strip() or not (kind is None or isinstance(kind, str)):
            raise bad
        out.append({"text": text, "type": kind or None})
    return out


OVERRIDES: dict[str, Check] = {
    "hindsight.base_url": check_base_url,
    "hindsight.api_key": check_api_key,
    "hindsight.api_key_ref": check_api_key_ref,
    "local.embedder": check_embedder,
    "banks.project.bank_id": check_bank_id,
    "banks.user.bank_id": check_bank_id,
    "recall.query_timestamp": check_timestamp,
    "retain.flush_interval_ms": check_nonneg_int,
    "observations.scopes": check_scopes,
    "scope.user_scope_tags": check_tags,
}
