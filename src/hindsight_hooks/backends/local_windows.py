"""Turn windows for search: a reply is found by its prompt, shown as itself (ADR 052).

The store keeps one unit per message (docs/backends.md#embedded-store step 2), which is what recall shows.
But a reply alone is often unfindable: "Use 4821; the lower ones are taken" answers "what port
should the billing service use?" without repeating a single word of it. The issue asks for
transcripts split into retrievable *turn windows*, so the reply is indexed with its prompt in
the FTS ``context`` column (weighted 0.5 against the unit's own words, so a unit's own text
still ranks first):

- a turn starts at a run of ``user`` units (as in the importer's chunking); its *reply* is the
  run of units that follows, up to the next change of role (the message that answers);
- each reply unit's search context gets the prompt's searchable terms that the reply itself
  lacks (stop words and 1-char tokens dropped as in the docs/backends.md#embedded-store query terms, one copy per Porter
  stem), from at most ``TURN_CHARS`` of the prompt (the head of a message names its topic);
- a user unit that announces a change and shares a word with the assistant message it answers
  ("Change of plan: GitHub Pages instead" after "… GitHub Pages hosting is free …"; "on second
  thought, pnpm" after "… pnpm would cut that …"), or names at most ``SHORT_SUBJECT`` words of a
  subject ("No, Postgres instead."), gets that message's terms, as a reply gets its prompt's
  (ADR 206): such a change is elliptic, and says what changed only with the message before it.
  A longer one that shares no word is a statement of its own ("Ownership of the ledger api moved
  to Dara after the reorg" after "Added a changelog entry"), and gets nothing;
- other user units, tool results and later messages of the turn get nothing.

Why so narrow: every unit that carries a word raises its document frequency, and bm25 rates a
word by how rare it is. Giving the whole turn to every unit (or the reply to the prompt too)
would make a turn's words look common and count a word twice for a unit that already says it;
a first variant that did so ranked routine "deploying the billing service" / "the billing
service deploy finished" pairs above the one reply that only its question names (ADR 052).

The terms are stored after the item's own context, separated by ``SEP`` (a control character
FTS5 does not index and item contexts never carry).

Auto-retain delivers a session as append deltas, so a turn may be split across two jobs: the
prompt in one, its reply in the next (a message itself is never split across jobs). An append
therefore reads the document's trailing run of user units (at most ``LOOK_BACK``, through the
``(bank_id, document_id, seq)`` index): O(delta), never the document. Units stored before this
change get no terms (no backfill); ``update_unit`` does not refresh them. Both only cost
findability.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .local_text import LIGHT_VERBS, STOP_WORDS, fts_tokens, porter_stem
from .local_time import announces_change, content_stems
from .local_units import parse_messages

SEP = "\x1e"
TURN_CHARS = 1000
LOOK_BACK = 16
USER_PREFIX = "user: "
ASSISTANT_PREFIX = "assistant: "

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
    """A unit's stored ``context``: its item's context (provenance, which the index leaves out:
    ADR 179), then, after ``SEP``, its turn neighbour (which the index holds)."""
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


# What a change says of itself ("change of plan", "switched", "instead", "on second thought"):
# words two messages share without sharing a subject.
_CHANGE_WORDS = " ".join(
    [
        "change changed changes changing plan plans switch switched switching instead replace replaced replacing",
        "move moved moving remove removed drop dropped now longer anymore second thought mind scratch decide",
        "decided rather after actually",
    ]
)
_CHANGE_STEMS = frozenset(porter_stem(word) for word in _CHANGE_WORDS.split())


def _subject_stems(text: str) -> frozenset[str]:
    return content_stems(text) - LIGHT_VERBS - _CHANGE_STEMS


SHORT_SUBJECT = 1  # a change that names this few words of a subject can only mean the message before it


def elliptic_change(text: str, answered: str) -> bool:
    """Does the user's ``text`` change a decision by naming only what the assistant's ``answered``
    message offered, or answering it? It announces a change, and shares a word of its subject with
    that message ("pnpm" after "… pnpm would cut that …"), or names too little to be about
    anything else ("No, Postgres instead." after "I'd suggest MySQL for the orders service.")."""
    if not announces_change(text):
        return False
    own = _subject_stems(text)
    return len(own) <= SHORT_SUBJECT or not own.isdisjoint(_subject_stems(answered))


def _role_and_text(unit_text: str) -> tuple[str, str]:
    role, _, text = unit_text.partition(": ")
    return role, text


@dataclass
class _TurnState:
    """Where a document's units stand: after a prompt, inside its reply, or elsewhere."""

    prompt: str = ""
    after_user: bool = False
    reply_role: str | None = None
    answered: str = ""  # the assistant's last message, which a user message answers

    def reset(self) -> None:
        self.prompt, self.after_user, self.reply_role, self.answered = "", False, None, ""

    def add(self, role: str, text: str, row: list[Any]) -> None:
        if role == "user":
            if not self.after_user:
                self.prompt = ""
                if self.answered and elliptic_change(text, self.answered):  # (ADR 206)
                    row[_CONTEXT] = search_context(row[_CONTEXT], novel_terms(self.answered, text))
            self.prompt = _cap(f"{self.prompt}\n{text}" if self.prompt else text)
            self.after_user, self.reply_role, self.answered = True, None, ""
            return
        if role == "assistant":
            self.answered = _cap(text)
        if self.after_user:
            self.after_user, self.reply_role = False, role
        elif role != self.reply_role:
            self.prompt, self.reply_role = "", None
        if self.prompt:
            row[_CONTEXT] = search_context(row[_CONTEXT], novel_terms(self.prompt, text))


def _resume(conn: sqlite3.Connection, bank_id: str, document_id: str, before_seq: int) -> _TurnState:
    """The turn state where the document stopped: a prompt when it ends with user units, else the
    message a next user message would answer."""
    state = _TurnState()
    rows = conn.execute(
        "SELECT content FROM units WHERE bank_id = ? AND document_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?",
        (bank_id, document_id, before_seq, LOOK_BACK),
    ).fetchall()
    run: list[str] = []
    for (content,) in rows:  # newest first: the trailing run of user units
        if not str(content).startswith(USER_PREFIX):
            role, text = _role_and_text(str(content))
            if not run and role == "assistant":
                state.answered = _cap(text)
            break
        run.append(str(content)[len(USER_PREFIX) :])
    for text in reversed(run):
        state.prompt = _cap(f"{state.prompt}\n{text}" if state.prompt else text)
    state.after_user = bool(run)
    return state


def link_turns(conn: sqlite3.Connection, bank_id: str, items: Sequence[_Item], docs: Mapping[str, _Doc]) -> None:
    """Put each reply unit's prompt terms into its pending row's context (see the module doc).

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


def _link_item(turn: _TurnState, item: _Item, rows: Iterable[list[Any]]) -> None:
    if parse_messages(item.content) is None:  # not a transcript: no turns, and it ends the current one
        turn.reset()
        return
    for row in rows:
        role, text = _role_and_text(str(row[_TEXT]))
        turn.add(role, text, row)
