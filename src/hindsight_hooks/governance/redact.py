"""Secret redaction: the one module every writer calls before anything touches disk or network.

Patterns follow docs/governance.md#redaction; ADR-009 records the judgement calls. ``redact_text`` is
applied to retained content when ``retain.redact_secrets`` is on, and *always* to errors,
diagnostics, receipts, snapshots, notices and logs.

Two kinds of rule run in order:

1. **Shapes** (``secret_shapes``) — PEM blocks, ``Bearer`` credentials, vendor keys
   (OpenAI/Anthropic, GitHub, AWS, Slack, Google, Stripe, GitLab, npm, Hugging Face, and the
   table in ``secret_vendors``: PyPI, Twilio, SendGrid, Telegram, Vault, Mailgun, webhook URLs,
   …), JWTs, cookie headers, URL userinfo, secret-named query parameters, and secrets known by
   the format around them (``secret_fields``: connection strings, base64 ``user:pass`` auth
   fields, a credential after a spaced label; ``secret_cli``: password flags of common tools).
2. **Named values** (``secret_names``) — ``password = …``, ``"token": "…"``, ``API_KEY=…``,
   ``--token …``. The name says "secret" but the value may be ordinary code
   (``password = get_password()``), so the value is judged: literals and credential-looking
   words are redacted; calls, attribute paths, multi-word identifiers, keywords and
   placeholders are kept.

Retained content is usually JSON text, so every rule also works on JSON-escaped text and
never redacts across a bare ``"``: valid JSON stays valid. Every rule is linear in the text.
``redact_text`` is idempotent.
"""

from __future__ import annotations

from typing import Any

from .secret_lexicon import REDACTED, is_placeholder, is_secret_key
from .secret_names import redact_named_values
from .secret_shapes import redact_shapes

__all__ = ["REDACTED", "contains_secret", "is_secret_key", "redact_error", "redact_text", "redact_value"]

# Integers under a secret name shorter than this are counts/ports/flags, not PINs.
_SECRET_INT_MIN = 100000


def redact_text(text: str) -> str:
    """Return ``text`` with every recognised secret replaced by a placeholder. Idempotent."""
    if not text:
        return text
    return redact_named_values(redact_shapes(text))


def contains_secret(text: str) -> bool:
    """Whether ``text`` holds something secret-shaped (i.e. ``redact_text`` would change it)."""
    return bool(text) and redact_text(text) != text


def _under_secret_key(value: Any) -> Any:
    if isinstance(value, str):
        return value if (not value or is_placeholder(value)) else REDACTED
    if isinstance(value, int) and not isinstance(value, bool):
        return value if abs(value) < _SECRET_INT_MIN else REDACTED
    return redact_value(value)


def redact_value(value: Any) -> Any:
    """Redact JSON-like data: every string, and any scalar stored under a secret-named key.

    Structured data has no "code" to spare, so under a key such as ``token`` or
    ``Authorization`` any non-empty string is replaced. Keys are redacted as text too (a
    secret used as a key is still a secret); lists and tuples keep their type.
    """
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for k, v in value.items():
            if isinstance(k, str):
                out[redact_text(k)] = _under_secret_key(v) if is_secret_key(k) else redact_value(v)
            else:
                out[k] = redact_value(v)
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
