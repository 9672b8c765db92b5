"""The vocabulary of redaction: which names hold secrets and which values are only code.

Shared by the shaped-token rules and the named-value scanner (ADR-009). The judgement is
lexical on purpose — no entropy scores, no model — so a user can predict it: a value after
a secret name is kept when it is *code* (a call, an attribute path, a multi-word identifier,
a keyword, a template placeholder) and redacted otherwise.
"""

from __future__ import annotations

import re

REDACTED = "[REDACTED]"

# A secret word inside a name: ``token``, ``client_secret``, ``apiKey``, ``DB_PASSWORD``.
SECRET_WORD = re.compile(
    r"(?i)(?=[acpst])(?:api[_-]?key|apikey|access[_-]?key|private[_-]?key|auth[_-]?key|token|secret|"
    r"passw(?:or)?d|passphrase|authorization|cookie)"
)
# What may follow the secret word in a lower/mixed-case name and still name the secret itself.
_KEY_SUFFIX_OK = re.compile(
    r"(?i)(?:[_-]?(?:(?:access[_-]?)?key|value|str|string|confirm(?:ation)?|again|plain(?:text)?|b64|base64|hex|\d))?"
)

# The rest of a header line (cookies, Authorization credentials): up to a line end, quote or
# backslash — but through a quoted value (raw ``a="x"``, ``a='x'`` or JSON-escaped ``a=\"x\"``)
# that follows ``=``, a space or a comma, as in cookie values and Digest parameters.
HEADER_REST = (
    r"(?:[^\r\n\"'\\]++"
    r"|(?<=[=\s,])(?P<dq>\\?)\"(?![\s,;:)\]}+%])[^\"\r\n\\]{0,4096}(?P=dq)\""
    r"|(?<=[=\s,])(?P<sq>\\?)'(?![\s,;:)\]}+%])[^'\"\r\n\\]{0,4096}(?P=sq)')*+"
)
# Between a name and its value: ``=``, ``:``, ``=>``, ``:=`` (never ``==``/``::``), after an
# optional closing quote (JSON keys) and with spaces around.
SEPARATOR = re.compile(r"(?:\\*[\"'`])?[ \t]*(?:=>|:=|=(?!=)|:(?!:))[ \t]*")
_TRAILING_NAME = re.compile(r"([A-Za-z0-9_.\-]{1,64})[\"'`\\ \t:=>]*\Z")
_SUFFIX_WINDOW = 48
_WORD_SEGMENT = re.compile(r"(?:[A-Z]+|[A-Z]?[a-z]+)(?:[A-Z][a-z]+)*\d*")
IDENT_CHAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_PLACEHOLDER = re.compile(
    r"""
    \[REDACTED[A-Z_]*\]        # already redacted
    | \[[A-Z_]{1,20}\]         # [PAD], [SEP], [MASK]
    | <[\w /.:|-]{0,64}>       # <token>, </s>, <your api key>
    | \$\{[^{}\n]{0,64}\}      # ${VAR}
    | \$\([^()\n]{0,64}\)      # $(cmd)
    | \$[A-Za-z_][A-Za-z0-9_]* # $VAR
    | \{\{?[ ]?[\w.\[\]'":!-]{0,64}[ ]?\}?\}  # {name}, {{ name }}, {cfg['x']}
    | %\(?[A-Za-z0-9_]*\)?[-#0 +]*\d*[sdrixf] # %s, %(name)s
    | \*+ | \.\.\.+ | … | x{3,} | X{3,} | -+ | \?+
    """,
    re.VERBOSE,
)
_HAS_ALNUM = re.compile(r"[A-Za-z0-9]")
KEYWORD_VALUES = frozenset(
    {
        "None",
        "True",
        "False",
        "null",
        "nil",
        "undefined",
        "true",
        "false",
        "none",
        "NULL",
        "Null",
        "NaN",
        "nan",
        "self",
        "this",
        "cls",
        "str",
        "bytes",
        "int",
        "bool",
        "float",
        "dict",
        "list",
        "tuple",
        "set",
        "object",
        "any",
        "string",
        "number",
        "boolean",
        "unknown",
        "void",
        "never",
        "Any",
        "Optional",
        "Union",
        "bytearray",
        "memoryview",
    }
)
_NUMBER = re.compile(r"[-+]?(?:\d[\d_]{0,4}(?:\.\d+)?|0[xX][0-9a-fA-F]{1,8})")
_CHAINED_ASSIGNMENT = re.compile(r"[ \t]*=(?!=)")
_CAPITALISED_WORD = re.compile(r"[A-Z][a-z]+")
_CAMEL_HUMP = re.compile(r"[a-z][A-Z]")


