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
writing our own") is not one it states. The word must name something: one said in at most
``SPECIFIC_SHARE`` of the bank's units (or ``SPECIFIC_MIN``); "I replaced the type check" leaves
"type" behind, which a coding agent's bank says everywhere, so it links no hit (ADR 211).
Nothing is dropped but what the limit and the token budget leave out at the end, as for any
other order.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from ..timefmt import iso_from_epoch
from .base import same_text_key
from .local_change_marks import decided_marks, marked, marks_expression, marks_held
from .local_hits import candidate_of, said_epoch
from .local_query import R_ROWID, UNIT_COLUMNS, CandidateSearch
from .local_rank import Candidate, cut_to_budget
from .local_text import LIGHT_VERBS, fts_tokens, porter_stem
from .local_time import CHANGE_MIN_SHARED, announces_change, content_stems, left_behind, removed

# How many of the first hits are looked at, how many of their words are looked up, and how many
# of the newest marked units are read: a change is newer than what it replaces, and near the top.
HITS_LOOKED_AT = 3
STEMS_LOOKED_UP = 24
MATCHES_READ = 12
CHAIN_STEPS = 2  # a change of a change, and one more: pnpm → bun → deno → npm
# A word said in more of the bank's units than this names no one decision (at least SPECIFIC_MIN,
# so a young bank about one tool still links it: trial V says "pnpm" in 7 of its 9 units).
SPECIFIC_SHARE = 0.10
SPECIFIC_MIN = 50


@lru_cache(maxsize=512)
def given_up(text: str) -> frozenset[str]:
    """The stems of the words ``text`` itself leaves behind or removes: "we use msgspec instead of
    writing our own" states msgspec, not writing, so a later "instead of writing …" replaces nothing
    of it. Cached as ``content_stems`` is: the first hits of one turn are mostly the next turn's."""
    if not announces_change(text):
        return frozenset()
    return left_behind(text) | removed(text)


@lru_cache(maxsize=256)
def marks_of(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """``decided_marks`` of a change read back: each is checked against each of the first hits."""
    return decided_marks(text)


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


def replaces(change: Candidate, hit: Candidate, old: frozenset[str]) -> frozenset[str]:
    """The words of ``hit`` (which states ``old``) that the newer ``change`` marks as left behind
    (or as removed, with one more word in common); empty when it replaces nothing of it. Read
    again from its text: the same rule as when it was written, so the look-up and the check agree."""
    if said_epoch(change) <= said_epoch(hit):
        return frozenset()
    left, gone = marks_of(change.content)
    if not left.isdisjoint(old):
        return left & old
    if not gone.isdisjoint(old) and len(old & content_stems(change.content)) >= CHANGE_MIN_SHARED:
        return gone & old
    return frozenset()


def specific(search: CandidateSearch, hit: Candidate, stems: frozenset[str]) -> bool:
    """Does one of ``stems`` (words of ``hit``) name something, not say what the bank says
    everywhere? Counted as the ranking counts a term (capped, kept between recalls): by the word
    as ``hit`` writes it, so the index's stemmer gives back the stem."""
    words = written_as(hit.content, stems)
    if not words:
        return True
    counts = search.term_counts(list(words))
    cap = max(SPECIFIC_MIN, int(SPECIFIC_SHARE * search.bank_units()))
    return min(counts) <= min(cap, search.window)


@lru_cache(maxsize=256)
def written_as(text: str, stems: frozenset[str]) -> tuple[str, ...]:
    """The words of ``text`` whose stems are ``stems``, as written. Cached: a hit is checked against
    each change row read for it (up to ``MATCHES_READ``), and :func:`specific` would tokenize the
    whole hit again each time."""
    return tuple(dict.fromkeys(t for t in fts_tokens(text) if porter_stem(t) in stems))


def with_successors(
    search: CandidateSearch,
    chosen: list[Candidate],
    asked: frozenset[str],
    budget: tuple[int, int],
    seen: Callable[[str, str], bool] | None,
) -> list[Candidate]:
    """``chosen`` with each newer change that replaces one of its first hits put just above that
    hit, and the change of that change above it in turn (pnpm → bun → deno, up to ``CHAIN_STEPS``),
    cut again to ``budget`` (limit, max tokens). ``search``: the recall's, for its bank, filters and
    term counts; ``asked``: the question's stems; ``seen``: what the model already reads."""
    held = marks_held(search.conn)
    if not held:  # no unit of the file marks a change: nothing to read of the hits (most turns)
        return chosen
    successor: dict[int, Candidate] = {}  # rowid of a hit or a change → the change put above it
    shown = {same_text_key(cand.content) for cand in chosen}
    have = {cand.rowid for cand in chosen}
    replaced = chosen[:HITS_LOOKED_AT]
    for _ in range(1 + CHAIN_STEPS):  # a further step only after a change was found
        found = _changes_of(search, replaced, held, asked, (have, shown), seen)
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
    search: CandidateSearch,
    hits: list[Candidate],
    held: frozenset[str],
    asked: frozenset[str],
    known: tuple[set[int], set[str]],
    seen: Callable[[str, str], bool] | None,
) -> dict[int, Candidate]:
    """The newest change that replaces each of ``hits`` (by the hit's rowid), one search for all;
    ``held``: the marks the file holds; ``known``: the rowids and text keys already listed, which
    it adds the changes' keys to."""
    stems = marked(held, searched_stems(hits, asked))
    if not stems:
        return {}
    where, params = search.filters.where()
    # A change is newer than what it replaces: the matches said before every hit are left in SQL
    # (to the second: stored times and message times differ in their fractions; exact below).
    oldest = iso_from_epoch(min(said_epoch(hit) for hit in hits) - 1)
    rows = search.conn.execute(
        f"SELECT {UNIT_COLUMNS}, NULL FROM (SELECT rowid AS rid FROM units_fts WHERE units_fts MATCH ? "
        "AND rowid BETWEEN ? AND ? ORDER BY rowid DESC LIMIT ?) AS f CROSS JOIN units AS u ON u.rowid = f.rid "
        "JOIN documents AS d ON d.bank_id = u.bank_id AND d.document_id = u.document_id "
        f"WHERE coalesce(nullif(u.occurred_at, ''), u.created_at) > ?{where}",
        [marks_expression(stems), search.lo, search.hi, MATCHES_READ, oldest, *params],
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
            if hit.rowid in found:  # the newest change of each hit
                continue
            links = replaces(change, hit, state)
            if links and specific(search, hit, links):
                found[hit.rowid] = change
                shown.add(key)
                break
    return found
