"""Secrets recognised by the *format* around them rather than by a secret word in their name.

Three formats (ADR-061):

- **Connection strings** — ``name=value;name=value`` (ADO.NET, ODBC, Azure storage and Service
  Bus). Their secret keys (``AccountKey``, ``SharedAccessKey``, ``Pwd``, …) are mostly not secret
  *words*, and a value runs to the next ``;`` and may hold spaces. A pair counts as part of a
  connection string only when a ``;`` touches it, and a plain value is judged like any value
  after a secret name, so ``password = req.body.password;`` (a statement) is not one.
- **Base64 auth fields** — ``"auth": "<base64>"`` (Docker ``config.json``), ``_auth=…``
  (``.npmrc``): a field named ``…auth`` whose value *decodes* to ``user:password``. The decode is
  the proof, so ``"auth": "oauth2"`` and ``auth = HTTPBasicAuth(…)`` are left alone.
- **Spaced labels** — ``auth token <hex>``, ``the API key is <hex>``: a credential label, no
  separator, then a long value shaped like a credential (several letter/digit changes), so
  prose such as ``token refresh happens hourly`` is never touched.

Every rule keeps the surrounding syntax, never redacts across a bare ``"`` or a backslash (JSON
text stays valid) and leaves a value that is already a placeholder alone (idempotence). Each
scan jumps between occurrences of a literal (``;``, ``auth``, a label word) instead of trying a
pattern at every position: linear, and cheap on text that holds none.
"""

from __future__ import annotations

import base64
import binascii
import re

from .secret_lexicon import REDACTED, cut_before_trailing_name, is_placeholder, unquoted_is_code

Span = tuple[int, int]


def _splice(text: str, spans: list[Span]) -> str:
    """``text`` with each (sorted, non-overlapping after the first) span replaced by ``[REDACTED]``."""
    if not spans:
        return text
    out: list[str] = []
    pos = 0
    for start, end in sorted(spans):
        if start >= pos:
            out.append(text[pos:start])
            out.append(REDACTED)
            pos = end
    out.append(text[pos:])
    return "".join(out)


# -- connection strings ---------------------------------------------------------------------------

_CONN_NAMES = (
    r"(?i:(?P<name>account[ _]?key|shared[ _]?access[ _]?(?:key|signature)|access[ _]?key|"
    r"(?:user[ _]?|account[ _]?)?password|pwd|client[ _]?secret|sas[ _]?token|secret))[ \t]*=[ \t]*"
)
_CONN_KEY = re.compile(_CONN_NAMES)
# Scans start at a literal ``;`` (the engine jumps between them): a secret pair after one, and a
# ``;`` followed by any pair, whose string's *first* pair is then looked at.
_PAIR_AFTER_SEMICOLON = re.compile(r";[ \t]*(?=" + _CONN_NAMES + ")")
_SEMICOLON_BEFORE_PAIR = re.compile(r";(?=[ \t]*[A-Za-z][A-Za-z0-9 _]{0,40}=)")
_FIRST_PAIR_WINDOW = 1024
_CONN_BRACED = re.compile(r"\{([^{}\r\n\"\\]{1,512})\}")
_CONN_QUOTED = re.compile(r"'([^'\r\n\"\\]{1,512})'")
_CONN_PLAIN = re.compile(r"[^;\r\n\"'\\]{1,1024}")
_CONN_WORD = re.compile(r"[^;\s\"'\\]{1,1024}")
_TEMPLATE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\[\]'\"]{0,63}")
# What may come right before the first pair of a string: its start, a line break, an ``=``.
_PAIR_OPENERS = ";\"'\n=("


def _conn_value(text: str, at: int, name: str) -> Span | None:
    """The span of the value at ``at`` to redact, or ``None`` for a template, code or nothing."""
    if m := _CONN_BRACED.match(text, at):
        # ODBC quotes values in braces; a brace around a name is a format template ({password}).
        return None if _TEMPLATE_NAME.fullmatch(m.group(1)) else (m.start(1), m.end(1))
    if m := _CONN_QUOTED.match(text, at):
        return m.start(1), m.end(1)
    m = _CONN_PLAIN.match(text, at)
    if m is None:
        return None
    end = m.end()
    if not text.startswith(";", end):
        # Only a value closed by ``;`` may hold spaces (``PWD=Sup3r Secret Pass;``); otherwise
        # the value is one word and the rest of the line is prose or the next command.
        word = _CONN_WORD.match(text, at)
        end = word.end() if word else at
    while end > at and text[end - 1] in " \t":
        end -= 1
    # A value that runs into the next ``name:`` hands the name back to the named-value rule.
    end = cut_before_trailing_name(text, at, end)
    # ``password = req.body.password;``: the ``;`` ends a statement and the value is code.
    if end <= at or unquoted_is_code(text[at:end], name, text[end : end + 4]):
        return None
    return at, end


