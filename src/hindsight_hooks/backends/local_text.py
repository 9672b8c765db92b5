"""Query terms, FTS5 match expressions and a Python twin of FTS5's ``porter unicode61`` tokenizer.

The local store ranks with SQLite FTS5 (docs/backends.md#embedded-store). Two things need to see text the
way FTS5 sees it without asking SQLite row by row:

- the query terms (lower-case ``\\w+`` tokens minus stop words and 1-char tokens, at most 12),
  quoted and OR-ed into a MATCH expression;
- the coverage rule ("with ≥3 terms, drop units covering < 25 % of the terms"), which must
  count a term as covered exactly when FTS5 matched it — ``deploying`` covers ``deployed``
  because both stem to ``deploy``. FTS5 does not report which phrase matched a row, so we ask
  it to ``highlight()`` the matched tokens and stem those here with the same Porter variant
  SQLite uses (``fts5_tokenize.c``), quirks included; the tests check this twin against
  SQLite itself on thousands of real words.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from functools import lru_cache

from .local_script import expression as script_expression
from .local_script import has_script_text, is_script_term, normal_text, without_script
from .local_script import literal as script_literal
from .local_script import query_terms as script_query_terms

MAX_TERMS = 12
PREFIX_MARK = "*"
"""Ends a word term searched by its beginning (``local_prefix``, ADR 185); no ``\\w+`` token has it."""
ROLE_LABEL_MAX = 40  # a unit's ``role:`` label is one word of at most this many characters
_WORD = re.compile(r"\w+")
_FTS_TOKEN = re.compile(r"[^\W_]+")
_ASCII_TOKEN = re.compile(r"[a-z0-9]+")  # the same runs in folded ASCII text, found ~40 % faster
_PORTER_MAX = 64

_STOP_TEXT = """
    a about above after again against all also am an and any are as at be because been before being
    below between both but by can could did do does doing done down during each else etc even ever
    every few for from further get gets got had has have having he her here hers herself him himself
    his how however i if in into is it its itself just let lets may me might more most much must my
    myself no nor not now of off on once only or other our ours ourselves out over own per please
    quite rather really same shall she should since so some such than that the their theirs them
    themselves then there these they this those though through thus to too under until up upon us
    very via was we were what whatever when where whether which while who whom whose why will with
    within without would yes yet you your yours yourself yourselves ok okay im ive id youre dont
    doesnt didnt isnt arent wasnt cant wont thats theres lets s t
