"""Keep recalled memory from being retained back as new memory (ADR-065).

A model that was given our ``<hindsight-memory>`` block may quote it: the whole block (an echo
model, a "here is what I was given" reply), the block as its host escaped it (``&lt;…&gt;``),
or just some of its lines ("1. Use uv for installs."). Retaining that text stores recalled
memory a second time, as if the session had said it, and the copy then outranks fresh memory.

So every string of every retained message, whatever its role, goes through :func:`scrub_text`:

1. complete blocks, raw or HTML-escaped, are cut out (:func:`.injected.strip_injected_blocks`);
2. lines that are one of the block's own fixed lines (the wrapper tags, the header, the
   mental-models intro and truncation note) are dropped;
3. lines that match a line of a block injected in this session are dropped. The session's
   :class:`InjectedLines` record holds a short hash of every such line (never the text), in
   ``.hindsight/injected-lines/<sid>.json`` so that a host running each hook in its own process
   still finds what ``context`` injected when ``agent_end`` runs.

Lines are compared by :func:`line_key`: HTML entities decoded, list and quote markers and a
trailing ``[tags]`` removed, whitespace collapsed, case folded. A line shorter than
``MIN_KEY_CHARS`` never matches, so ordinary short replies ("Done.", "1. yes") are kept.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import html
import json
import os
import re
import threading
import time
import weakref
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..fsutil import atomic_write_bytes, ensure_private_dir, open_private_append
from ..governance.redact import redact_error
from ..timefmt import SAID_PATTERN
from .injected import (
    BLOCK_CLOSE,
    BLOCK_HEADER,
    MODELS_CLOSE,
    MODELS_INTRO,
    MODELS_OPEN,
    MODELS_TRUNCATED,
    strip_injected_blocks,
)

if TYPE_CHECKING:
    from .session import EchoSession

MIN_KEY_CHARS = 12
MAX_KEYS = 2048
RECORD_DIR = "injected-lines"
RECORD_MAX_AGE_S = 30 * 24 * 3600
RECORD_VERSION = 2

_MARKER = re.compile(r"^(?:>+|[-*•+]|\d{1,4}[.)]|evidence:)\s*", re.IGNORECASE)
# A trailing ``[tags]`` list, and the day an item was said (ADR 118) with its time when another
# item shares that day (ADR 180), each matched from its opening bracket (``_without_trailing``).
_TAGS_FROM_BRACKET = re.compile(r"\[[^\[\]\n]*\]\s*$")
_DAY_FROM_BRACKET = re.compile(rf"\({SAID_PATTERN}\)\s*$")
_QUOTES = "\"'`“”‘’*_ "
_FIXED_TAGS = ("<hindsight-memory>", "</hindsight-memory>", "<hindsight_memories>", "</hindsight_memories>")


def _normal(line: str) -> str:
    text = html.unescape(line).strip()
    previous = None
    while previous != text:
        previous = text
        text = _MARKER.sub("", text).strip()
    return " ".join(text.split()).strip(_QUOTES).casefold()  # str.split splits where re's \s+ matched


def line_keys(line: str) -> list[str]:
    """The comparable forms of one line: as written, and without a trailing ``[tags]`` list (a
    rendered item may end with its day, ``(YYYY-MM-DD)`` or ``(YYYY-MM-DD HH:MM UTC)``, after the
    tags: that goes first)."""
    if len(line.strip()) < MIN_KEY_CHARS:
        return []
    keys: list[str] = []
    # The two patterns are tried only on a line that can end with them (each costs ~2 µs a line).
    undated = _without_trailing(line, "(", _DAY_FROM_BRACKET) if line.rstrip().endswith(")") else line
    untagged = _without_trailing(undated, "[", _TAGS_FROM_BRACKET) if undated.rstrip().endswith("]") else undated
    # Most lines have no day and no tags: a form equal to one before it has its key already.
    for form in dict.fromkeys((line, undated, untagged)):
        key = _normal(form)
        if len(key) >= MIN_KEY_CHARS and key not in keys:
            keys.append(key)
    return keys


def _without_trailing(line: str, opener: str, tail: re.Pattern[str]) -> str:
    """``line`` without the bracketed ``tail`` it ends with and the spaces before it, found from the
    last ``opener`` (neither tail holds another): the same as ``re.sub`` of spaces-then-tail at the
    line's end, without trying that pattern at every place of a 300-character line (ADR 227)."""
    at = line.rfind(opener)
    if at < 0 or tail.match(line, at) is None:
        return line
    return line[:at].rstrip()


