"""``hindsight-hooks hook <host> <event>``: one hook of a command-hook agent, as a fresh process.

Claude Code, Codex CLI and Gemini CLI run a shell command per hook event, hand it the event as
JSON on stdin and read a JSON answer from stdout. This module is the part every such host shares;
a host adapter (``claude_code.py``, later ``codex.py``, ``gemini.py``) only maps its events onto
the public :class:`~hindsight_hooks.hooks.Host` and spells its answers. The rules, whatever the
adapter does:

- **Fail open.** The process always exits 0 with one valid JSON answer on stdout. Anything that
  goes wrong (stdin that is not JSON, a corrupt state file, an exception, a server that never
  answers) becomes the adapter's *empty* answer: no memory this time, the agent goes on.
- **Bounded.** A watchdog thread starts before stdin is read. At the event's deadline (well under
  the host's own hook timeout) it writes the empty answer and ends the process with
  ``os._exit(0)``, whatever the main thread is waiting for. The recall of the next prompts is
  then skipped for :data:`OFFLINE_COOLDOWN_S` (recorded in :mod:`.hookstate`), so a dead server
  costs one bounded wait, not one per prompt. ``HINDSIGHT_HOOK_DEADLINE_MS`` overrides the
  adapter's deadline (tests, slow machines).
- **Nothing but the answer on stdout.** File descriptor 1 is moved aside at start and fd 2 put
  in its place, so a stray ``print`` anywhere (ours or another plugin's) lands on stderr; the
  answer is written to the saved descriptor, once, under a lock shared with the watchdog.
- **Problems once per session.** Warnings and errors the plugins report through the UI, and
  those a background worker left behind, reach the user through the host's own channel
  (Claude Code: ``systemMessage``), each once per host session (:class:`~.hookstate.HookSessionState`).
  Transcript text never goes into a notice or a log.

Writing an adapter: implement :class:`HostAdapter` and add it to :data:`ADAPTERS` (module path
and attribute, imported only when that host's hook runs). In ``handle`` use :class:`HookRun`:
``run.host()`` (a short-lived public ``Host`` for this session), ``run.recall_block(messages)``,
``run.retain(messages)``, ``run.deliver_later()``; see :mod:`.claude_code` for the pattern. The
same adapter code runs in a fresh hook process (:func:`run_process`) and in the warm helper
(:mod:`.helper`), which differ only in where the ``Host`` comes from (:class:`HostSource`) and
how delivery is started.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import re
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..host_sessions import session_file_for as session_file_for
from .hookseen import stamp as stamp_seen
from .hookstate import HookSessionState, state_file

if TYPE_CHECKING:
    from ..hooks import UI, Host, Message, RecordingUI

DEADLINE_ENV = "HINDSIGHT_HOOK_DEADLINE_MS"
OFFLINE_COOLDOWN_S = 30.0
"""After a hook gave up at its deadline, recall is skipped this long (the plugin's default
``recall.failure_cooldown_ms``)."""

ADAPTERS: dict[str, str] = {
    "claude-code": "hindsight_hooks.hosts.claude_code:ADAPTER",
    "codex": "hindsight_hooks.hosts.codex:ADAPTER",
    "gemini": "hindsight_hooks.hosts.gemini:ADAPTER",
}
"""Host name on the command line -> ``module:attribute`` of its :class:`HostAdapter`."""


# --------------------------------------------------------------------------- the adapter contract


@dataclass(frozen=True)
class HookEvent:
    """One hook call as the adapter understood it."""

    host: str
    name: str
    payload: dict[str, Any]
    cwd: Path
    session_key: str | None
    """The host's own id for the session (its files and notices are keyed by it)."""
    transcript: Path | None
    """The host's transcript file: what the adapter reads."""
    session_file: Path | None
    """What the plugin keys the session by (its sid, mode, cursor): see :func:`session_file_for`."""


class HostAdapter(Protocol):
    """What a host adds to the shared machinery. All methods but ``handle`` must be cheap and
    must not raise; ``handle`` may raise (that is a fail-open answer with one notice)."""

    name: str

    def deadline_s(self, event: str) -> float:
        """This event's own time limit, well under the host's hook timeout."""
        ...

    def read_event(self, event: str, payload: dict[str, Any]) -> HookEvent:
        """The event's cwd, session id and transcript path (payload as the host sent it)."""
        ...

    def empty_answer(self, event: str) -> dict[str, Any]:
        """The valid "no memory this time" answer."""
        ...

    def with_notices(self, event: str, answer: dict[str, Any], notices: list[str]) -> dict[str, Any]:
        """``answer`` carrying ``notices`` in the host's channel for hook messages."""
        ...

    def handle(self, hook: HookEvent, run: HookRun) -> dict[str, Any]:
        """Do the event's work through ``run``; return the answer (notices are added after)."""
        ...


def load_adapter(host: str) -> HostAdapter | None:
    spec = ADAPTERS.get(host)
    if spec is None:
        return None
    module, _, attr = spec.partition(":")
    adapter: HostAdapter = getattr(importlib.import_module(module), attr)
    return adapter


