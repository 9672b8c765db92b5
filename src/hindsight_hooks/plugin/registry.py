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


def get(ctx: HostContext) -> SessionRuntime | None:
    with _lock:
        return _runtimes.get(id(ctx))


def put(ctx: HostContext, runtime: SessionRuntime) -> None:
    key = id(ctx)
    with _lock:
        old = _runtimes.get(key)
        _runtimes[key] = runtime
    if old is None:
        weakref.finalize(ctx, _forget, key)
    elif old is not runtime:
        old.close_quietly()


def _forget(key: int) -> None:
    with _lock:
        rt = _runtimes.pop(key, None)
    if rt is not None:
        rt.close_quietly()
