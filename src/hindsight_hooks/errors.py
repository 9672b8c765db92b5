"""The root of every exception class hindsight-hooks defines.

A host embedding the plugin (or a script using the backends) can catch ``HindsightHooksError``
to tell our failures from its own, whatever layer raised them. The module imports nothing, so
any module at any layer may derive from it (ADR 141). Classes that were ``ValueError`` before
stay ``ValueError`` too, so existing ``except ValueError`` handlers keep working.
"""

from __future__ import annotations


class HindsightHooksError(Exception):
    """Something in hindsight-hooks failed; the subclass says what and where."""
