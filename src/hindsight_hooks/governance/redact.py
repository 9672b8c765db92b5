"""Secret redaction: the one module every writer calls before anything touches disk or network.

Patterns follow BEHAVIOUR.md §7.8 (ADR-009 records the judgement calls). ``redact_text`` is
applied to retained content when ``retain.redact_secrets`` is on, and *always* to errors,
diagnostics, receipts, snapshots, notices and logs.

Two kinds of rule, in this order:

1. **Shaped tokens** — PEM blocks, ``Bearer`` credentials, vendor keys (OpenAI/Anthropic,
   GitHub, AWS, Slack, Google, Stripe, GitLab, npm, Hugging Face), JWTs, cookie headers, URL
   userinfo and secret-named query parameters. Their shape alone says "secret".
2. **Named values** — ``password = …``, ``"token": "…"``, ``API_KEY=…``, ``--token …``. Here
   the *name* says "secret" but the value may be ordinary code (``password = get_password()``),
   so the value is judged: literals and credential-looking words are redacted; calls,
   attribute paths, multi-word identifiers, keywords and placeholders are kept.

Retained content is usually JSON text (the projection), so every rule also works on
JSON-escaped text (``\\"``, ``\\n``) and stops before an escape instead of running through it:
redaction must never turn valid JSON into invalid JSON. Every rule is linear-time (anchored
scans, bounded repeats), since content can be large. ``redact_text`` is idempotent.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

REDACTED = "[REDACTED]"

# -- helpers ----------------------------------------------------------------------------------------

_WORD_SEGMENT = re.compile(r"(?:[A-Z]+|[A-Z]?[a-z]+)(?:[A-Z][a-z]+)*\d*")
_IDENT_CHAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_PLACEHOLDER = re.compile(
    r"""
    \[REDACTED[A-Z_]*\]        # already redacted
    | \[[A-Z_]{1,20}\]         # [PAD], [SEP], [MASK]
    | <[\w /.:|-]{0,64}>        # <token>, </s>, <your api key>
    | \$\{[^{}\n]{0,64}\}      # ${VAR}
    | \$\([^()\n]{0,64}\)      # $(cmd)
    | \$[A-Za-z_][A-Za-z0-9_]* # $VAR
    | \{\{?[ ]?[\w.\[\]'":!-]{0,64}[ ]?\}?\}  # {name}, {{ name }}, {cfg['x']}
    | %\(?[A-Za-z0-9_]*\)?[-#0 +]*\d*[sdrixf] # %s, %(name)s
    | \*+ | \.\.\.+ | … | x{3,} | X{3,} | -+ | \?+
    """,
    re.VERBOSE,
)
_KEYWORD_VALUES = frozenset(
    """None True False null nil undefined true false none NULL Null NaN nan self this cls
    str bytes int bool float dict list tuple set object any string number boolean unknown
    void never Any Optional Union bytearray memoryview""".split()
)


def _is_word_shaped(ident: str) -> bool:
    """True for identifiers made of dictionary-like words: ``get_password``, ``secretKey``, ``API_KEY_2``.

    Digits are allowed only at the end of a word (``sha256``, ``key2``); ``x7kQ`` is not a word.
    """
    parts = [p for p in ident.split("_") if p]
    return bool(parts) and all(_WORD_SEGMENT.fullmatch(p) for p in parts)


def _is_multiword(ident: str) -> bool:
    core = ident.strip("_")
    return "_" in core or re.search(r"[a-z][A-Z]", core) is not None


def _is_placeholder(value: str) -> bool:
    """Values that stand for a secret without being one (templates, masks, markers)."""
    rest = _PLACEHOLDER.sub("", value)
    return not re.search(r"[A-Za-z0-9]", rest)


def looks_random(token: str) -> bool:
    """A cheap "not a dictionary word" test: digits, or upper *and* lower case letters."""
    has_digit = any(c.isdigit() for c in token)
    return has_digit or (any(c.isupper() for c in token) and any(c.islower() for c in token))


# -- 1. shaped tokens --------------------------------------------------------------------------------------

def _keep_unless_random(replacement: str, group: int = 0) -> Callable[[re.Match[str]], str]:
    def sub(m: re.Match[str]) -> str:
        return replacement if looks_random(m.group(group)) else m.group(0)

    return sub


def _bearer(m: re.Match[str]) -> str:
    token, padding = m.group(2), m.group(3)
    if re.fullmatch(r"[A-Z]?[a-z]+", token) or (
        re.fullmatch(r"[A-Za-z_]+(?:\.[A-Za-z_]+)*", token)
        and ("_" in token or "." in token)
        and all(_is_word_shaped(s) for s in token.split("."))
    ):
        # "Bearer authentication", "Bearer self.api_key = …": prose or code, not a credential.
        return m.group(0)
    words = list(_SECRET_WORD.finditer(token))
    if words and (padding or re.match(r"[ \t]*[:=]", m.string[m.end() : m.end() + 8])):
        # "Bearer 0a1bpassword = …": the run ends in a secret *name*, which the named-value
        # rule judges; only what precedes the name's last secret word is the credential.
        cut = words[-1].start()
        if cut == 0:
            return m.group(0)
        return f"Bearer {REDACTED}{token[cut:]}{padding}"
    return "Bearer " + REDACTED


_PEM_HEAD = r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----"
_PEM_BODY_CHARS = r"(?:[A-Za-z0-9+/=:,.\- \t\r\n]|\\[nrt])"

_SHAPED: list[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    # PEM private keys: the whole block; a torn block (no END) up to where key material stops.
    (
        re.compile(_PEM_HEAD + r"(?s:[^\"\\]|\\.){0,20000}?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
        "[REDACTED_PRIVATE_KEY]",
    ),
    (re.compile(_PEM_HEAD + _PEM_BODY_CHARS + r"{0,20000}+"), "[REDACTED_PRIVATE_KEY]"),
    # Bearer credentials (RFC 6750 token68 alphabet). No left boundary: "xBearer t" still leaks.
    (re.compile(r"([Bb]earer)[ \t]+(?!\[REDACTED)((?:(?![Bb]earer[ \t])[A-Za-z0-9._~+/\-]){12,}+)(=*+)"), _bearer),
    # Vendor keys. Distinctive prefixes need no left boundary, so glued text cannot hide them.
    (
        re.compile(r"sk-(?:ant-|proj-|svcacct-|admin-|live-)?[A-Za-z0-9_\-]{20,}+"),
        _keep_unless_random("[REDACTED_API_KEY]"),
    ),
    (re.compile(r"(?:gh[pousr]_[A-Za-z0-9]{20,}+|github_pat_[A-Za-z0-9_]{20,}+)"), "[REDACTED_GITHUB_TOKEN]"),
    (re.compile(r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}"), "[REDACTED_AWS_KEY]"),
    (re.compile(r"xox[abeoprs]-[A-Za-z0-9\-]{10,}+"), "[REDACTED_SLACK_TOKEN]"),
    (re.compile(r"AIza[0-9A-Za-z_\-]{30,}+"), "[REDACTED_GOOGLE_KEY]"),
    (re.compile(r"(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{10,}+|whsec_[0-9A-Za-z]{20,}+"), "[REDACTED_STRIPE_KEY]"),
    (re.compile(r"glpat-[0-9A-Za-z_\-]{20,}+"), "[REDACTED_GITLAB_TOKEN]"),
    (re.compile(r"npm_[A-Za-z0-9]{30,}+"), "[REDACTED_NPM_TOKEN]"),
    (re.compile(r"hf_[A-Za-z0-9]{30,}+"), "[REDACTED_HF_TOKEN]"),
    (re.compile(r"eyJ[A-Za-z0-9_\-]{8,}+\.eyJ[A-Za-z0-9_\-]{8,}+\.[A-Za-z0-9_\-]*+"), "[REDACTED_JWT]"),
]


def _cookie(m: re.Match[str]) -> str:
    return f"{m.group(1)}: {REDACTED}"


# Cookie / Set-Cookie headers: everything to the end of the line (or of the JSON string).
_COOKIE = re.compile(r"(?i)((?:set-)?cookie)[ \t]*:[ \t]*(?=[^\s=;,\"'\\]{1,128}=)[^\r\n\"\\]*")


def _userinfo(m: re.Match[str]) -> str:
    info = m.group(2)
    if _is_placeholder(info.replace(":", "")):
        return m.group(0)
    return f"{m.group(1)}{REDACTED}@"


# scheme://userinfo@ — the userinfo runs to the last "@" before the path.
_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]{0,31}://)([^\s/?#\"'<>\\]{1,256})@")
_QUERY_NAME = re.compile(r"(?i)token|key|secret|password|passwd|apikey|signature|auth|sig\b|credential")


def _query(m: re.Match[str]) -> str:
    name, value = m.group(2), m.group(3)
    if not _QUERY_NAME.search(name) or _is_placeholder(value):
        return m.group(0)
    return f"{m.group(1)}{name}={REDACTED}"


_QUERY = re.compile(r"([?&;])([A-Za-z0-9_.\-\[\]]{1,64})=([^&#\s\"'<>\\]{1,4096}+)")


# -- 2. named values -----------------------------------------------------------------------------------------

_SECRET_WORD = re.compile(
    r"(?i)api[_-]?key|apikey|access[_-]?key|private[_-]?key|auth[_-]?key|token|secret|passw(?:or)?d|"
    r"passphrase|authorization|cookie"
)
_KEY_CHARS = re.compile(r"[A-Za-z0-9_.\-]{0,64}")
_KEY_SUFFIX_OK = re.compile(
    r"(?i)(?:[_-]?(?:(?:access[_-]?)?key|value|str|string|confirm(?:ation)?|again|plain(?:text)?|b64|base64|hex|\d))?"
)
_SEPARATOR = re.compile(r"(?:\\*[\"'`])?[ \t]*(=>|:=|=(?!=)|:(?!:))[ \t]*")
_CLI_SEPARATOR = re.compile(r"[ \t]+")
_QUOTED_OPEN = re.compile(r"[bBrRuUfF]{0,2}(\\*[\"'`])")
_UNQUOTED = re.compile(r"[^\s\"'`,;\\)\]}<]{1,4096}+")
_AUTH_SCHEME = re.compile(r"(?i)(basic|digest|token|negotiate|ntlm|bot|apikey|aws4-hmac-sha256)[ \t]+(?=\S)")
_AUTH_REST = re.compile(r"[^\r\n\"\\]{1,4096}+")
_NUMBER = re.compile(r"[-+]?(?:\d[\d_]{0,4}(?:\.\d+)?|0[xX][0-9a-fA-F]{1,8})")


def is_secret_key(name: str) -> bool:
    """Whether a field/variable name holds a secret: it contains a secret word and ends there.

    ``access_token``, ``client_secret``, ``apiKey``, ``DB_PASSWORD``, ``secret_access_key`` do;
    ``max_tokens``, ``tokenizer``, ``token_type`` do not. ALL-CAPS names (environment style)
    may carry any affix: ``GITHUB_TOKEN_FILE=…`` is redacted, ``N_TOKENS = 68`` survives on
    its value.
    """
    upper = not any(c.islower() for c in name)
    for m in _SECRET_WORD.finditer(name):
        if upper or _KEY_SUFFIX_OK.fullmatch(name, m.end()):
            return True
    return False


def _related(value: str, keyword: str) -> bool:
    """``password=password``, ``token=tok``, ``secret=s``: a variable named after the secret."""
    v = value.lower().strip("_")
    k = re.sub(r"[^a-z]", "", keyword.lower())
    return len(v) <= 3 or (len(v) >= 3 and (k.startswith(v[:3]) or v.startswith(k[:3])))


def _unquoted_is_code(token: str, keyword: str, after: str) -> bool:
    """Decide whether an unquoted value after a secret name is code (kept) or a secret.

    ``after`` is the text right after the token (a few chars), to spot ``a = b = c`` chains.
    """
    if _is_placeholder(token) or token[0] in "[{(":
        return True  # a template, a mask, or a list/dict/tuple literal
    chain = _IDENT_CHAIN.match(token)
    if chain:
        head = chain.group(0)
        segments = head.split(".")
        rest = token[chain.end() :]
        if head in _KEYWORD_VALUES and not rest:
            return True
        if all(_is_word_shaped(s) or s in _KEYWORD_VALUES for s in segments):
            if rest[:1] in ("(", "["):
                return True  # get_password(), os.environ["X"], Optional[str]
            if not rest and (len(segments) > 1 or _CHAINED_ASSIGNMENT.match(after)):
                return True  # self.password, settings.SECRET_KEY, passwd = acct = ''
            if not rest and (_is_multiword(head) or re.fullmatch(r"[A-Z][a-z]+", head) or _related(head, keyword)):
                return True  # api_key, secretKey, Token, password=password, token=tok
    return bool(_NUMBER.fullmatch(token))


_CHAINED_ASSIGNMENT = re.compile(r"[ \t]*=(?!=)")


def _backslashes_before(text: str, i: int, floor: int) -> int:
    n = 0
    while i - 1 - n >= floor and text[i - 1 - n] == "\\":
        n += 1
    return n


class _NamedValueScanner:
    """Finds ``<secret name> <sep> <value>`` and redacts the value when it is not code."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.out: list[str] = []
        self.pos = 0  # text[:pos] is already emitted

    def run(self) -> str:
        text = self.text
        for m in _SECRET_WORD.finditer(text):
            if m.start() < self.pos:
                continue
            self._try(m)
        if not self.out:
            return text
        self.out.append(text[self.pos :])
        return "".join(self.out)

    def _key_at(self, m: re.Match[str], floor: int) -> tuple[int, int] | None:
        """The bounds of the secret-named key around keyword match ``m``, or ``None``."""
        text = self.text
        start = m.start()
        low = max(floor, start - 64)
        while start > low and (text[start - 1].isalnum() or text[start - 1] in "_.-"):
            start -= 1
        km = _KEY_CHARS.match(text, m.end())
        end = km.end() if km else m.end()
        key = text[start:end].strip(".-")
        return (start, end) if key and is_secret_key(key) else None

    def _try(self, m: re.Match[str]) -> None:
        bounds = self._key_at(m, self.pos)
        if bounds is None:
            return
        kstart, kend = bounds
        sep = _SEPARATOR.match(self.text, kend)
        if sep is not None:
            self._value(sep.end(), m.group(0))
        elif "--" in self.text[kstart : m.start()] and (cli := _CLI_SEPARATOR.match(self.text, kend)):
            self._value(cli.end(), m.group(0))

    def _emit(self, start: int, end: int, replacement: str) -> None:
        self.out.append(self.text[self.pos : start])
        self.out.append(replacement)
        self.pos = end

    def _nested_key_start(self, start: int, end: int) -> int | None:
        """Where a value run swallowed the next ``name=``/``name:`` pair, so that pair is judged alone."""
        for m in _SECRET_WORD.finditer(self.text, start, end):
            bounds = self._key_at(m, start)
            if bounds is not None and _SEPARATOR.match(self.text, bounds[1]) and bounds[1] <= end:
                # A key glued to the value (``=a0b1password = …``) is cut at its secret word, so
                # the value's own characters are still redacted.
                if bounds[0] > start:
                    return bounds[0]
                words = list(_SECRET_WORD.finditer(self.text, start, bounds[1]))
                return words[-1].start()
        return None

    def _ends_with_key(self, start: int, end: int) -> bool:
        for m in _SECRET_WORD.finditer(self.text, start, end):
            bounds = self._key_at(m, start)
            if bounds is not None and (sep := _SEPARATOR.match(self.text, bounds[1])) and sep.end() >= end:
                return True
        return False

    def _value(self, v: int, keyword: str, depth: int = 0) -> None:
        text = self.text
        if text.startswith("[REDACTED", v):
            return
        if keyword.lower() == "authorization" and (scheme := _AUTH_SCHEME.match(text, v)):
            rest = _AUTH_REST.match(text, scheme.end())
            if rest and not text.startswith("[REDACTED", scheme.end()):
                self._emit(scheme.end(), rest.end(), REDACTED)
            return
        q = _QUOTED_OPEN.match(text, v)
        if q:
            self._quoted(q.end(), q.group(1), depth)
            return
        end = self._run_end(v)
        if end > v and not _unquoted_is_code(text[v:end], keyword, text[end : end + 4]):
            self._emit(v, end, REDACTED)

    def _run_end(self, v: int) -> int:
        """The end of an unquoted value starting at ``v``, stopping before a swallowed ``name=`` pair."""
        u = _UNQUOTED.match(self.text, v)
        if not u:
            return v
        end = u.end()
        nested = self._nested_key_start(v, end)
        if nested is not None:
            end = nested
            while end > v and self.text[end - 1] in ":=-_.":
                end -= 1
        return end

    def _quoted(self, body_start: int, quote: str, depth: int) -> None:
        text = self.text
        if text.startswith("[REDACTED", body_start):
            return
        nl = text.find("\n", body_start, body_start + 4096)
        limit = min(len(text), body_start + 4096) if nl < 0 else nl
        close = text.find(quote, body_start, limit)
        if len(quote) == 1:
            # An odd run of backslashes escapes the quote: it belongs to the body.
            while close >= 0 and _backslashes_before(text, close, body_start) % 2 == 1:
                close = text.find(quote, close + 1, limit)
        end = self._run_end(body_start) if close < 0 else close
        if not quote.endswith('"'):
            # In JSON text a bare double quote is structure: never redact across it.
            bare = re.search(r'(?<!\\)"', text[body_start:end])
            if bare is not None:
                end = body_start + bare.start()
        body = text[body_start:end]
        if not body or body[0].isspace() or body[0] in ",;:)]}+%" or _is_placeholder(body):
            return  # an empty literal, or the closing quote of a string that ended before the value
        if self._ends_with_key(body_start, end):
            return  # a label such as "password = ": its key is judged on its own
        self._emit(body_start, end, REDACTED)
        if close >= 0 and depth < 2 and is_secret_key(body):
            # The "value" was itself a quoted key: ``x = "token": "…"``. Judge its value too.
            sep = _SEPARATOR.match(text, close)
            if sep is not None:
                self._value(sep.end(), body, depth + 1)


def _redact_named_values(text: str) -> str:
    return _NamedValueScanner(text).run()


# -- public API ----------------------------------------------------------------------------------------------


def redact_text(text: str) -> str:
    """Return ``text`` with every recognised secret replaced by a placeholder. Idempotent."""
    if not text:
        return text
    for pattern, replacement in _SHAPED:
        text = pattern.sub(replacement, text)
    text = _COOKIE.sub(_cookie, text)
    text = _USERINFO.sub(_userinfo, text)
    text = _QUERY.sub(_query, text)
    return _redact_named_values(text)


def contains_secret(text: str) -> bool:
    """Whether ``redact_text`` would change ``text`` (i.e. it holds something secret-shaped)."""
    return bool(text) and redact_text(text) != text


def _redact_scalar_under_secret_key(value: Any) -> Any:
    if isinstance(value, str):
        return value if (not value or _is_placeholder(value)) else REDACTED
    if isinstance(value, int) and not isinstance(value, bool):
        return value if abs(value) < 100000 else REDACTED
    return redact_value(value)


def redact_value(value: Any) -> Any:
    """Redact JSON-like data: every string, and any scalar stored under a secret-named key.

    Keys are redacted as text too (a secret used as a key is still a secret); lists and tuples
    keep their type.
    """
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for k, v in value.items():
            key = redact_text(k) if isinstance(k, str) else k
            secret = isinstance(k, str) and is_secret_key(k)
            out[key] = _redact_scalar_under_secret_key(v) if secret else redact_value(v)
        return out
    if isinstance(value, list):
        return [redact_value(v) for v in value]
    if isinstance(value, tuple):
        return tuple(redact_value(v) for v in value)
    return value


def redact_error(exc: BaseException | str, limit: int = 500) -> str:
    """A redacted, bounded one-line description of an error for notices, logs and the queue."""
    text = exc if isinstance(exc, str) else (str(exc) or type(exc).__name__)
    text = redact_text(" ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"
