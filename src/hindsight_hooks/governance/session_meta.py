"""Session meta: the per-session governance record, and what it means for recall and retain.

The file ``.hindsight/session-meta/<sid>.json`` (docs/governance.md) is the user's say over one
session: ignore it, make it read-only, switch retain off, skip the next run, add tags. It
*fails closed*: a file we cannot read or trust means "no recall, no retain" until a setter
rewrites it, because guessing "normal" would leak a session the user asked us to ignore.
A corrupt file is moved aside (``.corrupt-<ms>``) before a setter replaces it — never deleted.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, get_args

from ..errors import HindsightHooksError
from ..fsutil import atomic_write_text, ensure_private_dir
from ..timefmt import iso_now

Mode = Literal["normal", "read-only", "ignored"]
Switch = Literal["normal", "off"]

MODES: tuple[Mode, ...] = get_args(Mode)
SWITCHES: tuple[Switch, ...] = get_args(Switch)
RESERVED_MODES = ("tools-only",)
RESERVED_TAG_PREFIXES = ("source:", "harness:", "repo:", "session:")
MAX_TAGS = 32
MAX_TAG_CHARS = 80
MAX_META_BYTES = 1 << 20

MODE_LABELS: dict[str, str] = {
    "normal": "Automatic recall/retain follow config.",
    "read-only": "Recall can read; automatic retain is off.",
    "ignored": "Automatic recall and retain are off.",
}


class TagError(HindsightHooksError, ValueError):
    """A tag the session may not carry; ``reason`` is safe to show the user."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class ModeError(HindsightHooksError, ValueError):
    """An unknown or reserved mode."""


class MetaShapeError(HindsightHooksError, ValueError):
    """The file parsed but is not a session meta record (the message names the field, not values)."""


@dataclass(frozen=True)
class SessionMeta:
    """One session's governance record; the defaults are the "missing file" record."""

    retained: bool = True
    recall_mode: Switch = "normal"
    retain_mode: Switch = "normal"
    next_retain_mode: Switch = "normal"
    mode: Mode = "normal"
    tags: tuple[str, ...] = ()
    created_at: str | None = None
    updated_at: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "retained": self.retained,
            "recall_mode": self.recall_mode,
            "retain_mode": self.retain_mode,
            "next_retain_mode": self.next_retain_mode,
            "mode": self.mode,
            "tags": list(self.tags),
        }
        if self.created_at is not None:
            out["created_at"] = self.created_at
        if self.updated_at is not None:
            out["updated_at"] = self.updated_at
        return out


DEFAULT_META = SessionMeta()
FAIL_CLOSED_META = SessionMeta(
    retained=False, recall_mode="off", retain_mode="off", next_retain_mode="normal", mode="ignored", tags=()
)


def looks_fail_closed(meta: SessionMeta) -> bool:
    """Ignored, both modes off and not retained: what a failed read produces (or its repaired copy)."""
    return meta.mode == "ignored" and meta.recall_mode == "off" and meta.retain_mode == "off" and not meta.retained


# -- tags -------------------------------------------------------------------------------------------

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def check_tag(tag: object) -> str:
    """The tag as stored (trimmed), or ``TagError`` with the reason (docs/governance.md#setters-and-tags)."""
    if not isinstance(tag, str):
        raise TagError("a tag must be text")
    t = tag.strip()
    if not t:
        raise TagError("a tag cannot be empty")
    if len(t) > MAX_TAG_CHARS:
        raise TagError(f"a tag has at most {MAX_TAG_CHARS} characters")
    if _CONTROL.search(t):
        raise TagError("a tag cannot contain control characters")
    lowered = t.lower()
    for prefix in RESERVED_TAG_PREFIXES:
        if lowered.startswith(prefix):
            raise TagError(f"tags starting with {prefix!r} are reserved for scope")
    return t


def apply_add_tag(meta: SessionMeta, tag: str) -> SessionMeta:
    t = check_tag(tag)
    from .redact import redact_text  # tags go to disk and the server on every retain

    if redact_text(t) != t:
        raise TagError("that tag looks like it holds a secret; tags are stored and sent as they are")
    if t in meta.tags:
        raise TagError(f"tag {t!r} is already set")
    if len(meta.tags) >= MAX_TAGS:
        raise TagError(f"a session has at most {MAX_TAGS} tags")
    return replace(meta, tags=(*meta.tags, t))


def apply_remove_tag(meta: SessionMeta, tag: str) -> SessionMeta:
    t = tag.strip() if isinstance(tag, str) else ""
    if t not in meta.tags:
        raise TagError(f"tag {t!r} is not set" if t else "a tag cannot be empty")
    return replace(meta, tags=tuple(x for x in meta.tags if x != t))


