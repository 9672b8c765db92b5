"""Redaction rules for secrets recognisable by their shape alone (docs/governance.md#redaction, ADR-009).

PEM blocks, ``Bearer`` credentials, vendor keys, JWTs, cookie headers, URL userinfo and
secret-named query parameters. Vendor prefixes are distinctive enough to need no left word
boundary, so text glued in front (``x=sk-…``, ``"ghp_…``) cannot hide a key. Every rule is
linear in the text: regexes use possessive runs, and the rules that would otherwise rescan
(PEM, JWT, URL userinfo) are small hand-written scans.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable

from .secret_cli import redact_cli_passwords
from .secret_fields import redact_auth_fields, redact_connection_strings, redact_spaced_labels
from .secret_lexicon import (
    HEADER_REST,
    REDACTED,
    cut_before_trailing_name,
    is_placeholder,
    is_word_shaped,
    looks_random,
    secret_word_ending,
)
from .secret_vendors import redact_vendor_tokens

Replacement = str | Callable[[re.Match[str]], str]


def _keep_unless_random(replacement: str) -> Callable[[re.Match[str]], str]:
    def sub(m: re.Match[str]) -> str:
        return replacement if looks_random(m.group(0)) else m.group(0)

    return sub


_LOWER_WORD = re.compile(r"[A-Z]?[a-z]+")
_DOTTED_WORDS = re.compile(r"[A-Za-z_]+(?:\.[A-Za-z_]+)*")
# "name = value" ahead: a separator, then an (optionally quoted) value character.
_VALUE_START = r"[ \t]*(?:\\?[\"'])?[A-Za-z0-9$<{\[(_./+~-]"
_SEPARATOR_VALUE_AHEAD = re.compile(r"[ \t]*[:=]" + _VALUE_START)
_VALUE_AHEAD = re.compile(_VALUE_START)


def _bearer(m: re.Match[str]) -> str:
    token, padding = m.group(2), m.group(3)
    if _LOWER_WORD.fullmatch(token) or (
        _DOTTED_WORDS.fullmatch(token)
        and ("_" in token or "." in token)
        and all(is_word_shaped(s) for s in token.split("."))
    ):
        return m.group(0)  # "Bearer authentication", "Bearer self.api_key = …": prose or code
    cut = secret_word_ending(token)
    sep = _VALUE_AHEAD.match(m.string, m.end()) if padding else _SEPARATOR_VALUE_AHEAD.match(m.string, m.end())
    if cut is not None and sep:
        # "Bearer 0a1bpassword = …": the run ends in a secret *name*, which the named-value
        # rule judges; only what precedes the name's last secret word is the credential.
        return m.group(0) if cut == 0 else f"Bearer {REDACTED}{token[cut:]}{padding}"
    return f"Bearer {REDACTED}"


TOKEN_RULES: list[tuple[re.Pattern[str], Replacement]] = [
    # RFC 6750 token68; the run stops before another "Bearer " so two credentials stay two.
    (re.compile(r"([Bb]earer)[ \t]+(?!\[REDACTED)((?:(?![Bb]earer[ \t])[A-Za-z0-9._~+/\-]){12,}+)(=*+)"), _bearer),
    # sk-ant-/sk-proj-/… are unmistakable. A bare "sk-" must start a word, or (glued to text)
    # be followed by a random-looking alphanumeric run: "disk-usage-2024", "ask-questions" survive.
    (re.compile(r"sk-(?:ant|proj|svcacct|admin)-[A-Za-z0-9_\-]{8,}+"), "[REDACTED_API_KEY]"),
    (re.compile(r"(?<![A-Za-z0-9_\-])sk-[A-Za-z0-9_\-]{20,}+"), "[REDACTED_API_KEY]"),
    (re.compile(r"sk-[A-Za-z0-9]{20,}+[A-Za-z0-9_\-]*+"), _keep_unless_random("[REDACTED_API_KEY]")),
    (re.compile(r"gh[pousr]_[A-Za-z0-9]{20,}+|github_pat_[A-Za-z0-9_]{20,}+"), "[REDACTED_GITHUB_TOKEN]"),
    (re.compile(r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}"), "[REDACTED_AWS_KEY]"),
    (re.compile(r"xox[abeoprs]-[A-Za-z0-9\-]{10,}+"), "[REDACTED_SLACK_TOKEN]"),
    (re.compile(r"AIza[0-9A-Za-z_\-]{30,}+"), "[REDACTED_GOOGLE_KEY]"),
    (re.compile(r"(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{10,}+|whsec_[0-9A-Za-z]{20,}+"), "[REDACTED_STRIPE_KEY]"),
    (re.compile(r"glpat-[0-9A-Za-z_\-]{20,}+"), "[REDACTED_GITLAB_TOKEN]"),
    (re.compile(r"npm_[A-Za-z0-9]{30,}+"), "[REDACTED_NPM_TOKEN]"),
    (re.compile(r"hf_[A-Za-z0-9]{30,}+"), "[REDACTED_HF_TOKEN]"),
]

# -- PEM private keys -----------------------------------------------------------------------------

_PEM_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
# A torn block (no END): key material, PEM headers and line breaks (raw or JSON-escaped).
# ``_`` is no base64, but stopping at it would leave the tail of a token glued to the block
# (``…KEY-----ghp_…`` kept ``_…``): swallowing it costs nothing, the block is redacted anyway.
_PEM_TORN_BODY = re.compile(r"(?:[A-Za-z0-9+/=:,._\- \t\r\n]|\\[nrt]){0,20000}+")
_BARE_QUOTE = re.compile(r'(?<!\\)"')
PEM_MAX_CHARS = 20000
PEM_PLACEHOLDER = "[REDACTED_PRIVATE_KEY]"


def redact_pem(text: str) -> str:
    """Whole BEGIN…END blocks; a BEGIN without END up to where key material stops.

    A block never spans a bare ``"``: in JSON text that would swallow structure, so a block
    split across two JSON strings is treated as two torn halves.
    """
    if "PRIVATE KEY" not in text:
        return text
    heads = list(_PEM_BEGIN.finditer(text))
    if not heads:
        return text
    ends = list(_PEM_END.finditer(text))
    end_starts = [m.start() for m in ends]
    quotes = [m.start() for m in _BARE_QUOTE.finditer(text)] if '"' in text else []
    out: list[str] = []
    pos = 0
    for head in heads:
        if head.start() < pos:
            continue
        stop = -1
        j = bisect.bisect_left(end_starts, head.end())
        if j < len(ends) and end_starts[j] - head.end() <= PEM_MAX_CHARS:
            q = bisect.bisect_left(quotes, head.end())
            if q == len(quotes) or quotes[q] >= end_starts[j]:
                stop = ends[j].end()
        if stop < 0:
            torn = _PEM_TORN_BODY.match(text, head.end())
            stop = cut_before_trailing_name(text, head.end(), torn.end()) if torn else head.end()
        out.append(text[pos : head.start()])
        out.append(PEM_PLACEHOLDER)
        pos = stop
    out.append(text[pos:])
    return "".join(out)


# -- JWT ------------------------------------------------------------------------------------------

_JWT_RUN = re.compile(r"[A-Za-z0-9_\-.]{24,}+")
_JWT_HEAD = re.compile(r"eyJ[A-Za-z0-9_\-]{8,}")
JWT_PLACEHOLDER = "[REDACTED_JWT]"


def _jwt_in_run(m: re.Match[str]) -> str:
    run = m.group(0)
    if "eyJ" not in run or run.count(".") < 2:
        return run
    segs = run.split(".")
    out: list[str] = []
    i = 0
    while i < len(segs):
        head = _JWT_HEAD.search(segs[i]) if i + 2 < len(segs) else None
        if head is not None and head.end() == len(segs[i]) and _JWT_HEAD.fullmatch(segs[i + 1]):
            out.append(segs[i][: head.start()] + JWT_PLACEHOLDER)
            i += 3
        else:
            out.append(segs[i])
            i += 1
    return ".".join(out)


def redact_jwt(text: str) -> str:
    """``eyJ<header>.eyJ<payload>.<signature>``, found by splitting dotted runs (no rescans)."""
    return _JWT_RUN.sub(_jwt_in_run, text) if "eyJ" in text else text


# -- cookies, URL userinfo, query parameters -------------------------------------------------------

# Cookie / Set-Cookie headers with a ``name=`` value: the rest of the header (``HEADER_REST``).
# A value that is already a placeholder was judged by an earlier pass (idempotence).
_COOKIE = re.compile(
    r"(?i)(?=[sc])((?:set-)?cookie)[ \t]*:[ \t]*(?!\[REDACTED)(?=[^\s=;,\"'\\]{1,128}=)(" + HEADER_REST + ")"
)


def _cookie(m: re.Match[str]) -> str:
    stop = cut_before_trailing_name(m.string, m.start(2), m.end())
    return f"{m.group(1)}: {REDACTED}{m.string[stop : m.end()]}"


def redact_cookies(text: str) -> str:
    return _COOKIE.sub(_cookie, text)


_SCHEME_TAIL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]{0,31}\Z")
_AUTHORITY = re.compile(r"[^\s/?#\"'<>\\]{1,256}")


def redact_userinfo(text: str) -> str:
    """``scheme://user:pass@host`` → ``scheme://[REDACTED]@host`` (the last ``@`` ends userinfo)."""
    i = text.find("://")
    if i < 0:
        return text
    out: list[str] = []
    pos = 0
    while i >= 0:
        authority = _AUTHORITY.match(text, i + 3)
        at = text.rfind("@", i + 3, authority.end()) if authority else -1
        if at > i + 3 and _SCHEME_TAIL.search(text, max(pos, i - 32), i):
            info = text[i + 3 : at]
            if not info.startswith("[REDACTED") and not is_placeholder(info.replace(":", "")):
                out.append(text[pos : i + 3])
                out.append(REDACTED)
                pos = at
        i = text.find("://", max(i + 3, pos))
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


