"""Turn windows for search: a transcript unit is found by its turn, shown as its message (ADR 052).

The store keeps one unit per message (BEHAVIOUR.md §15 step 2), which is what recall shows.
But a message alone is often unfindable: "Use 4821; the lower ones are taken" answers "what
port should the billing service use?" without repeating a single word of it. The issue asks
for transcripts split into retrievable *turn windows*, so each transcript unit is indexed with
its turn neighbour in the FTS ``context`` column (weighted 0.5 against the message's own words,
so a unit's own text still ranks first):

- a ``user`` unit carries the reply: the first non-user message that follows it;
- any other unit (assistant, tool result, …) carries the prompt of its turn: the user
  message(s) that opened the turn. A turn starts at a ``user`` message, as in the importer.

Only the neighbour's *searchable terms that the message itself lacks* are added (stop words and
1-char tokens dropped as in the §15 query terms, one copy per Porter stem). Adding the whole
neighbour would count a word twice for a unit that already says it — e.g. both halves of every
routine "deploying the billing service" / "the billing service deploy finished" turn would
outrank the one reply that only its question names — and would lengthen every unit for
bm25's length normalisation with words no query ever searches. The neighbour text is capped at
``TURN_CHARS`` before that (the head of a message names its topic; the cap bounds index growth)
and stored after the item's own context, separated by ``SEP`` (a control character FTS5 does not
index and item contexts never carry).

Auto-retain delivers a session as append deltas, so a turn may be split across two jobs: the
user message in one, its reply in the next. So an append reads back where the document stopped,
through the ``(bank_id, document_id, seq)`` index and bounded: a trailing run of user units (at
most ``LOOK_BACK``) gets the reply now — its rows are updated and the FTS trigger re-indexes
them — and otherwise the turn's prompt is the newest run of user units within the last
``PROMPT_LOOK_BACK`` units. The work is O(delta), never the document.

Units stored before this change have no neighbour and keep none; ``update_unit`` does not
refresh neighbours of other units. Both only cost findability, never correctness.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from .local_text import STOP_WORDS, fts_tokens, porter_stem
from .local_units import parse_messages

SEP = "\x1e"
TURN_CHARS = 1000
LOOK_BACK = 16
PROMPT_LOOK_BACK = 256
USER_PREFIX = "user: "

# Positions in a pending unit row of ``local_write.store_batch`` (rowid, id, bank, doc, seq, text, context, ...).
_SEQ, _TEXT, _CONTEXT = 4, 5, 6


class _Item(Protocol):
    document_id: str
    content: str
    context: str
    unit_texts: list[str]


class _Doc(Protocol):
    existed: bool
    replace: bool
    pending: list[list[Any]]


def search_context(item_context: str, neighbour: str) -> str:
    """The stored FTS ``context`` of a unit: its item's context, then its turn neighbour."""
    base = item_context.replace(SEP, " ")
    return f"{base}{SEP}{neighbour}" if neighbour else base


def neighbour_of(context: str) -> str:
    """The turn neighbour stored in a unit's ``context`` ('' when it has none)."""
    return context.partition(SEP)[2]


def item_context_of(context: str) -> str:
    return context.partition(SEP)[0]


def _cap(text: str) -> str:
    """At most ``TURN_CHARS``, cut at a space when there is one (a half word would not match)."""
    text = text.strip()
    if len(text) <= TURN_CHARS:
        return text
    head = text[:TURN_CHARS]
    cut = head.rfind(" ")
    return head[:cut] if cut > TURN_CHARS // 2 else head


def novel_terms(neighbour: str, own: str) -> str:
    """The searchable terms of ``neighbour`` whose stem ``own`` lacks, once each, in order."""
    have = {porter_stem(t) for t in fts_tokens(own)}
    out: list[str] = []
    for token in fts_tokens(neighbour):
        if len(token) < 2 or token in STOP_WORDS:
            continue
        stem = porter_stem(token)
        if stem not in have:
            have.add(stem)
            out.append(token)
    return " ".join(out)


def _role_and_text(unit_text: str) -> tuple[str, str]:
    role, _, text = unit_text.partition(": ")
    return role, text


@dataclass
class _Stored:
    """A unit already in the store whose context is rewritten when its reply arrives."""

    rowid: int
    text: str
    context: str