# --------------------------------------------------------------------------- one run


class HostSource(Protocol):
    """Where a hook gets its public ``Host`` from: a new one per process (:class:`FreshHosts`), or
    the warm helper's cached one for the session (``helper.SessionHosts``)."""

    def acquire(self, hook: HookEvent, ui: UI) -> Host: ...

    def release(self, hook: HookEvent) -> None: ...


class FreshHosts:
    """One new short-lived ``Host`` per hook process (the process ends right after the answer)."""

    def acquire(self, hook: HookEvent, ui: UI) -> Host:
        from ..hooks import Host

        return Host(hook.cwd, session_file=hook.session_file, host_name=hook.host, ui=ui, short_lived=True)

    def release(self, hook: HookEvent) -> None:
        return None


def spawn_worker(hook: HookEvent) -> bool:
    """The default delivery: a detached worker process (see :mod:`.worker`)."""
    from .worker import spawn

    return spawn(hook.cwd, hook.host, hook.session_file, hook.session_key)


@dataclass
class HookRun:
    """The tools one hook call gives its adapter (built after stdin was read)."""

    hook: HookEvent
    state: HookSessionState | None
    hosts: HostSource = field(default_factory=FreshHosts)
    deliver: Callable[[HookEvent], bool] = spawn_worker
    _host: Host | None = None
    _ui: RecordingUI | None = None

    @property
    def ui(self) -> RecordingUI:
        if self._ui is None:
            from ..hooks import RecordingUI

            self._ui = RecordingUI()
        return self._ui

    def host(self) -> Host:
        """The public ``Host`` for this session (every ``agent_hooks`` plugin, short-lived)."""
        if self._host is None:
            self._host = self.hosts.acquire(self.hook, self.ui)
        return self._host

    def abort(self) -> None:
        """Ask in-flight plugin work to stop (the deadline fired); safe from any thread."""
        host = self._host
        if host is not None:
            host.abort()

    def close(self) -> None:
        if self._host is not None:
            self._host = None
            self.hosts.release(self.hook)

    def recall_block(self, messages: list[Message]) -> str:
        """The memory text the plugins add before the last user message (``""`` for none).

        What the plugins added is read from the public ``Host.context`` answer: the messages of
        the returned list that were not in ``messages``. Skipped while an outage cooldown runs.
        """
        if self.state is not None and self.state.offline():
            return ""
        from ..hooks import message_text

        result = self.host().context(messages)
        before = list(messages)
        added: list[str] = []
        for msg in result:
            if msg in before:
                before.remove(msg)
            else:
                text = message_text(msg)
                if text.strip():
                    added.append(text)
        return "\n\n".join(added)

    def retain(self, messages: list[Message]) -> None:
        """``agent_end`` over the whole transcript: the plugin's cursor keeps only the new part,
        queues it durably and returns (short-lived); :meth:`deliver_later` sends it."""
        self.host().agent_end(messages)

    def deliver_later(self) -> bool:
        """Deliver queued memory without waiting for it (a detached worker, or the helper's thread)."""
        try:
            return self.deliver(self.hook)
        except Exception:
            return False

    def problems(self) -> list[str]:
        """Warnings and errors the plugins reported during this call, in order."""
        if self._ui is None:
            return []
        return [text for level, text in self._ui.notices if level in ("warning", "error")]


# --------------------------------------------------------------------------- answering


class Answer:
    """Writes the one answer to the saved stdout (or the helper's socket), exactly once, from
    whichever thread is first: the answering thread or the deadline's."""

    def __init__(self, write: Callable[[bytes], None]) -> None:
        self._write = write
        self._lock = threading.Lock()
        self.given = False

    def give(self, payload: dict[str, Any]) -> bool:
        return self.give_from(lambda: payload)

    def give_from(self, make: Callable[[], dict[str, Any]]) -> bool:
        """Build the answer and write it, unless one was given; the lock is held throughout, so
        the deadline's answer (which aborts the work, and so lets the answering thread finish)
        is the one written, and nobody closes the stream before it is."""
        with self._lock:
            if self.given:
                return False
            self.given = True
            try:
                self._write(json.dumps(make(), ensure_ascii=False).encode("utf-8") + b"\n")
            except Exception:
                pass
            return True