def line_key(line: str) -> str | None:
    """The comparable form of ``line`` (``None`` when it is too short to compare)."""
    keys = line_keys(line)
    return keys[0] if keys else None


def _digest(key: str) -> str:
    return hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


CACHED_LINE_CHARS = 400  # lines up to this long have their digests cached (4,096 of them: ≤ ~2 MB)


def _line_digests(line: str) -> tuple[str, ...]:
    """The hashed keys of one line. Cached for short lines: a block's lines come back turn after
    turn (the same memories recalled again), and the regexes of :func:`line_keys` were most of
    the hook's record cost."""
    if len(line) > CACHED_LINE_CHARS:
        return _digests_of(line)
    return _cached_digests(line)


def _digests_of(line: str) -> tuple[str, ...]:
    return tuple(_digest(k) for k in line_keys(line))


_cached_digests = functools.lru_cache(maxsize=4096)(_digests_of)


_FIXED_LINES = {
    _normal(line)
    for line in (*BLOCK_HEADER[1:], MODELS_INTRO, MODELS_TRUNCATED, BLOCK_CLOSE, MODELS_OPEN, MODELS_CLOSE)
}
_FIXED_LINES |= {_normal(tag) for tag in _FIXED_TAGS}
_FIXED = frozenset(_digest(k) for k in _FIXED_LINES)


class InjectedLines:
    """The hashed lines of the blocks injected in one session (bounded, newest kept, persisted).

    The record is a small append log (ADR 171): a first line ``{"version": 2, "keys": [...]}`` (the
    snapshot; a version-1 record is that object alone), then one JSON line per remembered block, a
    list of its new hashes, appended with one ``write``. Rewriting the whole record on every
    turn cost ~1 ms of the ``context`` hook; an append costs a few µs. When the file holds more
    than ``2 · MAX_KEYS`` hashes it is compacted to one snapshot of the newest ``MAX_KEYS``.
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._keys: dict[str, None] = {}  # insertion-ordered set
        self._in_file = 0  # hashes the file holds (appended batches included), for compaction
        self._appendable = True  # False: the file does not end with a whole line, so rewrite it
        self._loaded = False

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        if self.path is None:
            return
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return
        except OSError:
            self._quarantine()
            return
        parsed = _parse_record(raw)
        if parsed is None:
            self._quarantine()
            return
        keys, self._appendable = parsed
        self._in_file = len(keys)
        self._keys = dict.fromkeys(keys)
        while len(self._keys) > MAX_KEYS:
            del self._keys[next(iter(self._keys))]

    def _quarantine(self) -> None:
        """Unparsable state is never deleted: it is moved aside and the record starts empty."""
        assert self.path is not None
        with contextlib.suppress(OSError):
            os.replace(self.path, self.path.with_name(f"{self.path.name}.corrupt-{int(time.time() * 1000)}"))

    def remember(self, render: str) -> None:
        """Record every line of an injected block; writes the file only when something is new."""
        new = [digest for line in render.split("\n") for digest in _line_digests(line)]
        with self._lock:
            self._load()
            added = list(dict.fromkeys(k for k in new if k not in self._keys and k not in _FIXED))
            if not added:
                return
            self._keys.update(dict.fromkeys(added))
            while len(self._keys) > MAX_KEYS:
                del self._keys[next(iter(self._keys))]
            if self.path is not None:
                self._write(added)

    def _write(self, added: list[str]) -> None:
        # Not fsynced: this runs inside the ``context`` hook, and a record lost to a power cut only
        # lets a quoted line through, so it is not worth the milliseconds an fsync costs.
        assert self.path is not None
        first = not self.path.exists()
        if first:
            ensure_private_dir(self.path.parent)
        if first or not self._appendable or self._in_file + len(added) > 2 * MAX_KEYS:
            snapshot = json.dumps({"version": RECORD_VERSION, "keys": list(self._keys)}) + "\n"
            atomic_write_bytes(self.path, snapshot.encode("utf-8"), durable=False)
            self._in_file = len(self._keys)
        else:
            fd = open_private_append(self.path)
            try:
                os.write(fd, (json.dumps(added) + "\n").encode("utf-8"))
            finally:
                os.close(fd)
            self._in_file += len(added)
        self._appendable = True
        if first:
            _sweep(self.path.parent, keep=self.path)

    def keys(self) -> frozenset[str]:
        with self._lock:
            self._load()
            return frozenset(self._keys)


def _parse_record(raw: bytes) -> tuple[list[str], bool] | None:
    """The hashes of a record, oldest first, and whether an append may follow it; ``None`` when
    it is not one of ours.

    The first line must be the snapshot object; a version-1 record is that object without a
    final newline. A last line without its newline that does not parse, after the snapshot, is
    an append cut short (a crash or a full disk): it is left out, so only its hashes are lost.
    Anything else is corrupt. Only a file whose every line ends with a newline may be appended
    to; any other (version 1, torn, empty) gets a snapshot on the next write.
    """
    *lines, last = raw.split(b"\n")
    keys: list[str] | None = None
    for number, line in enumerate([*lines, last]):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            if number == len(lines) and keys is not None:  # the last line: an append cut short
                return keys, False
            return None
        if keys is None and isinstance(value, dict) and isinstance(value.get("keys"), list):
            keys = [k for k in value["keys"] if isinstance(k, str)]
        elif keys is not None and isinstance(value, list):
            keys.extend(k for k in value if isinstance(k, str))
        else:
            return None
    return (keys, not last.strip()) if keys is not None else ([], False)


# Every fixed line contains one of these (case-folded): text without any skips the line checks.
_FIXED_HINTS = ("hindsight", "mental_models", "relevant prior memory", "memory is background", "curated summaries")


def _sweep(folder: Path, keep: Path) -> None:
    """Forget the records of sessions idle for ``RECORD_MAX_AGE_S`` (run when a session's first
    record is written, so the folder holds about one small file per recent session)."""
    cutoff = time.time() - RECORD_MAX_AGE_S
    with contextlib.suppress(OSError):
        for other in folder.glob("*.json"):
            with contextlib.suppress(OSError):
                if other != keep and other.stat().st_mtime < cutoff:
                    other.unlink()


def _echoed(line: str, known: frozenset[str]) -> bool:
    return any(digest in _FIXED or digest in known for digest in _line_digests(line))


def scrub_text(text: str, known: frozenset[str] = frozenset()) -> str:
    """``text`` without our blocks, our block's fixed lines and lines of injected blocks."""
    text = strip_injected_blocks(text)
    if len(text) < MIN_KEY_CHARS:
        return text
    if not known:
        folded = text.casefold()
        if not any(hint in folded for hint in _FIXED_HINTS):
            return text
    lines = text.split("\n")
    kept = [line for line in lines if not _echoed(line, known)]
    return text if len(kept) == len(lines) else "\n".join(kept)


