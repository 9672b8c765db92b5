"""SQL for the local store's reads: tag groups compiled to SQL, and bounded FTS candidate search.

**Tag groups in SQL.** The filter is part of the ranked query's ``WHERE``, so SQLite applies it
while it walks the FTS matches in rank order and ``LIMIT`` counts only rows that passed: a
scoped recall in a big shared bank still finds its matches (ADR 005). The compiled SQL must
agree with ``tag_groups.match_tag_groups``; the tests check both against a reference.

**Bounded work.** FTS5 computes ``bm25`` for *every* row that matches before it can return the
best ones, about 2 µs a row. A 10-term query matches about half of a large bank, so ranking
everything would grow linearly with the store. When a query matches more than ``window`` rows
of the bank we rank a bounded set instead (ADR 005):

Each term's matches in the bank are counted first, capped at ``window + 1`` (reading doclists
is ~20× cheaper than ranking them).

1. *exact*: ≤ ``window`` matches → rank them all (always the case for small banks);
2. *pruned*: keep the rarest terms whose match counts sum to ≤ ``window`` and rank all their
   matches. Common terms carry little bm25 weight, and a rare word from months ago is still
   found. If that yields fewer than ``enough`` rows, fill from step 3;
3. *window*: rank the newest ``window`` matches of the full expression, then the next older
   window, and so on until enough rows passed the filters (or ``max_windows``).
"""

from __future__ import annotations

import copy
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from .local_schema import RANK_CONFIG
from .local_text import match_expression, term_expression

RANK_WINDOW = 2000
# The store's configured rank (``bm25(w_content, w_context)``) as an explicit call.
assert RANK_CONFIG.startswith("bm25(")
BM25_SQL = "bm25(units_fts, " + RANK_CONFIG.removeprefix("bm25(")
MAX_WINDOWS = 32
INNER_FACTOR, INNER_MIN = 4, 200  # best matches kept before the filters: max(4 · limit, 200)

# Column positions in a candidate row.
R_ROWID, R_ID, R_CONTENT, R_CONTEXT, R_TYPE, R_SOURCE, R_IMPORTANCE, R_CREATED, R_DOC, R_TAGS, R_OCCURRED, R_RANK = (
    range(12)
)

UNIT_COLUMNS = (
    "u.rowid, u.id, u.content, u.context, u.type, u.source, u.importance, u.created_at, u.document_id, d.tags_json, "
    "u.occurred_at"
)

# A ranked candidate carries only what scoring and ordering read; the text, tags and the rest
# are fetched afterwards for the few candidates the coverage and budget rules look at
# (``fetch_details``): most of the ~50 ranked rows are never shown.
K_ROWID, K_ID, K_IMPORTANCE, K_CREATED, K_SIZE, K_RANK = range(6)
# ``K_SIZE``: the characters a unit's vector was computed from — its message plus its turn terms
# (after the context's separator, ADR 052) — read by hybrid fusion to discount short texts (ADR 160).
_RANK_EXPRESSIONS = (
    "u.rowid", "u.id", "u.importance", "u.created_at",
    "length(u.content) + CASE WHEN instr(u.context, char(30)) > 0 "
    "THEN length(u.context) - instr(u.context, char(30)) ELSE 0 END",
)  # fmt: skip
RANK_COLUMNS = ", ".join(_RANK_EXPRESSIONS)
D_ROWID, D_CONTENT, D_CONTEXT, D_TYPE, D_SOURCE, D_DOC, D_TAGS, D_OCCURRED, D_WORDS, D_SEQ = range(10)
# ``D_WORDS``: the words the index holds of the message (ADR 179), which the coverage rule reads;
# ``D_SEQ``: its place in its document, by which an acknowledgement finds the message it answers (ADR 215).
DETAIL_COLUMNS = (
    "u.rowid, u.content, u.context, u.type, u.source, u.document_id, d.tags_json, u.occurred_at, "
    "coalesce(u.search_text, u.content), u.seq"
)


def fetch_details(conn: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, tuple[Any, ...]]:
    """Text, kind, document and tags of the given units, by rowid (one statement)."""
    if not rowids:
        return {}
    marks = ", ".join("?" for _ in rowids)
    rows = conn.execute(
        f"SELECT {DETAIL_COLUMNS} FROM units AS u JOIN documents AS d "
        f"ON d.bank_id = u.bank_id AND d.document_id = u.document_id WHERE u.rowid IN ({marks})",
        list(rowids),
    ).fetchall()
    return {int(r[D_ROWID]): r for r in rows}


