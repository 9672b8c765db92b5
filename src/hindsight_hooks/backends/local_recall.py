"""The embedded store's read path: recall (docs/backends.md#embedded-store ranking) and reflect.

FTS candidates that pass the filters, plus vector and time candidates when there are any,
scored, ordered and cut to the token budget. Why apart: ranking changes are made and reviewed
here, with the writes out of sight.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from functools import cache, partial
from itertools import islice
from typing import Any, Literal, NamedTuple

import orjson

from ..timefmt import epoch_from_iso, iso_from_epoch
from .base import BackendError, RecallRequest, RecallResult, ReflectRequest, ReflectResult
from .local_abbrev import said_counterparts, with_counterparts
from .local_activity import (
    ENDING_UNITS,
    OPENER_MIN_CHARS,
    asks_what_is_next,
    asks_what_was_done,
    asks_where_we_left_off,
    opens_a_session,
)
from .local_alongside import alongside
from .local_answers import ANSWER_MAX_CHARS, LATER_MAX_GAP, answer_among, with_their_answers
from .local_changes import asks_what_changed, change_cues, states_change
from .local_decisions import (
    PROPOSAL_CUES,
    asks_about_decisions,
    asks_only_about_decisions,
    decision_cues,
    decisions_about_first,
    is_decision_word,
    is_recency_word,
    proposes,
    says_decision,
    states_decision,
    subject_words,
)
from .local_dense import BACKGROUND_MARGIN, RECALL_WAIT_S
from .local_echo import STATEMENT_MAX_CHARS, acknowledges, as_their_statements
from .local_fusion import fuse_scores
from .local_hits import candidate_of, detailed, hit_of, join_unranked, ranked_candidate, said_epoch, unranked_candidate
from .local_kinds import kind_members, kind_words_named
from .local_known import KNOWN_SESSIONS, asks_for_preferences, asks_what_is_known, kept_cues, states_kept
from .local_prefix import with_prefixes
from .local_query import (
    K_ROWID,
    R_ID,
    R_RANK,
    RANK_COLUMNS,
    UNIT_COLUMNS,
    CandidateSearch,
    Filters,
    SearchResult,
    TermCounts,
    tag_groups_sql,
)
from .local_query_vector import bank_query, term_text, unsaid_term_vectors
from .local_rank import (
    COVERAGE_MIN_TERMS,
    Candidate,
    common_terms,
    covered_in_order,
    cut_to_budget,
    distinct_shown,
    light_last,
    order_candidates,
    score_candidates,
    term_keys,
    these_first,
    these_first_in_order,
)
from .local_reflect import reflect_query, sandwich
from .local_restated import asks_beyond_itself, question_stems, restatements_last
from .local_schema import slot_range
from .local_seen import seen_in_context, unseen
from .local_successors import specific, with_successors
from .local_synonyms import with_synonyms
from .local_text import StemFinder, content_words, query_terms, term_expression, term_key
from .local_time import (
    announces_change,
    asks_for_first,
    asks_for_recent,
    date_numbers,
    first_subject,
    newer_first,
    period_words,
    time_window,
)
from .local_vector_wiring import LocalVectorWiring
from .local_vectors import NEWEST_FOR_DENSE, cosine, from_blob, model_name
from .local_windows import ASSISTANT_PREFIX, USER_PREFIX, neighbour_of
from .tag_groups import TagGroupError, validate_tag_groups

BUDGET_SCALE = {"low": 0.5, "mid": 1.0, "high": 2.0}
# A hybrid recall runs its bm25 statement on a helper thread only when its terms match at least
# this many units: ranking them costs ~2 µs each, handing the statement over ~0.15 ms (ADR 177).
ALONGSIDE_MIN_ROWS = 256


def answered_terms(cand: Candidate) -> str:
    """The terms of the message a user's unit answers, which only an elliptic change carries
    ("Change of plan: GitHub Pages instead", ADR 206); '' for every other unit."""
    return neighbour_of(cand.context) if cand.content.startswith(USER_PREFIX) else ""


def _about_with_kinds(tools: dict[str, tuple[str, ...]], cand: Candidate) -> str:
    """:func:`answered_terms`, and for a unit that announces a change, the kind's words it stands for
    by naming one of the tools the question's kind brought in (ADR 232): "Let's drop Redis, Memcached
    from now on" is about "the cache" as the statement it replaces is. Restatements are left in the
    ranking's order: that each names the tool does not make the newer one a change."""
    said = answered_terms(cand)
    return f"{said} {kind_words_named(cand.content, tools)}" if announces_change(cand.content) else said


# A question about decisions reads this many times its candidate count of the units last written
# that say a decision's words, and keeps those that state one.
DECISION_READ_FACTOR = 4
# The kinds of question about the past whose answer goes first (``LocalRecall._first_shown``), and
# those answered by a session walk, whose order the block keeps.
ShownFirst = Literal["decisions", "known", "left off", "changes", "done"]


class _Asking(NamedTuple):
    """What a vector search is asked: the query, its terms, and how many candidates it wants."""

    query: str
    terms: list[str]
    need: int


@dataclass
class _Near:
    """What a vector search found: the query's vectors (none when it has no word with a vector),
    every scored unit's best cosine, and the nearest units that pass the filters, nearest first."""

    vectors: list[Any]
    sims: dict[int, float]
    nearest: list[Candidate]


WALKS: frozenset[ShownFirst] = frozenset({"known", "left off", "changes", "done"})
# A question about the first time takes this many of the first units that say its subject (ADR 226).
FIRST_MENTIONS = 2
# A period of at most this many units bounds those searches by its rowids (``_said_in``).
PERIOD_BOUND_UNITS = 5000


