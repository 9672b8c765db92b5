"""Questions about a time in German, French, Spanish, Italian, Portuguese and Dutch (ADR 193): the
period each phrase names, the words that name none, and recall on a real store."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from hindsight_hooks.backends.base import RecallRequest
from hindsight_hooks.backends.local_time import date_numbers, time_window
from tests.backends.test_local_support import make
from tests.backends.test_local_time import said_by_the_user

REF = datetime(2026, 11, 28, 12, tzinfo=UTC).timestamp()  # a Saturday


def _days(window: tuple[float, float] | None) -> tuple[str, str] | None:
    if window is None:
        return None
    start, end = (datetime.fromtimestamp(e, UTC).strftime("%Y-%m-%d") for e in window)
    return start, end


@pytest.mark.parametrize(
    ("query", "days"),
    [
        ("Was haben wir gestern entschieden?", ("2026-11-27", "2026-11-28")),
        ("und vorgestern?", ("2026-11-26", "2026-11-27")),
        ("Was war letzte Woche?", ("2026-11-16", "2026-11-23")),
        ("Welche Queue nutzen wir seit letzter Woche?", ("2026-11-16", "2026-11-29")),
        ("Was haben wir vor 3 Tagen gemacht?", ("2026-11-25", "2026-11-26")),
        ("Was war letzten Freitag?", ("2026-11-27", "2026-11-28")),
        ("Was haben wir am 4. März 2026 entschieden?", ("2026-03-04", "2026-03-05")),
        ("Was haben wir im März gemacht?", ("2026-03-01", "2026-04-01")),
        ("Qu'est-ce qu'on a décidé hier ?", ("2026-11-27", "2026-11-28")),
        ("Qu'avons-nous fait la semaine dernière ?", ("2026-11-16", "2026-11-23")),
        ("C'était il y a deux semaines", ("2026-11-14", "2026-11-21")),
        ("Qu'est-ce qui a changé depuis lundi ?", ("2026-11-23", "2026-11-29")),
        ("¿Qué decidimos ayer?", ("2026-11-27", "2026-11-28")),
        ("¿Qué hicimos hace 3 días?", ("2026-11-25", "2026-11-26")),
        ("¿Qué cambiamos el 4 de marzo?", ("2026-03-04", "2026-03-05")),
        ("¿Qué pasó el viernes pasado?", ("2026-11-27", "2026-11-28")),
        ("Cosa abbiamo deciso ieri?", ("2026-11-27", "2026-11-28")),
        ("Cosa abbiamo fatto 3 giorni fa?", ("2026-11-25", "2026-11-26")),
        ("Cosa è successo lunedì scorso?", ("2026-11-23", "2026-11-24")),
        ("O que decidimos ontem?", ("2026-11-27", "2026-11-28")),
        ("O que mudou há 2 semanas?", ("2026-11-14", "2026-11-21")),
        ("O que fizemos na sexta-feira passada?", ("2026-11-27", "2026-11-28")),
        ("Wat hebben we gisteren besloten?", ("2026-11-27", "2026-11-28")),
        ("Wat deden we 3 dagen geleden?", ("2026-11-25", "2026-11-26")),
        ("Wat was er vorige week?", ("2026-11-16", "2026-11-23")),
        ("Wat doen we deze week?", ("2026-11-23", "2026-11-29")),  # Dutch "week" is reached through "deze"
        ("Qu'avons-nous décidé l'an dernier ?", ("2025-01-01", "2026-01-01")),  # and French "an" through "dernier"
        ("Что мы решили вчера?", ("2026-11-27", "2026-11-28")),  # Russian, ADR 194
        ("Что мы делали на прошлой неделе?", ("2026-11-16", "2026-11-23")),
        ("Что изменилось 3 дня назад?", ("2026-11-25", "2026-11-26")),
        ("Что было в прошлую пятницу?", ("2026-11-27", "2026-11-28")),
        ("Что мы решили 4 марта?", ("2026-03-04", "2026-03-05")),
        ("Что изменилось с понедельника?", ("2026-11-23", "2026-11-29")),
        ("Co zdecydowaliśmy wczoraj?", ("2026-11-27", "2026-11-28")),  # Polish, ADR 201
        ("Co robiliśmy w zeszłym tygodniu?", ("2026-11-16", "2026-11-23")),
        ("Co robilismy w zeszlym tygodniu?", ("2026-11-16", "2026-11-23")),  # typed without accents
        ("Co zmieniliśmy 3 dni temu?", ("2026-11-25", "2026-11-26")),
        ("Co było w zeszłą środę?", ("2026-11-25", "2026-11-26")),
        ("Co zdecydowaliśmy 4 marca?", ("2026-03-04", "2026-03-05")),
        ("Co robiliśmy w marcu?", ("2026-03-01", "2026-04-01")),
        ("Co się zmieniło od poniedziałku?", ("2026-11-23", "2026-11-29")),
        ("Що ми вирішили вчора?", ("2026-11-27", "2026-11-28")),  # Ukrainian, ADR 201
        ("Що ми робили минулого тижня?", ("2026-11-16", "2026-11-23")),
        ("Що змінилося 3 дні тому?", ("2026-11-25", "2026-11-26")),
        ("Що ми вирішили 4 березня?", ("2026-03-04", "2026-03-05")),
        ("Що змінилося з понеділка?", ("2026-11-23", "2026-11-29")),
        ("Що було минулої п'ятниці?", ("2026-11-27", "2026-11-28")),  # an apostrophe inside the word
        ("Що ми змінили п’ять днів тому?", ("2026-11-23", "2026-11-24")),
    ],
)
def test_a_time_phrase_names_its_period_in_other_languages(query: str, days: tuple[str, str]) -> None:
    assert _days(time_window(query, REF)) == days


FEW_DAYS, FEW_WEEKS = ("2026-11-22", "2026-11-28"), ("2026-10-24", "2026-11-15")
LAST_DAYS, LAST_WEEKEND = ("2026-11-24", "2026-11-29"), ("2026-11-21", "2026-11-23")
NIGHT, MORNING = ("2026-11-27", "2026-11-29"), ("2026-11-28", "2026-11-29")


@pytest.mark.parametrize(
    ("query", "days"),
    [
        ("Was haben wir neulich entschieden?", FEW_DAYS),
        ("vor ein paar Tagen", FEW_DAYS),
        ("vor einigen Wochen", FEW_WEEKS),
        ("letztes Wochenende", LAST_WEEKEND),
        ("in den letzten Tagen", LAST_DAYS),
        ("Qu'est-ce qu'on a décidé l'autre jour ?", FEW_DAYS),
        ("il y a quelques semaines", FEW_WEEKS),
        ("le week-end dernier", LAST_WEEKEND),
        ("ces derniers jours", LAST_DAYS),
        ("cette nuit", NIGHT),
        ("ce matin", MORNING),
        ("¿Qué decidimos el otro día?", FEW_DAYS),
        ("hace unas semanas", FEW_WEEKS),
        ("el fin de semana pasado", LAST_WEEKEND),
        ("en los últimos días", LAST_DAYS),
        ("anoche", NIGHT),
        ("esta mañana", MORNING),
        ("Cosa abbiamo deciso l'altro giorno?", FEW_DAYS),
        ("qualche giorno fa", FEW_DAYS),
        ("il weekend scorso", LAST_WEEKEND),
        ("negli ultimi giorni", LAST_DAYS),
        ("stamattina", MORNING),
        ("O que decidimos no outro dia?", FEW_DAYS),
        ("algumas semanas atrás", FEW_WEEKS),
        ("Wat hebben we onlangs besloten?", FEW_DAYS),
        ("enkele weken geleden", FEW_WEEKS),
        ("vorig weekend", LAST_WEEKEND),
        ("vannacht", NIGHT),
        ("Что мы решили на днях?", FEW_DAYS),
        ("пару недель назад", FEW_WEEKS),
        ("на прошлых выходных", LAST_WEEKEND),
        ("за последние несколько дней", LAST_DAYS),
        ("Co ustaliliśmy kilka dni temu?", FEW_DAYS),
        ("w zeszły weekend", LAST_WEEKEND),
        ("zeszłej nocy", NIGHT),
        ("Що ми вирішили днями?", FEW_DAYS),
        ("останніми днями", LAST_DAYS),  # says "днями" too: the span of the last days, not the other day
        ("на минулих вихідних", LAST_WEEKEND),
    ],
)
def test_a_vague_time_is_read_in_other_languages(query: str, days: tuple[str, str]) -> None:
    """ADR 204: rewritten as the English phrase, then read as its span (asked on a Saturday)."""
    assert _days(time_window(query, REF)) == days


@pytest.mark.parametrize(
    "query",
    [
        "Was haben wir hier gemacht?",  # German "hier" is here, not French yesterday
        "Wir deployen jeden Freitag",  # a habit, not a day
        "On déploie le lundi",  # the same in French
        "what did the rover do in Mars orbit?",  # the planet, not French March
        "Welche Datenbank nutzen wir?",
        "Мы деплоим каждую пятницу",  # a habit in Russian
        "Wdrażamy w każdy piątek",  # and in Polish
        "Mamy dwa dni na to",  # a count of days, not a time ago
        "what did we merge in Maja's branch?",  # a person, not Polish May
        "Ми деплоїмо щоп'ятниці",  # every Friday: a habit
        "il fine di questo modulo",  # Italian "the end of", no weekend
        "pare che funzioni",  # Italian "it seems", not Polish "a couple"
        "the weekend release checklist",
        "fin del mundo",
        "Wir deployen nie am Wochenende",  # a habit: only "letztes Wochenende" names one
        "on ne déploie pas le week-end",
        # ADR 217: parts of a year said with words English has too, and no other language's word
        "what's in the final 2025 roadmap?",
        "we begin 2025 with a code freeze, right?",
        "is the medio 2025 plan still on?",
        "who owns the fin 2025 budget?",
        "Anfang der Woche",  # a part of the week, not of a year
        "the second half of the migration",
    ],
)
def test_words_that_name_no_time_stay_words(query: str) -> None:
    assert time_window(query, REF) is None


def test_the_numbers_of_a_written_out_date_are_not_searched() -> None:
    assert date_numbers("Was haben wir am 4. März 2026 entschieden?") == {"4", "2026"}


PIPELINE_CHOICES = (
    ("a", "2025-02-10T15:00:00Z", "Pipeline: Jenkins gewählt, choisi, elegido"),
    ("b", "2025-06-12T15:00:00Z", "Pipeline: GitLab gewählt, choisi, elegido"),
    ("c", "2025-11-03T15:00:00Z", "Pipeline: Buildkite gewählt, choisi, elegido"),
)


@pytest.mark.parametrize(
    ("said", "question", "first"),
    [
        (  # before: Redis, which also says "gewählt"
            (
                ("kafka", "2026-11-27T15:00:00Z", "Wir haben Kafka für den Event-Bus gewählt"),
                ("redis", "2026-11-10T15:00:00Z", "Wir haben Redis für das Caching gewählt"),
                ("standup", "2026-11-20T09:00:00Z", "Das Standup ist jetzt um zehn"),
            ),
            "Was haben wir gestern gewählt?",
            "user: Wir haben Kafka für den Event-Bus gewählt",
        ),
        (  # ADR 201: "wczoraj" names yesterday; before, the two choices matched "wybraliśmy" alike
            (
                ("kafka", "2026-11-27T15:00:00Z", "Wybraliśmy Kafkę dla szyny zdarzeń"),
                ("redis", "2026-11-10T15:00:00Z", "Wybraliśmy Redis do cache"),
            ),
            "Co wybraliśmy wczoraj?",
            "user: Wybraliśmy Kafkę dla szyny zdarzeń",
        ),
        # ADR 217: before, each question named no period, and the three choices matched alike
        (PIPELINE_CHOICES, "Was haben wir Ende letzten Jahres für die Pipeline gewählt?", "user: Pipeline: Buildkite"),
        (
            PIPELINE_CHOICES,
            "Qu'avons-nous choisi pour la pipeline au début de l'année dernière ?",
            "user: Pipeline: Jenkins",
        ),
        (PIPELINE_CHOICES, "¿Qué elegimos para la pipeline a mediados del año pasado?", "user: Pipeline: GitLab"),
    ],
)
def test_a_time_asked_in_another_language_finds_what_was_said_then(
    tmp_path: Path, said: tuple[tuple[str, str, str], ...], question: str, first: str
) -> None:
    backend = said_by_the_user(make(tmp_path), *said)
    asked = "2026-11-28T12:00:00.000Z"
    hits = backend.recall("b", RecallRequest(query=question, query_timestamp=asked)).hits
    assert hits[0].text.startswith(first)
    assert "+time" in backend.last_search_mode


# ADR 217: ADR 214's year-scale phrases, as the other languages say them, mean what the English ones do.
YEAR_SCALE = [
    ("Was haben wir Anfang letzten Jahres entschieden?", "early last year"),
    ("Anfang des letzten Jahres", "early last year"),
    ("Mitte letzten Jahres", "mid last year"),
    ("Ende letzten Jahres", "late last year"),
    ("Ende des vergangenen Jahres", "late last year"),
    ("Anfang 2025", "early 2025"),
    ("Mitte 2025", "mid 2025"),
    ("Ende 2025", "late 2025"),
    ("au début de l'année dernière", "early last year"),
    ("à la fin de l'année dernière", "late last year"),
    ("fin de l'an dernier", "late last year"),
    ("au milieu de l'année dernière", "mid last year"),
    ("début 2025", "early 2025"),
    ("mi-2025", "mid 2025"),
    ("Qu'avons-nous décidé fin 2025 ?", "late 2025"),
    ("a principios del año pasado", "early last year"),
    ("a mediados del año pasado", "mid last year"),
    ("a finales del año pasado", "late last year"),
    ("a fines del año pasado", "late last year"),
    ("a principios de 2025", "early 2025"),
    ("a mediados de 2025", "mid 2025"),
    ("a finales de 2025", "late 2025"),
    ("all'inizio dell'anno scorso", "early last year"),
    ("a metà dell'anno scorso", "mid last year"),
    ("alla fine dell'anno scorso", "late last year"),
    ("inizio 2025", "early 2025"),
    ("a metà 2025", "mid 2025"),
    ("alla fine del 2025", "late 2025"),
    ("no início do ano passado", "early last year"),
    ("em meados do ano passado", "mid last year"),
    ("no fim do ano passado", "late last year"),
    ("no final do ano passado", "late last year"),
    ("no início de 2025", "early 2025"),
    ("em meados de 2025", "mid 2025"),
    ("no final de 2025", "late 2025"),
    ("begin vorig jaar", "early last year"),
    ("halverwege vorig jaar", "mid last year"),
    ("eind vorig jaar", "late last year"),
    ("Wat hebben we begin 2025 besloten?", "early 2025"),
    ("Wat deden we medio 2025?", "mid 2025"),
    ("eind 2025", "late 2025"),
    ("в начале прошлого года", "early last year"),
    ("в середине прошлого года", "mid last year"),
    ("в конце прошлого года", "late last year"),
    ("в начале 2025 года", "early 2025"),
    ("в конце 2025 года", "late 2025"),
    ("na początku zeszłego roku", "early last year"),
    ("pod koniec zeszłego roku", "late last year"),
    ("na początku 2025", "early 2025"),
    ("pod koniec 2025", "late 2025"),
    ("на початку минулого року", "early last year"),
    ("наприкінці минулого року", "late last year"),
    ("в кінці минулого року", "late last year"),
    ("in der ersten Hälfte des letzten Jahres", "the first half of last year"),
    ("in der zweiten Jahreshälfte 2025", "the second half of 2025"),
    ("au premier semestre 2025", "the first half of 2025"),
    ("au second semestre de l'année dernière", "the second half of last year"),
    ("en el primer semestre de 2025", "the first half of 2025"),
    ("nel secondo semestre del 2025", "the second half of 2025"),
    ("no primeiro semestre de 2025", "the first half of 2025"),
    ("in de eerste helft van vorig jaar", "the first half of last year"),
    ("letztes Jahr um diese Zeit", "this time last year"),
    ("um diese Zeit letztes Jahr", "this time last year"),
    ("l'an dernier à la même époque", "this time last year"),
    ("à la même époque l'année dernière", "this time last year"),
    ("el año pasado por estas fechas", "this time last year"),
    ("por estas fechas el año pasado", "this time last year"),
    ("l'anno scorso in questo periodo", "this time last year"),
    ("nessa época no ano passado", "this time last year"),
    ("vorig jaar rond deze tijd", "this time last year"),
    ("в это же время в прошлом году", "this time last year"),
    ("letzte Weihnachten", "last christmas"),
    ("an Weihnachten letztes Jahr", "last christmas"),
    ("à Noël dernier", "last christmas"),
    ("la Navidad pasada", "last christmas"),
    ("lo scorso Natale", "last christmas"),
    ("a Natale scorso", "last christmas"),
    ("no Natal passado", "last christmas"),
    ("vorige kerst", "last christmas"),
    ("afgelopen kerst", "last christmas"),
    ("на прошлое Рождество", "last christmas"),
    ("w zeszłe święta", "last christmas"),
    ("минулого Різдва", "last christmas"),
    ("vorletzten Monat", "the month before last"),
    ("im vorletzten Monat", "the month before last"),
    ("le mois avant-dernier", "the month before last"),
    ("el mes antepasado", "the month before last"),
    ("il mese prima dello scorso", "the month before last"),
    ("o mês retrasado", "the month before last"),
    ("voorvorige maand", "the month before last"),
    ("в позапрошлом месяце", "the month before last"),
    ("w przedostatnim miesiącu", "the month before last"),
    ("позаминулого місяця", "the month before last"),
    ("vor vierzehn Tagen", "a fortnight ago"),
    ("vor 14 Tagen", "a fortnight ago"),
    ("il y a quinze jours", "a fortnight ago"),
    ("hace quince días", "a fortnight ago"),
    ("quindici giorni fa", "a fortnight ago"),
    ("há quinze dias", "a fortnight ago"),
    ("veertien dagen geleden", "a fortnight ago"),
    ("две недели назад", "a fortnight ago"),
    ("dwa tygodnie temu", "a fortnight ago"),
    ("два тижні тому", "a fortnight ago"),
    ("in der ersten Märzwoche", "the first week of march"),
    ("in der ersten Woche im März", "the first week of march"),
    ("la première semaine de mars", "the first week of march"),
    ("la dernière semaine de février 2025", "the last week of february 2025"),
    ("la primera semana de marzo", "the first week of march"),
    ("la última semana de febrero de 2025", "the last week of february 2025"),
    ("la prima settimana di marzo", "the first week of march"),
    ("a primeira semana de março", "the first week of march"),
    ("de eerste week van maart", "the first week of march"),
    ("в первую неделю марта", "the first week of march"),
    ("у першій половині минулого року", "the first half of last year"),
    ("w pierwszej połowie 2025", "the first half of 2025"),
    ("во второй половине прошлого года", "the second half of last year"),
    ("в середине 2025 года", "mid 2025"),
    ("w połowie zeszłego roku", "mid last year"),
    ("в середині минулого року", "mid last year"),
    ("у цей час минулого року", "this time last year"),
    ("o tej porze w zeszłym roku", "this time last year"),
]


YEAR_SCALE += [
    ("Anfang dieses Jahres", "early this year"),
    ("Ende dieses Jahres", "late this year"),
    ("au début de cette année", "early this year"),
    ("a principios de este año", "early this year"),
    ("all'inizio di quest'anno", "early this year"),
    ("no início deste ano", "early this year"),
    ("begin dit jaar", "early this year"),
    ("в начале этого года", "early this year"),
    ("na początku tego roku", "early this year"),
    ("на початку цього року", "early this year"),
]


@pytest.mark.parametrize(("query", "english"), YEAR_SCALE)
def test_a_years_parts_halves_christmas_and_fortnights_are_read_in_other_languages(query: str, english: str) -> None:
    assert time_window(query, REF) == time_window(english, REF) is not None