# -- setters (pure) -----------------------------------------------------------------------------------


def check_mode(mode: str) -> Mode:
    if mode in RESERVED_MODES:
        raise ModeError(f"mode {mode!r} is reserved and not available")
    for m in MODES:
        if m == mode:
            return m
    raise ModeError(f"unknown mode {mode!r}; use one of {', '.join(MODES)}")


def apply_mode(meta: SessionMeta, mode: str) -> SessionMeta:
    """docs/governance.md#setters-and-tags ``set_mode``.

    ``normal``/``read-only`` switch recall back on; ``ignored`` changes only the mode, so a later
    ``normal`` restores what was there. ``normal`` on a fail-closed record also restores retain,
    because that record was never the user's choice; an explicit retain-off is kept.
    """
    m = check_mode(mode)
    if m == "ignored":
        return replace(meta, mode=m)
    out = replace(meta, mode=m, recall_mode="normal")
    if m == "normal" and looks_fail_closed(meta):
        out = replace(out, retained=True, retain_mode="normal")
    return out


def apply_retain(meta: SessionMeta, on: bool) -> SessionMeta:
    return replace(meta, retained=bool(on), retain_mode="normal" if on else "off")


def apply_next_opt_out(meta: SessionMeta) -> SessionMeta:
    return replace(meta, next_retain_mode="off")


def apply_consume_next_opt_out(meta: SessionMeta) -> SessionMeta:
    return replace(meta, next_retain_mode="normal")


# -- effective mode -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Effective:
    """What the record allows right now (docs/governance.md#modes). ``retain`` ignores next-opt-out on purpose."""

    recall: bool
    retain: bool
    mode: Mode
    next_retain: Switch

    @property
    def retain_this_run(self) -> bool:
        """Automatic retain for the next completed run: effective retain and no pending opt-out."""
        return self.retain and self.next_retain == "normal"


def effective(meta: SessionMeta) -> Effective:
    if meta.mode == "ignored":
        recall = retain = False
    elif meta.mode == "read-only":
        recall, retain = meta.recall_mode != "off", False
    else:
        recall = meta.recall_mode != "off"
        retain = meta.retain_mode != "off" and meta.retained
    return Effective(recall=recall, retain=retain, mode=meta.mode, next_retain=meta.next_retain_mode)


def mode_label(mode: str) -> str:
    return MODE_LABELS.get(mode, MODE_LABELS["ignored"])


# -- parsing ----------------------------------------------------------------------------------------------


def _switch(data: dict[str, Any], key: str, default: Switch | None = None) -> Switch:
    if key not in data and default is not None:
        return default
    value = data.get(key)
    for s in SWITCHES:
        if s == value:
            return s
    raise MetaShapeError(f"{key} is missing or not one of {', '.join(SWITCHES)}")


def parse_meta(data: object) -> SessionMeta:
    """Validate a decoded record strictly; anything unexpected raises ``MetaShapeError``.

    Unknown extra keys are ignored (a newer writer may add some); unknown *values* are not,
    since a value we do not understand cannot be trusted to mean "allowed".
    """
    if not isinstance(data, dict):
        raise MetaShapeError("the record is not a JSON object")
    retained = data.get("retained")
    if not isinstance(retained, bool):
        raise MetaShapeError("retained is missing or not a boolean")
    mode_raw = data.get("mode")
    mode: Mode | None = next((m for m in MODES if m == mode_raw), None)
    if mode is None:
        raise MetaShapeError(f"mode is missing or not one of {', '.join(MODES)}")
    tags_raw = data.get("tags", [])
    if not isinstance(tags_raw, list):
        raise MetaShapeError("tags is not a list")
    if len(tags_raw) > MAX_TAGS:
        raise MetaShapeError(f"tags has more than {MAX_TAGS} entries")
    tags: list[str] = []
    for raw in tags_raw:
        try:
            t = check_tag(raw)
        except TagError as exc:
            raise MetaShapeError(f"tags holds an invalid tag ({exc.reason})") from None
        if t != raw or t in tags:
            raise MetaShapeError("tags holds an untrimmed or repeated tag")
        tags.append(t)
    stamps: dict[str, str | None] = {}
    for key in ("created_at", "updated_at"):
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            raise MetaShapeError(f"{key} is not a string")
        stamps[key] = value
    return SessionMeta(
        retained=retained,
        recall_mode=_switch(data, "recall_mode"),
        retain_mode=_switch(data, "retain_mode"),
        next_retain_mode=_switch(data, "next_retain_mode", default="normal"),
        mode=mode,
        tags=tuple(tags),
        created_at=stamps["created_at"],
        updated_at=stamps["updated_at"],
    )