class LocalRecall(LocalVectorWiring):
    """The read path of ``LocalBackend``: ``recall`` and ``reflect``."""

    rank_window: int
    max_windows: int
    _term_counts: TermCounts
    recall_limit: int
    last_search_mode: str

    def recall(
        self,
        bank_id: str,
        request: RecallRequest,
        timeout_s: float | None = None,
        signal: threading.Event | None = None,
    ) -> RecallResult:
        """docs/backends.md#embedded-store ranking over one bank: FTS candidates that pass the filters, scored, cut to
        budget.

        An unknown bank is ``not_found`` (as the server's 404), so callers re-ensure it instead
        of reading "no memories". A query without terms finds nothing.
        """
        try:
            groups = validate_tag_groups(request.tag_groups)
        except TagGroupError as exc:
            raise BackendError("recall", "permanent", str(exc)) from None
        reference = self._now()
        if request.query_timestamp:
            parsed = epoch_from_iso(request.query_timestamp)
            if parsed is None:
                raise BackendError("recall", "permanent", "query_timestamp is not an ISO 8601 timestamp")
            reference = parsed
        period = time_window(request.query, reference)
        terms = query_terms(request.query)
        if period is not None and (numbers := date_numbers(request.query)):
            terms = [t for t in terms if t not in numbers]  # the window answers the date (ADR 174)
        limit = request.limit or self.recall_limit
        types = None if not request.types or "observation" in request.types else list(request.types)
        tag_sql, tag_params = tag_groups_sql(groups)
        qvec = self._embed([request.query])[0] if terms and self._embedder is not None else None
        semantic = False
        if self._semantic is not None and not self._semantic.ready:
            self._semantic.start_loading_if_settled()  # lexical meanwhile: a hook process never waits
        elif self._semantic is not None:  # vectors only once the model can embed them
            semantic = True
        end = None if timeout_s is None else time.monotonic() + timeout_s
        of_the_period = period_words(request.query, reference, period)
        # "Where did we leave off?" (ADR 222): a question said in words no unit is searched by.
        # "What's next?" to begin a session: the messages in view are counted only for such a question.
        resume = asks_where_we_left_off(request.query, of_the_period) or (
            asks_what_is_next(request.query, of_the_period)
            and request.in_context is not None
            and opens_a_session(request.in_context.messages)
        )
        # "What do you remember?" (ADR 223): what the user said to keep, then what they worked on.
        known = not resume and asks_what_is_known(request.query, of_the_period)
        with self._read("recall", timeout_s, signal) as conn:
            slot = self._slot(conn, bank_id)
            if slot is None:
                raise BackendError("recall", "not_found", "memory bank does not exist in the local store")
            if not terms and not semantic and period is None and not resume and not known:
                return RecallResult(hits=[])
            lo, hi = slot_range(slot)
            filters = Filters(bank_id, iso_from_epoch(self._now()), types, tag_sql, tag_params)
            # Hindsight's budget is search depth; here it scales how many matches get ranked.
            window = max(1, int(self.rank_window * BUDGET_SCALE.get(request.budget, 1.0)))
            search = CandidateSearch(
                conn, lo, hi, filters, window=window, max_windows=self.max_windows, counts=self._term_counts
            )
            need = max(limit * 3, 50)
            # The word search takes a word no unit says by its short or long form (ADR 197), or by
            # the other words people use for it (ADR 233), else by its beginning (ADR 185); the
            # vector side keeps the word itself.
            words = with_counterparts(terms, search.term_counts) if terms else terms
            words, synonyms = with_synonyms(words, search.term_counts) if words else (words, {})
            words = with_prefixes(words, search.term_counts) if words else words
            # A word the bank also says in its other form is searched in both (ADR 203).
            alternates = {**(said_counterparts(words, search.term_counts) if words else {}), **synonyms}
            # A question that asks for a kind of tool ("which CI do we use?") searches the tools of
            # that kind the bank names, and a unit that names one says the kind's word (ADR 232).
            # Not in a named period: what was said then is read by its time, and a tool named at
            # another time is not what held then.
            tools = kind_members(request.query, words, search.term_counts) if words and period is None else {}
            searched = [*words, *alternates, *(tool for tool in tools if tool not in alternates)]
            if semantic:
                result, candidates, hybrid = self._by_words_and_meaning(
                    conn, search, request.query, (terms, searched), (need, limit), (end, signal)
                )
            else:
                result = search.run(searched, need, limit) if searched else SearchResult([], "empty")
                candidates, hybrid = [ranked_candidate(row) for row in result.rows], False
            self.last_search_mode = result.mode
            dense_mode = qvec is not None and self._add_dense(conn, qvec, candidates, lo, hi, filters, limit)
            if hybrid:
                self.last_search_mode += "+dense"
            # A question about what was decided, of no subject of its own (ADR 220): the decisions
            # stated are candidates, in its period if it names one, and go first.
            about_decisions = asks_about_decisions(request.query)
            decisions = about_decisions and asks_only_about_decisions(terms, of_the_period)
            # Read once: the fusion below weighs age by it too (ADR 160).
            asks_recent = asks_for_recent(request.query)
            # A question about the past that names no subject: what it asks for goes first.
            kind: ShownFirst | None = (
                "decisions" if decisions
                else "known" if known
                else "left off" if resume
                else "changes" if asks_what_changed(request.query, of_the_period)
                else "done" if (period is not None or asks_recent)
                and asks_what_was_done(request.query, terms, of_the_period if period else is_recency_word)
                else None
            )  # fmt: skip
            live = request.in_context.document_id if request.in_context is not None else None
            first: Collection[int] = (
                self._first_shown(conn, candidates, filters, kind, (request.query, period, reference, live, limit))
                if kind is not None
                else ()
            )
            # A session walk (ADRs 221–223) shows what it walked in the order it was said.
            walked = kind in WALKS
            # "When did we first …?" (ADR 226): the first units written that say every word of its subject.
            asks_first = kind is None and asks_for_first(request.query)
            if asks_first and words:
                first = self._add_first_mentions(conn, candidates, search, search.in_bank(first_subject(words)))
            said_then = self._add_window(conn, candidates, filters, period, need) if period else set()
            if said_then:
                self.last_search_mode += "+time"
            # The count rule counts only the terms the bank holds (ADR 160): a word no unit has cannot
            # be covered. With two terms only the common-word bar applies, and it reads the counts
            # only for a unit that matches one of them (a term no unit says is never common).
            covered = search.in_bank(words) if len(words) >= COVERAGE_MIN_TERMS else words
            keys = term_keys(covered)

            @cache
            def common() -> tuple[bool, ...]:  # which terms the bank says everywhere (ADR 181), read if needed
                return common_terms(search.term_counts(covered), search.bank_units(), limit)

            stands_for = [(frozenset(term_key(alt)), frozenset(term_key(word))) for alt, word in alternates.items()]
            stands_for += [(frozenset(term_key(t)), frozenset(term_key(w))) for t, ws in tools.items() for w in ws]
            finder = StemFinder(frozenset(stem for key in [*keys, *(alt for alt, _ in stands_for)] for stem in key))

            # A question about what was decided on a subject (ADR 220): a unit that states a decision
            # says the question's word of deciding, and such units about the subject go first.
            deciding = (
                frozenset(
                    stem for key, term in zip(keys, covered, strict=True) if is_decision_word(term) for stem in key
                )
                if about_decisions and not decisions
                else frozenset()
            )
            subject = term_keys(subject_words(covered, of_the_period)) if about_decisions and not decisions else []

            def found(text: str) -> frozenset[str]:
                """The terms' stems ``text`` says; a unit that says a word's other form says the word."""
                matched = finder.found(text)
                for alt, word in stands_for:
                    if alt <= matched:
                        matched |= word
                if deciding and matched and not deciding <= matched and says_decision(text, changes=False):
                    matched |= deciding
                return matched

            near = self._semantic.floor if hybrid and self._semantic is not None else None  # the dense floor
            if hybrid or said_then:  # a question about a time: what was said then is one more order (ADR 118)
                floor = 0.0 if near is None else near
                # Age weighs only when the question asks how things stand now, and never inside a
                # named period (ADR 160); the lexical formula below keeps its recency as documented.
                recent = not said_then and asks_recent
                fuse_scores(candidates, reference, floor, frozenset(said_then), by_age=recent)
            else:
                score_candidates(candidates, reference, dense_mode=dense_mode)
            ordered = order_candidates(candidates)
            if first:
                ordered = these_first_in_order(ordered, list(first)) if walked else these_first(ordered, first)
            shown = detailed(conn, ordered, max(2 * limit, 10))
            seen = seen_in_context(request.in_context)  # what the model reads already (ADR 183)
            # What only restates the question goes after what says more (ADR 186).
            asked = question_stems(terms)
            answers = restatements_last(shown, asked) if asks_beyond_itself(request.query) else shown
            # An acknowledgement is shown as the user's statement it says back (ADR 215).
            relevant = light_last(covered_in_order(answers, keys, common, found, near), keys, near)
            if subject:
                relevant = decisions_about_first(relevant, subject, 3 * limit)
            stated = as_their_statements(
                relevant,
                partial(self._acknowledged, conn, filters),
                limit + 1,  # the budget cut pulls one past its limit
            )
            # A question is shown with the answer it got (ADR 219).
            replied = with_their_answers(stated, partial(self._answers, conn, filters), limit + 1)
            chosen = cut_to_budget(distinct_shown(unseen(replied, seen)), limit, request.max_tokens)
            # A session walk's order is kept: no change is put above what it replaced.
            # "When did we first …?", "how long did … take?" (ADR 226): what was said first, then what
            # followed; a newer change is not put above what it replaced.
            from_the_start = asks_first
            newest_above = period is None and not walked and not from_the_start
            if newest_above and chosen:  # a change said in other words than the question's (ADR 209)
                chosen = with_successors(search, chosen, asked, (limit, request.max_tokens), seen)
            if from_the_start:
                chosen.sort(key=said_epoch)
            # When a decision changed, the statement that holds now comes first; both stay (ADR 118).
            # Not for a question about a period ("what was the limit in March?"): that asks what held
            # then, and the fused order already weighs what was said then (ADR 180).
            if newest_above:
                chosen = newer_first(
                    chosen,
                    text=lambda c: c.content,
                    epoch=said_epoch,
                    about=answered_terms if not tools else partial(_about_with_kinds, tools),
                    names=partial(specific, search),
                )
        return RecallResult(hits=[hit_of(c) for c in chosen])

    def _first_shown(
        self,
        conn: sqlite3.Connection,
        candidates: list[Candidate],
        filters: Filters,
        kind: ShownFirst,
        asked: tuple[str, tuple[float, float] | None, float, str | None, int],
    ) -> Collection[int]:
        """The units a question about the past that names no subject is answered by, added as
        candidates: for the kinds in ``WALKS`` a list in its own order, for ``decisions`` a set shown
        first in the ranking's order.

        - ``decisions`` (ADR 220): the decisions stated, and the proposals the user answered (ADR 224);
        - ``known`` (ADR 223): what the user said to keep, newest written first, then the first
          requests of the last sessions (not for "what are my preferences?" when something was
          said to keep, ADR 228);
        - ``left off`` (ADR 222): the session before the asking one, from its first request to how it
          ended, then the first requests of the sessions before it;
        - ``changes`` (ADR 230): the changes of mind stated, newest written first;
        - ``done`` (ADR 221): the first request of each of the period's (or the last) sessions.

        ``asked``: the query, its period, the time it is asked at, the asking session's document
        and the recall's limit."""
        query, period, reference, live, limit = asked
        lately = (0.0, reference + 1.0)
        if kind == "left off":
            return self._add_session_openers(
                conn, candidates, filters, period or lately, limit, live=live, ending=ENDING_UNITS
            )
        if kind == "done":
            return self._add_session_openers(conn, candidates, filters, period or lately, limit)
        # The FTS5 searches of statements read the period's units only; None: the period holds none.
        during = self._said_in(conn, filters.bank_id, period)
        if kind == "changes":
            if during is None:
                return []
            return self._add_stated(
                conn, candidates, filters, (change_cues(query), during), limit, states=states_change
            )
        if kind == "decisions":
            if during is None:
                return set()
            stated = self._add_stated(conn, candidates, filters, (decision_cues(query), during), limit)
            return {*stated, *self._add_answered_proposals(conn, candidates, filters, during, limit)}
        kept = self._add_retained_memories(conn, candidates, filters, period, limit)
        if during is not None:
            said = (kept_cues(query), during)
            kept += self._add_stated(conn, candidates, filters, said, limit, states=states_kept)
            kept += self._add_answered_proposals(conn, candidates, filters, during, limit)
        kept = sorted(set(kept), reverse=True)[:limit]  # newest written first
        if kept and asks_for_preferences(query):  # what was said to keep, and that only (ADR 228)
            return kept
        worked = self._add_session_openers(conn, candidates, filters, period or lately, KNOWN_SESSIONS, live=live)
        head = max(1, limit - len(worked))  # the last sessions keep their places in the block
        return [*kept[:head], *worked, *kept[head:]]

    def _acknowledged(
        self, conn: sqlite3.Connection, filters: Filters, replies: list[Candidate]
    ) -> dict[int, Candidate]:
        """Of ``replies``, those that acknowledge the user's message just before them in their
        document (ADR 215), each with that message (read with its details; it must pass the
        recall's filters), by the reply's rowid. One statement, and one more only when one does."""
        # Only a user's message short enough to stand for a reply is read into Python (not a pasted log).
        before = self._neighbours(
            conn,
            filters,
            [(c.document_id, c.seq - 1) for c in replies],
            (
                " AND substr(u.content, 1, ?) = ? AND length(u.content) <= ?",
                [len(USER_PREFIX), USER_PREFIX, STATEMENT_MAX_CHARS],
            ),
        )
        said = {}
        for reply in replies:
            row = before.get((reply.document_id, reply.seq - 1))
            if row is not None and acknowledges(reply.content, str(row[-3])):
                said[reply.rowid] = row
        return self._neighbour_candidates(conn, said)

    def _answers(self, conn: sqlite3.Connection, filters: Filters, questions: list[Candidate]) -> dict[int, Candidate]:
        """Of ``questions``, those answered in their document (``answer_among``: ADR 219's short reply
        of the other side, or ADR 235's later choice of the user), each with that reply (read with
        its details; it must pass the recall's filters), by the question's rowid. One statement for
        a batch."""
        span = range(1, LATER_MAX_GAP + 2)
        after = self._neighbours(
            conn,
            filters,
            [(c.document_id, c.seq + step) for c in questions for step in span],
            (" AND length(u.content) <= ?", [len(ASSISTANT_PREFIX) + ANSWER_MAX_CHARS]),
        )
        replies = {}
        for question in questions:
            rows = [after.get((question.document_id, question.seq + step)) for step in span]
            place = answer_among(question.content, [None if row is None else str(row[-3]) for row in rows])
            reply = None if place is None else rows[place]
            if reply is not None:
                replies[question.rowid] = reply
        return self._neighbour_candidates(conn, replies)

    @staticmethod
    def _neighbours(
        conn: sqlite3.Connection, filters: Filters, places: list[tuple[str, int]], narrower: tuple[str, list[Any]]
    ) -> dict[tuple[str, int], tuple[Any, ...]]:
        """The units at ``places`` (document, seq) that pass the recall's filters and the ``narrower``
        condition (SQL and its parameters), each row by its place: its rank columns, then its
        content, document and seq. One statement through ``json_each`` and the document index."""
        where, params = filters.where()
        rows = conn.execute(
            f"SELECT {RANK_COLUMNS}, NULL, u.content, u.document_id, u.seq FROM json_each(?) AS j "
            "CROSS JOIN units AS u ON u.document_id = json_extract(j.value, '$[0]') "
            f"AND u.seq = json_extract(j.value, '$[1]') WHERE 1{narrower[0]}{where}",
            [orjson.dumps(places).decode("utf-8"), *narrower[1], *params],
        ).fetchall()
        return {(str(row[-2]), int(row[-1])): row for row in rows}

    @staticmethod
    def _neighbour_candidates(conn: sqlite3.Connection, rows: dict[int, tuple[Any, ...]]) -> dict[int, Candidate]:
        """Each of ``_neighbours``' rows as a candidate with its details and no rank, by the rowid of
        the unit it stands beside; a unit gone since (cannot happen in one snapshot) is left out."""
        if not rows:
            return {}
        found = {rowid: unranked_candidate(row) for rowid, row in rows.items()}
        shown = {c.rowid: c for c in detailed(conn, list(found.values()), len(found))}
        return {rowid: shown[c.rowid] for rowid, c in found.items() if c.rowid in shown}

    def _add_stated(
        self,
        conn: sqlite3.Connection,
        candidates: list[Candidate],
        filters: Filters,
        asked: tuple[str, tuple[str, list[Any]]],
        need: int,
        *,
        states: Callable[[str], bool] = states_decision,
    ) -> list[int]:
        """The last written ``need`` units that ``states`` says state what the question asks for (a
        decision, ADR 220; something to keep, ADR 223), added as candidates with no rank, as the units
        a period brings are, unless they are candidates already; returns their rowids, newest
        written first. ``asked``: the FTS5 query of those statements' words, and the condition of the
        question's period (``_said_in``)."""
        where, params = filters.where()
        cues, (during, when) = asked
        rows = conn.execute(
            f"SELECT {RANK_COLUMNS}, NULL, u.content FROM units_fts AS f CROSS JOIN units AS u ON u.rowid = f.rowid "
            f"WHERE units_fts MATCH ?{during}{where} "
            "ORDER BY f.rowid DESC LIMIT ?",  # the index's own order, newest written first: no sort of every match
            [cues, *when, *params, DECISION_READ_FACTOR * need],
        ).fetchall()
        stating = list(islice((row for row in rows if states(str(row[-1]))), need))
        join_unranked(candidates, stating)
        return [int(row[K_ROWID]) for row in stating]

    @staticmethod
    def _said_in(
        conn: sqlite3.Connection, bank_id: str, window: tuple[float, float] | None
    ) -> tuple[str, list[Any]] | None:
        """The SQL condition (and its parameters) that keeps an FTS5 search's units (``f``, ``u``) to
        those said in ``window``; '' for no window, and None when the bank said nothing in it.

        The units said in a period were written in a range of rowids, which the date index holds;
        bounded by it, the search reads the period's matches only, where the date condition alone had
        it read every match of the bank (43 ms for a week with none, at 100,000 units). The range is
        read for a period of at most ``PERIOD_BOUND_UNITS`` units (an index-only read); a larger one
        keeps the date condition alone, whose matches come soon in the search's order."""
        if window is None:
            return "", []
        when = [iso_from_epoch(window[0]), iso_from_epoch(window[1])]
        first, last, said = conn.execute(
            "SELECT min(r), max(r), count(*) FROM (SELECT u.rowid AS r FROM units AS u INDEXED BY units_by_created "
            "WHERE u.bank_id = ? AND u.created_at >= ? AND u.created_at < ? LIMIT ?)",
            [bank_id, *when, PERIOD_BOUND_UNITS + 1],
        ).fetchone()
        if not said:
            return None
        dated = " AND u.created_at >= ? AND u.created_at < ?"
        if said > PERIOD_BOUND_UNITS:
            return dated, when
        return " AND f.rowid BETWEEN ? AND ?" + dated, [first, last, *when]

    def _add_first_mentions(
        self, conn: sqlite3.Connection, candidates: list[Candidate], search: CandidateSearch, subject: list[str]
    ) -> set[int]:
        """The first ``FIRST_MENTIONS`` units written that say every word of ``subject`` (ADR 226), added
        as candidates with no rank unless they are candidates already; returns their rowids. bm25
        ranks what says the words most, and twenty short "Billing migration step n." beat the long
        message that began it a year before; the index's own order finds that one first."""
        if not subject:
            return set()
        where, params = search.filters.where()
        rows = conn.execute(
            f"SELECT {RANK_COLUMNS}, NULL FROM units_fts AS f CROSS JOIN units AS u ON u.rowid = f.rowid "
            f"WHERE units_fts MATCH ? AND f.rowid BETWEEN ? AND ?{where} ORDER BY f.rowid LIMIT ?",
            [" AND ".join(term_expression(t) for t in subject), search.lo, search.hi, *params, FIRST_MENTIONS],
        ).fetchall()
        return join_unranked(candidates, rows)

    def _add_retained_memories(
        self,
        conn: sqlite3.Connection,
        candidates: list[Candidate],
        filters: Filters,
        window: tuple[float, float] | None,
        need: int,
    ) -> list[int]:
        """The last written ``need`` memories the retain tool wrote (ADR 223: what the model was asked
        to keep, in whatever words), added as candidates with no rank unless they are candidates
        already; returns their rowids, newest written first. ``window``: the question's period.

        Read through the bank's documents, one unit each (a memory is a document of its own, its
        first unit at seq 0): a walk of the bank's units by date would read all of them when it
        holds few such memories (21 ms at 10,000 units), this reads one row a document."""
        where, params = filters.where()
        when = [] if window is None else [iso_from_epoch(window[0]), iso_from_epoch(window[1])]
        rows = conn.execute(
            f"SELECT {RANK_COLUMNS}, NULL FROM documents AS d CROSS JOIN units AS u INDEXED BY units_by_document "
            "ON u.bank_id = d.bank_id AND u.document_id = d.document_id AND u.seq = 0 "
            f"WHERE d.bank_id = ? AND u.source = 'tool'{' AND u.created_at >= ? AND u.created_at < ?' if when else ''}"
            f"{where} ORDER BY u.rowid DESC LIMIT ?",
            [filters.bank_id, *when, *params, need],
        ).fetchall()
        join_unranked(candidates, rows)
        return [int(row[K_ROWID]) for row in rows]

    def _add_answered_proposals(
        self,
        conn: sqlite3.Connection,
        candidates: list[Candidate],
        filters: Filters,
        period: tuple[str, list[Any]],
        need: int,
    ) -> list[int]:
        """The last written ``need`` proposals of the agent that the user answered (ADR 224: "We
        could replace eslint with biome. Shall I switch?" — "no, keep eslint for now"), added as
        candidates with no rank unless they are candidates already; returns their rowids, newest
        written first. Their answers follow them in the block by ADR 219's step. ``period``: the
        condition of the question's period (``_said_in``)."""
        where, params = filters.where()
        during, when = period
        rows = conn.execute(
            f"SELECT {RANK_COLUMNS}, NULL, u.content, u.document_id, u.seq FROM units_fts AS f "
            "CROSS JOIN units AS u ON u.rowid = f.rowid WHERE units_fts MATCH ? AND substr(u.content, 1, ?) = ?"
            f"{during}{where} ORDER BY f.rowid DESC LIMIT ?",
            [PROPOSAL_CUES, len(ASSISTANT_PREFIX), ASSISTANT_PREFIX, *when, *params, DECISION_READ_FACTOR * need],
        ).fetchall()
        asked = [row for row in rows if proposes(str(row[-3]))]
        if not asked:
            return []
        questions = []
        for row in asked:
            question = unranked_candidate(row)
            question.content, question.document_id, question.seq = str(row[-3]), str(row[-2]), int(row[-1])
            questions.append(question)
        answered = self._answers(conn, filters, questions)
        taken = [row for row in asked if int(row[K_ROWID]) in answered][:need]
        join_unranked(candidates, taken)
        return [int(row[K_ROWID]) for row in taken]

    def _add_session_openers(
        self,
        conn: sqlite3.Connection,
        candidates: list[Candidate],
        filters: Filters,
        window: tuple[float, float],
        limit: int,
        *,
        live: str | None = None,
        ending: int = 0,
    ) -> list[int]:
        """Of the ``limit`` sessions (documents) last said in ``window``, each one's first request
        of the user in it (of at least ``OPENER_MIN_CHARS``), added as candidates with no rank
        unless they are candidates already (ADR 221); returns their rowids, newest session first.

        ``live``: the document of the asking session, passed over (ADR 222: "where did we leave
        off?" asks about the sessions before it); ``ending``: how many of the newest session's
        last messages follow its first request, in the order they were said (ADR 222).

        Session by session, the one said in last first: the newest unit of a session not walked
        yet names it, and its first request (and its ending) is read through the document index.
        A few small statements a session, however many units the period holds ("last year" holds a
        year of them); the date index skips only the walked sessions' units. Two sessions said side
        by side (two agents at once) are both walked (ADR 225)."""
        where, params = filters.where()
        start, end = iso_from_epoch(window[0]), iso_from_epoch(window[1])
        passed = [] if live is None else [live]  # the sessions walked, and the asking one
        shown: list[tuple[Any, ...]] = []
        for walked in range(limit):
            newest = conn.execute(
                "SELECT u.document_id FROM units AS u WHERE u.created_at >= ? AND u.created_at < ? "
                f"AND u.document_id NOT IN (SELECT value FROM json_each(?)){where} ORDER BY u.created_at DESC LIMIT 1",
                [start, end, orjson.dumps(passed).decode(), *params],
            ).fetchone()
            if newest is None:
                break
            passed.append(str(newest[0]))
            # Read in the session's own order (its index), which is the order it was said in: the
            # planner would walk the whole period by date instead (150-350 ms at 16k units).
            in_window = " AND u.document_id = ? AND u.created_at >= ? AND u.created_at < ?"
            span = [str(newest[0]), start, end]
            by_document = "FROM units AS u INDEXED BY units_by_document WHERE"
            row = conn.execute(
                f"SELECT {RANK_COLUMNS}, NULL {by_document} substr(u.content, 1, ?) = ? "
                f"AND length(u.content) >= ?{in_window}{where} ORDER BY u.seq LIMIT 1",
                [len(USER_PREFIX), USER_PREFIX, len(USER_PREFIX) + OPENER_MIN_CHARS, *span, *params],
            ).fetchone()
            if row is not None:
                shown.append(row)
            if ending and walked == 0:  # the newest session: how it ended, said last
                last = conn.execute(
                    f"SELECT {RANK_COLUMNS}, NULL {by_document} (substr(u.content, 1, ?) = ? OR "
                    f"substr(u.content, 1, ?) = ?) AND length(u.content) >= ?{in_window}{where} "
                    "ORDER BY u.seq DESC LIMIT ?",
                    [len(USER_PREFIX), USER_PREFIX, len(ASSISTANT_PREFIX), ASSISTANT_PREFIX,
                     len(USER_PREFIX) + OPENER_MIN_CHARS, *span, *params, ending],
                ).fetchall()  # fmt: skip
                opened = {int(r[K_ROWID]) for r in shown}
                shown += [r for r in reversed(last) if int(r[K_ROWID]) not in opened]
        join_unranked(candidates, shown)
        return list(dict.fromkeys(int(r[K_ROWID]) for r in shown))

    def _add_window(
        self,
        conn: sqlite3.Connection,
        candidates: list[Candidate],
        filters: Filters,
        window: tuple[float, float],
        need: int,
    ) -> set[int]:
        """The units said in ``window`` (newest ``need``), added as candidates; returns all of theirs.

        Units found by their words or vector keep their scores; units found only by their time
        come with no rank (like vector-only hits, they are exempt from the coverage rule).
        """
        where, params = filters.where()
        rows = conn.execute(
            f"SELECT {RANK_COLUMNS}, NULL FROM units AS u WHERE u.created_at >= ? AND u.created_at < ?{where} "
            "ORDER BY u.created_at DESC LIMIT ?",
            [iso_from_epoch(window[0]), iso_from_epoch(window[1]), *params, need],
        ).fetchall()
        inside = join_unranked(candidates, rows)
        inside.update(c.rowid for c in candidates if window[0] <= c.created_epoch < window[1])
        return inside

    def _by_words_and_meaning(
        self,
        conn: sqlite3.Connection,
        search: CandidateSearch,
        query: str,
        term_lists: tuple[list[str], list[str]],
        sizes: tuple[int, int],
        bounds: tuple[float | None, threading.Event | None],
    ) -> tuple[SearchResult, list[Candidate], bool]:
        """The bm25 search and, once the bank's matrix is in memory, the vector search: the lexical
        result, the candidates of both, and whether the vectors took part.

        ``term_lists``: the query's terms, for its vectors, and the words the bm25 search takes
        (ADR 185); ``sizes``: (candidates wanted from each search, the recall's limit); ``bounds``: the
        recall's deadline (``time.monotonic``) and abort signal. When the terms match many units
        the vector search runs on a helper thread with a connection of its own while this thread
        runs the bm25 statement on ``conn`` (ADR 177 as ADR 227 turned it round): the statement
        holds no GIL while SQLite ranks, so the helper's Python runs meanwhile. False (the recall
        stays lexical) while the bank's matrix is not in memory yet: loading 100k vectors would
        cost the hook ~0.3 s, so the worker loads it and the next turn has it.
        """
        assert self._semantic is not None and self._worker is not None
        terms, words = term_lists
        need, limit = sizes
        lo, hi, model, worker = search.lo, search.hi, self._semantic.model, self._worker

        def by_words(on: CandidateSearch) -> SearchResult:
            return on.run(words, need, limit) if words else SearchResult([], "empty")

        def lexical_only(result: SearchResult) -> tuple[SearchResult, list[Candidate], bool]:
            worker.submit(partial(self._warm, lo, hi, model))  # the worker reads the bank
            return result, [ranked_candidate(row) for row in result.rows], False

        if not self._dense.is_warm(lo, model):
            return lexical_only(by_words(search))
        # The terms' match counts (which the query vector reads too) tell how many rows bm25 will
        # rank: a helper thread pays only when that is more than a fraction of a millisecond.
        matches = search.term_counts(words) if words else []
        lexical: list[SearchResult] = []
        asking = _Asking(query, terms, need)

        def lexical_rowids() -> list[int]:  # inline: the bm25 search, while the index is held
            lexical.append(by_words(search))
            return [int(row[K_ROWID]) for row in lexical[0].rows]

        both = None
        if sum(matches) >= ALONGSIDE_MIN_ROWS:
            search.plan(words)  # its statements now, while no helper holds the GIL (ADR 227)
            both = self._words_here_meaning_alongside(conn, search, asking, bounds, by_words)
        if both is None:  # few matches, or no thread can be had (the interpreter is shutting down)
            near = self._by_meaning(conn, search, asking, lexical_rowids)
            result = lexical[0] if lexical else by_words(search)
        else:
            result, near = both
        if near is None:  # another session's read is under way, or the bank must be read anew
            return lexical_only(result)
        candidates = [ranked_candidate(row) for row in result.rows]
        if not near.vectors:
            return result, candidates, False
        for cand in candidates:
            cand.dense = near.sims.get(cand.rowid, 0.0)
        have = {c.rowid for c in candidates}
        # The helper's snapshot may be a little newer than this recall's: a unit above the bank's
        # top as the recall read it is not one the recall can read the details of.
        top = search.top()
        added = 0
        for cand in near.nearest:
            if cand.rowid not in have and added < need and top is not None and cand.rowid <= top:
                candidates.append(cand)
                added += 1
        return result, candidates, True

    def _words_here_meaning_alongside(
        self,
        conn: sqlite3.Connection,
        search: CandidateSearch,
        asking: _Asking,
        bounds: tuple[float | None, threading.Event | None],
        by_words: Callable[[CandidateSearch], SearchResult],
    ) -> tuple[SearchResult, _Near | None] | None:
        """The bm25 search on this thread and ``conn`` while a helper thread searches the vectors on
        a connection and read snapshot of its own (ADR 227); None when no helper thread can be had.
        They meet once: the helper, still holding the index, waits for the lexical candidates'
        rowids to give them their cosines.

        Why this way round: Python threads share one GIL, and a thread that wants it back after a
        statement waits until the one holding it lets go. SQLite lets go of it for the whole
        ranking statement (its rows come back packed, ADR 177), and this thread, already inside its
        read transaction and with the ranking planned (``CandidateSearch.plan``), needs it back
        once; on the helper the bm25 search needed it back after each of its five or more
        statements, each time waiting for this thread's Python.
        """
        from concurrent.futures import Future

        posted: Future[list[int]] = Future()
        # The helper waits for the rowids without a bound of its own: this thread posts them, or
        # cancels the wait, before it waits for the helper, whatever happens to its statement.
        meaning = alongside(partial(self._meaning_apart, search, asking, bounds, posted.result))
        if meaning is None:
            return None
        try:
            result = by_words(search.on(conn))  # packed: the GIL is taken back once, not per row
            posted.set_result([int(row[K_ROWID]) for row in result.rows])
        finally:
            posted.cancel()  # a failure here never leaves the helper waiting (no-op once posted)
            meaning.exception()  # nor running behind the recall
        return result, meaning.result()

    def _meaning_apart(
        self,
        search: CandidateSearch,
        asking: _Asking,
        bounds: tuple[float | None, threading.Event | None],
        lexical_rowids: Callable[[], list[int]],
    ) -> _Near | None:
        """:meth:`_by_meaning` on the calling (helper) thread's own connection, bounded by what is
        left of the recall's deadline."""
        end, signal = bounds
        left = None if end is None else max(0.001, end - time.monotonic())
        with self._read("recall", left, signal) as own:
            return self._by_meaning(own, search.on(own), asking, lexical_rowids)

    def _by_meaning(
        self,
        conn: sqlite3.Connection,
        search: CandidateSearch,
        asking: _Asking,
        lexical_rowids: Callable[[], list[int]],
    ) -> _Near | None:
        """The vector search over ``conn``: the query's vectors, the units nearest to them that pass
        the filters, and every unit's best cosine, the lexical candidates' (``lexical_rowids``,
        called once the nearest are read) included. None when the bank's matrix cannot be searched
        this time."""
        assert self._semantic is not None
        query, terms, need = asking
        with self._dense.searching(
            conn, search.lo, search.hi, self._semantic.model, self._semantic.dim, RECALL_WAIT_S
        ) as bank:
            if bank is None:
                return None
            term_rows = self._semantic.term_vectors([term_text(t) for t in terms]) if terms else None
            vectors = [v for v in self._query_vectors(query, terms, term_rows, search) if v is not None]
            # Deleted or filtered units may take places among the nearest: ask for more than needed.
            tops = [dict(self._dense.top(bank, vec, need + 20)) for vec in vectors]
            found = dict.fromkeys(rowid for top in tops for rowid in top)
            sims: dict[int, float] = {}
            for vec, top in zip(vectors, tops, strict=True):
                # A unit's cosine is its best with any of the vectors: what ``top`` scored is
                # kept, the units the others found get their cosine with ``vec`` (ADR 176).
                top.update(self._dense.similarity(bank, vec, [rowid for rowid in found if rowid not in top]))
                for rowid, sim in top.items():
                    sims[rowid] = max(sim, sims.get(rowid, 0.0))
            lift = self._dense.background(bank, vectors[0]) + BACKGROUND_MARGIN if vectors else 0.0
            nearest = self._nearest_rows(conn, sims, search.filters, lift)
            # The lexical candidates the vector search did not score get their cosine now.
            unscored = [rowid for rowid in lexical_rowids() if rowid not in found]
            for vec in vectors:
                for rowid, sim in self._dense.similarity(bank, vec, unscored).items():
                    sims[rowid] = max(sim, sims.get(rowid, 0.0))
            return _Near(vectors, sims, nearest)

    def _nearest_rows(
        self, conn: sqlite3.Connection, sims: dict[int, float], filters: Filters, lift: float = 0.0
    ) -> list[Candidate]:
        """The units the vector search found at or above the floor that pass the filters, nearest
        first, as candidates with their cosine (``sims``: the best with any of the query's vectors).

        ``lift``: the bank's mean cosine with the query plus a margin (ADR 200). Where the model
        puts every text of the bank near the question, nearness says nothing, and the floor rises."""
        assert self._semantic is not None
        floor = max(self._semantic.floor, lift)
        ranked = sorted((rowid for rowid, sim in sims.items() if sim >= floor), key=lambda r: (-sims[r], r))
        if not ranked:
            return []
        where, params = filters.where()
        # The listed rowids drive the loop (CROSS JOIN): with ``u.bank_id = ?`` in the filters
        # SQLite would otherwise walk the bank's index (100k rows) to find ~70 units.
        rows = conn.execute(
            f"SELECT {RANK_COLUMNS}, NULL FROM json_each(?) AS j CROSS JOIN units AS u ON u.rowid = j.value "
            f"WHERE 1{where}",
            [orjson.dumps(ranked).decode("ascii"), *params],
        ).fetchall()
        by_rowid = {int(r[K_ROWID]): r for r in rows}
        out: list[Candidate] = []
        for rowid in ranked:
            row = by_rowid.get(rowid)
            if row is not None:
                cand = unranked_candidate(row)
                cand.dense = sims[rowid]
                out.append(cand)
        return out

    def _query_vectors(self, query: str, terms: list[str], term_rows: Any, search: CandidateSearch) -> list[Any]:
        """The query's vector in this bank: its terms weighed by their rarity here (ADR 160), else
        (no term with a vector) the vector of its content words, computed only then; then the
        vectors of the terms no unit of the bank says, each searched on its own (ADR 176). The
        first is None when the query has no word with a vector."""
        assert self._semantic is not None
        if term_rows is not None:
            matches = search.term_counts(terms)
            weighted = bank_query(None, term_rows, matches, search.bank_units())
            if weighted is not None:
                return [weighted, *unsaid_term_vectors(term_rows, matches)]
        return [self._semantic.query_vector(content_words(query))]

    def _add_dense(
        self,
        conn: sqlite3.Connection,
        qvec: list[float],
        candidates: list[Candidate],
        lo: int,
        hi: int,
        filters: Filters,
        limit: int,
    ) -> bool:
        """Cosine scores for the FTS candidates plus the best of the newest units (dense mode on)."""
        model = model_name(self._embedder)
        by_id = {c.id: c for c in candidates}
        if by_id:
            marks = ", ".join("?" for _ in by_id)
            for unit_id, blob in conn.execute(
                f"SELECT unit_id, vector FROM unit_vectors WHERE model = ? AND unit_id IN ({marks})", [model, *by_id]
            ):
                by_id[unit_id].dense = cosine(qvec, from_blob(blob))
        where, params = filters.where()
        newest = conn.execute(
            f"SELECT {UNIT_COLUMNS}, NULL, v.vector FROM units AS u "
            "JOIN unit_vectors AS v ON v.unit_id = u.id "
            "JOIN documents AS d ON d.bank_id = u.bank_id AND d.document_id = u.document_id "
            f"WHERE u.rowid BETWEEN ? AND ? AND v.model = ?{where} ORDER BY u.rowid DESC LIMIT ?",
            [lo, hi, model, *params, NEWEST_FOR_DENSE],
        ).fetchall()
        scored = []
        for row in newest:
            if row[R_ID] in by_id:
                continue
            sim = cosine(qvec, from_blob(row[-1]))
            if sim > 0.0:
                scored.append((sim, row))
        scored.sort(key=lambda pair: -pair[0])
        for sim, row in scored[:limit]:
            cand = candidate_of((*row[:R_RANK], None))
            cand.rank = None
            cand.dense = sim
            candidates.append(cand)
        return True

    def reflect(
        self,
        bank_id: str,
        request: ReflectRequest,
        timeout_s: float | None = None,
        signal: threading.Event | None = None,
    ) -> ReflectResult:
        """docs/tools.md#hindsight_reflect on the local backend: recall, then the Top/Supporting/Recent sandwich. No
        LLM."""
        recalled = self.recall(
            bank_id,
            RecallRequest(
                query=reflect_query(request.query, request.context),
                budget=request.budget,
                max_tokens=request.max_tokens if request.max_tokens is not None else 4096,
                tag_groups=request.tag_groups,
                limit=self.recall_limit,
            ),
            timeout_s=timeout_s,
            signal=signal,
        )
        return ReflectResult(text=sandwich(recalled.hits))
