"""Abandonable HTTP exchanges: a request the caller can walk away from at once, closing its socket.

Why this exists: auto-recall runs every bank in parallel under one deadline and the host's
abort signal (docs/recall.md#per-bank-recall). httpx's sync API blocks the calling thread until the
server answers or a timeout fires, and its timeouts are per phase, not per call, so neither
an abort nor a hard deadline can be honoured from inside the call.

How (ADR 013): each exchange runs on a worker thread while the caller waits in short
slices, checking the signal and the deadline. The worker uses a *lane*: a small
``httpx.Client`` limited to one connection, kept in an idle pool so keep-alive still works
across calls. httpx's documented ``trace`` request extension reports the socket a lane
connects (``connection.connect_tcp.complete`` / ``start_tls.complete``); since a lane has
one connection, that socket is the one in use. Abandoning a lane shuts the socket down
(``SHUT_RDWR``), which wakes the worker's blocked read, sends FIN so the server sees the
client leave, and the worker then closes the lane instead of returning it to the pool.
With an injected transport (tests: ``httpx.MockTransport``) there is no socket: lanes
borrow the shared client and an abandoned worker simply finishes in the background.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable
from typing import Any, Literal

import httpx

from ..errors import HindsightHooksError

POLL_S = 0.02
MAX_IDLE_LANES = 4

TraceFn = Callable[[str, dict[str, Any]], None]
BuildFn = Callable[[httpx.Client, TraceFn], httpx.Request]


class Abandoned(HindsightHooksError):
    """The caller stopped waiting: ``reason`` is ``"aborted"`` (signal) or ``"timeout"`` (deadline)."""

    def __init__(self, reason: Literal["aborted", "timeout"]) -> None:
        super().__init__(reason)
        self.reason: Literal["aborted", "timeout"] = reason


class Lane:
    """One client with at most one live connection, whose socket we can shut down from any thread."""

    __slots__ = ("_abandoned", "_lock", "_sock", "client", "generation", "owned")

    def __init__(self, client: httpx.Client, owned: bool) -> None:
        self.client = client
        self.owned = owned
        self.generation = -1
        self._sock: socket.socket | None = None
        self._abandoned = False
        self._lock = threading.Lock()

    @property
    def abandoned(self) -> bool:
        return self._abandoned

    def trace(self, event: str, info: dict[str, Any]) -> None:
        """httpcore trace hook: remember the socket of every new connection this lane makes."""
        if not event.endswith((".connect_tcp.complete", ".start_tls.complete", ".connect_unix_socket.complete")):
            return
        stream = info.get("return_value")
        get_extra = getattr(stream, "get_extra_info", None)
        sock = get_extra("socket") if callable(get_extra) else None
        with self._lock:
            self._sock = sock if isinstance(sock, socket.socket) else None
            late = self._abandoned
        if late:  # connected after the caller left: do not let the request go out
            self._shutdown()

    def abandon(self) -> None:
        with self._lock:
            self._abandoned = True
        self._shutdown()

    def _shutdown(self) -> None:
        sock = self._sock
        if sock is not None:
            # The plain socket method even for an SSLSocket: SSLSocket.shutdown would drop its
            # SSL object under the worker's feet; this only ends the TCP stream (the worker's
            # read then sees EOF and fails cleanly).
            with contextlib.suppress(OSError, ValueError):
                socket.socket.shutdown(sock, socket.SHUT_RDWR)

    def close(self) -> None:
        if self.owned:
            with contextlib.suppress(Exception):
                self.client.close()


class _Exchange:
    """One request's hand-off between the waiting caller and its worker thread."""

    __slots__ = ("_abandoned", "_lane", "_lock", "done", "error", "response")

    def __init__(self) -> None:
        self.response: httpx.Response | None = None
        self.error: BaseException | None = None
        self.done = threading.Event()
        self._lane: Lane | None = None
        self._abandoned = False
        self._lock = threading.Lock()

    def attach(self, lane: Lane) -> bool:
        """Bind the worker's lane; False when the caller already left (the lane stays unused)."""
        with self._lock:
            self._lane = lane
            return not self._abandoned

    def abandon(self) -> None:
        with self._lock:
            self._abandoned = True
            lane = self._lane
        if lane is not None:
            lane.abandon()


class LanePool:
    """Idle lanes for reuse; busy lanes are owned by their worker until it finishes."""

    def __init__(self, new_lane: Callable[[], Lane]) -> None:
        self._new_lane = new_lane
        self._idle: list[Lane] = []
        self._lock = threading.Lock()
        self._generation = 0  # bumped by close(): lanes busy across a close are never reused

    def _acquire(self) -> Lane:
        with self._lock:
            if self._idle:
                return self._idle.pop()
            generation = self._generation
        lane = self._new_lane()
        lane.generation = generation
        return lane

    def _release(self, lane: Lane) -> None:
        with self._lock:
            keep = not lane.abandoned and lane.generation == self._generation and len(self._idle) < MAX_IDLE_LANES
            if keep:
                self._idle.append(lane)
        if not keep:
            lane.close()

    def close(self) -> None:
        """Close idle lanes now; busy ones close themselves when their request ends."""
        with self._lock:
            self._generation += 1
            idle, self._idle = self._idle, []
        for lane in idle:
            lane.close()

    def exchange(self, build: BuildFn, budget_s: float, signal: threading.Event | None) -> httpx.Response:
        """Send one request; return its fully read response, or raise what httpx raised.

        Raises ``Abandoned`` when ``signal`` is set or ``budget_s`` passes first; the caller
        then returns within one poll slice (20 ms) and the lane's socket is shut down. Lane
        set-up (a new client) happens on the worker too, so it never delays the caller.
        """
        end = time.monotonic() + max(0.0, budget_s)
        ex = _Exchange()

        def work() -> None:
            lane: Lane | None = None
            try:
                lane = self._acquire()
                if ex.attach(lane):
                    ex.response = lane.client.send(build(lane.client, lane.trace))
            except BaseException as exc:  # handed to the waiting caller, or dropped if it left
                ex.error = exc
            finally:
                ex.done.set()
                if lane is not None:
                    self._release(lane)

        threading.Thread(target=work, name="hindsight-hooks-http", daemon=True).start()
        while not ex.done.wait(max(0.0, min(POLL_S, end - time.monotonic()))):
            if signal is not None and signal.is_set():
                ex.abandon()
                raise Abandoned("aborted")
            if time.monotonic() >= end:
                ex.abandon()
                raise Abandoned("timeout")
        if ex.error is not None:
            raise ex.error
        if ex.response is None:  # attach() lost the race with abandon(): cannot happen after done
            raise Abandoned("aborted")
        return ex.response