def _skip_blanks(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t":
        i += 1
    return i


def _first_pair_start(text: str, semicolon: int) -> int:
    """Where the first pair of the string that a ``;`` belongs to starts (after an opener)."""
    lowest = max(0, semicolon - _FIRST_PAIR_WINDOW)
    opener = max(text.rfind(c, lowest, semicolon) for c in _PAIR_OPENERS)
    return _skip_blanks(text, opener + 1 if opener >= 0 else lowest)


def _pair_value(text: str, at: int, first: bool) -> Span | None:
    """The secret value of a pair at ``at``; a string's first pair needs a ``;`` after its value."""
    m = _CONN_KEY.match(text, at)
    if m is None:
        return None
    span = _conn_value(text, m.end(), m.group("name"))
    if span is None:
        return None
    value = text[span[0] : span[1]]
    if is_placeholder(value) or value.startswith(("$", "[REDACTED")):
        return None
    if first:
        close = span[1] + (1 if text[span[1] : span[1] + 1] in ("}", "'") else 0)
        if not text.startswith(";", _skip_blanks(text, close)):
            return None
    return span


def redact_connection_strings(text: str) -> str:
    """``…;AccountKey=<b64>;…`` → ``…;AccountKey=[REDACTED];…`` (see the module docstring)."""
    if ";" not in text:
        return text
    spans: list[Span] = []
    for m in _PAIR_AFTER_SEMICOLON.finditer(text):
        if (span := _pair_value(text, m.end(), first=False)) is not None:
            spans.append(span)
    tried: set[int] = set()
    for m in _SEMICOLON_BEFORE_PAIR.finditer(text):
        at = _first_pair_start(text, m.start())
        if at not in tried:
            tried.add(at)
            if text[at - 1 : at] != ";" and (span := _pair_value(text, at, first=True)) is not None:
                spans.append(span)
    return _splice(text, spans)


# -- base64 user:password auth fields ---------------------------------------------------------------

# After the ``auth`` that ends a field name: a closing quote, a separator, an opening quote, base64.
_AUTH_TAIL = r"(?:\\?[\"'])?[ \t]*[:=][ \t]*(?:\\?[\"'])?(?P<value>[A-Za-z0-9+/]{8,1024}+={0,2})(?![A-Za-z0-9+/=])"
_AUTH_FIELDS = tuple(re.compile(spelling + _AUTH_TAIL) for spelling in ("auth", "Auth", "AUTH"))


def _is_basic_credential(value: str) -> bool:
    """Whether ``value`` is base64 of ``user:password`` (printable, a ``:`` with text both sides)."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    user, sep, password = decoded.partition(":")
    return bool(sep and user and password) and decoded.isprintable()


def redact_auth_fields(text: str) -> str:
    """``"auth": "<base64 user:pass>"`` → ``"auth": "[REDACTED]"``.

    Any name ending in ``auth``, ``Auth`` or ``AUTH`` (``_auth``, ``basicAuth``): the decode is
    the proof. Each spelling is a literal-first pattern, which the engine scans fastest.
    """
    spans: list[Span] = []
    for pattern in _AUTH_FIELDS:
        for m in pattern.finditer(text):
            if _is_basic_credential(m.group("value")):
                spans.append((m.start("value"), m.end("value")))
    return _splice(text, spans)


# -- a credential after a spaced label ----------------------------------------------------------------

_LABEL_WORDS = ("key", "token", "secret", "password", "passwd", "passphrase")
_SPACED_VALUE_RE = r"[ \t]+(?:(?:is|was)[ \t]+)?(?P<value>[A-Za-z0-9+/_.~\-]{16,256}+={0,2})(?![^\s\"'`,;)\]}<>\\])"
# One literal-first pattern per spelling (``token``, ``Token``, ``TOKEN``): the engine jumps
# between occurrences, and the value (16+ characters) must follow for a match at all.
_LABELS = tuple(
    re.compile(spelling + r"(?![A-Za-z0-9_])" + _SPACED_VALUE_RE)
    for word in _LABEL_WORDS
    for spelling in (word, word.capitalize(), word.upper())
)
# A bare ``key`` is a label only with a qualifier (``cache key 5f3e…`` is a hash, not a secret).
_KEY_QUALIFIER = re.compile(
    r"(?i)(?<![A-Za-z0-9])(?:api|access|secret|private|auth|client|account|signing|encryption|license|app|"
    r"bot|session|refresh|deploy|master|service)[ \t_-]?\Z"
)
_CHANGES = re.compile(r"(?<=\d)[A-Za-z]|(?<=[A-Za-z])\d")
_MIN_CHANGES = 3


def _credential_shaped(value: str) -> bool:
    """Several letter/digit changes (``0f1e2d…``, ``xK9mQ2…``): not a word, a date or a version."""
    return len(_CHANGES.findall(value)) >= _MIN_CHANGES


def redact_spaced_labels(text: str) -> str:
    """``auth token <hex>`` → ``auth token [REDACTED]`` (a label with no ``:``/``=``)."""
    spans: list[Span] = []
    for pattern in _LABELS:
        for m in pattern.finditer(text):
            before = text[m.start() - 1] if m.start() > 0 else " "
            if text.startswith(("\\n", "\\r", "\\t"), m.start() - 2):
                before = " "  # a JSON-escaped line break, not a letter
            if before.isalnum():
                continue  # inside a longer word: ``monkey``, ``hotkey``
            # A bare ``key``, or a word glued by ``_``/``-`` (``api_key``), needs a qualifier in front.
            glued = before in "_-"
            if (glued or m.group(0)[:3].lower() == "key") and not _KEY_QUALIFIER.search(
                text, max(0, m.start() - 16), m.start()
            ):
                continue
            if _credential_shaped(m.group("value")):
                spans.append((m.start("value"), m.end("value")))
    return _splice(text, spans)