def scrub_value(value: Any, known: frozenset[str] = frozenset()) -> Any:
    """Every string inside ``value`` (dicts and lists walked, keys kept) through :func:`scrub_text`."""
    if isinstance(value, str):
        return scrub_text(value, known)
    if isinstance(value, dict):
        return {k: scrub_value(v, known) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub_value(v, known) for v in value]
    return value


def has_echo(values: Iterable[Any]) -> bool:
    """Whether any string inside ``values`` would be changed by :func:`scrub_value` (no record)."""
    return any(scrub_value(v) != v for v in values)


def record_path(state_dir: Path, sid: str) -> Path:
    return state_dir / RECORD_DIR / f"{sid}.json"


_records: weakref.WeakKeyDictionary[Any, InjectedLines] = weakref.WeakKeyDictionary()
_records_lock = threading.Lock()


def session_record(rt: EchoSession) -> InjectedLines | None:
    """The record of the session ``rt`` runs (one per runtime; ``None`` before identity).

    A session without a session file has a per-process id, so no later process could find its
    record: it is kept in memory only."""
    if rt.identity is None:
        return None
    with _records_lock:
        record = _records.get(rt)
        if record is None:
            persisted = rt.ctx.session_file is not None
            record = InjectedLines(record_path(rt.state_dir, rt.identity.sid) if persisted else None)
            _records[rt] = record
        return record


def note_injected(rt: EchoSession, render: str) -> None:
    """Record an injected block's lines; a failure costs one warning, never the injection."""
    record = session_record(rt)
    if record is None or not render:
        return
    try:
        record.remember(render)
    except OSError as exc:
        rt.warn_once("injected-lines", f"could not record the injected memory lines: {redact_error(exc)}")


def injected_keys(rt: EchoSession) -> frozenset[str]:
    """The hashed lines injected in this session so far (empty when there is no record)."""
    record = session_record(rt)
    return record.keys() if record is not None else frozenset()


__all__ = [
    "MAX_KEYS",
    "MIN_KEY_CHARS",
    "InjectedLines",
    "has_echo",
    "injected_keys",
    "line_key",
    "line_keys",
    "note_injected",
    "record_path",
    "scrub_text",
    "scrub_value",
    "session_record",
]
