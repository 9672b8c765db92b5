"""Time phrases of six more languages, rewritten as the English ones ``local_time`` reads (ADR 193).

``time_window`` knows "yesterday", "last week", "3 days ago", "last Friday", "in March" and
"March 4". A German user asks "was haben wir gestern entschieden?", a French one "qu'est-ce
qu'on a décidé la semaine dernière ?". Rather than a second parser per language, their phrases
are rewritten into the English ones, so one parser keeps one set of rules (which day a weekday
means, how a month without a year is read) for every language. The languages are those whose
function words are stop words (ADR 191): German, French, Spanish, Italian, Portuguese, Dutch,
Russian (ADR 194), Polish and Ukrainian (ADR 201).

Only phrases that name a time are rewritten, never a bare word that also means something else:
"le lundi" (on Mondays) is a habit, "lundi dernier" is a day; "da" (Italian "from") is not read
as "since". A query that holds none of the words these phrases are built from is returned as it
was, which is what nearly every query does.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from .local_text import OTHER_LANGUAGE_WORDS, fold


def _split(words: str) -> tuple[str, ...]:
    return tuple(words.split())


_MONTHS = {
    "january": "januar janvier enero gennaio janeiro januari январь января январе",
    "february": "februar fevrier febrero febbraio fevereiro februari февраль февраля феврале",
    "march": "marz maerz mars marzo marco maart март марта марте",
    "april": "april avril abril aprile апрель апреля апреле",
    "may": "mai mayo maggio maio mei маи мая мае",
    "june": "juni juin junio giugno junho июнь июня июне",
    "july": "juli juillet julio luglio julho июль июля июле",
    "august": "august aout agosto augustus август августа августе",
    "september": "september septembre septiembre setiembre settembre setembro сентябрь сентября сентябре",
    "october": "oktober octobre octubre ottobre outubro октябрь октября октябре",
    "november": "november novembre noviembre novembro ноябрь ноября ноябре",
    "december": "dezember decembre diciembre dicembre dezembro декабрь декабря декабре",
}
_WEEKDAYS = {
    "monday": "montag lundi lunes lunedi segunda maandag понедельник понедельника",
    "tuesday": "dienstag mardi martes martedi terca dinsdag вторник вторника",
    "wednesday": "mittwoch mercredi miercoles mercoledi quarta woensdag среда среду среды",
    "thursday": "donnerstag jeudi jueves giovedi quinta donderdag четверг четверга",
    "friday": "freitag vendredi viernes venerdi sexta vrijdag пятница пятницу пятницы",
    "saturday": "samstag sonnabend samedi sabado zaterdag суббота субботу субботы",
    "sunday": "sonntag dimanche domingo domenica zondag воскресенье воскресенья",
}
# Polish and Ukrainian (ADR 201), each in the forms that follow "w"/"у" and a day's number
_MONTHS_MORE = {
    "january": "styczen stycznia styczniu січень січня січні",
    "february": "luty lutego lutym лютии лютого лютому",
    "march": "marzec marca marcu березень березня березні",
    "april": "kwiecien kwietnia kwietniu квітень квітня квітні",
    "may": "maj maja maju травень травня травні",
    "june": "czerwiec czerwca czerwcu червень червня червні",
    "july": "lipiec lipca lipcu липень липня липні",
    "august": "sierpien sierpnia sierpniu серпень серпня серпні",
    "september": "wrzesien wrzesnia wrzesniu вересень вересня вересні",
    "october": "pazdziernik pazdziernika pazdzierniku жовтень жовтня жовтні",
    "november": "listopad listopada listopadzie листопад листопада листопаді",
    "december": "grudzien grudnia grudniu грудень грудня грудні",
}
_WEEKDAYS_MORE = {
    "monday": "poniedziałek poniedziałku poniedzialek poniedzialku понеділок понеділка",
    "tuesday": "wtorek wtorku вівторок вівторка",
    "wednesday": "sroda srode srody середа середу середи",
    "thursday": "czwartek czwartku четвер четверга",
    "friday": "piatek piatku пятниця пятницю пятниці",  # Ukrainian "п'ятниця", its apostrophe dropped
    "saturday": "sobota sobote soboty субота суботу суботи",
    "sunday": "niedziela niedziele niedzieli неділя неділю неділі",
}
_SLAVIC_MONTHS = frozenset(word for words in _MONTHS_MORE.values() for word in words.split())
_MONTH_OF = {
    word: english for table in (_MONTHS, _MONTHS_MORE) for english, words in table.items() for word in words.split()
}
_WEEKDAY_OF = {
    word: english for table in (_WEEKDAYS, _WEEKDAYS_MORE) for english, words in table.items() for word in words.split()
}
_MONTH = "|".join(sorted(_MONTH_OF, key=len, reverse=True))
_WEEKDAY = "|".join(sorted(_WEEKDAY_OF, key=len, reverse=True))
_NUMBER_OF = {
    **dict.fromkeys(_split("ein einem einer un une una uno um uma een один одна одну jeden jedna jedno"), "1"),
    **dict.fromkeys(_split("zwei deux dos due dois duas twee два две dwa dwie дві"), "2"),
    **dict.fromkeys(_split("drei trois tres tre drie три trzy"), "3"),
    **dict.fromkeys(_split("vier quatre cuatro quattro quatro четыре cztery чотири"), "4"),
    **dict.fromkeys(_split("funf cinq cinco cinque vijf пять piec"), "5"),
    **dict.fromkeys(_split("sechs six seis sei zes шесть szesc шість"), "6"),
    **dict.fromkeys(_split("sieben sept siete sette sete zeven семь siedem сім"), "7"),
}
_NUMBER = r"(\d{1,3}|" + "|".join(sorted(_NUMBER_OF, key=len, reverse=True)) + ")"
_UNIT_OF = {
    **dict.fromkeys(
        _split("tag tagen tage jour jours dia dias giorno giorni dag dagen день дня днеи dzien dnia dni дні днів"),
        "day",
    ),
    **dict.fromkeys(
        _split(
            "woche wochen semaine semaines semana semanas settimana settimane week weken неделю недели недель "
            "tydzien tygodnie tygodni тиждень тижні тижнів"
        ),
        "week",
    ),
    **dict.fromkeys(
        _split(
            "monat monaten monate mois mes meses mese mesi maand maanden месяц месяца месяцев "
            "miesiac miesiace miesiecy місяць місяці місяців"
        ),
        "month",
    ),
    # "an" is English too: French "il y a un an" is its own rule below (ADR 208)
    **dict.fromkeys(
        _split("jahr jahre jahren an ans ano anos anno anni jaar jaren год года лет rok lata lat рік роки років"),
        "year",
    ),
}
_UNIT = "(" + "|".join(sorted(_UNIT_OF, key=len, reverse=True)) + ")"


def _ago(m: re.Match[str]) -> str:
    n = m.groupdict().get("n") or "1"  # Slavic languages say "a year ago" without "a": "год назад"
    return f" {_NUMBER_OF.get(n, n)} {_UNIT_OF[m['unit']]}s ago "


def _last_weekday(m: re.Match[str]) -> str:
    return f" last {_WEEKDAY_OF[m['day']]} "


def _on_weekday(m: re.Match[str]) -> str:
    return f" on {_WEEKDAY_OF[m['day']]} "


def _in_month(m: re.Match[str]) -> str:
    if m["prep"] == "in" and m["month"] == "mars":
        return m[0]  # English "in Mars" is the planet; Italian and Dutch say "marzo", "maart"
    if m["month"] in _SLAVIC_MONTHS and m["prep"] not in ("w", "у", "в"):
        return m[0]  # "in Maja's branch" is a person: Polish and Ukrainian say "w maju", "у травні"
    return f" in {_MONTH_OF[m['month']]} "


def _since_weekday(m: re.Match[str]) -> str:
    return f" since {_WEEKDAY_OF[m['day']]} "


def _day_month(m: re.Match[str]) -> str:
    year = f" {m['year']}" if m["year"] else ""
    return f" {m['day']} {_MONTH_OF[m['month']]}{year} "


def _month_year(m: re.Match[str]) -> str:
    return f" {_MONTH_OF[m['month']]} {m['year']} "


_D = rf"(?P<day>{_WEEKDAY})(?:-feira)?"
_M = rf"(?P<month>{_MONTH})"
_N, _U = rf"(?P<n>{_NUMBER[1:-1]})", rf"(?P<unit>{_UNIT[1:-1]})"
_Y = r"(?P<year>\d{4})"

_DAYS = frozenset(_WEEKDAY_OF)
_MONTH_WORDS = frozenset(_MONTH_OF)
_UNITS = frozenset(_UNIT_OF)
# Dutch says "week" as English does: its week rules are reached through the word beside it.
_WEEK_WORDS = frozenset(
    _split("woche semaine semana settimana week неделе неделю tygodniu тижня тижні vorige afgelopen deze")
)
# The seasons (ADR 208), in the forms that follow "last" and "this"
_SEASON_OF = {
    **dict.fromkeys(_split("sommer ete verano estate verao zomer лето летом lato lata літо літа"), "summer"),
    **dict.fromkeys(_split("winter hiver invierno inverno зима зимои zima zimy зими"), "winter"),
    **dict.fromkeys(
        _split("fruhling fruhjahr printemps primavera lente voorjaar весна веснои wiosna wiosny весни"), "spring"
    ),
    **dict.fromkeys(
        _split("herbst automne otono autunno outono herfst najaar осень осенью jesien jesieni осінь осені"), "autumn"
    ),
}
_SEASONS = frozenset(_SEASON_OF)
_S = "(?:" + "|".join(sorted(_SEASON_OF, key=len, reverse=True)) + ")"


def _season_in(phrase: str) -> str:
    return next(_SEASON_OF[word] for word in _WORD.findall(phrase) if word in _SEASON_OF)


def _last_season(m: re.Match[str]) -> str:
    return f" last {_season_in(m[0])} "


def _this_season(m: re.Match[str]) -> str:
    return f" this {_season_in(m[0])} "


# Parts of a year, halves, a year ago now, Christmas, the month before last, a fortnight, the
# first or last week of a month (ADR 214's English phrases, ADR 217): the words each language
# says them with, as ``fold`` writes them.
_PART_OF = {
    **dict.fromkeys(
        _split("anfang debut principios comienzos inicios inizio inicio comeco begin начале poczatku початку"), "early"
    ),
    **dict.fromkeys(_split("mitte milieu mi mediados meta meados halverwege medio midden середине połowie середині"),
                    "mid"),
    **dict.fromkeys(_split("ende fin finales fines fine fim final eind einde конце koncu koniec наприкінці кінці"),
                    "late"),
}  # fmt: skip
_HALF_OF = {
    **dict.fromkeys(
        _split("ersten premier premiere primer primera primo prima primeiro eerste первои pierwszej першіи"), "first"
    ),
    **dict.fromkeys(
        _split("zweiten second seconde deuxieme segundo segunda secondo seconda tweede второи drugiej другіи"), "second"
    ),
}  # fmt: skip
_EDGE_WEEK_OF = {
    **dict.fromkeys(_split("ersten premiere primera prima primeira eerste первую"), "first"),
    **dict.fromkeys(_split("letzten derniere ultima laatste последнюю"), "last"),
}
_P = "(?P<part>" + "|".join(sorted(_PART_OF, key=len, reverse=True)) + ")"
# Parts that are English words too: "the final 2025 roadmap", "we begin 2025 with". Before a bare
# year they are read only in a query that says a function word of the other languages.
_PART_ALSO_ENGLISH = frozenset(_split("begin final fine medio mi fin"))
_P_NOT_ENGLISH = "(?P<part>" + "|".join(sorted(set(_PART_OF) - _PART_ALSO_ENGLISH, key=len, reverse=True)) + ")"
_H = "(?P<half>" + "|".join(sorted(_HALF_OF, key=len, reverse=True)) + ")"
_E = "(?P<edge>" + "|".join(sorted(_EDGE_WEEK_OF, key=len, reverse=True)) + ")"
# What may come before a part of a year: "au début", "a finales", "all'inizio", "в начале", "pod koniec"
_AT = r"(?:(?:au|en|a|a\s+la|all'|alla|al|no|na|em|в|у|pod|w)\s+)?"
# "last year" as each language says it after "of" (des letzten Jahres, de l'année dernière, ...)
_OF_LAST_YEAR = (
    r"(?:(?:des\s+)?(?:letzten|vergangenen)\s+jahres|letztes\s+jahr|(?:de\s+)?l'(?:annee\s+derniere|an\s+dernier)"
    r"|del\s+ano\s+pasado|(?:dell'|del\s+)anno\s+scorso|do\s+ano\s+passado|(?:van\s+)?vorig\s+jaar"
    r"|прошлого\s+года|(?:zesz[łl]ego|ubieg[łl]ego|poprzedniego)\s+roku|минулого\s+року)"
)
_OF_YEAR = r"(?:(?:de|del|do|di|van|von)\s+)?(?P<year>\d{4})(?:\s+(?:года|roku|року))?"
# ... and "this year" (dieses Jahres, de cette année, ...): "Anfang dieses Jahres" is early this year
_OF_THIS_YEAR = (
    r"(?:dieses\s+jahres|de\s+cette\s+annee|de\s+este\s+ano|di\s+quest'\s*anno|deste\s+ano|van\s+dit\s+jaar"
    r"|dit\s+jaar|этого\s+года|tego\s+roku|цього\s+року)"
)


def _year_part(m: re.Match[str]) -> str:
    year = m.groupdict().get("year")
    return f" {_PART_OF[m['part']]} {year or 'last year'} "


def _this_year_part(m: re.Match[str]) -> str:
    return f" {_PART_OF[m['part']]} this year "


def _year_half(m: re.Match[str]) -> str:
    year = m.groupdict().get("year")
    return f" the {_HALF_OF[m['half']]} half of {year or 'last year'} "


def _edge_week(m: re.Match[str]) -> str:
    year = f" {m['year']}" if m.groupdict().get("year") else ""
    return f" the {_EDGE_WEEK_OF[m['edge']]} week of {_MONTH_OF[m['month']]}{year} "


_MONTH_SPAN_WORDS = frozenset(_split("monat mois mes mese maand месяце miesiacu місяця"))
_PL_LAST = r"(?:zesz[łl]ym|ubieg[łl]ym|poprzednim)"  # "w zeszłym tygodniu": in the last week

# (words the rule needs, pattern, replacement), tried in this order on the lower-case text without
# accents, each only when the text says one of its words (the patterns are long; most queries
# need one or two of them). Longer phrases come before the phrases they contain.
Replacement = str | Callable[[re.Match[str]], str]
_TABLE: list[tuple[str | frozenset[str], str, Replacement]] = [
    # ADR 217: a year's halves and parts and the like, before the "last year" and "last week" they
    # contain (the halves first: "w pierwszej połowie 2025" holds "połowie 2025", mid-2025)
    ("halfte jahreshalfte semestre moitie mitad meta metade helft половине połowie половині",
     rf"\b(?:(?:in\s+der|au|en\s+el|nel|no|in\s+de|во?|w|у)\s+)?{_H}\s+(?:jahreshalfte|halfte|semestre|moitie|mitad"
     rf"|meta|metade|helft|половине|połowie|половині)\s+(?:(?:de|del|do|di|van|von)\s+)?(?:{_OF_LAST_YEAR}"
     rf"|{_OF_YEAR})\b", _year_half),
    (frozenset(_PART_OF),
     rf"\b{_AT}{_P}\s*-?\s*(?:(?:de|do|des|del|dell'|van)\s+)?"
     rf"{_OF_LAST_YEAR}\b", _year_part),
    (frozenset(_PART_OF),
     rf"\b{_AT}{_P}\s*-?\s*{_OF_THIS_YEAR}\b", _this_year_part),
    (frozenset(_PART_OF) - _PART_ALSO_ENGLISH,
     rf"\b{_AT}{_P_NOT_ENGLISH}\s*-?\s*{_OF_YEAR}\b",
     _year_part),
    ("zeit epoque fechas periodo tempi epoca tijd время porze час",
     r"\b(?:(?:letztes|vergangenes)\s+jahr\s+um\s+diese\s+zeit|um\s+diese\s+zeit\s+(?:letztes|vergangenes)\s+jahr"
     r"|l'an(?:nee)?\s+dernier(?:e)?\s+a\s+(?:la\s+meme|cette)\s+epoque|a\s+(?:la\s+meme|cette)\s+epoque\s+"
     r"l'an(?:nee)?\s+dernier(?:e)?|el\s+ano\s+pasado\s+(?:por|en)\s+estas\s+fechas|(?:por|en)\s+estas\s+fechas\s+"
     r"el\s+ano\s+pasado|l'anno\s+scorso\s+(?:in\s+questo\s+periodo|di\s+questi\s+tempi)|(?:in\s+questo\s+periodo"
     r"|di\s+questi\s+tempi)\s+l'anno\s+scorso|(?:nesta|nessa)\s+epoca\s+(?:no|do)\s+ano\s+passado|no\s+ano\s+passado"
     r"\s+(?:nesta|nessa)\s+epoca|vorig\s+jaar\s+(?:rond|om)\s+deze\s+tijd|(?:rond|om)\s+deze\s+tijd\s+vorig\s+jaar"
     r"|в\s+это\s+(?:же\s+)?время\s+в\s+прошлом\s+году|в\s+прошлом\s+году\s+в\s+это\s+(?:же\s+)?время"
     r"|o\s+tej\s+porze\s+(?:w\s+)?(?:zesz[łl]ym|ubieg[łl]ym)\s+roku|(?:w\s+)?(?:zesz[łl]ym|ubieg[łl]ym)\s+roku\s+o"
     r"\s+tej\s+porze|(?:в|у)\s+цеи\s+(?:же\s+)?час\s+минулого\s+року|минулого\s+року\s+(?:в|у)\s+цеи\s+(?:же\s+)?час)\b",
     " this time last year "),
    ("weihnachten noel navidad navidades natale natal kerst kerstmis рождество swieta narodzenie різдва різдво",
     r"\b(?:(?:an\s+)?(?:letzte[ns]?|vergangene[ns]?)\s+weihnachten|(?:an\s+)?weihnachten\s+(?:letztes|vergangenes)"
     r"\s+jahr|(?:a\s+)?noel\s+dernier|(?:en\s+)?(?:la\s+)?navidad\s+pasada|(?:en\s+)?las\s+navidades\s+pasadas"
     r"|(?:lo\s+)?scorso\s+natale|(?:a\s+)?natale\s+scorso|(?:no\s+)?natal\s+passado|(?:vorige|afgelopen)\s+kerst(?:mis)?"
     r"|(?:на|в)\s+прошлое\s+рождество|w\s+(?:zesz[łl]e|ubieg[łl]e)\s+(?:swieta|boze\s+narodzenie)"
     r"|минулого\s+різдва|на\s+минуле\s+різдво)\b",
     " last christmas "),
    ("vorletzten avant mes antepasado penultimo mese retrasado voorvorige позапрошлом przedostatnim позаминулого",
     r"\b(?:(?:im\s+)?vorletzten\s+monat|le\s+mois\s+avant[- ]dernier|l'avant[- ]dernier\s+mois|(?:el\s+)?mes"
     r"\s+antepasado|(?:el\s+)?penultimo\s+mes|(?:il\s+)?mese\s+prima\s+(?:dello|del)\s+scorso|(?:il\s+)?penultimo"
     r"\s+mese|(?:o\s+|no\s+)?mes\s+retrasado|(?:de\s+)?voorvorige\s+maand|в\s+позапрошлом\s+месяце"
     r"|w\s+przedostatnim\s+miesiacu|позаминулого\s+місяця)\b",
     " the month before last "),
    ("vierzehn quinze quince quindici veertien tagen jours dias giorni dagen",  # "14" is read through its unit
     r"\b(?:vor\s+(?:vierzehn|14)\s+tagen|il\s+y\s+a\s+(?:quinze|15)\s+jours|hace\s+(?:quince|15)\s+dias"
     r"|(?:quindici|15)\s+giorni\s+fa|ha\s+(?:quinze|15)\s+dias|(?:veertien|14)\s+dagen\s+geleden)\b",
     " a fortnight ago "),
    (frozenset(_EDGE_WEEK_OF), rf"\b(?:in\s+der\s+)?{_E}\s+{_M}woche(?:\s+{_Y})?\b", _edge_week),
    (frozenset(_EDGE_WEEK_OF), rf"\b(?:in\s+der\s+)?{_E}\s+woche\s+(?:im|des|von)\s+{_M}(?:\s+{_Y})?\b", _edge_week),
    (frozenset(_EDGE_WEEK_OF),
     rf"\b(?:la|a|de|в)\s+{_E}\s+(?:semaine\s+(?:de\s+|d')?|semana\s+de\s+|settimana\s+di\s+|week\s+van\s+|неделю\s+)"
     rf"{_M}(?:\s+(?:de\s+)?{_Y})?\b", _edge_week),
    # the day before yesterday, yesterday, today
    ("vorgestern avant anteayer antier altro altroieri anteontem eergisteren",
     r"\b(?:vorgestern|avant[- ]hier|anteayer|antier|l'altro\s*ieri|altroieri|anteontem|eergisteren)\b",
     " the day before yesterday "),
    ("позавчера przedwczoraj позавчора", r"\b(?:позавчера|przedwczoraj|позавчора)\b", " the day before yesterday "),
    ("gestern ayer ieri ontem gisteren вчера wczoraj вчора",
     r"\b(?:gestern|ayer|ieri|ontem|gisteren|вчера|wczoraj|вчора)\b", " yesterday "),
    ("heute aujourd hoy oggi hoje vandaag сегодня dzisiaj dzis сьогодні",
     r"\b(?:heute|aujourd['’ ]?hui|hoy|oggi|hoje|vandaag|сегодня|dzisiaj|dzis|сьогодні)\b", " today "),
    # vague times, as the English phrases ``local_time_spans`` reads (ADR 204)
    # ("the last few days" first: Ukrainian "останніми днями" says "днями", the other day)
    ("letzten derniers ultimos ultimi afgelopen laatste последние ostatnich ostatnie останніми останні",
     r"\b(?:in\s+den\s+letzten\s+tagen|ces\s+derniers\s+jours|en\s+los\s+ultimos\s+dias|negli\s+ultimi\s+giorni"
     r"|nos\s+ultimos\s+dias|de\s+(?:afgelopen|laatste)\s+(?:paar\s+)?dagen|в\s+последние\s+дни"
     r"|за\s+последние\s+(?:несколько\s+)?(?:дни|днеи)|w\s+ostatnich\s+dniach|przez\s+ostatnie\s+(?:kilka\s+)?dni"
     r"|останніми\s+днями|за\s+останні\s+(?:кілька\s+)?(?:дні|днів))\b",
     " in the last few days "),
    ("neulich letztens autre quelques otro unos algunos pocos altro qualche alcuni pochi outro alguns uns poucos "
     "onlangs enkele paar днях несколько пару kilka pare днями кілька",
     r"\b(?:neulich|letztens|vor\s+(?:ein\s+paar|einigen|wenigen)\s+tagen|l'autre\s+jour|il\s+y\s+a\s+quelques\s+jours"
     r"|el\s+otro\s+dia|hace\s+(?:unos|algunos|pocos|unos\s+pocos)\s+dias|l'altro\s+giorno"
     r"|(?:qualche\s+giorno|(?:alcuni|pochi)\s+giorni)\s+fa|(?:o\s+)?outro\s+dia|ha\s+(?:alguns|uns|poucos)\s+dias"
     r"|(?:alguns|uns|poucos)\s+dias\s+atras|onlangs|(?:een\s+paar|enkele)\s+dagen\s+geleden|на\s+днях"
     r"|(?:несколько|пару)\s+днеи\s+назад|(?:kilka|pare)\s+dni\s+temu|днями|(?:кілька|пару)\s+днів\s+тому)\b",
     " a few days ago "),
    ("paar einigen wenigen quelques unas algunas pocas qualche alcune poche algumas umas poucas enkele несколько "
     "пару kilka pare кілька",
     r"\b(?:vor\s+(?:ein\s+paar|einigen|wenigen)\s+wochen|il\s+y\s+a\s+quelques\s+semaines"
     r"|hace\s+(?:unas|algunas|pocas)\s+semanas|(?:qualche\s+settimana|(?:alcune|poche)\s+settimane)\s+fa"
     r"|ha\s+(?:algumas|umas|poucas)\s+semanas|(?:algumas|umas|poucas)\s+semanas\s+atras"
     r"|(?:een\s+paar|enkele)\s+weken\s+geleden|(?:несколько|пару)\s+недель\s+назад|(?:kilka|pare)\s+tygodni\s+temu"
     r"|(?:кілька|пару)\s+тижнів\s+тому)\b",
     " a few weeks ago "),
    ("wochenende week weekend fin fine fim выходных выходные вихідних",
     r"\b(?:(?:letztes|vergangenes)\s+wochenende|le\s+week-?end\s+dernier|(?:el\s+)?fin\s+de\s+semana\s+pasado"
     r"|(?:il\s+)?(?:weekend|fine\s+settimana)\s+scorso|(?:o\s+)?fim\s+de\s+semana\s+passado|(?:vorig|afgelopen)\s+weekend"
     r"|на\s+прошлых\s+выходных|в\s+прошлые\s+выходные|w\s+(?:zesz[łl]y|ubieg[łl]y|ostatni)\s+weekend"
     r"|на\s+минулих\s+вихідних)\b",
     " last weekend "),
    # ("am Wochenende", "le week-end", "no fim de semana", "in het weekend", "на выходных" are as
    # often a habit or a weekend to come: only the last one is read)
    ("nuit anoche stanotte vannacht zeszlej zeszłej ночі", r"\b(?:cette\s+nuit|anoche|stanotte|vannacht"
     r"|zesz[łl]ej\s+nocy|минулоі\s+ночі)\b", " last night "),
    ("matin manana stamattina stamani mattina manha vanochtend vanmorgen",
     r"\b(?:ce\s+matin|esta\s+manana|stamattina|stamani|questa\s+mattina|esta\s+manha|vanochtend|vanmorgen)\b",
     " this morning "),
    # last / this week, month, year
    (_WEEK_WORDS,
     r"\b(?:(?:letzte[nr]?|vergangene[nr]?)\s+woche|la\s+semaine\s+(?:derniere|passee)|(?:la\s+)?semana\s+pasada"
     r"|(?:la\s+)?settimana\s+scorsa|(?:a\s+)?semana\s+passada|(?:vorige|afgelopen)\s+week"
     r"|на\s+прошлои\s+неделе|прошлую\s+неделю"
     r"|w\s+" + _PL_LAST + r"\s+tygodniu|(?:на\s+)?минул(?:ого|ому)\s+тижн[яі])\b",
     " last week "),
    (_WEEK_WORDS,
     r"\b(?:diese[rn]?\s+woche|cette\s+semaine|esta\s+semana|questa\s+settimana|deze\s+week|на\s+этои\s+неделе"
     r"|w\s+tym\s+tygodniu|(?:на\s+)?ць(?:ого|ому)\s+тижн[яі])\b",
     " this week "),
    (_MONTH_SPAN_WORDS,
     r"\b(?:(?:letzte[nm]|vergangene[nm])\s+monat|le\s+mois\s+(?:dernier|passe)|(?:el\s+)?mes\s+pasado"
     r"|(?:il\s+)?mese\s+scorso|(?:o\s+)?mes\s+passado|(?:vorige|afgelopen)\s+maand|в\s+прошлом\s+месяце"
     r"|w\s+" + _PL_LAST + r"\s+miesiacu|минулого\s+місяця)\b",
     " last month "),
    (_MONTH_SPAN_WORDS,
     r"\b(?:diese[nm]?\s+monat|ce\s+mois(?:-ci)?|este\s+mes|questo\s+mese|deze\s+maand|в\s+этом\s+месяце"
     r"|w\s+tym\s+miesiacu|цього\s+місяця)\b",
     " this month "),
    ("jahr annee an dernier ano anno jaar году roku року",  # "l'an dernier": reached through "dernier"
     r"\b(?:(?:letztes|vergangenes)\s+jahr|l'annee\s+derniere|l'an\s+dernier|el\s+ano\s+pasado"
     r"|l'anno\s+scorso|(?:o\s+)?ano\s+passado|vorig\s+jaar|в\s+прошлом\s+году|w\s+" + _PL_LAST + r"\s+roku"
     r"|минулого\s+року)\b", " last year "),
    # seasons, this year, a few months ago (ADR 208)
    (_SEASONS,
     rf"\b(?:(?:im\s+)?(?:letzten|vergangenen)\s+{_S}|(?:l'|le\s+){_S}\s+dernier"
     rf"|{_S}\s+(?:pasad[oa]|scors[oa]|passad[oa])|(?:vorige?|afgelopen)\s+{_S}|прошл(?:ым|ои|ого)\s+{_S}"
     rf"|(?:zesz[łl]|ubieg[łl])(?:ego|ej)\s+{_S}|минул(?:ого|оі)\s+{_S})\b",
     _last_season),
    (_SEASONS,
     rf"\b(?:(?:diesen|in\s+diesem)\s+{_S}|cet?\s+{_S}|(?:n?est[ea]|questa)\s+{_S}|quest'\s*{_S}"
     rf"|(?:deze|dit)\s+{_S}|(?:этим|этои)\s+{_S}|te(?:go|j)\s+{_S}|(?:цього|цієі)\s+{_S})\b",
     _this_season),
    ("jahr annee ano anno jaar году roku року",
     r"\b(?:(?:dieses|in\s+diesem)\s+jahr|cette\s+annee|n?este\s+ano|quest'\s*anno|dit\s+jaar|в\s+этом\s+году"
     r"|w\s+tym\s+roku|цього\s+року)\b",
     " this year "),
    ("il", r"\bil\s+y\s+a\s+un\s+an\b", " a year ago "),
    ("paar einigen wenigen quelques unos algunos pocos qualche alcuni pochi alguns uns poucos enkele несколько "
     "пару kilka pare кілька",
     r"\b(?:vor\s+(?:ein\s+paar|einigen|wenigen)\s+monaten|il\s+y\s+a\s+quelques\s+mois"
     r"|hace\s+(?:unos|algunos|pocos|unos\s+pocos)\s+meses|(?:qualche\s+mese|(?:alcuni|pochi)\s+mesi)\s+fa"
     r"|ha\s+(?:alguns|uns|poucos)\s+meses|(?:alguns|uns|poucos)\s+meses\s+atras"
     r"|(?:een\s+paar|enkele)\s+maanden\s+geleden|(?:несколько|пару)\s+месяцев\s+назад"
     r"|(?:kilka|pare)\s+miesiecy\s+temu|(?:кілька|пару)\s+місяців\s+тому)\b",
     " a few months ago "),
    # N days / weeks / months / years ago
    (_UNITS, rf"\b(?:vor|il\s+y\s+a|hace|ha)\s+{_N}\s+{_U}\b", _ago),
    (_UNITS, rf"\b{_N}\s+{_U}\s+(?:fa|atras|geleden|назад|temu|тому)\b", _ago),
    (_UNITS, rf"\b{_U}\s+(?:назад|temu|тому)\b", _ago),  # "год назад", "rok temu": a year ago
    # a weekday asked about: "letzten Freitag", "vendredi dernier", "el viernes pasado"
    (_DAYS, rf"\b(?:letzten|vergangenen|el\s+pasado|(?:vorige|afgelopen))\s+{_D}\b", _last_weekday),
    (_DAYS, rf"\b{_D}\s+(?:dernier|pasado|scorso|passado|passada)\b", _last_weekday),
    (_DAYS, rf"\b(?:el|o|a)\s+{_D}\s+(?:pasado|passado|passada)\b", _last_weekday),
    (_DAYS, rf"\bв\s+прошл(?:ую|ыи|ое)\s+{_D}", _last_weekday),
    (_DAYS, rf"\bw\s+(?:zesz[łl][ya]|ubieg[łl][ya]|ostatni[a]?)\s+{_D}\b", _last_weekday),
    (_DAYS, rf"\b(?:(?:в|у)\s+)?минул(?:ого|оі|ии|у)\s+{_D}\b", _last_weekday),
    (_DAYS, rf"\b(?:am|op|в|во|w|у)\s+{_D}\b", _on_weekday),
    # a date with a month's name, a month and year, a month
    (_MONTH_WORDS, rf"\b(?P<day>\d{{1,2}})(?:\.|er)?\s+(?:de\s+)?{_M}(?:\s+(?:de\s+)?{_Y})?\b", _day_month),
    (_MONTH_WORDS, rf"\b{_M}\s+(?:de\s+)?{_Y}\b", _month_year),
    (_MONTH_WORDS, rf"\b(?P<prep>im|in|en|a|em|в|w|у)\s+{_M}\b", _in_month),
    # since
    ("seit depuis desde sinds", r"\b(?:seit|depuis|desde|sinds)\b", " since "),
    (_DAYS, rf"\b(?:с|od|з)\s+{_D}\b", _since_weekday),
    (_DAYS, rf"\bsince\s+{_D}\b", _since_weekday),
]  # fmt: skip
_PART_OF_A_BARE_YEAR = re.compile(
    rf"\b{_AT}(?P<part>" + "|".join(sorted(_PART_ALSO_ENGLISH, key=len, reverse=True)) + rf")\s*-?\s*{_OF_YEAR}\b"
)
_RULES: list[tuple[frozenset[str], re.Pattern[str], Replacement]] = [
    (frozenset(_split(needs)) if isinstance(needs, str) else needs, re.compile(p), r) for needs, p, r in _TABLE
]

# French "hier" is yesterday, German and Dutch "hier" is here: it is read as a day only in a query
# that says a French function word and none of German or Dutch.
_HIER = re.compile(r"\bhier\b")
_FRENCH = frozenset(_split("le la les une des est qu que nous vous avons avez ont ce cette dans pas mais on je fait"))
_GERMAN_DUTCH = frozenset(
    _split("der die das und ist wir ich du nicht haben sind mit auf fur het een wij ik niet hebben wat")
)

# Every word a rule needs, but those English says often ("week", "an", "fine": the rules that name
# them are reached through the word beside them), and French "hier" (read below): a query without
# any of them is left as it was.
_ENGLISH_TOO = frozenset(_split("week an fine"))
_NEEDED = frozenset().union(*(needs for needs, _, _ in _RULES)) - _ENGLISH_TOO | {"hier"} | _PART_ALSO_ENGLISH
_WORD = re.compile(r"[^\W\d_]+")
_APOSTROPHE_IN_WORD = re.compile(r"(?<=[а-яіїєґ])['’](?=[а-яіїєґ])")


@lru_cache(maxsize=256)
def in_english(text: str) -> str | None:
    """``text`` with its time phrases in English (lower case, without accents), or ``None`` when it
    has none of the words a phrase needs (then ``text`` is read as it is).

    Cached: a recall reads its query's period and then the period's numbers (``date_numbers``)
    from the same text, and a turn's query is asked again on a cache miss of the block."""
    plain = fold(text)  # lower case without accents: "März" is read as "marz", "lunedì" as "lunedi"
    if "week-end" in plain:  # French writes "week-end": one word, as the rules and the needed words have it
        plain = plain.replace("week-end", "weekend")
    if "'" in plain or "’" in plain:  # Ukrainian writes an apostrophe inside a word: "п'ятниця", "п'ять"
        plain = _APOSTROPHE_IN_WORD.sub("", plain)
    words = frozenset(_WORD.findall(plain))
    if _NEEDED.isdisjoint(words):
        return None
    if "hier" in words and not _FRENCH.isdisjoint(words) and _GERMAN_DUTCH.isdisjoint(words):
        plain = _HIER.sub(" yesterday ", plain)
    if not _PART_ALSO_ENGLISH.isdisjoint(words) and not OTHER_LANGUAGE_WORDS.isdisjoint(words):
        plain = _PART_OF_A_BARE_YEAR.sub(_year_part, plain)  # "begin 2025", "fin 2025", "mi-2025" (ADR 217)
    for needs, pattern, replacement in _RULES:
        if not needs.isdisjoint(words):
            plain = pattern.sub(replacement, plain)
    return plain
