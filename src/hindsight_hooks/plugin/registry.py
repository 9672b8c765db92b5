"""Per-host session state, keyed by the ``HostContext`` object a host passes to every hook.

The plugin object is a module-level singleton (the entry point names it), yet one process may
run several hosts (tests, an agent with subagents). State therefore hangs off each context,
and is dropped when the context is garbage-collected.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..hooks import HostContext
    from .runtime import SessionRuntime

_lock = threading.Lock()
_runtimes: dict[int, SessionRuntime] = {}
# Contexts that cannot be weakly referenced (``types.SimpleNamespace``, classes with
# ``__slots__``): a foreign host may pass any object with the named attributes (ADR-025).
# They are held strongly so their ``id`` can never be reused by another object while the
# runtime keyed by it is alive; the cost is one small object per such host for the process.
_pinned: dict[int, object] = {}


def get(ctx: HostContext) -> SessionRuntime | None:
    with _lock:
        return _runtimes.get(id(ctx))


def put(ctx: HostContext, runtime: SessionRuntime) -> None:
    key = id(ctx)
    with _lock:
        old = _runtimes.get(key)
        _runtimes[key] = runtime
    if old is None:
        try:
            weakref.finalize(ctx, _forget, key)
        except TypeError:
            with _lock:
                _pinned[key] = ctx
    elif old is not runtime:
        old.close_quietly()


def _forget(key: int) -> None:
    with _lock:
        rt = _runtimes.pop(key, None)
    if rt is not None:
        rt.close_quietly()