# -- tag groups → SQL ---------------------------------------------------------------------------------


def tag_groups_sql(groups: Sequence[dict[str, Any]], unit_id: str = "u.id") -> tuple[str, list[str]]:
    """One SQL boolean for validated ``groups`` (AND-ed), with its parameters in order."""
    params: list[str] = []
    parts = [_group_sql(g, unit_id, params) for g in groups]
    if not parts:
        return "1", params
    return "(" + " AND ".join(parts) + ")", params


def _group_sql(group: dict[str, Any], unit_id: str, params: list[str]) -> str:
    if "tags" in group:
        return _leaf_sql(list(dict.fromkeys(group["tags"])), group.get("match", "any_strict"), unit_id, params)
    if "and" in group:
        parts = [_group_sql(g, unit_id, params) for g in group["and"]]
        return "(" + " AND ".join(parts) + ")" if parts else "1"
    if "or" in group:
        parts = [_group_sql(g, unit_id, params) for g in group["or"]]
        return "(" + " OR ".join(parts) + ")" if parts else "0"
    return "(NOT " + _group_sql(group["not"], unit_id, params) + ")"


def _leaf_sql(tags: list[str], match: str, unit_id: str, params: list[str]) -> str:
    untagged = f"NOT EXISTS (SELECT 1 FROM unit_tags t WHERE t.unit_id = {unit_id})"
    tagged = f"EXISTS (SELECT 1 FROM unit_tags t WHERE t.unit_id = {unit_id})"
    marks = ", ".join("?" for _ in tags)

    def has_any() -> str:
        params.extend(tags)
        return f"EXISTS (SELECT 1 FROM unit_tags t WHERE t.unit_id = {unit_id} AND t.tag IN ({marks}))"

    def count_of() -> str:
        params.extend(tags)
        return f"(SELECT count(*) FROM unit_tags t WHERE t.unit_id = {unit_id} AND t.tag IN ({marks}))"

    n = len(tags)
    if match == "any_strict":
        return has_any() if n else "0"
    if match == "any":
        return f"({has_any()} OR {untagged})" if n else "1"
    if match == "all_strict":
        return f"({count_of()} = {n})" if n else tagged
    if match == "all":
        return f"({count_of()} = {n} OR {untagged})" if n else "1"
    if match == "exact":
        if not n:
            return untagged
        total = f"(SELECT count(*) FROM unit_tags t WHERE t.unit_id = {unit_id})"
        return f"({count_of()} = {n} AND {total} = {n})"
    raise ValueError(f"unknown match mode {match!r}")


# -- candidate search --------------------------------------------------------------------------------


@dataclass
class Filters:
    """The row conditions every candidate must meet besides the FTS match and rowid range."""

    bank_id: str
    now_iso: str
    types: list[str] | None = None
    tag_sql: str = "1"
    tag_params: list[str] = field(default_factory=list)

    def where(self) -> tuple[str, list[Any]]:
        sql = " AND u.bank_id = ? AND u.superseded_by IS NULL AND (u.valid_until IS NULL OR u.valid_until > ?)"
        params: list[Any] = [self.bank_id, self.now_iso]
        if self.types is not None:
            sql += " AND u.type IN (" + ", ".join("?" for _ in self.types) + ")" if self.types else " AND 0"
            params.extend(self.types)
        if self.tag_sql != "1":
            sql += " AND " + self.tag_sql
            params.extend(self.tag_params)
        return sql, params


class TermCounts:
    """Each query term's capped match count per bank, kept between recalls (ADR 172).

    Counting a common term's matches (up to ``window + 1``) reads its doclist: ~0.75 ms a recall
    at 10k units for a conversation's ten-odd terms. Consecutive turns share most of their query
    (it is the recent conversation), and a bank only grows at the top of its rowid range, so a
    count taken up to rowid ``hi`` is brought up to date by counting the rows above ``hi`` only,
    and a term already past the cap stays past it. Deletions and edits are not tracked: a count
    may be a few too high, which can only leave a term out of the pruned ranking as if it were
    commoner; entries are recounted after ``TTL_S`` anyway.
    """

    TTL_S = 300.0
    MAX_TERMS = 4096

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # (bank lo, term) -> (count, cap it was counted against, highest rowid counted, when)
        self._known: OrderedDict[tuple[int, str], tuple[int, int, int, float]] = OrderedDict()

    def get(self, lo: int, term: str, cap: int, now: float) -> tuple[int, int] | None:
        """(count, hi) of a usable entry: exact (below its cap) or counted against ``cap`` or more."""
        with self._lock:
            entry = self._known.get((lo, term))
        if entry is None or now - entry[3] > self.TTL_S:
            return None
        count, counted_cap, hi, _ = entry
        return (min(count, cap), hi) if count < counted_cap or counted_cap >= cap else None

    def put(self, lo: int, term: str, count: int, cap: int, hi: int, at: float) -> None:
        with self._lock:
            self._known[(lo, term)] = (count, cap, hi, at)
            self._known.move_to_end((lo, term))
            while len(self._known) > self.MAX_TERMS:
                self._known.popitem(last=False)