"""
# The function words of the other languages our users write in most (German, French, Spanish,
# Italian, Portuguese, Dutch; ADR 191; Russian, ADR 194; Polish and Ukrainian, ADR 198): without them
# "kannst du die README übersetzen?" matched every German memory by "du" and "die". Left out on
# purpose, because each is also a word a developer searches by: ai, bin, ca, ci, con, du (the
# command) stays in for German, ed, eu, era, go, hat, io, man, mon, nas, one, op, os, pod, pour, sa,
# ses, sin, son, su, ten, ti, ton, vi, war. Polish words are listed with and without their accents,
# as people type them both ways.
_OTHER_STOP_TEXT = """
    der das den dem des ein eine einen einem einer eines und oder aber nicht kein keine ist sind
    wir ihr sie er es ich du mich mir dich dir uns euch sich mit von zu zum zur auf für fur im ins
    am aus bei nach vor über uber unter durch wie wo wer wann warum weil dass daß ob wenn als auch
    noch schon nur sehr hier da dann doch mal bitte kannst kann können konnen soll sollte sollten
    muss müssen musst wird werden wurde wurden habe haben hast hatte sein seine ihre unser unsere
    dies diese dieser dieses jetzt gibt würde würdest wäre die
    le la les un une des de et ou mais ne pas plus est sont être etre été avoir avons avez ont
    je tu il elle nous vous ils elles ce cet cette ces ma mes ta tes notre nos votre vos leur leurs
    qui que quoi quand comment pourquoi où dans sur par avec sans sous chez au aux se lui te moi toi
    ça cela peux peut pouvez faut très tres aussi alors donc comme si qu
    el los las unos unas del al pero ser está esta están estan estar fue hay ha han hemos yo tú él
    ella nosotros ellos ellas usted ustedes le lo mi mis sus nuestro nuestra qué cuando cuándo como
    cómo donde dónde para sobre entre también tambien muy más mas ya este estos estas ese esa eso
    esto puedes puede podemos debemos debe sí
    il gli uno di della dei delle da dal nel nella tra fra non sono essere ho hai abbiamo avete
    hanno lei noi voi loro si che chi cosa come dove perché perche anche molto più piu questo
    questa questi queste quello quella puoi può possiamo
    um uma uns umas do dos das na em ao aos não nao são sao está estão foi há ele eles você vocês
    voce voces lhe meu minha seu sua nosso nossa quando onde porque por com sem muito mais já ja
    isso isto pode
    het een en maar niet geen zijn ben bent heb hebt heeft hebben wij jij je ik hij zij ze ons
    jullie mijn jouw haar onze met van voor aan uit bij naar door dat dit deze wat wie waar wanneer
    waarom hoe ook nog al wel er daar dan kun kunnen moet moeten zal zou worden wordt
    и в во на не что чтобы как а но или да нет же ли бы то это этот эта эти этого этой тот та те мы я
    ты вы он она оно они нас нам нами вас вам меня мне тебя тебе его ему её ее ей их им мой моя моё
    мои твой наш наша наше наши ваш ваша свой своя своё свои с со к ко у о об от до из за по для про
    при под над без через после перед между был была было были будет быть есть можно нужно надо может
    можешь можете могу пожалуйста также тоже ещё еще уже только так там тут здесь где когда куда почему
    зачем какой какая какое какие какую каким кто чем чего сейчас теперь тогда очень
    czy jak jaki jaka jakie jakiego co coś cos kto kiedy gdzie dlaczego czemu ile który która które
    ktory ktora ktore którego ktorego nie tak ta tego tej tym tych jest są był była było byli były
    byl byla bylo będzie bedzie być byc mam masz mamy macie mają maja ja ty on ona ono wy oni mnie
    ciebie cię cie jej mu nam wam ich im się sie mój moj moja moje nasz nasza nasze twój twoj twoja
    wasz swój swoj że ze ale lub albo oraz więc wiec bo też tez już juz jeszcze tylko bardzo tutaj tam
    teraz potem możesz mozesz może moze możemy mozemy można mozna proszę prosze trzeba musimy musisz
    powinniśmy powinnismy jeśli jesli gdy żeby zeby aby od po za przez przy nad przed między miedzy dla
    bez
    що як це цей ця ці цього цієї той те ті ми ти ви він вона воно вони вас вам мене мені тебе тобі
    його йому її їй їх їм мій моя моє мої твій наш наша наше наші ваш ваша свій своя своє свої із зі
    від для про при під над без через після перед між був була було були буде бути є можна треба
    потрібно може можеш можете можу будь ласка також теж ще вже лише тільки так там тут де коли куди
    чому навіщо який яка яке які хто чим чого зараз тепер тоді дуже чи ні або але