def notice_key(text: str) -> str:
    """Notices differ in counts and timings from one process to the next; the key ignores digits."""
    return hashlib.sha256(re.sub(r"\d+", "#", text).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _prefixed(text: str) -> str:
    return text if text.lower().startswith("hindsight") else f"hindsight: {text}"


def once_per_session(state: HookSessionState | None, texts: list[str]) -> list[str]:
    """The notices to show now: each new to this session, prefixed, de-duplicated."""
    unique: dict[str, str] = {}
    for text in texts:
        unique.setdefault(notice_key(text), _prefixed(text))
    if state is None:
        return list(unique.values())
    fresh = set(state.untold(list(unique)))
    return [text for key, text in unique.items() if key in fresh]


def deadline_of(adapter: HostAdapter, event: str, env: dict[str, str] | None = None) -> float:
    raw = (env if env is not None else os.environ).get(DEADLINE_ENV, "")
    try:
        ms = float(raw)
        if ms > 0:
            return ms / 1000.0
    except ValueError:
        pass
    return adapter.deadline_s(event)


def _parse(raw: bytes) -> dict[str, Any] | None:
    try:
        payload = json.loads(raw.decode("utf-8", "surrogateescape") or "null")
    except (ValueError, UnicodeError):
        return None
    return payload if isinstance(payload, dict) else None


class Holder:
    """What the deadline handler may need from the answering thread, filled in as it is known."""

    def __init__(self) -> None:
        self.state: HookSessionState | None = None
        self.run: HookRun | None = None


def answer_event(
    adapter: HostAdapter,
    event: str,
    raw: bytes,
    holder: Holder | None = None,
    *,
    hosts: HostSource | None = None,
    deliver: Callable[[HookEvent], bool] = spawn_worker,
) -> dict[str, Any]:
    """The answer for one event (never raises): the adapter's, or its empty one plus a notice."""
    holder = holder if holder is not None else Holder()
    payload = _parse(raw)
    if payload is None:
        holder.state = _state_for(adapter.name, Path.cwd(), "no-session")
        told = once_per_session(holder.state, [f"the {event} hook got input that is not a JSON object; memory skipped"])
        return adapter.with_notices(event, adapter.empty_answer(event), told) if told else adapter.empty_answer(event)
    notices: list[str] = []
    run: HookRun | None = None
    try:
        hook = adapter.read_event(event, payload)
        stamp_seen(hook.cwd, adapter.name, event)  # doctor's evidence that this hook is live
        holder.state = _state_for(adapter.name, hook.cwd, hook.session_key or str(hook.transcript or "no-session"))
        if holder.state is not None:
            notices.extend(holder.state.take_pending())
        run = HookRun(hook, holder.state, hosts if hosts is not None else FreshHosts(), deliver)
        holder.run = run
        answer = adapter.handle(hook, run)
    except Exception as exc:
        answer = adapter.empty_answer(event)
        notices.append(f"the {event} hook failed ({type(exc).__name__}); memory skipped this time")
    finally:
        if run is not None:
            run.close()
    if run is not None:
        notices = [*notices, *run.problems()]
    told = once_per_session(holder.state, notices)
    return adapter.with_notices(event, answer, told) if told else answer


def deadline_answer(adapter: HostAdapter, event: str, holder: Holder, deadline_s: float) -> dict[str, Any]:
    """The answer when the deadline fired: empty, with a once-per-session notice; also aborts
    in-flight work and starts the outage cooldown (never raises)."""
    empty = adapter.empty_answer(event)
    try:
        run = holder.run
        if run is not None:
            run.abort()
        state = holder.state
        if state is not None:
            state.mark_offline(OFFLINE_COOLDOWN_S)
        told = once_per_session(
            state,
            [
                f"the {event} hook gave up after its {deadline_s:g} s limit (memory server slow or "
                f"unreachable?); memory is skipped for {OFFLINE_COOLDOWN_S:g} s"
            ],
        )
        return adapter.with_notices(event, empty, told) if told else empty
    except BaseException:
        return empty


def _state_for(host: str, cwd: Path, key: str) -> HookSessionState | None:
    try:
        return HookSessionState(state_file(cwd, host, key))
    except Exception:
        return None


# --------------------------------------------------------------------------- the process


def run_process(host: str, event: str, stdin_fd: int = 0, stdout_fd: int = 1, raw: bytes | None = None) -> None:
    """Be the hook process: answer once on stdout, exit 0 (``os._exit``: no thread can hold us).

    ``raw`` is the event when the caller has read stdin already (the helper client)."""
    try:
        out = os.dup(stdout_fd)
        os.dup2(2, stdout_fd)  # stray output of anything in this process goes to stderr
    except OSError:
        out = stdout_fd
    sys.stdout = sys.stderr

    def write(data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(out, view) :]

    answer = Answer(write)
    adapter: HostAdapter | None
    try:
        adapter = load_adapter(host)
    except Exception:
        adapter = None
    if adapter is None:
        print(f"hindsight-hooks hook: unknown host {host!r}; known: {', '.join(ADAPTERS)}", file=sys.stderr)
        answer.give({})
        os._exit(0)
    holder = Holder()
    _start_watchdog(adapter, event, answer, holder, deadline_of(adapter, event))
    try:
        result = answer_event(adapter, event, raw if raw is not None else _read_all(stdin_fd), holder)
    except BaseException:
        result = adapter.empty_answer(event)
    answer.give(result)
    os._exit(0)


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _start_watchdog(adapter: HostAdapter, event: str, answer: Answer, holder: Holder, deadline_s: float) -> None:
    def fire() -> None:
        answer.give_from(lambda: deadline_answer(adapter, event, holder, deadline_s))
        os._exit(0)

    timer = threading.Timer(deadline_s, fire)
    timer.daemon = True
    timer.start()
