"""The plugin's UI (``notify``, ``set_status``, ``select``) carried back over the bridge to the host.

Why: in ``serve --stdio`` the person is on the other side of the pipe, in Pi. Notices and the
status line are fire-and-forget notifications; a question (``select``) is a request the host
answers. A question must never hold a hook hostage: it gives up (answers ``None``, "no
choice") when the request that asked it is cancelled, when the host goes away, or when the
host answers with an error.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from typing import Any

from ..hooks.context import NotifyLevel
from .rpc_wire import LineWriter, notification, request

_POLL_S = 0.05


class BridgeUI:
    """A :class:`~hindsight_hooks.hooks.UI` whose person is the bridge's host."""

    def __init__(self, writer: LineWriter, cancelled: Callable[[], bool]) -> None:
        self._writer = writer
        self._cancelled = cancelled  # true when the request now running should stop waiting
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._pending: dict[str, tuple[threading.Event, list[Any]]] = {}
        self._closed = threading.Event()

    def notify(self, text: str, level: NotifyLevel = "info") -> None:
        self._writer.write(notification("ui/notify", {"text": str(text), "level": level}))

    def set_status(self, key: str, text: str | None) -> None:
        self._writer.write(notification("ui/setStatus", {"key": str(key), "text": text}))

    def select(self, title: str, options: list[str]) -> str | None:
        """Ask the host; ``None`` on cancel, error, an answer not among ``options``, or no host."""
        if self._closed.is_set():
            return None
        msg_id = f"ui-{next(self._ids)}"
        done = threading.Event()
        slot: list[Any] = []
        with self._lock:
            self._pending[msg_id] = (done, slot)
        try:
            options = [str(o) for o in options]
            if not self._writer.write(request(msg_id, "ui/select", {"title": str(title), "options": options})):
                return None
            while not done.wait(_POLL_S):
                if self._cancelled() or self._closed.is_set():
                    return None
            answer = slot[0] if slot else None
            return answer if isinstance(answer, str) and answer in options else None
        finally:
            with self._lock:
                self._pending.pop(msg_id, None)

    def answer(self, message: dict[str, Any]) -> bool:
        """Deliver a response from the host; ``False`` when it answers no question of ours."""
        msg_id = message.get("id")
        with self._lock:
            waiting = self._pending.get(msg_id) if isinstance(msg_id, str) else None
        if waiting is None:
            return False
        done, slot = waiting
        result = message.get("result")
        slot.append(result.get("value") if isinstance(result, dict) else None)
        done.set()
        return True

    def close(self) -> None:
        """The host is gone: every open question is answered ``None`` at once."""
        self._closed.set()
