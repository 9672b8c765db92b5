"""A query word no memory says is searched by its beginning (ADR 185).

The index holds English Porter stems. A word the bank never says finds nothing, however close it
is to one it does say:

- a typo: "postgrse", "kubernets", "databse";
- an inflection Porter does not know: French "déploie" beside "déploiements", German "Sitzung"
  beside "Sitzungen", "verwenden" beside "verwendet".

Without the ``[semantic]`` extra nothing else would find them, and the extra's static vectors do
not place an inflection near its forms. Such a word, when its stem has at least :data:`MIN_STEM`
letters, is searched by the bm25 side instead by the first ``max(5, len − 2)`` letters of its stem,
as an FTS5 prefix query, provided some unit of the bank starts a word that way. A word the bank
says is never touched, so a prompt whose words are all known searches exactly as before. The
query's vectors (ADR 176) still come from the word itself.
"""

from __future__ import annotations

from collections.abc import Callable

from .local_script import is_script_term
from .local_text import PREFIX_MARK, is_prefix_term, term_key

MIN_STEM = 6
KEEP_AT_LEAST = 5


def prefix_term(term: str) -> str | None:
    """The prefix term searched for ``term``, or None: a script term, a term of several tokens
    (``foo_bar``), a stem shorter than :data:`MIN_STEM` or one that is not all letters."""
    if is_script_term(term) or is_prefix_term(term):
        return None
    key = term_key(term)
    if len(key) != 1 or len(key[0]) < MIN_STEM or not key[0].isalpha():
        return None
    stem = key[0]
    return stem[: max(KEEP_AT_LEAST, len(stem) - 2)] + PREFIX_MARK


def with_prefixes(terms: list[str], counts: Callable[[list[str]], list[int]]) -> list[str]:
    """``terms`` with each word no unit says replaced by its prefix term when that one matches.

    ``counts`` gives each term's matches in the bank (the search's capped counts, which a large
    bank's search reads anyway). Only words that could be widened are counted here: a prompt of
    short words costs no statement.
    """
    widenable = {term: prefix for term in terms if (prefix := prefix_term(term)) is not None}
    if not widenable:
        return terms
    said = dict(zip(widenable, counts(list(widenable)), strict=True))
    out: list[str] = []
    for term in terms:
        prefix = widenable.get(term) if said.get(term, 1) == 0 else None
        if prefix is not None and prefix not in out and prefix not in terms and counts([prefix])[0] > 0:
            out.append(prefix)
        else:
            out.append(term)
    return out
