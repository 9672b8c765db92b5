"""Vendor credentials recognised by a published prefix, and webhook URLs whose path is the secret.

A table, not code: each row is a needle (a literal the text must contain before the regex runs,
so a text without it costs one ``in`` test), the token's shape, and its placeholder. Shapes are
the vendors' documented formats as public scanners list them (ADR-061): a distinctive prefix
and a body of known alphabet and length. A distinctive prefix needs no left word boundary, so
glued text cannot hide a key; a short or word-like prefix (``SK``, ``key-``, ``s.``, ``pat``)
needs one, a fixed body length and, where the body could be a word, a random-looking body.

Every pattern starts with a literal, so the regex engine jumps from one occurrence of it to the
next instead of trying every position; a token whose distinctive part is not its start (the bot
id before a Telegram ``:AA…``) names the part before it as ``left``. Runs are bounded or
possessive: linear in the text.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from .secret_lexicon import looks_random

# The end of a token: the next character cannot continue its body.
_END = r"(?![A-Za-z0-9_\-])"
_END_ALNUM = r"(?![A-Za-z0-9])"
# Not glued to a word: no ``cls`` character before, or a JSON-escaped break (``\\n``) right before.
_BREAK = r"(?<=\\[nrt])"


def _starts_word(literal: str, cls: str) -> str:
    """A look-behind placed *after* ``literal`` (so the pattern still opens with it)."""
    return f"(?:(?<!{cls}{literal})|(?<=\\\\[nrt]{literal}))"


# How far back a ``left`` part may reach (the longest one below is 32 hex digits).
_LEFT_WINDOW = 40


class VendorRule(NamedTuple):
    needle: str
    pattern: re.Pattern[str]
    placeholder: str
    left: re.Pattern[str] | None = None  # anchored at ``\Z``: must end where ``pattern`` starts
    random_body: bool = False  # keep a match that reads as code (no digit, or a single case)


def _rule(
    needle: str, pattern: str, placeholder: str, *, left: str | None = None, random_body: bool = False
) -> VendorRule:
    return VendorRule(needle, re.compile(pattern), placeholder, re.compile(left) if left else None, random_body)


VENDOR_RULES: list[VendorRule] = [
    # -- webhook URLs: the path after a fixed prefix *is* the credential ----------------------------
    _rule(
        "hooks.slack.com/",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{20,}+",
        "hooks.slack.com/[REDACTED_WEBHOOK]",
    ),
    _rule("/api/webhooks/", r"/api/webhooks/\d{5,30}/[A-Za-z0-9_\-]{30,}+", "/api/webhooks/[REDACTED_WEBHOOK]"),
    _rule("office.com/webhook", r"office\.com/webhook(?:b2)?/[A-Za-z0-9@/\-]{40,}+", "office.com/[REDACTED_WEBHOOK]"),
    # -- package registries and developer platforms ----------------------------------------------
    # PyPI tokens are base64 macaroons: the body always opens with ``AgE`` (pypi.org: ``AgEIcHlwaS5vcmc``).
    _rule("pypi-AgE", r"pypi-AgE[A-Za-z0-9_\-]{40,}+", "[REDACTED_PYPI_TOKEN]"),
    _rule("rubygems_", r"rubygems_[0-9a-f]{48}" + _END_ALNUM, "[REDACTED_RUBYGEMS_TOKEN]"),
    _rule("dckr_pat_", r"dckr_pat_[A-Za-z0-9_\-]{20,}+", "[REDACTED_DOCKER_TOKEN]"),
    _rule("gl", r"gl(?:ptt|dt|rt|oas|soat|ffct|cbt|imt|agent|ft|wt)-[0-9A-Za-z_\-]{20,}+", "[REDACTED_GITLAB_TOKEN]"),
    _rule("GR1348941", r"GR1348941[0-9A-Za-z_\-]{20,}+", "[REDACTED_GITLAB_TOKEN]"),
    _rule("api_org_", r"api_org_[A-Za-z0-9]{30,}+", "[REDACTED_HF_TOKEN]"),
    _rule("pul-", r"pul-[0-9a-f]{40}" + _END_ALNUM, "[REDACTED_PULUMI_TOKEN]"),
    _rule(".atlasv1.", r"\.atlasv1\.[A-Za-z0-9_\-=]{60,}+", "[REDACTED_TERRAFORM_TOKEN]", left=r"[A-Za-z0-9]{14}\Z"),
    _rule("PMAK-", r"PMAK-[0-9a-f]{24}-[0-9a-f]{34}" + _END_ALNUM, "[REDACTED_POSTMAN_KEY]"),
    _rule("lin_", r"lin_(?:api|oauth)_[A-Za-z0-9]{30,}+", "[REDACTED_LINEAR_KEY]"),
    _rule("sbp_", r"sbp_[0-9a-f]{40}" + _END_ALNUM, "[REDACTED_SUPABASE_TOKEN]"),
    _rule("pscale_", r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-.=]{32,}+", "[REDACTED_PLANETSCALE_TOKEN]"),
    _rule("pnu_", r"pnu_[A-Za-z0-9]{36}" + _END_ALNUM, "[REDACTED_PREFECT_KEY]"),
    _rule("rdme_", r"rdme_[a-z0-9]{70}" + _END_ALNUM, "[REDACTED_README_KEY]"),
    _rule("sntr", r"sntr[ysu]_[A-Za-z0-9_=+/]{40,}+", "[REDACTED_SENTRY_TOKEN]"),
    _rule("ATATT3", r"ATATT3[A-Za-z0-9_\-=]{50,}+", "[REDACTED_ATLASSIAN_TOKEN]"),
    _rule("dt0c01.", r"dt0c01\.[0-9A-Z]{24}\.[0-9A-Za-z]{64}" + _END_ALNUM, "[REDACTED_DYNATRACE_TOKEN]"),
    _rule("NRAK-", r"NRAK-[0-9A-Z]{27}" + _END_ALNUM, "[REDACTED_NEWRELIC_KEY]"),
    _rule("gl", r"gl(?:c|sa)_[A-Za-z0-9_+/=]{32,}+", "[REDACTED_GRAFANA_TOKEN]"),
    _rule("fo1_", r"fo1_[A-Za-z0-9_\-]{40,}+", "[REDACTED_FLY_TOKEN]"),
    _rule("HRKU-", r"HRKU-[A-Za-z0-9_\-]{40,}+", "[REDACTED_HEROKU_KEY]"),
    _rule("ops_eyJ", r"ops_eyJ[A-Za-z0-9+/]{100,}+={0,3}", "[REDACTED_1PASSWORD_TOKEN]"),
    _rule("ntn_", r"ntn_[A-Za-z0-9]{40,}+", "[REDACTED_NOTION_TOKEN]"),
    _rule("CFPAT-", r"CFPAT-[A-Za-z0-9_\-]{43}" + _END, "[REDACTED_CONTENTFUL_TOKEN]"),
    _rule("dp.", r"dp\.(?:pt|st|ct|sa|scim|audit)\.[A-Za-z0-9]{40,}+", "[REDACTED_DOPPLER_TOKEN]"),
    _rule(
        "pat",
        r"pat" + _starts_word("pat", "[A-Za-z0-9]") + r"[A-Za-z0-9]{14}\.[0-9a-f]{64}" + _END_ALNUM,
        "[REDACTED_AIRTABLE_TOKEN]",
    ),
    _rule(
        "dapi",
        r"dapi" + _starts_word("dapi", "[A-Za-z]") + r"[0-9a-f]{32}(?:-\d)?" + _END_ALNUM,
        "[REDACTED_DATABRICKS_TOKEN]",
    ),
    _rule("do", r"do[opr]_v1_[0-9a-f]{64}" + _END_ALNUM, "[REDACTED_DIGITALOCEAN_TOKEN]"),
    _rule("shp", r"shp(?:at|ca|pa|ss)_[0-9a-fA-F]{32}" + _END_ALNUM, "[REDACTED_SHOPIFY_TOKEN]"),
    # -- AI providers (OpenAI/Anthropic ``sk-`` live in ``secret_shapes``) ---------------------------
    _rule("gsk_", r"gsk_[A-Za-z0-9]{40,}+", "[REDACTED_API_KEY]"),
    _rule("r8_", r"r8_[A-Za-z0-9]{30,}+", "[REDACTED_API_KEY]"),
    _rule("pplx-", r"pplx-[A-Za-z0-9]{40,}+", "[REDACTED_API_KEY]"),
    _rule("xai-", r"xai-[A-Za-z0-9]{60,}+", "[REDACTED_API_KEY]"),
    # -- messaging, mail, payments -----------------------------------------------------------------
    _rule("xapp-", r"xapp-\d-[A-Z0-9]+-\d+-[0-9a-f]{32,}+", "[REDACTED_SLACK_TOKEN]"),
    # Twilio API key SIDs: ``SK`` + 32 hex (not after a capital: ``TASK…``/``DISK…`` are words).
    _rule("SK", r"SK" + _starts_word("SK", "[A-Z]") + r"[0-9a-fA-F]{32}" + _END_ALNUM, "[REDACTED_TWILIO_KEY]"),
    _rule(
        "SG.",
        r"SG\." + _starts_word(r"SG\.", "[A-Za-z]") + r"[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}+",
        "[REDACTED_SENDGRID_KEY]",
        random_body=True,
    ),
    # Telegram bot tokens: the bot id, ``:``, then 35 characters that open with ``AA``.
    _rule(":AA", r":AA[A-Za-z0-9_\-]{30,}+", "[REDACTED_TELEGRAM_TOKEN]", left=r"(?<!\d)\d{5,16}\Z"),
    _rule(
        "key-",
        r"key-" + _starts_word("key-", r"[A-Za-z0-9_\-]") + r"[0-9a-f]{32}" + _END_ALNUM,
        "[REDACTED_MAILGUN_KEY]",
    ),
    _rule(
        "-us",
        r"-us\d{1,2}" + _END_ALNUM,
        "[REDACTED_MAILCHIMP_KEY]",
        left=r"(?:(?<![A-Za-z0-9])|" + _BREAK + r")[0-9a-f]{32}\Z",
    ),
    _rule("xkeysib-", r"xkeysib-[0-9a-f]{64}-[A-Za-z0-9]{16}", "[REDACTED_BREVO_KEY]"),
    _rule("shippo_", r"shippo_(?:live|test)_[0-9a-f]{40}" + _END_ALNUM, "[REDACTED_SHIPPO_TOKEN]"),
    _rule("sq0", r"sq0(?:atp|csp)-[A-Za-z0-9_\-]{22,}+", "[REDACTED_SQUARE_TOKEN]"),
    # -- clouds and identity -----------------------------------------------------------------------
    _rule("GOCSPX-", r"GOCSPX-[A-Za-z0-9_\-]{20,}+", "[REDACTED_GOOGLE_SECRET]"),
    _rule("ya29.", r"ya29\.[A-Za-z0-9_\-]{20,}+", "[REDACTED_GOOGLE_TOKEN]"),
    _rule("1//0", r"1//0" + _starts_word("1//0", "[A-Za-z0-9/]") + r"[A-Za-z0-9_\-]{40,}+", "[REDACTED_GOOGLE_TOKEN]"),
    _rule(
        "LTAI",
        r"LTAI" + _starts_word("LTAI", "[A-Za-z0-9]") + r"[A-Za-z0-9]{12,24}" + _END_ALNUM,
        "[REDACTED_ALIBABA_KEY]",
    ),
    # Azure AD client secrets: 3 characters, a digit, ``Q~``, then 31-34 more.
    _rule(
        "Q~",
        r"Q~[A-Za-z0-9_~.\-]{31,34}" + _END,
        "[REDACTED_AZURE_SECRET]",
        left=r"(?:(?<![A-Za-z0-9_~.\-])|" + _BREAK + r")[A-Za-z0-9_~.]{3}\d\Z",
    ),
    # HashiCorp Vault service/batch/recovery tokens, and the legacy ``s.`` + 24 (random-looking).
    _rule("hv", r"hv[sbr]\.[A-Za-z0-9_\-]{24,}+", "[REDACTED_VAULT_TOKEN]"),
    _rule(
        ".",
        r"\.[A-Za-z0-9]{24}" + _END,
        "[REDACTED_VAULT_TOKEN]",
        left=r"(?:(?<![A-Za-z0-9_.\-])|" + _BREAK + r")[sbr]\Z",
        random_body=True,
    ),
    _rule("AGE-SECRET-KEY-1", r"AGE-SECRET-KEY-1[0-9A-Z]{50,}+", "[REDACTED_AGE_KEY]"),
]


def _spans(text: str, rule: VendorRule) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for m in rule.pattern.finditer(text):
        start = m.start()
        if rule.left is not None:
            before = rule.left.search(text, max(0, start - _LEFT_WINDOW), start)
            if before is None:
                continue
            start = before.start()
        token = text[start : m.end()]
        if rule.random_body and not (looks_random(token) and any(c.isdigit() for c in token)):
            continue  # ``s.strip_whitespace_now``, ``SG.Message_helper…``: code, not a token
        spans.append((start, m.end()))
    return spans


def redact_vendor_tokens(text: str) -> str:
    """Every row whose needle occurs in ``text``, in table order."""
    for rule in VENDOR_RULES:
        if rule.needle not in text:
            continue
        spans = _spans(text, rule)
        if not spans:
            continue
        out: list[str] = []
        pos = 0
        for start, end in spans:
            if start >= pos:
                out.append(text[pos:start])
                out.append(rule.placeholder)
                pos = end
        out.append(text[pos:])
        text = "".join(out)
    return text
