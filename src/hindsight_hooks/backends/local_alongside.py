"""A helper thread that runs a hybrid recall's vector search while the recall ranks by bm25.

Why: the two searches of a hybrid recall do not depend on each other. SQLite lets go of the GIL
for the whole bm25 statement, so on a machine with a second core the vector search's Python and
numpy run meanwhile, and a recall costs about the longer of the two instead of their sum (ADR 177;
ADR 227 put the statement on the recall's thread and the vectors here: the statement's thread then
needs the GIL back after one statement, not five).

The helper reads on its own thread's connection. It holds the shared vector index while it
searches and waits for the lexical candidates' rowids, which the recall posts (or cancels) before
it waits for the helper, so the two cannot deadlock. The pool is per process (a forked child has
none of its parent's threads) and starts its threads when first asked; an idle thread costs
nothing.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:  # concurrent.futures is imported on first use: a hook process without vectors never pays for it
    from concurrent.futures import Future, ThreadPoolExecutor

T = TypeVar("T")

# Recalls of different store files (or of two banks at once) each get a thread rather than wait
# in line behind one another's statement.
MAX_THREADS = 4

_lock = threading.Lock()
_pool: tuple[int, ThreadPoolExecutor] | None = None


def alongside(work: Callable[[], T]) -> Future[T] | None:
    """``work`` started on a helper thread, or None when no thread can be had (the interpreter is
    shutting down): the caller then runs it itself."""
    from concurrent.futures import ThreadPoolExecutor

    global _pool
    pid = os.getpid()
    try:
        with _lock:
            if _pool is None or _pool[0] != pid:
                _pool = (pid, ThreadPoolExecutor(max_workers=MAX_THREADS, thread_name_prefix="hindsight-recall"))
            return _pool[1].submit(work)
    except RuntimeError:  # "cannot schedule new futures after interpreter shutdown"
        return None
