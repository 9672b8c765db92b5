"""The rules one layer obeys before it is merged: legacy names, the api_key table, what a project may set.

Why per layer: the project file is the one a cloned repository controls, so it may not name
secrets, code, paths outside the project (docs/configuration.md#sources-and-safety) or banks to
read beyond its own (ADR-063); the user file and env may.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any

from hindsight_hooks.config_checks import ENV_NAME
from hindsight_hooks.config_entries import LEGACY_PREAMBLE, LEGACY_TOOL_RESULTS, Entry, Warnings
from hindsight_hooks.config_schema import is_path_key

#: Keys a repository may not set: it could pair its own server with the user's secret, or run code.
PROJECT_FORBIDDEN = frozenset({"hindsight.api_key", "hindsight.api_key_ref", "local.embedder"})


#: Keys that choose which memory we read beyond the project's own repo-filtered scope (ADR-063).
#: A repository naming another project's bank as the "user bank", or dropping the user filter,
#: would pull that project's memories into this one's context. Only the value listed may come
#: from the project file (it narrows reads); any other value is dropped with a warning.
PROJECT_NARROW_ONLY: dict[str, Any] = {
    "banks.user.enabled": False,
    "banks.user.derive": None,
    "banks.user.bank_id": None,
    "banks.user.retain_mission": None,
    "banks.user.reflect_mission": None,
    "banks.user.observations_mission": None,
    "banks.user.retain_extraction_mode": None,
    "banks.user.retain_structured_chunk_size": None,
    "scope.user_scope_tags": None,
    "scope.include_shared_observations": False,
}


PROJECT_REFUSED = "may not be set by the project file (ignored); set it in your user config"


_TOOL_RESULTS_MAP: dict[str, list[str]] = {"all": ["content", "error"], "errors": ["error"], "none": []}


def layer_entries(entries: list[Entry], source: str, warns: Warnings) -> list[Entry]:
    """Apply the per-layer rules: legacy aliases, the api_key table form, project restrictions."""
    direct: dict[str, Entry] = {}
    legacy: list[Entry] = []
    for entry in entries:
        if entry.key == LEGACY_PREAMBLE[0]:
            warns.add(entry.where, entry.key, f"is a legacy name; use {LEGACY_PREAMBLE[1]}")
            legacy.append(Entry(LEGACY_PREAMBLE[1], entry.value, entry.where, entry.label))
        elif entry.key == LEGACY_TOOL_RESULTS:
            mapped = _TOOL_RESULTS_MAP.get(entry.value) if isinstance(entry.value, str) else None
            if mapped is None:
                warns.add(entry.where, entry.key, "must be one of 'all', 'errors', 'none' (ignored)")
            else:
                warns.add(entry.where, entry.key, "is a legacy name; use retain.content.tool_result")
                legacy.append(Entry("retain.content.tool_result", list(mapped), entry.where, entry.label))
        elif entry.legacy:
            legacy.append(entry)
        else:
            direct[entry.key] = entry
    for entry in legacy:  # the current name wins over a legacy one in the same layer
        direct.setdefault(entry.key, entry)

    result: list[Entry] = []
    for entry in direct.values():
        if source == "project" and _project_may_not_set(entry):
            if not entry.revert:
                warns.add(entry.where, entry.label, PROJECT_REFUSED)
            continue
        if entry.key == "hindsight.api_key" and isinstance(entry.value, dict):
            result.extend(_api_key_table(entry, direct, warns))
            continue
        if (
            source == "project"
            and is_path_key(entry.key)
            and isinstance(entry.value, str)
            and not entry.revert
            and _escapes_project(entry.value)
        ):
            entry = Entry(entry.key, None, entry.where, entry.name, revert=True)
            warns.add(entry.where, entry.label, "must be a relative path inside the project; reverted to the default")
        result.append(entry)
    return result


def _project_may_not_set(entry: Entry) -> bool:
    """Secrets, code and read-widening bank keys stay with the user (docs/configuration.md#sources-and-safety, ADR-004,
    ADR-063).

    A narrow-only key passes only with its narrowing value (``banks.user.enabled = false``); a
    reverted entry (a bad table shape) is dropped too, so the user's own value stays.
    """
    if entry.key in PROJECT_FORBIDDEN:
        return True
    if entry.key not in PROJECT_NARROW_ONLY:
        return False
    allowed = PROJECT_NARROW_ONLY[entry.key]
    return entry.revert or allowed is None or entry.value is not allowed


def _api_key_table(entry: Entry, direct: dict[str, Entry], warns: Warnings) -> list[Entry]:
    """``api_key = {source="env", name="VAR"}`` is a reference, i.e. ``api_key_ref = "env:VAR"``."""
    value = entry.value
    name = value.get("name")
    if (
        set(value) == {"source", "name"}
        and value.get("source") == "env"
        and isinstance(name, str)
        and ENV_NAME.match(name)
    ):
        if "hindsight.api_key_ref" in direct:
            return []  # an explicit api_key_ref in the same layer wins
        return [Entry("hindsight.api_key_ref", f"env:{name}", entry.where)]
    warns.add(entry.where, entry.label, 'as a table must be {source = "env", name = "VAR"}; reverted to the default')
    return [Entry(entry.key, None, entry.where, revert=True)]


def _escapes_project(text: str) -> bool:
    """Absolute, home-relative, variable-expanding or ``..``-escaping paths leave the project."""
    if text.startswith(("/", "\\", "~")) or "$" in text or re.match(r"^[A-Za-z]:", text):
        return True
    norm = posixpath.normpath(text.replace("\\", "/"))
    return norm == ".." or norm.startswith("../")