"""
STOP_WORDS: frozenset[str] = frozenset(_STOP_TEXT.split()) | frozenset(_OTHER_STOP_TEXT.split())
OTHER_LANGUAGE_WORDS: frozenset[str] = frozenset(_OTHER_STOP_TEXT.split()) - frozenset(_STOP_TEXT.split())
"""The function words of those six languages that English does not have: a text that says none
of them is not in one of them, so their phrase lists need not be searched (``local_time``)."""


def says_other_language_words(text: str) -> bool:
    """Does ``text`` say a function word of German, French, Spanish, Italian, Portuguese or Dutch?"""
    return not OTHER_LANGUAGE_WORDS.isdisjoint(_WORD.findall(text.lower()))


def said_in_english(text: str) -> bool:
    """Is ``text`` English only (ASCII, no other language's function words)? Then a search of the
    statements it asks about names only their English words: each word an FTS5 query names is
    looked up in every segment of the index (ADRs 220, 223, 230)."""
    return text.isascii() and not says_other_language_words(text)


def query_terms(query: str) -> list[str]:
    """The docs/backends.md#embedded-store terms: distinct lower-case ``\\w+`` tokens, no stop words or 1-char tokens,
    ≤12.

    Tokens made only of underscores are dropped too: FTS5 would tokenize them to nothing.
    "Distinct" is as the porter index sees them (ADR 055): a token whose stems equal an earlier
    term's (``schedule``/``scheduler``, ``pin``/``pinned``) is the same term — kept twice it would
    be OR-ed and weighed twice by bm25 and counted twice by the coverage rule.

    Text in scripts written without spaces and emoji give script terms (``local_script``,
    ADR 115) in their place in the query; they count towards the 12 like any term.
    """
    found: list[tuple[int, str]] = []
    masked = without_script(normal_text(query)) if has_script_text(query) else query
    keys: set[tuple[str, ...]] = set()
    seen: set[str] = set()
    for match in _WORD.finditer(masked.lower()):
        raw = match.group()
        if raw in seen or not _is_weighed(raw):
            continue
        key = term_key(raw)
        if key in keys:  # same stems as an earlier term: FTS5 would match (and weigh) it twice
            continue
        keys.add(key)
        seen.add(raw)
        found.append((match.start(), raw))
        if len(found) == MAX_TERMS:  # a later word can never be among the first 12 by position
            break
    if masked is not query:
        for pos, term in script_query_terms(query):
            if term not in seen:
                seen.add(term)
                found.append((pos, term))
        found.sort()
    return [term for _, term in found[:MAX_TERMS]]


def weighed_tokens(text: str) -> Iterator[str]:
    """The lower-case tokens of ``text`` that :func:`query_terms` would weigh (no stop words, no
    1-char tokens), in order, repeats included; lazy, so a caller can stop at the first it needs.
    Text in scripts without spaces is not split here: such a caller asks :func:`query_terms`."""
    return (raw for match in _WORD.finditer(text.lower()) if _is_weighed(raw := match.group()))


def _is_weighed(raw: str) -> bool:
    """A lower-case ``\\w+`` token a query keeps: 2 characters or more, no stop word, and some
    letter or digit (FTS5 would tokenize ``__`` to nothing)."""
    return len(raw) >= 2 and raw not in STOP_WORDS and _FTS_TOKEN.search(raw) is not None


def without_role_label(text: str) -> str:
    """A unit's message without its ``role:`` label (every transcript unit has one; as a word it
    would pull every vector the same way and make any two units share it)."""
    head, sep, rest = text.partition(": ")
    return rest if sep and 0 < len(head) <= ROLE_LABEL_MAX and " " not in head else text


def content_words(text: str) -> str:
    """``text`` without its stop words (case kept, order kept), for embedding (ADR 116).

    A static embedding averages its tokens' vectors; "what", "do", "we" carry no topic and pull
    every text towards the same point. Text that is nothing but stop words is kept whole.
    """
    words = [w for w in _WORD.findall(text) if w.lower() not in STOP_WORDS]
    return " ".join(words) if words else text


def match_expression(terms: list[str]) -> str:
    """Each term as an FTS5 phrase (quoted word, or a script term's expression), joined with ``OR``."""
    return " OR ".join(term_expression(t) for t in terms)


def is_prefix_term(term: str) -> bool:
    """A word term searched by its beginning (ADR 185): its stem's first letters and :data:`PREFIX_MARK`."""
    return term.endswith(PREFIX_MARK) and not is_script_term(term)


def term_expression(term: str) -> str:
    """One term's FTS5 expression: a word is quoted (terms never contain quotes); a prefix term is
    a quoted prefix query, which FTS5 stems and then matches against the start of indexed stems."""
    if is_script_term(term):
        return script_expression(term)
    if is_prefix_term(term):
        return f'"{term[: -len(PREFIX_MARK)]}" *'
    return f'"{term}"'


def fold(text: str) -> str:
    """Lower-case and strip diacritics, like unicode61's default ``remove_diacritics=1``."""
    text = text.lower()
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def fts_tokens(text: str) -> list[str]:
    """Tokens as unicode61 splits them: runs of letters/digits, case- and diacritic-folded."""
    folded = fold(text)
    return (_ASCII_TOKEN if folded.isascii() else _FTS_TOKEN).findall(folded)


@lru_cache(maxsize=65536)
def porter_stem(token: str) -> str:
    """SQLite FTS5's Porter stemmer for one already-folded token (tokens <3 or >64 bytes pass)."""
    n_bytes = len(token.encode("utf-8"))
    if n_bytes < 3 or n_bytes > _PORTER_MAX:
        return token
    return _Porter(token).run()


def term_key(term: str) -> tuple[str, ...]:
    """The stems FTS5 indexes for one query term (a term like ``foo_bar`` is two tokens).

    A script term (ADR 115) is its own key: :class:`StemFinder` finds it by its literal text.
    """
    if term.isascii() and term.isalnum() and term.islower():  # most terms: one token, folded already
        return (porter_stem(term),)
    if is_script_term(term) or is_prefix_term(term):
        return (term,)
    return tuple(porter_stem(t) for t in fts_tokens(term))


class StemFinder:
    """Which of some wanted stems occur in a text, without tokenizing or stemming all of it.

    Porter only rewrites the end of a word: a token whose stem is ``s`` always starts with
    ``s[:-1]`` (the tests check this against SQLite on tens of thousands of words). So a fast
    substring search for each prefix finds the few places worth looking at, and only the
    tokens starting there are stemmed. This keeps the coverage rule cheap on long units.
    """

    def __init__(self, stems: frozenset[str]) -> None:
        self.stems = stems
        by_prefix: dict[str, set[str]] = {}
        self._literals = {stem: script_literal(stem) for stem in stems if is_script_term(stem)}
        # A prefix term (ADR 185) is found where a token's stem starts with the prefix as FTS5 stems it.
        self._starts = {key: porter_stem(key[: -len(PREFIX_MARK)]) for key in stems if is_prefix_term(key)}
        for stem in stems:
            if stem not in self._literals and stem not in self._starts:
                by_prefix.setdefault(stem[:-1], set()).add(stem)
        self._by_prefix = by_prefix

    def found(self, text: str) -> frozenset[str]:
        hits: set[str] = set()
        if self._literals:  # script terms (ADR 115): present when their text is, as the index has it
            normal = normal_text(text)
            hits.update(key for key, lit in self._literals.items() if lit in normal)
        folded = fold(text)
        for key, begins in self._starts.items():
            if self._starts_a_stem(folded, begins):
                hits.add(key)
        for prefix, wanted in self._by_prefix.items():
            if not prefix:
                hits.update(wanted & {porter_stem(t) for t in _FTS_TOKEN.findall(folded)})
                continue
            start = folded.find(prefix)
            while start != -1:
                if start == 0 or not _is_token_char(folded[start - 1]):
                    token = _TOKEN_AT.match(folded, start)
                    if token is not None:
                        stem = porter_stem(token.group())
                        if stem in wanted:
                            hits.add(stem)
                            if wanted <= hits:
                                break
                start = folded.find(prefix, start + 1)
        return frozenset(hits)

    @staticmethod
    def _starts_a_stem(folded: str, start: str) -> bool:
        """Whether a token of ``folded`` has a stem that begins with ``start`` (a stem keeps all of
        its token but the last letter, so the token begins with ``start`` less its last letter)."""
        probe = start[:-1]
        at = folded.find(probe)
        while at != -1:
            if at == 0 or not _is_token_char(folded[at - 1]):
                token = _TOKEN_AT.match(folded, at)
                if token is not None and porter_stem(token.group()).startswith(start):
                    return True
            at = folded.find(probe, at + 1)
        return False


def _is_token_char(ch: str) -> bool:
    return ch.isalnum()


_TOKEN_AT = re.compile(r"[^\W_]+")


# -- Porter, following fts5_tokenize.c ----------------------------------------------------------------

_STEP2 = (
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"), ("izer", "ize"),
    ("logi", "log"), ("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous"),
    ("ization", "ize"), ("ation", "ate"), ("ator", "ate"), ("alism", "al"), ("iveness", "ive"),
    ("fulness", "ful"), ("ousness", "ous"), ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"),
)  # fmt: skip
_STEP3 = (
    ("ical", "ic"), ("ness", ""), ("icate", "ic"), ("iciti", "ic"), ("ful", ""), ("ative", ""), ("alize", "al"),
)  # fmt: skip
_STEP4 = (
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou", "ism",
    "ate", "iti", "ous", "ive", "ize",
)  # fmt: skip


def _is_vowel(c: str, y_is_vowel: bool) -> bool:
    return c in "aeiou" or (y_is_vowel and c == "y")


def _gobble_vc(s: str, prev_cons: bool) -> int:
    """Length of the leading ``[C]*V+C`` run (0 when there is none), as fts5PorterGobbleVC."""
    cons = prev_cons
    i = 0
    n = len(s)
    while i < n:
        cons = not _is_vowel(s[i], cons)
        if not cons:
            break
        i += 1
    i += 1
    while i < n:
        cons = not _is_vowel(s[i], cons)
        if cons:
            return i + 1
        i += 1
    return 0


def _m_gt0(s: str) -> bool:
    return _gobble_vc(s, False) > 0


def _m_gt1(s: str) -> bool:
    n = _gobble_vc(s, False)
    return n > 0 and _gobble_vc(s[n:], True) > 0


def _m_eq1(s: str) -> bool:
    n = _gobble_vc(s, False)
    return n > 0 and _gobble_vc(s[n:], True) == 0


def _has_vowel(s: str) -> bool:
    return any(_is_vowel(c, i > 0) for i, c in enumerate(s))


def _ostar(s: str) -> bool:
    if not s or s[-1] in "wxy":
        return False
    mask = 0
    cons = False
    for c in s:
        cons = not _is_vowel(c, cons)
        mask = (mask << 1) + int(cons)
    return (mask & 7) == 5


class _Porter:
    __slots__ = ("w",)

    def __init__(self, word: str) -> None:
        self.w = word

    def _replace(self, rules: tuple[tuple[str, str], ...], cond: Callable[[str], bool]) -> None:
        w = self.w
        for suffix, repl in rules:
            if len(w) > len(suffix) and w.endswith(suffix):
                stem = w[: -len(suffix)]
                if cond(stem):
                    self.w = stem + repl
                return

    def run(self) -> str:
        w = self.w
        # Step 1a
        if w.endswith("s"):
            if len(w) >= 2 and w[-2] == "e":
                if (len(w) > 4 and w.endswith("sses")) or (len(w) > 3 and w.endswith("ies")):
                    w = w[:-2]
                else:
                    w = w[:-1]
            elif len(w) >= 2 and w[-2] != "s":
                w = w[:-1]
        # Step 1b
        removed = False
        if len(w) > 3 and w.endswith("eed"):
            if _m_gt0(w[:-3]):
                w = w[:-1]
        elif len(w) > 2 and w.endswith("ed"):
            if _has_vowel(w[:-2]):
                w = w[:-2]
                removed = True
        elif len(w) > 3 and w.endswith("ing") and _has_vowel(w[:-3]):
            w = w[:-3]
            removed = True
        if removed:
            if len(w) > 2 and w[-2:] in ("at", "bl", "iz"):
                w += "e"
            elif len(w) >= 2:
                c = w[-1]
                if not _is_vowel(c, False) and c not in "lsz" and c == w[-2]:
                    w = w[:-1]
                elif _m_eq1(w) and _ostar(w):
                    w += "e"
        # Step 1c
        if w.endswith("y") and _has_vowel(w[:-1]):
            w = w[:-1] + "i"
        self.w = w
        # Steps 2-4
        self._replace(_STEP2, _m_gt0)
        self._replace(_STEP3, _m_gt0)
        w = self.w
        for suffix in _STEP4:
            if len(w) > len(suffix) and w.endswith(suffix):
                stem = w[: -len(suffix)]
                ok = _m_gt1(stem) and (stem[-1:] in ("s", "t") if suffix == "ion" else True)
                if ok:
                    w = stem
                break
        # Step 5a
        if w.endswith("e"):
            stem = w[:-1]
            if _m_gt1(stem) or (_m_eq1(stem) and not _ostar(stem)):
                w = stem
        # Step 5b
        if len(w) > 1 and w.endswith("ll") and _m_gt1(w[:-1]):
            w = w[:-1]
        return w


# The verbs a question is built around that say nothing of what it asks: "which db do we *use*?",
# "how does auth *work*?", "what do we *need* for the release?" (their porter stems; ADR 205).
LIGHT_VERBS = frozenset(
    porter_stem(word)
    for word in ("use", "need", "want", "work", "like", "know", "think", "say", "tell", "seem", "mean", "happen")
)
