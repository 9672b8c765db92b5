"""Memory sessions inside a Python agent framework's own process (pydantic-ai, the Agents SDK, LangChain).

Why this module: the three framework adapters differ only in how their framework hands over messages and
tools. What memory does around a model call is the same for all of them, so it lives here once, on the
public :class:`~hindsight_hooks.hooks.Host` and on Pi-shaped messages:

- **One Host per session**, started on first use and kept in a small registry (:class:`MemorySessions`),
  because one agent object usually serves many conversations (pydantic-ai conversation ids, LangGraph
  thread ids). A session is named by id the way every other host names it
  (``<cwd>/.hindsight/sessions/<id>.jsonl``, never written), so ``--session-file`` with that path reaches
  it from a shell. At most :data:`MAX_OPEN_SESSIONS` stay open; the least recently used is shut down.
- **Recall for every model request of a run.** The plugin injects its block only before a *user* turn;
  a framework makes further model requests in the same run after each tool call, and the model should
  keep seeing what was recalled. So the block the Host returned for a user message is kept and inserted
  again, at the same place, while that user message is still the last one (:meth:`MemorySession.arecall`).
- **Bounded, fail-open.** Every Host call is awaited for at most the plugin's own configured limit plus
  :data:`GRACE_S` (:class:`Bounds`, from the project's effective config); past it the framework's run goes
  on without memory (recall) or without waiting for delivery (retain: the job is already queued on disk),
  and a recall still running is told to stop (``Host.abort``). Nothing here raises into the framework.
- **Async frameworks use the async twins** (``astart``, ``acontext``, ``aagent_end``, ``acall_tool``,
  ``ashutdown``): the event loop never blocks. Synchronous entry points (LangChain's ``invoke``) run the
  same calls on a worker thread joined with the same bound.

Notices go to the ``hindsight_hooks`` logger (:class:`LoggingUI`): the plugin's notices are already
redacted and never carry transcript text.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
import uuid
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ..hooks import UI, Host, Message, Tool, ToolResult, message_text
from ..hooks.context import NotifyLevel
from ..host_sessions import session_file_for
from ..retain.injected import INJECTED_CUSTOM_TYPE

_T = TypeVar("_T")

GRACE_S = 1.0
"""Added to each of the plugin's own limits before the adapter stops waiting for it."""

MAX_OPEN_SESSIONS = 32
"""Sessions kept open per adapter object; the least recently used beyond this is shut down."""