@dataclass(frozen=True)
class MetaRead:
    """The outcome of one read: the record to obey, and whether it is the fail-closed stand-in."""

    record: SessionMeta
    path: Path
    failed_closed: bool = False
    missing: bool = False
    reason: str | None = field(default=None)

    @property
    def warning(self) -> str | None:
        """The once-per-session notice text (names the file, never its content)."""
        if not self.failed_closed:
            return None
        return (
            f"session meta {self.path.name} could not be used ({self.reason}); this session fails closed: "
            "automatic recall and retain are off until /hindsight:mode normal rewrites it"
        )


def read_meta(path: Path) -> MetaRead:
    """Read ``path``: missing → defaults; any other failure → the fail-closed record."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_META_BYTES + 1)
    except FileNotFoundError:
        return MetaRead(record=DEFAULT_META, path=path, missing=True)
    except IsADirectoryError:
        return MetaRead(record=FAIL_CLOSED_META, path=path, failed_closed=True, reason="a folder is in its place")
    except OSError as exc:
        reason = f"unreadable: {type(exc).__name__}"
        return MetaRead(record=FAIL_CLOSED_META, path=path, failed_closed=True, reason=reason)
    if len(raw) > MAX_META_BYTES:
        return MetaRead(record=FAIL_CLOSED_META, path=path, failed_closed=True, reason="file too large")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return MetaRead(record=FAIL_CLOSED_META, path=path, failed_closed=True, reason="not valid JSON")
    try:
        record = parse_meta(data)
    except MetaShapeError as exc:
        return MetaRead(record=FAIL_CLOSED_META, path=path, failed_closed=True, reason=str(exc))
    return MetaRead(record=record, path=path)


# -- the store ----------------------------------------------------------------------------------------------

_SID = re.compile(r"[A-Za-z0-9_-]{1,128}")
_path_locks: dict[str, threading.Lock] = {}
_path_locks_guard = threading.Lock()


def _lock_for(path: Path) -> threading.Lock:
    with _path_locks_guard:
        return _path_locks.setdefault(str(path), threading.Lock())


class SessionMetaStore:
    """Reads and rewrites one session's meta file; every setter is read-modify-write, atomic, 0600.

    Writers in one process are serialised per file. Sessions belong to one host process, so no
    cross-process lock is taken; the atomic replace still guarantees a whole file at any moment.
    """

    def __init__(self, meta_dir: Path, sid: str) -> None:
        if not _SID.fullmatch(sid):
            raise ValueError("a session id must be 1-128 characters of [A-Za-z0-9_-]")
        self.meta_dir = Path(meta_dir)
        self.sid = sid
        self.path = self.meta_dir / f"{sid}.json"

    def read(self) -> MetaRead:
        return read_meta(self.path)

    def update(self, change: Callable[[SessionMeta], SessionMeta]) -> SessionMeta:
        """Apply ``change`` to the current record (fail-closed if unreadable) and write the result."""
        with _lock_for(self.path):
            current = self.read()
            new = change(current.record)
            now = iso_now()
            new = replace(new, created_at=new.created_at or now, updated_at=now)
            self._write(new, quarantine=current.failed_closed)
            return new

    def _write(self, meta: SessionMeta, quarantine: bool) -> None:
        state_dir = self.meta_dir.parent
        if not self.meta_dir.exists():
            ensure_private_dir(state_dir, gitignore=state_dir.name == ".hindsight")
            ensure_private_dir(self.meta_dir)
        if quarantine and os.path.lexists(self.path):
            # Keep what we could not parse: the user (or /hindsight:doctor) may want it.
            stamp = int(datetime.now(UTC).timestamp() * 1000)
            os.rename(self.path, self.path.with_name(f"{self.path.name}.corrupt-{stamp}"))
        atomic_write_text(self.path, json.dumps(meta.to_json(), indent=2) + "\n")
        with contextlib.suppress(OSError):
            os.chmod(self.path, 0o600)

    # The docs/governance.md#setters-and-tags setters; each returns the record as written.
    def set_mode(self, mode: str) -> SessionMeta:
        check_mode(mode)
        return self.update(lambda m: apply_mode(m, mode))

    def set_retain(self, on: bool) -> SessionMeta:
        return self.update(lambda m: apply_retain(m, on))

    def set_next_opt_out(self) -> SessionMeta:
        return self.update(apply_next_opt_out)

    def consume_next_opt_out(self) -> SessionMeta:
        return self.update(apply_consume_next_opt_out)

    def add_tag(self, tag: str) -> SessionMeta:
        return self.update(lambda m: apply_add_tag(m, tag))

    def remove_tag(self, tag: str) -> SessionMeta:
        return self.update(lambda m: apply_remove_tag(m, tag))
