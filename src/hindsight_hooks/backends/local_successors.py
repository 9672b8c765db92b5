"""What replaced a recalled decision, when the change does not say the question's words (ADR 209).

"which package manager do we use?" finds "pnpm is our package manager" by its words. The newer
"We switched from pnpm to bun this week." says neither "package" nor "manager", so the search
never reaches it, and ``local_time.newer_first`` can only order the hits it is given: the user
gets the decision that no longer holds. People name a change by what it leaves behind ("from
pnpm", "instead of Jenkins", "Redis is out"), and that word is in the hit the question found.

So, after the cut, the words of the first few hits (not the question's own, not stop words) are
searched once more, together with the words a change is said with; a newer unit among the matches
that names one of a hit's words as left behind (``local_time.left_behind``, or as removed with one
more word in common) is put just above that hit: the newest such change, one per hit. A word the
hit itself gives up ("msgspec instead of writing our own") is not one it states. Nothing is dropped
but what the limit and the token budget leave out at the end, as for any other order.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from ..timefmt import iso_from_epoch
from .base import same_text_key
from .local_hits import candidate_of, said_epoch
from .local_query import R_CONTENT, R_ROWID, UNIT_COLUMNS, Filters
from .local_rank import Candidate, cut_to_budget
from .local_text import (
    LIGHT_VERBS,
    STOP_WORDS,
    fts_tokens,
    porter_stem,
    says_other_language_words,
    without_role_label,
)
from .local_time import CHANGE_MIN_SHARED, announces_change, content_stems, left_behind, removed

# How many of the first hits are looked at, how many of their words are searched, and how many
# of the newest matches are read: a change is newer than what it replaces, and near the top.
HITS_LOOKED_AT = 3
WORDS_SEARCHED = 8
MATCHES_READ = 12
CHAIN_STEPS = 2  # a change of a change, and one more: pnpm → bun → deno → npm
# The words a change is said with when it names what it leaves behind (``local_time``'s
# ``_LEFT_BEHIND`` and ``_REMOVED``): FTS stems each as it stems the units, so one form stands for
# all ("switched" for switch, switches, switching). The other languages' words are searched only
# beside a hit that is in one of them: each word searched costs a lookup in every index segment.
CHANGE_WORDS = (
    "switched", "moved", "migrated", "instead", "replaced", "dropped", "longer", "rather", "decided", "out",
    "removed", "ditched",
)  # fmt: skip
CHANGE_WORDS_ELSEWHERE = (
    "statt",
    "anstatt",
    "lieu",
    "lugar",
    "vez",
    "invece",
    "plaats",
    "вместо",
    "zamiast",
    "замість",
)
_CHANGE_STEMS = frozenset(porter_stem(word) for word in (*CHANGE_WORDS, *CHANGE_WORDS_ELSEWHERE))


def given_up(text: str) -> frozenset[str]:
    """The stems of the words ``text`` itself leaves behind or removes: "we use msgspec instead of
    writing our own" states msgspec, not writing, so a later "instead of writing …" replaces nothing
    of it."""
    if not announces_change(text):
        return frozenset()
    return left_behind(text) | removed(text)


def searched_words(hits: list[Candidate], asked: frozenset[str]) -> list[str]:
    """The words of the first hits a change could name as left behind: not stop words, not light
    verbs, not the change words, not the question's (``asked``: its stems), and not what the hit
    itself gives up; in order."""
    out: dict[str, None] = {}
    for hit in hits[:HITS_LOOKED_AT]:
        dropped = given_up(hit.content)
        for token in fts_tokens(without_role_label(hit.content)):
            if len(token) < 2 or token in STOP_WORDS or token.isdigit():
                continue
            stem = porter_stem(token)
            if stem in asked or stem in LIGHT_VERBS or stem in _CHANGE_STEMS or stem in dropped:
                continue
            out[token] = None
            if len(out) >= WORDS_SEARCHED:
                return list(out)
    return list(out)


def stated(hit: Candidate) -> frozenset[str]:
    """The stems of what ``hit`` states: its content words, less what it gives up itself."""
    return content_stems(hit.content) - given_up(hit.content)


def replaces(change: Candidate, hit: Candidate, old: frozenset[str]) -> bool:
    """Is ``change`` newer than ``hit`` (which states ``old``) and does it name one of those words
    as left behind (or as removed, with one more word in common)? ``change`` announces a change."""
    if said_epoch(change) <= said_epoch(hit):
        return False
    if not left_behind(change.content).isdisjoint(old):
        return True
    gone = removed(change.content)
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
    successor: dict[int, Candidate] = {}  # rowid of a hit or a change → the change put above it
    shown = {same_text_key(cand.content) for cand in chosen}
    have = {cand.rowid for cand in chosen}
    replaced = chosen[:HITS_LOOKED_AT]
    for _ in range(1 + CHAIN_STEPS):  # a further step only after a change was found
        found = _changes_of(conn, replaced, search_scope, asked, (have, shown), seen)
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
    search_scope: tuple[int, int, Filters],
    asked: frozenset[str],
    known: tuple[set[int], set[str]],
    seen: Callable[[str, str], bool] | None,
) -> dict[int, Candidate]:
    """The newest change that replaces each of ``hits`` (by the hit's rowid), one search for all;
    ``known``: the rowids and text keys already listed, which it adds the changes' keys to."""
    words = searched_words(hits, asked)
    if not words:
        return {}
    lo, hi, filters = search_scope
    where, params = filters.where()
    elsewhere = any(not hit.content.isascii() or says_other_language_words(hit.content) for hit in hits)
    changes = (*CHANGE_WORDS, *CHANGE_WORDS_ELSEWHERE) if elsewhere else CHANGE_WORDS
    expression = " OR ".join(f'"{word}"' for word in words) + ") AND (" + " OR ".join(f'"{w}"' for w in changes)
    # A change is newer than what it replaces: the matches said before every hit are left in SQL
    # (to the second: stored times and message times differ in their fractions; exact below).
    oldest = iso_from_epoch(min(said_epoch(hit) for hit in hits) - 1)
    rows = conn.execute(
        f"SELECT {UNIT_COLUMNS}, NULL FROM (SELECT rowid AS rid FROM units_fts WHERE units_fts MATCH ? "
        "AND rowid BETWEEN ? AND ? ORDER BY rowid DESC LIMIT ?) AS f CROSS JOIN units AS u ON u.rowid = f.rid "
        "JOIN documents AS d ON d.bank_id = u.bank_id AND d.document_id = u.document_id "
        f"WHERE coalesce(nullif(u.occurred_at, ''), u.created_at) > ?{where}",
        [f"({expression})", lo, hi, MATCHES_READ, oldest, *params],
    ).fetchall()
    have, shown = known
    states = [stated(hit) for hit in hits] if rows else []
    found: dict[int, Candidate] = {}
    for row in sorted(rows, key=lambda r: -int(r[R_ROWID])):
        if int(row[R_ROWID]) in have or not announces_change(str(row[R_CONTENT])):
            continue  # most matches say a change word and announce nothing: no candidate is built
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
