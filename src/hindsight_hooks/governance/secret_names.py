"""Redaction of values under secret *names*: ``password = …``, ``"token": "…"``, ``--api-key …``.

The name says "secret", the value decides: a literal or a credential-looking word is
redacted, code is kept (``password = get_password()`` survives; see ``secret_lexicon`` and
ADR-009). Works on raw text and on JSON text (escaped quotes ``\\"``), never redacting
across a bare ``"`` so JSON stays valid.

The scan is linear: every secret word in the text is located once, its key bounds and
separator are computed once, and "is another ``name=`` swallowed by this value?" questions are
answered from precomputed next/previous tables instead of rescanning.
"""

from __future__ import annotations

import bisect
import re
from typing import NamedTuple

from .secret_lexicon import (
    HEADER_REST,
    REDACTED,
    SECRET_WORD,
    SEPARATOR,
    cut_before_trailing_name,
    is_placeholder,
    is_secret_key,
    is_weak_secret,
    is_word_shaped,
    unquoted_is_code,
    value_follows,
)

_KEY_CHARS = re.compile(r"[A-Za-z0-9_.\-]{0,64}")
_CLI_SEPARATOR = re.compile(r"[ \t]+")
_QUOTED_OPEN = re.compile(r"[bBrRuUfF]{0,2}(\\*[\"'`])")
_UNQUOTED_RUN = re.compile(r"[^\s\"'`,;\\)\]}<]++")
# A scheme word followed by a separator is a name (``Authorization=token = os.environ[…]``).
_AUTH_SCHEME = re.compile(r"(?i)(?:basic|digest|token|negotiate|ntlm|bot|apikey|aws4-hmac-sha256)[ \t]+(?=[^\s=:])")
_AUTH_REST = re.compile(HEADER_REST)
_BARE_QUOTE = re.compile(r'(?<!\\)"')
_LEADING_QUOTES = re.compile(r"[\\\"'` \t]*")
QUOTED_MAX_CHARS = 65536
_BODY_NOT_A_VALUE = frozenset(",;:)]}+%")


