"""Search terms for text written without spaces (Chinese, Japanese, Korean, Thai, ...) and for emoji.

FTS5's ``unicode61`` tokenizer splits on spaces and punctuation, so ``東京サーバーを再起動`` is one
token and a search for ``東京`` cannot match it; emoji are separators to it, so ``🚀`` is never
indexed at all (ADR 115). The store therefore keeps, per unit, a third indexed column
``script_terms`` written by :func:`index_terms`:

- every maximal run of such script characters becomes its overlapping character *bigrams*, in
  order, followed by the run's last character alone (``東京サーバー`` → ``東京 京サ サー ーバ バー ー``).
  A query word is then a phrase of its bigrams (``サーバー`` → ``"サー ーバ バー"``), which matches
  exactly where the word occurs, and a one-character word is the prefix query ``"猫" *`` (every
  occurrence of a character starts a bigram, or is the last character of its run);
- every emoji becomes one token of its own: its code point moved into a private-use plane
  (``U+1F680`` → ``U+FF680``), which ``unicode61`` counts as a token character and no text the
  store holds uses.

Text is NFKC-normalised first (half-width katakana = full width) and combining marks inside the
runs are dropped (Thai vowel and tone marks, emoji variation selectors), on both sides alike.

Query terms made here carry ``MARK`` in front, so they travel through the same ``list[str]`` as
the word terms: :func:`expression` turns one into its FTS5 match expression (restricted to the
``script_terms`` column) and :func:`literal` gives the text whose presence in a unit means the
term is covered (the docs/backends.md#embedded-store coverage rule checks it by substring on :func:`normal_text`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

COLUMN = "script_terms"
MARK = "\x1f"  # a script term (phrase, prefix or emoji); never part of a word term
_PREFIX = "*"  # after MARK: a one-character prefix term
_EMOJI = "!"  # after MARK: an emoji term
_SHIFT_ASTRAL = 0xF0000 - 0x10000  # U+1xxxx → U+Fxxxx (plane 15, private use)
_SHIFT_BMP = 0x100000  # U+2xxx → U+102xxx (plane 16, private use)

# (first, last, class) — scripts whose words are not separated by spaces, or whose words carry
# particles (Korean), so that a word must be findable inside a longer run.
_RANGES: tuple[tuple[int, int, str], ...] = (
    (0x0E00, 0x0E7F, "thai"),
    (0x0E80, 0x0EFF, "lao"),
    (0x1000, 0x109F, "myanmar"),
    (0x1100, 0x11FF, "hangul"),
    (0x1780, 0x17FF, "khmer"),
    (0x3005, 0x3007, "han"),  # 々 〆 〇
    (0x3040, 0x309F, "hira"),
    (0x30A0, 0x30FA, "kata"),
    (0x30FC, 0x30FF, "kata"),  # ー ヽ ヾ ヿ (U+30FB ・ is punctuation)
    (0x3130, 0x318F, "hangul"),
    (0x31F0, 0x31FF, "kata"),
    (0x3400, 0x4DBF, "han"),
    (0x4E00, 0x9FFF, "han"),
    (0xA960, 0xA97F, "hangul"),
    (0xAC00, 0xD7FF, "hangul"),
    (0xF900, 0xFAFF, "han"),
    (0x20000, 0x3FFFF, "han"),
)
_EMOJI_RANGES = ((0x2300, 0x23FF), (0x2600, 0x27BF), (0x2B00, 0x2BFF), (0x1F000, 0x1FAFF))
_CANDIDATE = re.compile(
    "[\u0e00-\u0eff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff\u2300-\u23ff\u2600-\u27bf\u2b00-\u2bff"
    "\u3005-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7ff"
    "\uf900-\ufaff\uff61-\uff9f\U0001f000-\U0001faff\U00020000-\U0003ffff]"
)


def script_of(ch: str) -> str | None:
    """The script class of a letter or digit of a space-less script, else None."""
    cp = ord(ch)
    if cp < 0x0E00:
        return None
    for first, last, name in _RANGES:
        if first <= cp <= last:
            return name if unicodedata.category(ch)[0] in "LN" else None
    return None


def is_emoji(ch: str) -> bool:
    cp = ord(ch)
    return cp >= 0x2300 and any(lo <= cp <= hi for lo, hi in _EMOJI_RANGES) and unicodedata.category(ch) == "So"


def emoji_token(ch: str) -> str:
    """The private-use character that stands for an emoji in the index."""
    cp = ord(ch)
    return chr(cp + _SHIFT_ASTRAL) if cp >= 0x10000 else chr(cp + _SHIFT_BMP)


def has_script_text(text: str) -> bool:
    """Cheap pre-check: could :func:`index_terms` produce anything for ``text``?"""
    return _CANDIDATE.search(text) is not None


def normal_text(text: str) -> str:
    """NFKC without combining marks: the form both the index and the coverage check read."""
    text = unicodedata.normalize("NFKC", text)
    if text.isascii():
        return text
    return "".join(ch for ch in text if not unicodedata.category(ch).startswith("M"))


def _pieces(text: str) -> Iterator[tuple[str, str]]:
    """``("run", chars)`` for each run of script characters and ``("emoji", ch)``, in order."""
    run: list[str] = []
    for ch in text:
        if script_of(ch) is not None:
            run.append(ch)
            continue
        if run:
            yield "run", "".join(run)
            run = []
        if is_emoji(ch):
            yield "emoji", ch
    if run:
        yield "run", "".join(run)


def bigrams(run: str) -> list[str]:
    return [run[i : i + 2] for i in range(len(run) - 1)]


def index_terms(text: str) -> str:
    """The ``script_terms`` column of a unit: bigrams + last character per run, emoji tokens."""
    if not has_script_text(text):
        return ""
    tokens: list[str] = []
    for kind, piece in _pieces(normal_text(text)):
        if kind == "emoji":
            tokens.append(emoji_token(piece))
        else:
            tokens.extend(bigrams(piece))
            tokens.append(piece[-1])
    return " ".join(tokens)


def unit_script_terms(content: str, searched: str) -> str:
    """The ``script_terms`` column of a unit: from the text FTS5 indexes, its content and
    ``searched``, the part of its context the index holds (its turn terms, ADR 179)."""
    if not (has_script_text(content) or has_script_text(searched)):
        return ""
    return index_terms(f"{content}\n{searched}")


# -- query side ---------------------------------------------------------------------------------------


def _segments(run: str) -> Iterator[tuple[str, str]]:
    """A run cut where the script class changes: (class, text)."""
    start = 0
    for i in range(1, len(run) + 1):
        if i == len(run) or script_of(run[i]) != script_of(run[start]):
            yield script_of(run[start]) or "", run[start:i]
            start = i


def _segment_terms(cls: str, seg: str) -> list[str]:
    """Terms for one segment of a query (see :func:`query_terms`)."""
    if len(seg) == 1:
        return [MARK + _PREFIX + seg] if cls in ("han", "hangul") else []
    if cls in ("kata", "hira") or len(seg) == 2:
        return [MARK + seg]  # one word: the phrase of its bigrams
    return [MARK + b for b in dict.fromkeys(bigrams(seg))]  # a sentence in one run: its bigrams


def query_terms(query: str) -> list[tuple[int, str]]:
    """Script terms of a query with their positions in :func:`normal_text` of it.

    Katakana runs are one word (a phrase); a two-character run is one word; a one-character Han
    or Hangul run is a word too (``猫``, a prefix query); longer Han, Hangul and Thai runs are
    sentences or compounds written without spaces, so each of their bigrams is a term of its
    own and bm25 ranks units by how many, and how rare, the shared ones are. Hiragana is mostly
    grammar (particles, endings): its segments count only when the query has nothing else.
    """
    text = normal_text(query)
    strong: list[tuple[int, str]] = []
    weak: list[tuple[int, str]] = []
    pos = 0
    for kind, piece in _pieces(text):
        pos = text.index(piece, pos)
        if kind == "emoji":
            strong.append((pos, MARK + _EMOJI + piece))
        else:
            offset = pos
            for cls, seg in _segments(piece):
                terms = _segment_terms(cls, seg)  # the i-th bigram of a segment starts at offset + i
                (weak if cls == "hira" else strong).extend((offset + i, t) for i, t in enumerate(terms))
                offset += len(seg)
        pos += len(piece)
    return strong or weak


def without_script(text: str) -> str:
    """``text`` with every script character and emoji blanked out (for the word terms)."""
    if not has_script_text(text):
        return text
    return "".join(" " if script_of(ch) is not None or is_emoji(ch) else ch for ch in text)


def is_script_term(term: str) -> bool:
    return term.startswith(MARK)


def literal(term: str) -> str:
    """The text a unit must contain (in :func:`normal_text` form) for ``term`` to be covered."""
    body = term[len(MARK) :]
    return body[1:] if body[:1] in (_PREFIX, _EMOJI) else body


def expression(term: str) -> str:
    """The FTS5 match expression of a script term, on the ``script_terms`` column only."""
    body = term[len(MARK) :]
    if body.startswith(_PREFIX):
        return f'{COLUMN} : "{body[1:]}" *'
    if body.startswith(_EMOJI):
        return f'{COLUMN} : "{emoji_token(body[1:])}"'
    return f'{COLUMN} : "{" ".join(bigrams(body))}"'