_LOG = logging.getLogger("hindsight_hooks")
_LEVELS = {"info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


class LoggingUI:
    """The UI of a library host: notices become log records; no person answers questions."""

    def __init__(self, logger: logging.Logger | None = None) -> None:
        self._log = logger or _LOG
        self.status: dict[str, str] = {}

    def notify(self, text: str, level: NotifyLevel = "info") -> None:
        self._log.log(_LEVELS.get(level, logging.INFO), "%s", text)

    def set_status(self, key: str, text: str | None) -> None:
        if text is None:
            self.status.pop(key, None)
        else:
            self.status[key] = text

    def select(self, title: str, options: list[str]) -> str | None:
        return None


@dataclass(frozen=True)
class Bounds:
    """How long the adapter waits for each Host call, in seconds (the plugin's limit plus grace)."""

    start_s: float
    recall_s: float
    retain_s: float
    tool_s: float
    shutdown_s: float

    @classmethod
    def for_project(cls, cwd: Path) -> Bounds:
        """The bounds for ``cwd``'s effective config; the defaults when it cannot be read."""
        from ..config import load_config

        try:
            cfg = load_config(cwd).config
            hs, rc, rt, qu = cfg.hindsight.timeout_ms, cfg.recall.timeout_ms, cfg.retain, cfg.queue
            start_ms = 2 * min(hs, 5000)  # the startup ensure of two banks at most (plugin STARTUP_ENSURE_MS)
            retain_ms = rt.flush_timeout_ms + qu.lock_timeout_ms
            shutdown_ms = rt.shutdown_flush_timeout_ms + qu.lock_timeout_ms
        except Exception:
            start_ms, rc, retain_ms, shutdown_ms, hs = 10000, 40000, 15000, 7000, 30000
        return cls(
            start_s=start_ms / 1000 + GRACE_S,
            recall_s=rc / 1000 + GRACE_S,
            retain_s=retain_ms / 1000 + GRACE_S,
            tool_s=max(rc, retain_ms, hs) / 1000 + GRACE_S,
            shutdown_s=shutdown_ms / 1000 + GRACE_S,
        )


@dataclass(frozen=True)
class Insertion:
    """Our block, to go before message ``before`` of the list given to recall (``len`` = after the last)."""

    before: int
    text: str


def insertions(given: Sequence[Message], returned: Sequence[Message]) -> list[Insertion]:
    """Where the Host's answer put the plugin's block messages, counted in ``given``'s indices.

    The plugin only inserts (``inject``): every other message comes back in order, possibly
    sanitised, so the position of an injected message is the number of others before it.
    """
    found: list[Insertion] = []
    seen = 0
    for msg in returned:
        if isinstance(msg, dict) and msg.get("customType") == INJECTED_CUSTOM_TYPE:
            text = message_text(msg)
            if text.strip():
                found.append(Insertion(min(seen, len(given)), text))
        else:
            seen += 1
    return found


def insert_blocks(
    items: Sequence[Any], origins: Sequence[int], found: list[Insertion], make: Callable[[str], Any]
) -> list[Any]:
    """A new list of a framework's ``items`` with ``make(text)`` for each block, before the item its
    insertion was counted before (``origins[i]``: the item message ``i`` of the recall view came from),
    or after the last item. Later positions go in first, so the earlier ones' indices still hold."""
    out = list(items)
    for ins in sorted(found, key=lambda x: x.before, reverse=True):
        out.insert(origins[ins.before] if ins.before < len(origins) else len(out), make(ins.text))
    return out


def _anchor(messages: Sequence[Message]) -> tuple[int, str] | None:
    """The last user message (index and a fingerprint): a run's later requests still end with it."""
    import hashlib

    import orjson

    for i in range(len(messages) - 1, -1, -1):
        msg = messages[i]
        if msg.get("role") == "user" and msg.get("customType") != INJECTED_CUSTOM_TYPE:
            try:
                raw = orjson.dumps(msg, option=orjson.OPT_SORT_KEYS)
            except (TypeError, ValueError):
                raw = repr(msg.get("content")).encode("utf-8", "replace")
            return i, hashlib.sha256(raw).hexdigest()
    return None


def new_session_id(prefix: str) -> str:
    """A fresh session id for an adapter object that was given none."""
    return f"{prefix}-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:8]}"


def wait_bounded(fn: Callable[[], _T], bound_s: float, fallback: _T, what: str) -> _T:
    """``fn()`` run on a worker thread and waited for at most ``bound_s``; ``fallback`` when it fails or
    is late (logged, never raised), for synchronous callers that must not block past the bound."""
    box: list[_T] = []
    done = threading.Event()

    def run() -> None:
        try:
            box.append(fn())
        except Exception as exc:
            _LOG.warning("hindsight: %s failed: %s", what, type(exc).__name__)
        finally:
            done.set()

    threading.Thread(target=run, name=f"hindsight-{what}", daemon=True).start()
    if not done.wait(bound_s):
        _LOG.warning("hindsight: %s took longer than %.1f s; the run goes on without it", what, bound_s)
        return fallback
    return box[0] if box else fallback


class MemorySession:
    """One Host (one session of one project) and the adapter-side rules around it."""

    def __init__(self, host: Host, bounds: Bounds) -> None:
        self.host = host
        self.bounds = bounds
        self._started = False
        self._closed = False
        self._start_lock = threading.Lock()
        self._start_done = threading.Event()
        self._kept: tuple[tuple[int, str], list[Insertion]] | None = None

    # -- waiting with a bound ------------------------------------------------------------------
    async def _await(self, make: Callable[[], Awaitable[_T]], bound_s: float, fallback: _T, what: str) -> _T:
        import asyncio

        try:
            return await asyncio.wait_for(make(), timeout=bound_s)
        except TimeoutError:
            _LOG.warning("hindsight: %s took longer than %.1f s; the run goes on without it", what, bound_s)
        except Exception as exc:  # the Host never raises, but a framework must never see us fail
            _LOG.warning("hindsight: %s failed: %s", what, type(exc).__name__)
        return fallback

    # -- lifecycle -----------------------------------------------------------------------------
    def _claim_start(self) -> bool:
        with self._start_lock:
            if self._started or self._closed:
                return False
            self._started = True
            return True

    async def astart(self) -> None:
        """Start the session once; a caller that comes while it starts waits for it (bounded)."""
        import asyncio

        if self._claim_start():
            try:
                await self._await(self.host.astart, self.bounds.start_s, None, "session start")
            finally:
                self._start_done.set()
        elif not self._start_done.is_set():
            await asyncio.to_thread(self._start_done.wait, self.bounds.start_s)

    def start(self) -> None:
        if self._claim_start():
            try:
                wait_bounded(self.host.start, self.bounds.start_s, None, "session start")
            finally:
                self._start_done.set()
        else:
            self._start_done.wait(self.bounds.start_s)

    async def aclose(self) -> None:
        if self._started and not self._closed:
            self._closed = True
            await self._await(self.host.ashutdown, self.bounds.shutdown_s, None, "session end")
        self._closed = True

    def close(self) -> None:
        if self._started and not self._closed:
            self._closed = True
            wait_bounded(self.host.shutdown, self.bounds.shutdown_s, None, "session end")
        self._closed = True

    @property
    def closed(self) -> bool:
        return self._closed

    # -- recall --------------------------------------------------------------------------------
    def _after_recall(self, given: list[Message], returned: list[Message]) -> list[Insertion]:
        found = insertions(given, returned)
        if found:
            anchor = _anchor(given)
            self._kept = (anchor, found) if anchor is not None else None
            return found
        if self._kept is None:  # nothing kept: no fingerprint to compare (most requests of most runs)
            return []
        anchor = _anchor(given)
        if anchor is not None and self._kept[0] == anchor:
            return [i for i in self._kept[1] if i.before <= len(given)]
        return []

    async def arecall(self, messages: list[Message]) -> list[Insertion]:
        """Where our block goes in ``messages`` (a conversation without system messages) for this request."""
        if self._closed:
            return []
        await self.astart()

        async def ask() -> list[Message]:
            return await self.host.acontext(messages)

        returned = await self._await(ask, self.bounds.recall_s, None, "recall")
        if returned is None:
            self.host.abort()
            return []
        return self._after_recall(messages, returned)

    def recall(self, messages: list[Message]) -> list[Insertion]:
        """:meth:`arecall` for synchronous frameworks (the Host call runs on a worker thread)."""
        if self._closed:
            return []
        self.start()
        returned = wait_bounded(lambda: self.host.context(messages), self.bounds.recall_s, None, "recall")
        if returned is None:
            self.host.abort()
            return []
        return self._after_recall(messages, returned)

    # -- retain --------------------------------------------------------------------------------
    async def aretain(self, messages: list[Message]) -> None:
        """Hand the whole conversation to ``agent_end``: the plugin queues the new part durably."""
        if self._closed or not messages:
            return
        await self.astart()

        async def end() -> None:
            await self.host.aagent_end(messages)

        await self._await(end, self.bounds.retain_s, None, "retain")

    def retain(self, messages: list[Message]) -> None:
        if self._closed or not messages:
            return
        self.start()
        wait_bounded(lambda: self.host.agent_end(messages), self.bounds.retain_s, None, "retain")

    # -- tools ---------------------------------------------------------------------------------
    async def atools(self) -> list[Tool]:
        """The tools to offer the model in this session (``Host.session_tools``)."""
        import asyncio

        if self._closed:
            return []
        await self.astart()

        async def offered() -> list[Tool]:
            return list((await asyncio.to_thread(self.host.session_tools)).values())

        return await self._await(offered, self.bounds.start_s, [], "listing tools")

    def tools(self) -> list[Tool]:
        if self._closed:
            return []
        self.start()
        return wait_bounded(lambda: list(self.host.session_tools().values()), self.bounds.start_s, [], "listing tools")

    async def acall_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        await self.astart()
        late = ToolResult.error(f"{name} did not answer within {self.bounds.tool_s:.0f} s", kind="timeout")

        async def call() -> ToolResult:
            return await self.host.acall_tool(name, arguments)

        return await self._await(call, self.bounds.tool_s, late, f"tool {name}")

    def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        self.start()
        late = ToolResult.error(f"{name} did not answer within {self.bounds.tool_s:.0f} s", kind="timeout")
        return wait_bounded(lambda: self.host.call_tool(name, arguments), self.bounds.tool_s, late, f"tool {name}")


class MemorySessions:
    """The sessions of one adapter object: a Host per session id, opened on first use.

    ``session_id`` fixes every run to that one session; otherwise each run names its session
    (a conversation or thread id) or gets :attr:`default_session_id`, one per adapter object.
    """

    def __init__(
        self,
        *,
        host_name: str,
        cwd: str | os.PathLike[str] | None = None,
        session_id: str | None = None,
        ui: UI | None = None,
        plugins: list[object] | None = None,
    ) -> None:
        self.cwd = Path(cwd) if cwd is not None else Path.cwd()
        self.host_name = host_name
        self.fixed_session_id = session_id
        self.default_session_id = session_id or new_session_id(host_name)
        self.ui: UI = ui if ui is not None else LoggingUI()
        self._plugins = plugins
        self._open: OrderedDict[str, MemorySession] = OrderedDict()
        self._lock = threading.Lock()
        self._bounds: Bounds | None = None
        atexit.register(_close_at_exit, weakref.ref(self))

    def session_id_for(self, candidate: str | None) -> str:
        """The session a run belongs to: the fixed id, else the framework's own, else the default."""
        if self.fixed_session_id:
            return self.fixed_session_id
        return candidate.strip() if candidate and candidate.strip() else self.default_session_id

    def session(self, candidate: str | None = None) -> MemorySession:
        """The open session for ``candidate`` (see :meth:`session_id_for`), opened if needed."""
        sid = self.session_id_for(candidate)
        evicted: list[MemorySession] = []
        with self._lock:
            found = self._open.get(sid)
            if found is not None and not found.closed:
                self._open.move_to_end(sid)
                return found
            if self._bounds is None:
                self._bounds = Bounds.for_project(self.cwd)
            host = Host(
                cwd=self.cwd,
                session_file=session_file_for(self.cwd, sid),
                host_name=self.host_name,
                ui=self.ui,
                plugins=self._plugins,
            )
            made = MemorySession(host, self._bounds)
            self._open[sid] = made
            while len(self._open) > MAX_OPEN_SESSIONS:
                evicted.append(self._open.popitem(last=False)[1])
        for old in evicted:  # their bounded flush runs off the caller's path
            threading.Thread(target=old.close, name="hindsight-session-end", daemon=True).start()
        return made

    async def asession(self, candidate: str | None = None) -> MemorySession:
        """:meth:`session` for async callers: opening one (entry points, config files) runs off the loop."""
        import asyncio

        sid = self.session_id_for(candidate)
        with self._lock:
            found = self._open.get(sid)
            if found is not None and not found.closed:
                self._open.move_to_end(sid)
                return found
        return await asyncio.to_thread(self.session, sid)

    def _take_all(self) -> list[MemorySession]:
        with self._lock:
            sessions = list(self._open.values())
            self._open.clear()
        return sessions

    async def aclose(self) -> None:
        """End every open session: each one's bounded flush (what is left stays queued on disk)."""
        for sess in self._take_all():
            await sess.aclose()

    def close(self) -> None:
        for sess in self._take_all():
            sess.close()

    def skipped(self, step: str, exc: BaseException) -> None:
        """Tell the user memory left out ``step`` (recall, retain) this time and the run went on.

        Only the exception's type is named: its message may quote the conversation.
        """
        self.ui.notify(f"hindsight: {step} skipped: {type(exc).__name__}", "warning")


class ClosesSessions:
    """``close``/``aclose`` for a framework adapter object that owns a :class:`MemorySessions`.

    Listed first among the adapter's bases, so a framework base class never shadows them.
    """

    sessions: MemorySessions

    async def aclose(self) -> None:
        """End every session this object opened (a bounded flush each)."""
        await self.sessions.aclose()

    def close(self) -> None:
        """:meth:`aclose` for synchronous callers."""
        self.sessions.close()


def _close_at_exit(ref: weakref.ReferenceType[MemorySessions]) -> None:
    sessions = ref()
    if sessions is not None:
        try:
            sessions.close()
        except Exception:
            pass


def tool_text(result: ToolResult) -> str:
    """A tool result as the one string frameworks hand back to the model (all text parts)."""
    texts = [str(p.get("text", "")) for p in result.content if isinstance(p, dict) and p.get("type") == "text"]
    return "\n".join(texts)


def tool_schema(tool: Tool) -> dict[str, Any]:
    """The JSON schema of a tool's arguments, as a model is shown it."""
    return tool.parameters.model_json_schema(by_alias=False)