_QUERY = re.compile(r"([?&;])([A-Za-z0-9_.\-\[\]]{1,64})=([^&#\s\"'<>\\]++)")
_QUERY_NAME = re.compile(r"(?i)token|key|secret|password|passwd|apikey|signature|auth|sig\b|credential")


def _query(m: re.Match[str]) -> str:
    name, value = m.group(2), m.group(3)
    if not _QUERY_NAME.search(name) or is_placeholder(value) or value.startswith("[REDACTED"):
        return m.group(0)  # not secret-named, a template, or redacted already (idempotence)
    # The run may end in the *name* of the next pair (``;auth=password: x``, ``&token=a0b1AUTHORIZATION:``):
    # hand that name back so the named-value rule still judges its value.
    stop = cut_before_trailing_name(m.string, m.start(3), m.end())
    if stop <= m.start(3):
        return m.group(0)
    return f"{m.group(1)}{name}={REDACTED}{m.string[stop : m.end()]}"


def redact_query(text: str) -> str:
    """Query parameters whose name smells secret (token, key, secret, password, signature, auth)."""
    return _QUERY.sub(_query, text)


def redact_shapes(text: str) -> str:
    """Apply every shape rule, most specific first.

    URL userinfo goes before the token rules: a credential run glued in front of a URL
    (``Bearer xyzpostgres://app:pw@db``) would otherwise swallow the scheme that marks it. The
    vendor table and the format rules of ADR-061 follow the rules of ADR-009.
    """
    text = redact_pem(text)
    text = redact_userinfo(text)
    for pattern, replacement in TOKEN_RULES:
        text = pattern.sub(replacement, text)
    text = redact_vendor_tokens(text)
    text = redact_jwt(text)
    # Command lines before the value rules: a greedy value glued in front of a command
    # (``;Pwd=0(az login … -p x``) would otherwise take the tool name that marks its flags.
    text = redact_cli_passwords(text)
    text = redact_cookies(text)
    # A connection string's ``;Password=a&b;`` before the query rule, which would stop at ``&``.
    text = redact_connection_strings(text)
    text = redact_query(text)
    text = redact_auth_fields(text)
    return redact_spaced_labels(text)
