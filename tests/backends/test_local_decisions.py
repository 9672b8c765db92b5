"""A question about what was decided is answered by the decisions (ADR 220), on a real SQLite store."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hindsight_hooks.backends.base import RecallRequest
from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.backends.local_decisions import (
    _STATES_DECISION,
    asks_about_decisions,
    asks_only_about_decisions,
    says_decision,
    states_decision,
)
from hindsight_hooks.backends.local_text import fold, query_terms
from hindsight_hooks.backends.semantic import StaticEmbedder
from tests.backends.test_local_support import (
    make,
    retain_talks,
    texts_recalled,
    with_vectors_in_memory,
    words_of_the_period,
)

ASKED_ON = "2026-12-01T12:00:00Z"  # a Tuesday: "last week" is Monday 23 to Sunday 29 November

WEEK = [
    ("2026-11-23T10:00:00Z", [("user", "Can you run the tests again?"), ("assistant", "All 214 tests pass."),
                              ("user", "Let's go with Postgres for the orders service, not MySQL."),
                              ("assistant", "Noted: Postgres for orders.")]),
    ("2026-11-24T10:00:00Z", [("user", "Fix the flaky login test please."),
                              ("assistant", "The login test waited on a fixed sleep; I replaced it with a poll.")]),
    ("2026-11-25T10:00:00Z", [("user", "We decided the API will be versioned in the URL path, /v2/."),
                              ("assistant", "Got it, /v2/ in the path.")]),
    ("2026-11-26T10:00:00Z", [("user", "Rename the helper to parse_header."),
                              ("assistant", "Renamed, three call sites updated.")]),
    ("2026-11-27T10:00:00Z", [("user", "Bump the version in the package metadata."),
                              ("assistant", "Bumped to 2.4.0 and regenerated the lock file.")]),
    ("2026-11-10T10:00:00Z", [("user", "We agreed to use pnpm in the frontend."), ("assistant", "OK.")]),
]  # fmt: skip
POSTGRES = "user: Let's go with Postgres for the orders service, not MySQL."
API = "user: We decided the API will be versioned in the URL path, /v2/."
PNPM = "user: We agreed to use pnpm in the frontend."


@functools.cache
def _embedder() -> StaticEmbedder:
    """One model for the module: loading it is the slow part."""
    return StaticEmbedder()


def recall(backend: LocalBackend, question: str, limit: int = 8) -> list[str]:
    return texts_recalled(backend, question, ASKED_ON, limit)


@pytest.mark.parametrize(
    "question",
    [
        "what did we decide last week?", "what decisions did we make recently?", "what have we agreed on?",
        "Was haben wir letzte Woche entschieden?", "Qu'est-ce qu'on a décidé la semaine dernière ?",
        "¿Qué decidimos ayer?", "Cosa abbiamo deciso?", "O que combinamos?", "Wat hebben we besloten?",
        "Что мы решили на прошлой неделе?", "Co ustaliliśmy?", "Що ми вирішили?",
    ],
)  # fmt: skip
def test_a_question_about_deciding_with_no_subject_of_its_own(question: str) -> None:
    terms = query_terms(question)
    assert asks_about_decisions(question)
    assert asks_only_about_decisions(terms, words_of_the_period(question, ASKED_ON))


@pytest.mark.parametrize(
    "question",
    ["what did we choose for the orders service?", "what did we decide about the cache last week?",
     "Was haben wir zum Cache entschieden?"],
)  # fmt: skip
def test_a_question_about_a_decision_on_a_subject_is_searched_as_before(question: str) -> None:
    terms = query_terms(question)
    assert asks_about_decisions(question)
    assert not asks_only_about_decisions(terms, words_of_the_period(question, ASKED_ON))


@pytest.mark.parametrize("question", ["how do we deploy?", "what did we do last week?", "which port is it now?"])
def test_other_questions_do_not_ask_about_deciding(question: str) -> None:
    assert not asks_about_decisions(question)


@pytest.mark.parametrize(
    "content",
    [
        POSTGRES, API, PNPM, "user: From now on, always use pnpm.", "user: We'll stick with Jenkins for CI.",
        "user: Switched the cache from Redis to Memcached.", "Decided to keep the retry count at 3.",
        "user: Wir haben entschieden: Postgres.", "user: On a décidé de garder Redis.", "user: Decidimos usar Redis.",
        "user: Abbiamo deciso di usare Redis.", "user: Besloten: we gebruiken Redis.", "user: Решили оставить Redis.",
        "user: Zdecydowaliśmy się na Redis.", "user: Вирішили залишити Redis.",
        "user: Zdecydowałem się na Redis.", "user: Wybrałam Postgresa.", "user: Я решил: оставляем Redis.",
        "user: Я выбрала Postgres.", "user: Я вирішив: залишаємо Redis.",  # the singular, ADR 231
    ],
)  # fmt: skip
def test_a_decision_is_stated_the_ways_people_state_one(content: str) -> None:
    assert states_decision(content)


@pytest.mark.parametrize(
    "content",
    [
        "user: Let's clean up the imports before we commit.", "user: Can you help me decide which one?",
        "user: Can you run the tests again?", "user: The cache hit rate dropped to 60% after the deploy.",
        # the agent proposes, reports and says back; a tool's output decides nothing
        "assistant: We decided the API goes under /v2/.", "assistant: I replaced the sleep with a poll.",
        "toolResult: switched to branch main",
    ],
)  # fmt: skip
def test_requests_reports_and_outputs_are_no_decisions(content: str) -> None:
    assert not states_decision(content)


@pytest.mark.parametrize("semantic", [False, True], ids=["lexical", "hybrid"])
def test_last_weeks_decisions_come_before_last_weeks_routine(tmp_path: Path, semantic: bool) -> None:
    """Before: the week's units newest first, the Postgres decision of Monday last but one, behind
    "Rename the helper" and "Bump the version"."""
    backend = retain_talks(make(tmp_path, semantic=_embedder()) if semantic else make(tmp_path), WEEK)
    if semantic:
        with_vectors_in_memory(backend, "orders")
    hits = recall(backend, "what did we decide last week?")
    assert set(hits[:2]) == {POSTGRES, API}
    assert PNPM not in hits  # said on the 10th, not last week
    german = recall(backend, "Was haben wir letzte Woche entschieden?")
    assert set(german[:2]) == {POSTGRES, API}


def test_a_question_about_recent_decisions_finds_them_without_their_word(tmp_path: Path) -> None:
    """Before: nothing at all, "decisions" shares no stem with "decided" and no unit says "make"."""
    backend = retain_talks(make(tmp_path), WEEK)
    hits = recall(backend, "what decisions did we make recently?")
    assert hits[:3] == [API, POSTGRES, PNPM]  # newest first


def test_what_we_agreed_on_brings_every_decision_the_word_first(tmp_path: Path) -> None:
    backend = retain_talks(make(tmp_path), WEEK)
    hits = recall(backend, "what have we agreed on?")
    assert hits[0] == PNPM
    assert set(hits[1:3]) == {POSTGRES, API}


def test_a_decision_on_a_subject_is_not_crowded_by_other_decisions(tmp_path: Path) -> None:
    backend = retain_talks(make(tmp_path), WEEK)
    hits = recall(backend, "what did we choose for the orders service?")
    assert hits[0] == POSTGRES
    assert PNPM not in hits and API not in hits


def test_a_decision_in_a_busy_week_is_found_behind_its_routine(tmp_path: Path) -> None:
    """More of the week's units than a period brings (its newest ``need``): the decision said first
    is a candidate because it states a decision."""
    routine = [
        (
            f"2026-11-2{4 + n % 5}T1{n % 10}:0{n % 6}:00Z",
            [("user", f"Please rerun job {n}."), ("assistant", f"Job {n} ok.")],
        )
        for n in range(60)
    ]
    backend = retain_talks(make(tmp_path), [WEEK[0], *routine])
    assert recall(backend, "what did we decide last week?")[0] == POSTGRES


def test_a_forgotten_decision_is_not_brought_back(tmp_path: Path) -> None:
    backend = retain_talks(make(tmp_path), WEEK)
    hit = next(h for h in backend.recall("b", RecallRequest(query="Postgres orders", query_timestamp=ASKED_ON)).hits
               if h.text == POSTGRES)  # fmt: skip
    assert hit.id is not None and backend.forget_unit("b", hit.id)
    assert POSTGRES not in recall(backend, "what did we decide last week?")
    assert POSTGRES not in recall(backend, "what decisions did we make recently?")


def _talk(when: str, prompt: str, reply: str) -> tuple[str, list[tuple[str, str]]]:
    return when, [("user", prompt), ("assistant", reply)]


CACHE = [
    _talk("2026-11-02T10:00:00Z", "Let's keep Redis for the cache, no Memcached.", "OK, Redis stays."),
    _talk("2026-11-13T10:00:00Z", "The cache hit rate dropped to 60% after the deploy, can you check the cache keys?",
          "The cache keys now include the locale; the rate will recover."),
    _talk("2026-11-20T10:00:00Z", "Clear the cache on staging please.", "Cleared the staging cache."),
    _talk("2026-11-25T10:00:00Z", "Why is the cache slow?",
          "The cache client opens a new connection per request; pooling would fix it."),
    _talk("2026-11-27T10:00:00Z", "We decided the cache TTL stays at 15 minutes.", "Noted."),
]  # fmt: skip
REDIS = "user: Let's keep Redis for the cache, no Memcached."
TTL = "user: We decided the cache TTL stays at 15 minutes."


def test_a_decision_on_the_subject_says_the_questions_word_of_deciding(tmp_path: Path) -> None:
    """Before: only the unit that says "decided"; "cache" alone is a word the bank says everywhere
    (ADR 181), so "Let's keep Redis for the cache" did not pass the coverage rule."""
    backend = retain_talks(make(tmp_path), CACHE)
    hits = recall(backend, "what did we decide about the cache?", limit=5)
    assert set(hits[:2]) == {REDIS, TTL}


@pytest.mark.parametrize("question", ["what did we choose for the cache?", "which cache did we agree on?"])
def test_decisions_on_the_subject_come_before_its_other_units(tmp_path: Path, question: str) -> None:
    """Before: "The cache hit rate dropped …", "Clear the cache …" and "Why is the cache slow?" first."""
    backend = retain_talks(make(tmp_path), CACHE)
    assert set(recall(backend, question, limit=5)[:2]) == {REDIS, TTL}


_PHRASE_WORDS = st.sampled_from(
    [
        "let's", "let’s", "lets", "Let", "us", "go", "with", "use", "we", "We'll", "we’ll", "will", "are", "going",
        "to", "decided", "agreed", "chose", "picked", "settled", "opted", "went", "stick", "sticking", "stay", "on",
        "the", "plan", "decision", "is", "from", "now", "always", "never", "switched", "migrated", "I", "have",
        "'ve", "that", "against", "keep", "adopt", "standardize", "wir", "haben", "entschieden", "ab", "jetzt",
        "bleiben", "bei", "nehmen", "on", "a", "décidé", "nous", "avons", "part", "sur", "garde", "désormais",
        "partir", "de", "maintenant", "hemos", "decidido", "decidimos", "vamos", "con", "nos", "quedamos",
        "ahora", "abbiamo", "deciso", "di", "d'ora", "in", "poi", "da", "ora", "combinamos", "com", "ficamos",
        "agora", "besloten", "gaan", "voor", "kiezen", "voortaan", "vanaf", "nu", "решили", "остаёмся", "на",
        "теперь", "всегда", "zdecydowaliśmy", "ustaliliśmy", "wybraliśmy", "zostajemy", "przy", "od", "teraz",
        "вирішили", "залишаємося", "відтепер", "Redis", "cache", "delete", "complete", "я", "Я", "решил",
        "решила", "выбрал", "выбрала", "zdecydowałem", "zdecydowałam", "wybrałem", "ustaliłem", "вирішив",
        "обрала", "он",
    ]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(words=st.lists(_PHRASE_WORDS, min_size=0, max_size=8))
def test_the_hints_never_change_what_says_decision_reads(words: list[str]) -> None:
    """The substring check before the expression is only a shortcut: a text the expression reads
    as a decision always holds one of the pieces."""
    text = " ".join(words)
    assert says_decision(text, changes=False) == (_STATES_DECISION.search(fold(text)) is not None)


def test_a_decision_said_in_the_singular_is_found_by_a_question_in_its_language(tmp_path: Path) -> None:
    """ "Zdecydowałem się na Postgresa" (I decided) was read in the plural only, and ł does not fold
    (ADR 231): "Co zdecydowałem?" now gets it first, as "Что я решил?" gets the Russian one."""
    talks = [
        ("2026-11-24T10:00:00Z", [("user", "Zdecydowałem się na Postgresa dla zamówień."), ("user", "Dodaj testy.")]),
        ("2026-11-25T10:00:00Z", [("user", "Я решил: кэш остаётся на Redis."), ("user", "Добавь тесты.")]),
    ]
    backend = retain_talks(make(tmp_path), talks)
    polish = texts_recalled(backend, "Co zdecydowałem?", ASKED_ON)
    assert polish[0] == "user: Zdecydowałem się na Postgresa dla zamówień."
    assert texts_recalled(backend, "Что я решил?", ASKED_ON)[0] == "user: Я решил: кэш остаётся на Redis."