class _Key(NamedTuple):
    start: int  # first char of the name
    end: int  # char after the name
    value_at: int  # where the value starts (after the separator), or -1


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.words = list(SECRET_WORD.finditer(text))
        self.starts = [m.start() for m in self.words]
        self._rev = text[::-1] if self.words else ""
        self.keys = [self._key(i, 0) for i in range(len(self.words))]
        n = len(self.words)
        # next_sep[i]: first j >= i whose key has a value; prev_sep[i]: last j <= i.
        self.next_sep = [n] * (n + 1)
        for i in range(n - 1, -1, -1):
            k = self.keys[i]
            self.next_sep[i] = i if k is not None and k.value_at >= 0 else self.next_sep[i + 1]
        self.prev_sep = [-1] * n
        last = -1
        for i in range(n):
            k = self.keys[i]
            if k is not None and k.value_at >= 0:
                last = i
            self.prev_sep[i] = last
        self.out: list[str] = []
        self.pos = 0
        self._run = (-1, -1)
        self.cut = False

    # -- keys -------------------------------------------------------------------------------------
    def _key(self, i: int, floor: int) -> _Key | None:
        """The secret name around word ``i`` (not reaching before ``floor``) and its separator."""
        text = self.text
        m = self.words[i]
        back = _KEY_CHARS.match(self._rev, len(text) - m.start())
        start = max(floor, m.start() - (back.end() - back.start() if back else 0))
        fwd = _KEY_CHARS.match(text, m.end())
        end = fwd.end() if fwd else m.end()
        name = text[start:end].strip(".-")
        if not name or not is_secret_key(name):
            return None
        sep = SEPARATOR.match(text, end)
        if sep is not None:
            return _Key(start, end, sep.end())
        if "--" in text[start : m.start()] and (cli := _CLI_SEPARATOR.match(text, end)):
            return _Key(start, end, cli.end())  # --password hunter2
        return _Key(start, end, -1)

    def _nested_key_start(self, start: int, end: int) -> int | None:
        """Where a value run swallowed the next ``name=`` pair, so that pair is judged alone."""
        j = self.next_sep[bisect.bisect_left(self.starts, start)]
        if j >= len(self.words):
            return None
        key = self.keys[j]
        if key is None or self.starts[j] >= end or key.end > end:
            return None
        # Cut at the name's last secret word: characters glued in front of the name
        # (``=a0b1password = …``) may be the value's own.
        return self.starts[bisect.bisect_left(self.starts, key.end) - 1]

    def _ends_with_key(self, start: int, end: int) -> bool:
        """Whether ``text[start:end]`` ends with ``name =`` (a label, not a value)."""
        i = bisect.bisect_left(self.starts, end) - 1
        j = self.prev_sep[i] if i >= 0 else -1
        if j < 0 or self.starts[j] < start:
            return False
        key = self.keys[j]
        if key is None or key.value_at < end:
            return False
        # A label reads as a name (words, not ``a0b1TOKEN``): glued characters are a value's tail.
        name = re.sub(r"[.\-]", "_", self.text[max(start, key.start) : min(end, key.end)])
        if not is_word_shaped(name):
            return False
        if key.end < end:
            return True  # "Password: " inside the quotes: a prompt or a label
        # The body *is* the name and its separator follows the quote (``"token": …``): a label
        # only if a value follows; ``password = "a0b1TOKEN":`` at a line end is a value. In JSON
        # text the line may end as ``\n`` or at the bare quote closing the string.
        return value_follows(self.text, key.value_at)

    def _starts_with_key(self, start: int, end: int) -> bool:
        """Whether ``text[start:end]`` opens with ``name:``/``name=`` (maybe quoted) and its value."""
        lead = _LEADING_QUOTES.match(self.text, start, end)
        if lead is not None:
            start = lead.end()
        i = bisect.bisect_left(self.starts, start)
        while i < len(self.words) and self.starts[i] < min(end, start + 80):
            key = self.keys[i]
            if key is not None and key.start == start:
                # ``"0Authorization: …"`` is no header: the ``0`` glued to the name is a value
                # fragment, as a second pass (seeing the body unterminated) would judge it.
                name = re.sub(r"[.\-]", "_", self.text[start : key.end])
                return 0 <= key.value_at < end and (self.starts[i] == start or is_word_shaped(name))
            i += 1
        return False

    # -- the scan ---------------------------------------------------------------------------------
    def run(self) -> str:
        for i, m in enumerate(self.words):
            if m.start() < self.pos:
                continue
            key = self.keys[i]
            if key is not None and key.start < self.pos:
                key = self._key(i, self.pos)
            if key is not None and key.value_at >= 0:
                self._value(key.value_at, m.group(0), name=self.text[key.start : key.end])
        if not self.out:
            return self.text
        self.out.append(self.text[self.pos :])
        return "".join(self.out)

    def _emit(self, start: int, end: int) -> None:
        self.out.append(self.text[self.pos : start])
        self.out.append(REDACTED)
        self.pos = end

    def _run_end(self, v: int) -> int:
        """The end of an unquoted value at ``v``, stopping before a swallowed ``name=`` pair."""
        rs, re_ = self._run
        if rs <= v < re_:
            end = re_
        else:
            u = _UNQUOTED_RUN.match(self.text, v)
            end = u.end() if u else v
            self._run = (v, end)
        nested = self._nested_key_start(v, end)
        if nested is not None:
            end = nested
            while end > v and self.text[end - 1] in ":=-_.":
                end -= 1
            self.cut = True
        return end

    def _value(self, v: int, keyword: str, depth: int = 0, name: str = "") -> None:
        text = self.text
        if text.startswith("[REDACTED", v):
            return
        if keyword.lower() == "authorization" and (scheme := _AUTH_SCHEME.match(text, v)):
            # "Authorization: Basic …": keep the scheme, redact the credentials to the end of the
            # line or of the quoted string holding the header.
            rest = _AUTH_REST.match(text, scheme.end())
            stop = cut_before_trailing_name(text, scheme.end(), rest.end()) if rest else scheme.end()
            if stop > scheme.end() and not text.startswith("[REDACTED", scheme.end()):
                self.out.append(text[self.pos : scheme.end()])
                self.out.append(REDACTED)
                self.pos = stop
            return
        q = _QUOTED_OPEN.match(text, v)
        if q:
            self._quoted(q.end(), q.group(1), depth)
            return
        self.cut = False
        end = self._run_end(v)
        open_mark = text.rfind("[REDACTED", v, end)
        if open_mark >= 0 and text.startswith("]", end) and is_placeholder(text[v : end + 1]):
            end += 1  # the run stopped inside an earlier rule's placeholder: it is only that
        # A run cut before a swallowed name is a value fragment glued to that name: redact it.
        if end > v and (self.cut or not unquoted_is_code(text[v:end], keyword, text[end : end + 4], name)):
            self._emit(v, end)
        elif self.cut and end == v and depth < 2:
            self._weak_value_read_as_name(v, depth)

    def _weak_value_read_as_name(self, v: int, depth: int) -> None:
        """``passwd=passwd1 : …``: the value itself reads as the next pair's name. A name made of
        a word and a trailing number is how weak passwords look (ADR-061): redact it, then judge
        what follows its separator as that pair's value."""
        j = bisect.bisect_left(self.starts, v)
        key = self.keys[j] if j < len(self.keys) else None
        if key is None or key.start != v or key.value_at < 0 or not is_weak_secret(self.text[v : key.end]):
            return
        self._emit(v, key.end)
        self._value(key.value_at, self.words[j].group(0), depth + 1)

    def _quoted(self, body_start: int, quote: str, depth: int) -> None:
        text = self.text
        if text.startswith("[REDACTED", body_start):
            return
        limit = min(len(text), body_start + QUOTED_MAX_CHARS)
        nl = text.find("\n", body_start, limit)
        if nl >= 0:
            limit = nl
        close = text.find(quote, body_start, limit)
        # An odd run of backslashes before the closing quote (or before the backslash of an
        # escaped closing quote ``\"``) escapes it: it belongs to the body.
        while close >= 0 and _odd_backslashes_before(text, close, body_start):
            close = text.find(quote, close + 1, limit)
        end = self._run_end(body_start) if close < 0 else close
        if not quote.endswith('"'):
            # In JSON text a bare double quote is structure: never redact across it.
            bare = _BARE_QUOTE.search(text, body_start, end)
            if bare is not None:
                end = bare.start()
        if end <= body_start or text[body_start].isspace() or text[body_start] in _BODY_NOT_A_VALUE:
            return  # empty, or the closing quote of a string that ended before any value
        if is_placeholder(text[body_start:end]) or self._ends_with_key(body_start, end):
            return  # a template, or a label such as "password = " whose key is judged alone
        if self._starts_with_key(body_start, end):
            return  # a header line such as 'Authorization: Basic …': its own pair is judged
        body = text[body_start:end]
        self._emit(body_start, end)
        if close >= 0 and depth < 2 and is_secret_key(body):
            # The "value" was itself a quoted name: ``x = "token": "…"``. Judge its value too.
            sep = SEPARATOR.match(text, close)
            if sep is not None:
                self._value(sep.end(), body, depth + 1)


def _odd_backslashes_before(text: str, i: int, floor: int) -> bool:
    n = 0
    while i - 1 - n >= floor and text[i - 1 - n] == "\\":
        n += 1
    return n % 2 == 1


def redact_named_values(text: str) -> str:
    """Redact values stored under secret names (see the module docstring)."""
    if not SECRET_WORD.search(text):
        return text
    return _Scanner(text).run()
