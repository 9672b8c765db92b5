"""Where a session's retain cursor stood, proven from evidence, after the cursor store was lost.

A cursor store that could not be read used to be overwritten (wrong JSON shape) or to pause
retain until ``/hindsight:doctor --fix`` (unparsable), and either way every session then
retained its whole transcript again. The cursor is not the only record of what was retained:
every turn ``agent_end`` retained is the projection of its messages, appended to the session's
live document (``hh-session:<sid>``), and sits either in the queue (pending or dead-lettered) or
in the memory store. :func:`proven_through` finds the last message of the transcript whose
projection is in that evidence; the cursor is rebuilt through it, so only the unproven tail is
retained again (ADR-066).

The retain receipts say *that* the live document was delivered, never *what*, so they cannot
prove a position; they are not read here.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import orjson

from ..hooks import Message
from .cursor import canonical_json

if TYPE_CHECKING:
    from .cursor import CursorEntry, CursorStore, FingerprintMemo
    from .session import RecoverySession

STORE_READ_TIMEOUT_S = 5.0
"""At most this long per bank to read the live document back from the store or server."""

ProjectOne = Callable[[Message], dict[str, Any] | None]


# --------------------------------------------------------------------------- the pure part


def json_arrays(text: str) -> Iterator[list[Any]]:
    """The JSON arrays in ``text``, one after another (parts are joined by blank lines locally
    and by newlines on the server); text between them that does not parse is skipped."""
    decoder = json.JSONDecoder()
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i] in " \t\r\n":
            i += 1
        if i >= n:
            return
        try:
            value, i = decoder.raw_decode(text, i)
        except ValueError:
            nxt = text.find("\n[", i)
            if nxt < 0:
                return
            i = nxt + 1
            continue
        if isinstance(value, list):
            yield value


def _key(projected: dict[str, Any], timed: bool) -> bytes | None:
    body = projected if timed else {k: v for k, v in projected.items() if k != "timestamp"}
    try:
        return orjson.dumps(body, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return None


def _timed(msg: Message) -> bool:
    """Whether the projection's timestamp comes from the message (else it was "now")."""
    value = msg.get("timestamp") if isinstance(msg, dict) else None
    if isinstance(value, str):
        return bool(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return math.isfinite(value)
    return False


def _identity(msg: Message) -> bytes:
    """What two messages must share to project alike (role, time, content; not the id)."""
    if not isinstance(msg, dict):
        return canonical_json(msg)
    return canonical_json([msg.get("role"), msg.get("timestamp"), msg.get("content")])


def proven_through(msgs: Sequence[Message], texts: Iterable[str], project_one: ProjectOne) -> int:
    """The index of the last message of ``msgs`` whose projection is in ``texts``; -1 if none.

    Only a message that is unique in ``msgs`` (role, timestamp and content) counts: a repeated
    "ok" might match an earlier copy and skip messages that were never retained. A message with
    its own timestamp must match with that timestamp; one without (its projection was stamped
    with the time of the retain) matches without it. Walks from the end and stops at the first
    proof, so the cost is the unproven tail, not the transcript.
    """
    exact: set[bytes] = set()
    loose: set[bytes] = set()
    for text in texts:
        for array in json_arrays(text):
            for projected in array:
                if isinstance(projected, dict):
                    for keys, timed in ((exact, True), (loose, False)):
                        key = _key(projected, timed)
                        if key is not None:
                            keys.add(key)
    if not exact:
        return -1
    seen = Counter(_identity(m) for m in msgs)
    for i in range(len(msgs) - 1, -1, -1):
        msg = msgs[i]
        if seen[_identity(msg)] != 1:
            continue
        projected = project_one(msg)
        if projected is None:
            continue
        timed = _timed(msg)
        key = _key(projected, timed)
        if key is not None and key in (exact if timed else loose):
            return i
    return -1


# --------------------------------------------------------------------------- the evidence


def _live_document_id(sid: str) -> str:
    from ..governance.identity import live_document_id

    return live_document_id(sid)


def queued_texts(rt: RecoverySession, banks: set[str], document_id: str) -> list[str]:
    """Contents of the live document's items in the active and dead-letter queue files."""
    from ..queue.store import read_tolerant

    paths = rt.queue().paths
    texts: list[str] = []
    for path in (paths.active, paths.dead):
        try:
            jobs = read_tolerant(path).jobs
        except Exception:
            continue
        for job in jobs:
            if job.get("bank_id") not in banks:
                continue
            for item in job.get("items") or []:
                content = item.get("content") if isinstance(item, dict) else None
                if item.get("document_id") == document_id and isinstance(content, str):
                    texts.append(content)
    return texts


def stored_texts(rt: RecoverySession, banks: set[str], document_id: str) -> list[str]:
    """The live document as the store (or server) holds it; a bank that cannot answer is skipped."""
    from ..backends.capabilities import document_reader

    backend = document_reader(rt.backend())
    if backend is None:
        return []
    texts: list[str] = []
    for bank in sorted(banks):
        if rt.in_cooldown(bank):
            continue
        try:
            with rt.backend_use():
                text = backend.document_text(bank, document_id, STORE_READ_TIMEOUT_S)
        except Exception:
            continue  # missing document, outage: no evidence from this bank
        if isinstance(text, str):
            texts.append(text)
    return texts


def project_one_for(rt: RecoverySession) -> ProjectOne:
    """A message's projection as automatic retain would have written it: sanitised, projected,
    redacted like ``build_item`` (``retain.redact_secrets``), read back."""
    from ..governance.redact import redact_text
    from ..sanitize import sanitize
    from .projection import project, projection_json

    cfg = rt.cfg.retain

    def one(msg: Message) -> dict[str, Any] | None:
        projected = project(sanitize([msg]), cfg, now_ms=0)
        if not projected:
            return None
        text = projection_json(projected)
        if cfg.redact_secrets:
            text = redact_text(text)
        try:
            value = json.loads(text)
        except ValueError:
            return None
        first = value[0] if isinstance(value, list) and value else None
        return first if isinstance(first, dict) else None

    return one


def rebuild_position(rt: RecoverySession, sid: str, msgs: Sequence[Message]) -> int:
    """The last index of ``msgs`` proven retained for session ``sid``; -1 if nothing is (never raises)."""
    try:
        banks = {b for b in (rt.project_bank(), rt.user_bank()) if b}
        if not banks or not msgs:
            return -1
        document_id = _live_document_id(sid)
        texts = queued_texts(rt, banks, document_id) + stored_texts(rt, banks, document_id)
        return proven_through(msgs, texts, project_one_for(rt))
    except Exception:
        return -1  # no proof: the whole transcript is retained again (a duplicate beats a loss)


# --------------------------------------------------------------------------- agent_end's entry


def heal_store(rt: RecoverySession, cursors: CursorStore) -> bool:
    """Move an unreadable cursor store aside and start a fresh one; tell the user once.

    Returns False only when the store could not be moved (the lock is busy, the folder is not
    writable): then retain waits for the next run, and nothing is overwritten.
    """
    from ..governance.redact import redact_error

    try:
        moved = cursors.recover_from_corrupt()
    except Exception as exc:
        rt.set_activity("retain-failed")
        rt.warn_once(
            "cursor", f"the retain cursor store is unreadable and could not be moved aside: {redact_error(exc)}"
        )
        return False
    if moved is not None:
        target, reason = moved
        rt.warn_once(
            "cursor-recovered",
            f"retain cursor store {cursors.path} was unreadable ({reason}); it was kept as {target.name} and a "
            "fresh one started. Each session resumes after the last message the retain queue or the memory "
            "store shows as retained: a few messages may be retained twice, none are lost.",
        )
    return True


def session_cursor(
    rt: RecoverySession, cursors: CursorStore, sid: str, msgs: Sequence[Message], memo: FingerprintMemo
) -> tuple[bool, CursorEntry | None]:
    """``(ok, the session's cursor)`` for ``agent_end``, recovering a lost store on the way.

    An unreadable store is moved aside (:func:`heal_store`); a session missing from a store
    that replaced a lost one gets its cursor rebuilt through :func:`rebuild_position`. ``ok`` is
    False when the cursor cannot be read at all (retain waits for the next run).
    """
    from ..governance.redact import redact_error
    from .cursor import CursorCorruptError

    try:
        try:
            snapshot = cursors.read()
        except CursorCorruptError:
            if not heal_store(rt, cursors):
                return False, None
            snapshot = cursors.read()
    except Exception as exc:
        rt.set_activity("retain-failed")
        rt.warn_once("cursor", f"could not read the retain cursor: {redact_error(exc)}")
        return False, None
    state = snapshot.sessions.get(sid)
    if state is not None or snapshot.recovered_from is None:
        return True, state
    through = rebuild_position(rt, sid, msgs)
    if through < 0:
        return True, None
    try:
        cursors.advance(sid, msgs, through, memo=memo)
        return True, cursors.get(sid)
    except Exception as exc:
        rt.warn_once("cursor", f"cursor update failed: {redact_error(exc)}")
        return True, None  # the whole transcript again: a duplicate beats a loss


__all__ = [
    "heal_store",
    "json_arrays",
    "project_one_for",
    "proven_through",
    "queued_texts",
    "rebuild_position",
    "session_cursor",
    "stored_texts",
]
