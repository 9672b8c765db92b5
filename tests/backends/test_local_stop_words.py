"""Function words of the other languages users write in are not searched (ADR 191): the term
list, the words a developer searches by that must stay, and recall on a real German bank."""

from __future__ import annotations

from pathlib import Path

import pytest

from hindsight_hooks.backends.base import RecallRequest
from hindsight_hooks.backends.local_text import STOP_WORDS, query_terms
from tests.backends.test_local_support import bank_of

GERMAN = [
    "user: Wir müssen eine Datenbank für die Abrechnung auswählen. Was würdest du empfehlen?",
    "assistant: Entscheidung notiert: die Abrechnung läuft auf PostgreSQL 16, Datenbank billing.",
    "user: Die Tests auf der CI sind seit gestern rot, kannst du nachsehen?",
    "assistant: Die Tests scheitern, weil die Zeitzone auf dem CI-Runner UTC ist. Ich habe den Test umgestellt.",
    "assistant: Ich habe logrotate eingerichtet: die Logs werden täglich rotiert und 14 Tage aufbewahrt.",
    "assistant: Erledigt: der Login ist jetzt auf 5 Versuche pro Minute und IP begrenzt.",
]


@pytest.mark.parametrize(
    ("prompt", "terms"),
    [
        ("Kannst du mir die README übersetzen?", ["readme", "übersetzen"]),
        ("Wir sollten die Farbe der Buttons ändern, was meinst du?", ["farbe", "buttons", "ändern", "meinst"]),
        ("Peux-tu traduire le README en français ?", ["traduire", "readme", "français"]),
        ("¿Puedes revisar por qué falla el deploy?", ["revisar", "falla", "deploy"]),
        ("Puoi controllare perché il build non funziona?", ["controllare", "build", "funziona"]),
        ("Você pode ver por que o build falhou?", ["ver", "build", "falhou"]),
        ("Kun je kijken waarom de build faalt?", ["kijken", "build", "faalt"]),
        ("Можешь перевести README на английский?", ["перевести", "readme", "английский"]),  # ADR 194
        ("Как ты думаешь, нам стоит поменять цвет кнопок?", ["думаешь", "стоит", "поменять", "цвет", "кнопок"]),
        # ADR 198: Polish, with and without its accents, and Ukrainian
        ("Czy możesz mi przetłumaczyć README na angielski?", ["przetłumaczyć", "readme", "angielski"]),
        ("Jak myslisz, czy powinnismy zmienic kolor przyciskow?", ["myslisz", "zmienic", "kolor", "przyciskow"]),
        ("Чи можеш ти перекласти README англійською?", ["перекласти", "readme", "англійською"]),
        ("Як ти думаєш, чи нам варто змінити колір кнопок?", ["думаєш", "варто", "змінити", "колір", "кнопок"]),
    ],
)
def test_a_prompt_is_searched_by_its_content_words_in_seven_more_languages(prompt: str, terms: list[str]) -> None:
    assert query_terms(prompt) == terms


def test_words_a_developer_searches_by_are_not_taken_for_function_words() -> None:
    kept = [
        "ai",
        "bin",
        "ca",
        "ci",
        "con",
        "ed",
        "eu",
        "era",
        "go",
        "hat",
        "io",
        "man",
        "mon",
        "nas",
        "one",
        "op",
        "os",
        "pod",
        "pour",
        "sa",
        "ses",
        "sin",
        "son",
        "su",
        "ten",
        "ti",
        "ton",
        "vi",
        "war",
    ]
    assert [w for w in kept if w in STOP_WORDS] == []
    assert query_terms("which os does the ci image use, and where is the io module?") == [
        "os",
        "ci",
        "image",
        "use",
        "io",
        "module",
    ]


def test_a_german_question_about_nothing_stored_finds_nothing_and_one_about_a_decision_finds_it(
    tmp_path: Path,
) -> None:
    backend = bank_of(tmp_path, GERMAN)
    try:
        for unrelated in (
            "Kannst du mir die README übersetzen?",
            "Wir sollten die Farbe der Buttons ändern, was meinst du?",
        ):
            hits = backend.recall("b", RecallRequest(query=unrelated)).hits
            assert [h.text for h in hits] == [], unrelated  # before: every memory, by "du", "die", "der"
        hits = backend.recall("b", RecallRequest(query="Welche Datenbank nutzen wir für die Abrechnung?")).hits
        assert hits and "PostgreSQL 16" in " ".join(h.text for h in hits[:2])
        assert all("Datenbank" in h.text or "Abrechnung" in h.text for h in hits)
    finally:
        backend.close()


RUSSIAN = [
    "user: Нам нужно выбрать базу данных для биллинга. Что ты посоветуешь?",
    "assistant: Решение записано: биллинг работает на PostgreSQL 16, база данных billing.",
    "assistant: Фронтенд собирается через npm run build и копируется rsync на сервер web-02.",
    "assistant: Я настроил logrotate: логи ротируются ежедневно, хранятся 14 дней и сжимаются.",
]


POLISH = [
    "user: Musimy wybrać bazę danych dla modułu rozliczeń. Co jest lepsze, Postgres czy MySQL?",
    "user: Dobrze, to bierzemy Postgres 16, bo zespół go już zna i mamy do niego kopie zapasowe.",
    "user: Dlaczego CI jest znowu czerwony? Wczoraj wszystko działało.",
    "user: Jak wdrażamy frontend? Czy to jest na Vercel?",
    "user: Logi są w Loki i trzymamy je przez 30 dni, potem się same usuwają.",
]


@pytest.mark.parametrize(
    ("texts", "unrelated", "related", "answer"),
    [
        # Trial P (ADR 194): "как", "ты", "нам" matched every Russian memory
        (RUSSIAN, "Как ты думаешь, нам стоит поменять цвет кнопок?", "Сколько дней хранятся логи?", "assistant: Я"),
        # Trial Q (ADR 198): "czy", "jest", "jak" matched most Polish memories
        (POLISH, "Czy możesz mi przetłumaczyć README na angielski?", "Ile dni trzymamy logi?", "user: Logi są "),
    ],
)
def test_a_question_about_nothing_stored_finds_nothing(
    tmp_path: Path, texts: list[str], unrelated: str, related: str, answer: str
) -> None:
    backend = bank_of(tmp_path, texts)
    try:
        assert [h.text for h in backend.recall("b", RecallRequest(query=unrelated)).hits] == []
        hits = backend.recall("b", RecallRequest(query=related)).hits
        assert [h.text[: len(answer)] for h in hits] == [answer]
    finally:
        backend.close()