@dataclass
class SearchResult:
    rows: list[tuple[Any, ...]]  # RANK_COLUMNS + rank, best first
    mode: str  # exact | pruned | pruned+window | window | empty


class CandidateSearch:
    """Bounded ranked FTS search inside one bank's rowid range (see the module docstring)."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        lo: int,
        hi: int,
        filters: Filters,
        *,
        window: int = RANK_WINDOW,
        max_windows: int = MAX_WINDOWS,
        counts: TermCounts | None = None,
    ) -> None:
        self.conn = conn
        self.counts = counts
        self.lo = lo
        self.hi = hi
        self.window = max(1, window)
        self.max_windows = max(1, max_windows)
        self.filters = filters
        where, self._where_params = filters.where()
        self._counts: dict[str, int] = {}  # capped match counts per term, when the search needed them
        self._fits: dict[str, bool] = {}  # match expression -> its matches fit one window (``plan``)
        self._top: int | None = None  # the bank's highest rowid, once read (``_read_top``)
        self._top_read = False
        # The matches are ranked in a co-routine (``LIMIT -1`` keeps SQLite from flattening it)
        # that yields them best first; the CROSS JOIN keeps it the outer loop, so the filters run
        # only until LIMIT rows passed (never a scan of the bank through an index). Ranking with
        # ``bm25()`` through SQLite's sorter costs ~30 % less than FTS5's own ``ORDER BY rank``
        # path, which is kept as the fallback should a SQLite ever hand the rows back unordered.
        # The co-routine keeps only the best ``inner`` matches (SQLite's sorter then holds a bounded
        # heap instead of sorting them all, ~12 % of the statement at 10k units); when fewer than
        # ``limit`` of those pass the filters the statement runs again unbounded (``inner`` = -1),
        # so the rows returned are the same either way.
        self._ranked_sql = (
            f"SELECT {RANK_COLUMNS}, f.r FROM (SELECT rowid AS rid, {BM25_SQL} AS r FROM units_fts "
            "WHERE units_fts MATCH ? AND rowid BETWEEN ? AND ? ORDER BY r LIMIT ?) AS f "
            f"CROSS JOIN units AS u ON u.rowid = f.rid WHERE 1{where} LIMIT ?"
        )
        # The same rows packed into one JSON value (``packed``): one step of the statement hands
        # back every row, so a helper thread takes the GIL back once, not once per row (ADR 177).
        named = ", ".join(f"{expr} AS k{i}" for i, expr in enumerate(_RANK_EXPRESSIONS))
        keys = ", ".join(f"k{i}" for i in range(len(_RANK_EXPRESSIONS) + 1))
        self._packed_sql = (
            f"SELECT json_group_array(json_array({keys})) FROM (SELECT {named}, f.r AS k{len(_RANK_EXPRESSIONS)} "
            f"FROM (SELECT rowid AS rid, {BM25_SQL} AS r FROM units_fts "
            "WHERE units_fts MATCH ? AND rowid BETWEEN ? AND ? ORDER BY r LIMIT ?) AS f "
            f"CROSS JOIN units AS u ON u.rowid = f.rid WHERE 1{where} LIMIT ?)"
        )
        self.packed = False  # rows as one JSON value: set by ``on`` for a helper thread
        self._ranked_by_fts_sql = (
            f"SELECT {RANK_COLUMNS}, f.rank "
            "FROM units_fts AS f CROSS JOIN units AS u ON u.rowid = f.rowid "
            f"WHERE units_fts MATCH ? AND f.rowid BETWEEN ? AND ?{where} ORDER BY f.rank LIMIT ?"
        )

    def on(self, conn: sqlite3.Connection) -> CandidateSearch:
        """This search over another connection, for a helper thread (ADR 177): the same bank,
        filters and window; the bank's top and the term counts as read so far, so the helper ranks
        what this search's snapshot holds and counts nothing again; its rows packed."""
        other = copy.copy(self)
        other.conn, other._counts, other._fits, other.packed = conn, dict(self._counts), dict(self._fits), True
        return other

    def _ranked_rows(self, params: list[Any]) -> list[Any]:
        if self.packed:
            try:
                return [tuple(row) for row in orjson.loads(self.conn.execute(self._packed_sql, params).fetchone()[0])]
            except orjson.JSONDecodeError:  # a damaged row JSON cannot say (an infinite number)
                pass
            except sqlite3.OperationalError as exc:  # or one with a BLOB where text belongs
                if "blob" not in str(exc).lower():
                    raise
        return self.conn.execute(self._ranked_sql, params).fetchall()

    def _ranked(self, expr: str, lo: int, hi: int, limit: int) -> list[tuple[Any, ...]]:
        inner = max(INNER_FACTOR * limit, INNER_MIN)
        rows = self._ranked_rows([expr, lo, hi, inner, *self._where_params, limit])
        if len(rows) < limit:  # the filters left too few of the best ``inner``: rank every match
            rows = self._ranked_rows([expr, lo, hi, -1, *self._where_params, limit])
        if any(rows[i][K_RANK] > rows[i + 1][K_RANK] for i in range(len(rows) - 1)):
            params = [expr, lo, hi, *self._where_params, limit]
            rows = self.conn.execute(self._ranked_by_fts_sql, params).fetchall()
        return rows

    def _nth_newest(self, expr: str, lo: int, hi: int, n: int) -> int | None:
        """Rowid of the ``n``-th newest match (1-based) in ``[lo, hi]``, or None if fewer match."""
        row = self.conn.execute(
            "SELECT rowid FROM units_fts WHERE units_fts MATCH ? AND rowid BETWEEN ? AND ? "
            "ORDER BY rowid DESC LIMIT 1 OFFSET ?",
            (expr, lo, hi, n - 1),
        ).fetchone()
        return None if row is None else int(row[0])

    def _capped_counts(self, terms: list[str], lo: int, hi: int) -> list[int]:
        """Each term's matches in ``[lo, hi]``, capped at ``window + 1`` (from :class:`TermCounts`
        where it can: then only the rows above the last count are read)."""
        cap = self.window + 1
        now = time.monotonic()
        counts = [0] * len(terms)
        todo: list[tuple[int, int]] = []  # (term index, first rowid to count)
        for i, term in enumerate(terms):
            known = self.counts.get(lo, term, cap, now) if self.counts is not None else None
            if known is None or known[1] > hi:
                todo.append((i, lo))
            elif known[0] >= cap or known[1] == hi:
                counts[i] = known[0]
            else:
                counts[i] = known[0]
                todo.append((i, known[1] + 1))
        if todo:
            sub = ", ".join(
                f"(SELECT count(*) FROM (SELECT 1 FROM units_fts WHERE units_fts MATCH ?{n + 1} "
                f"AND rowid BETWEEN {start} AND {hi} LIMIT {cap - counts[i]}))"
                for n, (i, start) in enumerate(todo)
            )
            row = self.conn.execute("SELECT " + sub, [term_expression(terms[i]) for i, _ in todo]).fetchone()
            for (i, _), value in zip(todo, row, strict=True):
                counts[i] += int(value)
                if self.counts is not None:
                    self.counts.put(lo, terms[i], counts[i], cap, hi, now)
        return counts

    def run(self, terms: list[str], need: int, enough: int) -> SearchResult:
        """Up to ``need`` filtered candidates in bm25 order; ``enough`` = fewer triggers a fill."""
        expr = match_expression(terms)
        hi = self._read_top()
        if hi is None or need <= 0:
            return SearchResult([], "empty")
        lo = self.lo
        if self._ranks_every_match(terms, expr, hi):
            return SearchResult(self._ranked(expr, lo, hi, need), "exact")
        counts = self.term_counts(terms)  # read by ``_ranks_every_match``
        order = sorted(range(len(terms)), key=lambda i: (counts[i], i))
        chosen: list[str] = []
        total = 0
        for i in order:
            if total + counts[i] > self.window:
                break
            chosen.append(terms[i])
            total += counts[i]
        if chosen:
            rows = self._ranked(match_expression(chosen), lo, hi, need)
            if len(rows) >= min(enough, need):
                return SearchResult(rows, "pruned")
            more = self._windows(expr, lo, hi, need - len(rows), {int(r[K_ROWID]) for r in rows})
            return SearchResult(rows + more, "pruned+window")
        return SearchResult(self._windows(expr, lo, hi, need, set()), "window")

    def plan(self, terms: list[str]) -> None:
        """Read what decides how :meth:`run` ranks ``terms`` — the bank's top, the terms' counts,
        whether all their matches fit one window — so that it then only ranks. A hybrid recall
        plans before its helper thread starts (ADR 227): a statement run while the helper holds the
        GIL waits for it at its end, and the ranking statement is then the only one that does."""
        hi = self._read_top()
        if hi is not None and terms:
            self._ranks_every_match(terms, match_expression(terms), hi)

    def _ranks_every_match(self, terms: list[str], expr: str, hi: int) -> bool:
        """Can every match of ``terms`` (``expr``) up to ``hi`` be ranked: the bank holds fewer units
        than a window, or their counts, or (read once per search) their matches, fit one?"""
        if hi - self.lo < self.window:  # the bank cannot hold more than ``window`` matches
            return True
        counts = self.term_counts(terms)
        if sum(counts) <= self.window:
            return True
        if max(counts) > self.window:
            return False
        fits = self._fits.get(expr)
        if fits is None:
            fits = self._fits[expr] = self._nth_newest(expr, self.lo, hi, self.window + 1) is None
        return fits

    def term_counts(self, terms: list[str]) -> list[int]:
        """How many units of the bank match each term (filters aside), capped at ``window + 1``.

        Why: the coverage rule counts only the terms the bank holds (a word no unit holds — a
        name the store never heard, a typo — can be matched by none, and would only raise the
        bar for every unit), and hybrid recall weighs each term's vector by its rarity (ADR 160).
        The search's own counts answer when a large bank needed them; otherwise one statement
        of at most 12 capped index reads.
        """
        if not all(t in self._counts for t in terms):
            # Up to the bank's highest rowid, not the slot's end: kept counts (``TermCounts``)
            # are brought up to date from the highest rowid they counted.
            top = self._read_top()
            counts = [0] * len(terms) if top is None else self._capped_counts(terms, self.lo, top)
            self._counts.update(zip(terms, counts, strict=True))
        return [self._counts[t] for t in terms]

    def _read_top(self) -> int | None:
        """:meth:`_bank_top`, read once per search (the counts and the ranking share it)."""
        if not self._top_read:
            self._top, self._top_read = self._bank_top(), True
        return self._top

    def _bank_top(self) -> int | None:
        """The bank's highest unit rowid in this snapshot (``None`` for an empty bank)."""
        top = self.conn.execute(
            "SELECT rowid FROM units WHERE rowid BETWEEN ? AND ? ORDER BY rowid DESC LIMIT 1", (self.lo, self.hi)
        ).fetchone()
        return None if top is None else int(top[0])

    def top(self) -> int | None:
        """The bank's highest unit rowid as this search read it (``None`` for an empty bank)."""
        return self._read_top()

    def in_bank(self, terms: list[str]) -> list[str]:
        """The ``terms`` that at least one unit of the bank holds, in order (see :meth:`term_counts`)."""
        return [t for t, n in zip(terms, self.term_counts(terms), strict=True) if n > 0]

    def bank_units(self) -> int:
        """About how many units the bank holds: its rowid span as this search read it (deleted
        units still count; 0 before it was read or for an empty bank)."""
        return 0 if self._top is None else self._top - self.lo + 1

    def _windows(self, expr: str, lo: int, hi: int, need: int, seen: set[int]) -> list[tuple[Any, ...]]:
        collected: list[tuple[Any, ...]] = []
        upper = hi
        for _ in range(self.max_windows):
            boundary = self._nth_newest(expr, lo, upper, self.window)
            lower = lo if boundary is None else boundary
            for row in self._ranked(expr, lower, upper, need + len(seen)):
                if row[K_ROWID] not in seen:
                    seen.add(row[K_ROWID])
                    collected.append(row)
            if len(collected) >= need or boundary is None or boundary <= lo:
                break
            upper = boundary - 1
        collected.sort(key=lambda r: float(r[K_RANK]))
        return collected[:need]
