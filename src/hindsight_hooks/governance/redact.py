"""Secret redaction: the one module every writer calls before anything touches disk or network.

Patterns follow BEHAVIOUR.md §7.8. ``redact_text`` is applied to retained content when
``retain.redact_secrets`` is on, and *always* to errors, diagnostics, receipts, snapshots,
notices and logs. Order matters: specific token shapes first, then generic key/value forms,
so a token is replaced by its typed placeholder before the generic rule sees it.
"""

from __future__ import annotations

import re
from typing import Any

_SECRET_WORDS = r"api[_-]?key|apikey|token|secret|password|passwd|authorization|access[_-]?key|private[_-]?key"

_RULES: list[tuple[re.Pattern[str], str]] = [
    # PEM private keys (whole block, or a dangling BEGIN to the end when torn).
    (
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----.*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|\Z)",
            re.S,
        ),
        "[REDACTED_PRIVATE_KEY]",
    ),
    (re.compile(r"\b[Bb]earer\s+[A-Za-z0-9._~+/=\-]{12,}"), "Bearer [REDACTED]"),
    (re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{8,}"), "[REDACTED_API_KEY]"),
    (re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{20,})"), "[REDACTED_GITHUB_TOKEN]"),
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), "[REDACTED_AWS_KEY]"),
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{8,}"), "[REDACTED_SLACK_TOKEN]"),
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"), "[REDACTED_GOOGLE_KEY]"),
    (re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{10,}"), "[REDACTED_STRIPE_KEY]"),
    (
        re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
        "[REDACTED_JWT]",
    ),
    # Cookie headers: the whole rest of the line.
    (re.compile(r"(?im)^(\s*(?:set-)?cookie\s*:)[^\r\n]*"), r"\1 [REDACTED]"),
    # URL userinfo: scheme://user:pass@host
    (re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.\-]*://)[^/\s@:]*:[^/\s@]*@"), r"\1[REDACTED]@"),
    # Query parameters whose name smells secret.
    (
        re.compile(
            r"(?i)([?&;][A-Za-z0-9_.\-]*(?:token|key|secret|password|apikey|signature|auth)[A-Za-z0-9_.\-]*=)[^&#\s\"'<>]+"
        ),
        r"\1[REDACTED]",
    ),
    # JSON string values under secret-like keys: "token": "..."
    (
        re.compile(
            r"(?i)(\"[A-Za-z0-9_\-]*(?:" + _SECRET_WORDS + r")[A-Za-z0-9_\-]*\"\s*:\s*)\"(?:[^\"\\]|\\.)*\""
        ),
        r'\1"[REDACTED]"',
    ),
    # ENV-style NAME=value where NAME contains API_KEY, TOKEN, SECRET or PASSWORD.
    (
        re.compile(
            r"(?i)\b([A-Z0-9_]*(?:API_KEY|APIKEY|TOKEN|SECRET|PASSWORD|PASSWD)[A-Z0-9_]*)\s*=\s*"
            r"(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s\"',;]+)"
        ),
        r"\1=[REDACTED]",
    ),
    # key: value / key=value forms (YAML, headers, prose).
    (
        re.compile(
            r"(?i)\b((?:" + _SECRET_WORDS + r")\s*[:=]\s*)(?!\[REDACTED)(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s\"',;}]+)"
        ),
        r"\1[REDACTED]",
    ),
]


def redact_text(text: str) -> str:
    """Return ``text`` with every recognised secret replaced by a placeholder."""
    if not text:
        return text
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text


def redact_value(value: Any) -> Any:
    """Redact strings inside JSON-like data (dict keys are kept; values are redacted)."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {k: redact_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_value(v) for v in value]
    return value


def redact_error(exc: BaseException | str, limit: int = 500) -> str:
    """A redacted, bounded one-line description of an error for notices, logs and the queue."""
    text = exc if isinstance(exc, str) else (str(exc) or type(exc).__name__)
    text = redact_text(" ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"