def is_secret_key(name: str) -> bool:
    """Whether a field/variable name holds a secret: it contains a secret word and ends there.

    ``access_token``, ``client_secret``, ``apiKey``, ``DB_PASSWORD``, ``secret_access_key`` do;
    ``max_tokens``, ``tokenizer``, ``token_type`` do not. ALL-CAPS names (environment style)
    may carry any affix: ``GITHUB_TOKEN_FILE=…`` is redacted, ``N_TOKENS = 68`` survives on
    its value.
    """
    if name == name.upper():
        return SECRET_WORD.search(name) is not None
    # Only the last secret word can end the name: an allowed suffix holds no other secret
    # word (``secret_access_key`` ends in the word ``access_key`` itself).
    # Word plus allowed suffix is far shorter than the window, so only its words matter.
    words = list(SECRET_WORD.finditer(name, max(0, len(name) - _SUFFIX_WINDOW)))
    return bool(words) and _KEY_SUFFIX_OK.fullmatch(name, words[-1].end()) is not None


def secret_word_ending(name: str) -> int | None:
    """Where the secret word that *ends* ``name`` starts (allowed suffix included), else ``None``.

    Unlike ``is_secret_key`` this ignores the ALL-CAPS "any affix" rule: it asks whether the
    text reads as a name ending in a secret word, e.g. ``0a1bpassword`` or ``X_API_KEY``.
    """
    words = list(SECRET_WORD.finditer(name, max(0, len(name) - _SUFFIX_WINDOW)))
    if words and _KEY_SUFFIX_OK.fullmatch(name, words[-1].end()):
        return words[-1].start()
    return None


_STRING_END = re.compile(r'"(?:[\s,:;)\]}]|\Z)')


def value_follows(text: str, at: int) -> bool:
    """Whether a value starts at ``at`` (right after a separator), so the name before is a label.

    Nothing follows at the end of the text, at a line break (raw or JSON-escaped ``\\n``) or at a
    bare ``"`` that closes a JSON string (followed by ``,``/``}``/space…). A bare ``"`` followed
    by anything else opens a quoted value: ``token="x"``.
    """
    if at >= len(text) or text[at] in "\r\n" or text.startswith(("\\n", "\\r"), at):
        return False
    return _STRING_END.match(text, at) is None


def cut_before_trailing_name(text: str, start: int, end: int) -> int:
    """Shrink a greedy region ``text[start:end]`` so it does not swallow ``name =`` at its end.

    Rules that consume "the rest of a header" or "the rest of a key block" stop at a quote; if
    what they swallowed last is a secret name whose value follows, the name is handed back, so
    the named-value rule still sees the pair and redacts the value.
    """
    m = _TRAILING_NAME.search(text, max(start, end - 96), end)
    if m is None:
        return end
    name_start, name_end = m.start(1), m.end(1)
    sep = SEPARATOR.match(text, name_end)
    if not is_secret_key(text[name_start:name_end].strip(".-")) or sep is None or not value_follows(text, sep.end()):
        return end  # no name, or a "name:" with nothing after it: that is the value's own tail
    # Hand back only the secret word when it is glued to what precedes it: in
    # ``token=a000a000AUTHORIZATION:`` the ``a000a000`` is the previous value, not the name.
    ending = secret_word_ending(text[name_start:name_end])
    if ending is not None:
        name_start += ending
    if name_start > start:
        return name_start
    words = list(SECRET_WORD.finditer(text, name_start, name_end))
    return words[-1].start() if words else end


