"""Find our structural tags however they are spelled: the *skeleton* of a text (ADR-064).

A model reads ``＜/hindsight‐memory＞`` (fullwidth brackets, U+2010 hyphen), ``</hindsight-
memory>`` with a zero-width space or a soft hyphen inside, or ``⟨/hindsight-memory⟩`` as the end
of the block just as it reads the real tag. The regex of docs/recall.md#escaping sees only the ASCII spelling, so
detection runs on a folded copy instead: per character, compatibility decomposition (NFKD, which
covers everything NFKC maps plus accented letters), case folding, removal of invisible
characters (format ``Cf`` such as U+200B–U+200D, U+2060, U+FEFF, U+00AD, and combining marks),
and a small table for look-alikes Unicode does not fold: dashes and minus signs → ``-``,
connector punctuation → ``_``, angle brackets and angle quotes → ``<``/``>``, slash-like signs →
``/``, and Cyrillic/Greek letters that look like the letters of our tag names.

The skeleton is used only to *find* tags; the text itself is changed in one place only, the
character that reads as ``<`` (it becomes ``&lt;``, as the real tag's does), so the rest of a
memory reaches the model as written.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from functools import lru_cache

# Characters Unicode does not fold to what they look like.
_LOOKALIKE_CLASSES: tuple[tuple[str, str], ...] = (
    ("<", "\u00ab\u02c2\u1438\u2039\u227a\u22d6\u2329\u27e8\u27ea\u2989\u2991\u29fc\u276c\u276e\u2770\u3008\u300a"),
    (">", "\u00bb\u02c3\u1433\u203a\u227b\u22d7\u232a\u27e9\u27eb\u298a\u2992\u29fd\u276d\u276f\u2771\u3009\u300b"),
    ("/", "\u2044\u2215\u2571\u27cb\u29f8\u3033\u1735"),
    ("-", "\u02d7\u2043\u2212\u2796"),
    # Cyrillic, Greek and Latin letters that pass for the letters of hindsight/memory/mental_models.
    ("a", "\u0430\u03b1\u0251"),
    ("d", "\u0501\u217e"),
    ("e", "\u0435\u0454\u04bd\u212e"),
    ("g", "\u0261\u0581"),
    ("h", "\u04bb\u0570\u043d"),
    ("i", "\u0131\u0456\u03b9\u026a\u0269\u2170"),
    ("l", "\u04cf\u0399\u2113\u217c\u0406"),
    ("m", "\u043c\u217f"),
    ("n", "\u0578\u043f"),
    ("o", "\u043e\u03bf\u0585\u03c3"),
    ("r", "\u0433\u027e"),
    ("s", "\u0455\u01bd"),
    ("t", "\u0442\u03c4"),
    ("y", "\u0443\u04af\u03b3"),
)
_LOOKALIKES: dict[str, str] = {ch: target for target, chars in _LOOKALIKE_CLASSES for ch in chars}
# Invisible letters and blanks that are not category Cf.
_INVISIBLE = frozenset("\u115f\u1160\u3164\uffa0\u2800\u034f")
_DROPPED_CATEGORIES = frozenset({"Cf", "Mn", "Me", "Cc", "Cs", "Co", "Cn"})

_TAG_NAME = r"(?:hindsight[-_]memor(?:y|ies)|mental[-_]models)"
#: A ``<`` that opens or closes one of our tags (docs/recall.md#escaping), on the skeleton.
STRUCTURAL_TAG = re.compile(r"<(?=\s*/?\s*" + _TAG_NAME + ")")
#: A whole wrapper tag (the quality filter's echo test, docs/recall.md#quality-filter), on the skeleton.
WRAPPER_TAG = re.compile(r"</?hindsight[-_]memor(?:y|ies)>")


@lru_cache(maxsize=8192)
def fold_char(ch: str) -> str:
    """The skeleton of one non-ASCII character ("" for invisible ones)."""
    if ch in _INVISIBLE:
        return ""
    out: list[str] = []
    for part in unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", ch).casefold()):
        if part.isascii():
            out.append(part.lower())
            continue
        category = unicodedata.category(part)
        if category in _DROPPED_CATEGORIES or part in _INVISIBLE:
            continue
        if part in _LOOKALIKES:
            out.append(_LOOKALIKES[part])
        elif category == "Pd":
            out.append("-")
        elif category == "Pc":
            out.append("_")
        else:
            out.append(part)
    return "".join(out)


_ASCII_RUN = re.compile(r"[\x00-\x7f]+|[^\x00-\x7f]")


class Skeleton:
    """The folded text plus a map from each skeleton position back to its original character."""

    def __init__(self, text: str) -> None:
        parts: list[str] = []
        self._starts: list[int] = []  # skeleton offset where each segment begins
        self._origins: list[int] = []  # original offset of that segment
        self._runs: list[bool] = []  # True: an ASCII run (1:1); False: one folded character
        pos = 0
        for match in _ASCII_RUN.finditer(text):
            piece = match.group()
            run = piece.isascii()
            folded = piece.lower() if run else fold_char(piece)
            if not folded:
                continue
            self._starts.append(pos)
            self._origins.append(match.start())
            self._runs.append(run)
            parts.append(folded)
            pos += len(folded)
        self.text = "".join(parts)

    def origin(self, index: int) -> int:
        """The offset in the original text of the character that produced skeleton ``index``."""
        seg = bisect.bisect_right(self._starts, index) - 1
        return self._origins[seg] + (index - self._starts[seg] if self._runs[seg] else 0)


def neutralise_tags(text: str) -> str:
    """Replace the ``<`` (or its look-alike) of every structural tag with ``&lt;``."""
    if text.isascii():
        lowered = text.lower()
        hits = [m.start() for m in STRUCTURAL_TAG.finditer(lowered)]
    else:
        skeleton = Skeleton(text)
        hits = [skeleton.origin(m.start()) for m in STRUCTURAL_TAG.finditer(skeleton.text)]
    if not hits:
        return text
    out: list[str] = []
    last = 0
    for at in sorted(set(hits)):
        out.append(text[last:at])
        out.append("&lt;")
        last = at + 1
    out.append(text[last:])
    return "".join(out)


def has_wrapper_tag(text: str) -> bool:
    """Whether ``text`` holds our wrapper tag in any spelling (an echo of our own block)."""
    folded = text.lower() if text.isascii() else Skeleton(text).text
    return WRAPPER_TAG.search(folded) is not None
