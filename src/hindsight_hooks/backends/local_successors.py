"""What replaced a recalled decision, when the change does not say the question's words (ADR 209).

"which package manager do we use?" finds "pnpm is our package manager" by its words. The newer
"We switched from pnpm to bun this week." says neither "package" nor "manager", so the search
never reaches it, and ``local_time.newer_first`` can only order the hits it is given: the user
gets the decision that no longer holds. People name a change by what it leaves behind ("from
pnpm", "instead of Jenkins", "Redis is out"), and that word is in the hit the question found.

So, after the cut, the stated words of the first few hits (not the question's own, not stop
words, not what the hit itself gives up) are looked up among the marks each unit carries of what
it leaves behind (``local_change_marks``, computed when it was written); a newer unit so marked
that names one of a hit's words as left behind (``local_time.left_behind``, or as removed with one
more word in common) is put just above that hit: the newest such change, one per hit, and the
change of that change above it in turn. A word the hit itself gives up ("msgspec instead of
writing our own") is not one it states. Nothing is dropped but what the limit and the token
budget leave out at the end, as for any other order.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from functools import lru_cache

from ..timefmt import iso_from_epoch
from .base import same_text_key
from .local_change_marks import decided_marks, marked, marks_expression, marks_held
from .local_hits import candidate_of, said_epoch
from .local_query import R_ROWID, UNIT_COLUMNS, Filters
from .local_rank import Candidate, cut_to_budget
from .local_text import LIGHT_VERBS
from .local_time import CHANGE_MIN_SHARED, announces_change, content_stems, left_behind, removed

# How many of the first hits are looked at, how many of their words are looked up, and how many
# of the newest marked units are read: a change is newer than what it replaces, and near the top.
HITS_LOOKED_AT = 3
STEMS_LOOKED_UP = 24
MATCHES_READ = 12
CHAIN_STEPS = 2  # a change of a change, and one more: pnpm → bun → deno → npm


@lru_cache(maxsize=512)
def given_up(text: str) -> frozenset[str]:
    """The stems of the words ``text`` itself leaves behind or removes: "we use msgspec instead of
    writing our own" states msgspec, not writing, so a later "instead of writing …" replaces nothing
    of it. Cached as ``content_stems`` is: the first hits of one turn are mostly the next turn's."""
    if not announces_change(text):
        return frozenset()
    return left_behind(text) | removed(text)


def searched_stems(hits: list[Candidate], asked: frozenset[str]) -> list[str]:
    """The stems of the first hits a change could name as left behind: what each states (its
    content words, less what it gives up itself), not light verbs, not the question's (``asked``);
    in the hits' order, at most ``STEMS_LOOKED_UP``."""
    out: dict[str, None] = {}
    for hit in hits[:HITS_LOOKED_AT]:
        for stem in sorted(stated(hit) - asked - LIGHT_VERBS):
            if not stem.isdigit():
                out[stem] = None
    return list(out)[:STEMS_LOOKED_UP]


def stated(hit: Candidate) -> frozenset[str]:
    """The stems of what ``hit`` states: its content words, less what it gives up itself."""
    return content_stems(hit.content) - given_up(hit.content)


def replaces(change: Candidate, hit: Candidate, old: frozenset[str]) -> bool:
    """Is ``change`` newer than ``hit`` (which states ``old``) and does it mark one of those words
    as left behind (or as removed, with one more word in common)? The words its marks name, read
    again from its text: the same rule as when it was written, so the look-up and the check agree."""
    if said_epoch(change) <= said_epoch(hit):
        return False
    left, gone = decided_marks(change.content)
    if not left.isdisjoint(old):
        return True
    return not gone.isdisjoint(old) and len(old & content_stems(change.content)) >= CHANGE_MIN_SHARED


def with_successors(
    conn: sqlite3.Connection,
    chosen: list[Candidate],
    search_scope: tuple[int, int, Filters],
    asked: frozenset[str],
    budget: tuple[int, int],
    seen: Callable[[str, str], bool] | None,
) -> list[Candidate]:
    """``chosen`` with each newer change that replaces one of its first hits put just above that
    hit, and the change of that change above it in turn (pnpm → bun → deno, up to ``CHAIN_STEPS``),
    cut again to ``budget`` (limit, max tokens). ``search_scope``: the bank's rowid range and the
    recall's filters; ``asked``: the question's stems; ``seen``: what the model already reads."""
    held = marks_held(conn)
    if not held:  # no unit of the file marks a change: nothing to read of the hits (most turns)
        return chosen
    successor: dict[int, Candidate] = {}  # rowid of a hit or a change → the change put above it
    shown = {same_text_key(cand.content) for cand in chosen}
    have = {cand.rowid for cand in chosen}
    replaced = chosen[:HITS_LOOKED_AT]
    for _ in range(1 + CHAIN_STEPS):  # a further step only after a change was found
        found = _changes_of(conn, replaced, (search_scope, held), asked, (have, shown), seen)
        if not found:
            break
        successor.update(found)
        replaced = list(found.values())
        have.update(change.rowid for change in replaced)
    if not successor:
        return chosen

    def newest_first(cand: Candidate) -> list[Candidate]:
        chain = [cand]
        while chain[-1].rowid in successor:
            chain.append(successor[chain[-1].rowid])
        return chain[::-1]

    ordered = [c for hit in chosen for c in newest_first(hit)]
    limit, max_tokens = budget
    return cut_to_budget(ordered, limit, max_tokens)


def _changes_of(
    conn: sqlite3.Connection,
    hits: list[Candidate],
    scope: tuple[tuple[int, int, Filters], frozenset[str]],
    asked: frozenset[str],
    known: tuple[set[int], set[str]],
    seen: Callable[[str, str], bool] | None,
) -> dict[int, Candidate]:
    """The newest change that replaces each of ``hits`` (by the hit's rowid), one search for all;
    ``scope``: the bank's rowid range and filters, and the marks the file holds; ``known``: the
    rowids and text keys already listed, which it adds the changes' keys to."""
    (lo, hi, filters), held = scope
    stems = marked(held, searched_stems(hits, asked))
    if not stems:
        return {}
    where, params = filters.where()
    # A change is newer than what it replaces: the matches said before every hit are left in SQL
    # (to the second: stored times and message times differ in their fractions; exact below).
    oldest = iso_from_epoch(min(said_epoch(hit) for hit in hits) - 1)
    rows = conn.execute(
        f"SELECT {UNIT_COLUMNS}, NULL FROM (SELECT rowid AS rid FROM units_fts WHERE units_fts MATCH ? "
        "AND rowid BETWEEN ? AND ? ORDER BY rowid DESC LIMIT ?) AS f CROSS JOIN units AS u ON u.rowid = f.rid "
        "JOIN documents AS d ON d.bank_id = u.bank_id AND d.document_id = u.document_id "
        f"WHERE coalesce(nullif(u.occurred_at, ''), u.created_at) > ?{where}",
        [marks_expression(stems), lo, hi, MATCHES_READ, oldest, *params],
    ).fetchall()
    have, shown = known
    states = [stated(hit) for hit in hits] if rows else []
    found: dict[int, Candidate] = {}
    for row in sorted(rows, key=lambda r: -int(r[R_ROWID])):
        if int(row[R_ROWID]) in have:
            continue
        change = candidate_of(row)
        key = same_text_key(change.content)
        if key in shown or (seen is not None and seen(change.document_id, change.content)):
            continue
        for hit, state in zip(hits, states, strict=True):
            if hit.rowid not in found and replaces(change, hit, state):  # the newest change of each hit
                found[hit.rowid] = change
                shown.add(key)
                break
    return found