@dataclass
class _TurnState:
    prompt: str = ""
    waiting: list[list[Any] | _Stored] = field(default_factory=list)
    after_user: bool = False
    updates: list[tuple[str, int]] = field(default_factory=list)

    def reset(self) -> None:
        self.prompt, self.waiting, self.after_user = "", [], False

    def add(self, role: str, text: str, row: list[Any]) -> None:
        if role == "user":
            if not self.after_user:
                self.prompt, self.waiting = "", []
            self.prompt = _cap(f"{self.prompt}\n{text}" if self.prompt else text)
            self.waiting.append(row)
            self.after_user = True
            return
        if self.prompt:
            row[_CONTEXT] = search_context(row[_CONTEXT], novel_terms(self.prompt, text))
        reply = _cap(text)
        for waiting in self.waiting:
            if isinstance(waiting, _Stored):
                added = novel_terms(reply, waiting.text)
                self.updates.append((search_context(item_context_of(waiting.context), added), waiting.rowid))
            else:
                own = _role_and_text(str(waiting[_TEXT]))[1]
                waiting[_CONTEXT] = search_context(waiting[_CONTEXT], novel_terms(reply, own))
        self.waiting, self.after_user = [], False


def _resume(conn: sqlite3.Connection, bank_id: str, document_id: str, before_seq: int) -> _TurnState:
    """The turn state where the document stopped: its trailing user units, or its last prompt."""
    state = _TurnState()
    rows = conn.execute(
        "SELECT rowid, seq, content, context FROM units WHERE bank_id = ? AND document_id = ? AND seq < ? "
        "ORDER BY seq DESC LIMIT ?",
        (bank_id, document_id, before_seq, LOOK_BACK),
    ).fetchall()
    if not rows:
        return state
    if not str(rows[0][2]).startswith(USER_PREFIX):  # mid-turn: find the user run that opened it
        rows = conn.execute(
            "SELECT rowid, seq, content, context FROM units WHERE bank_id = ? AND document_id = ? "
            "AND seq BETWEEN ? AND ? AND substr(content, 1, 6) = ? ORDER BY seq DESC LIMIT ?",
            (bank_id, document_id, before_seq - PROMPT_LOOK_BACK, before_seq - 1, USER_PREFIX, LOOK_BACK),
        ).fetchall()
    run: list[tuple[int, str, str]] = []
    expected = None
    for rowid, seq, content, context in rows:  # newest first: one run of consecutive user units
        if not str(content).startswith(USER_PREFIX) or (expected is not None and int(seq) != expected):
            break
        run.append((int(rowid), str(content)[len(USER_PREFIX) :], str(context)))
        expected = int(seq) - 1
    run.reverse()
    for _rowid, text, _context in run:
        state.prompt = _cap(f"{state.prompt}\n{text}" if state.prompt else text)
    if run and int(rows[0][1]) == before_seq - 1:  # the document ends with these user units
        state.waiting = [_Stored(rowid, text, context) for rowid, text, context in run]
        state.after_user = True
    return state


def link_turns(conn: sqlite3.Connection, bank_id: str, items: Sequence[_Item], docs: Mapping[str, _Doc]) -> None:
    """Put each transcript unit's turn neighbour into its pending row's context (see the module doc).

    ``docs[d].pending`` holds the new unit rows of document ``d`` in item order, so item ``i``
    owns the next ``len(items[i].unit_texts)`` rows of its document.
    """
    taken: dict[str, int] = {}
    turns: dict[str, _TurnState] = {}
    for item in items:
        doc = docs[item.document_id]
        start = taken.get(item.document_id, 0)
        rows = doc.pending[start : start + len(item.unit_texts)]
        taken[item.document_id] = start + len(rows)
        if not rows:
            continue
        turn = turns.get(item.document_id)
        if turn is None:
            appends = doc.existed and not doc.replace
            turn = _resume(conn, bank_id, item.document_id, int(rows[0][_SEQ])) if appends else _TurnState()
            turns[item.document_id] = turn
        _link_item(turn, item, rows)
    updates = [u for turn in turns.values() for u in turn.updates]
    if updates:
        conn.executemany("UPDATE units SET context = ? WHERE rowid = ?", updates)


def _link_item(turn: _TurnState, item: _Item, rows: Iterable[list[Any]]) -> None:
    if parse_messages(item.content) is None:  # not a transcript: no turns, and it ends the current one
        turn.reset()
        return
    for row in rows:
        role, text = _role_and_text(str(row[_TEXT]))
        turn.add(role, text, row)