def is_word_shaped(ident: str) -> bool:
    """Identifiers made of dictionary-like words: ``get_password``, ``secretKey``, ``API_KEY_2``.

    Digits are allowed only at the end of a word (``sha256``, ``key2``); ``x7kQ`` is no word.
    """
    parts = [p for p in ident.split("_") if p]
    return bool(parts) and all(_WORD_SEGMENT.fullmatch(p) for p in parts)


def is_placeholder(value: str) -> bool:
    """Values that stand for a secret without being one (templates, masks, markers)."""
    return not _HAS_ALNUM.search(_PLACEHOLDER.sub("", value))


def looks_random(token: str) -> bool:
    """A cheap "not a dictionary word" test: digits, or upper *and* lower case letters."""
    return any(c.isdigit() for c in token) or (any(c.isupper() for c in token) and any(c.islower() for c in token))


def _related(value: str, keyword: str) -> bool:
    """``password=password``, ``token=tok``, ``secret=s``: a variable named after the secret.

    A name *plus digits* is not one: ``password123``, ``tok1234567890``, ``Password2024`` are
    how weak secrets are made, and a variable named after its key rarely carries a number.
    """
    v = value.lower().strip("_")
    if len(v) <= 3:
        return True
    if any(c.isdigit() for c in v):
        return False
    k = re.sub(r"[^a-z]", "", keyword.lower())
    return k.startswith(v[:3]) or v.startswith(k[:3])


def is_weak_secret(head: str) -> bool:
    """``SuperSecret123``, ``pgPass2024``: one word (or camel humps) with lower case and a trailing
    number reads as an identifier but is how weak passwords are made. Constants (``API_KEY_V2``)
    are upper case, and snake_case with a number (``hide_cookie2``) is a variable."""
    return head[-1].isdigit() and "_" not in head.strip("_") and any(c.islower() for c in head) and len(head) > 3


def unquoted_is_code(token: str, keyword: str, after: str, name: str = "") -> bool:
    """Whether an unquoted value after a secret name is code (kept) rather than a secret.

    ``after`` is the text right after the token (a few chars), to spot ``a = b = c`` chains;
    ``name`` is the whole name when known (``self.cookie2 = cookie2`` passes a variable on).
    Single plain words (``hunter``) are *not* code: after a secret name they are more likely a
    weak password than a variable, and redacting a variable costs only readability.
    """
    if is_placeholder(token) or token[0] in "[{(" or token.startswith(("${", "$(")):
        return True  # a template, a mask, a shell expansion, or a list/dict/tuple literal
    if name and token.lower() == name.rsplit(".", 1)[-1].lower() and IDENT_CHAIN.fullmatch(token):
        return True  # the variable the name is named after: ``password2=password2``
    chain = IDENT_CHAIN.match(token)
    if chain:
        head = chain.group(0)
        segments = head.split(".")
        rest = token[chain.end() :]
        if head in KEYWORD_VALUES and not rest:
            return True
        if all(is_word_shaped(s) or s in KEYWORD_VALUES for s in segments):
            if rest[:1] in ("(", "["):
                return True  # get_password(), os.environ["X"], Optional[str]
            chained = _CHAINED_ASSIGNMENT.match(after) is not None and not is_weak_secret(head)
            if not rest and (len(segments) > 1 or chained):
                return True  # self.password, settings.SECRET_KEY, passwd = acct = ''
            multiword = "_" in head.strip("_") or _CAMEL_HUMP.search(head) is not None
            if (
                not rest
                and not is_weak_secret(head)
                and (multiword or _CAPITALISED_WORD.fullmatch(head) or _related(head, keyword))
            ):
                return True  # api_key, secretKey, Token, password=password, token=tok
    return bool(_NUMBER.fullmatch(token))
