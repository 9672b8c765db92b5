"""Shared fixtures for the queue tests: a config factory, a fake clock and an in-test backend.

The backend is a real class implementing the ``MemoryBackend`` protocol (no patching): it
records what it receives and fails on command, which is all the queue needs to be exercised.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from hindsight_hooks.backends.base import (
    BackendError,
    BankSpec,
    RecallRequest,
    RecallResult,
    ReflectRequest,
    ReflectResult,
    RetainOutcome,
)
from hindsight_hooks.config_model import QueueConfig
from hindsight_hooks.queue import RetainQueue, new_job

T0 = 1_700_000_000.0  # a fixed epoch for the fake clock


class FakeClock:
    """Epoch seconds that only move when a test says so."""

    def __init__(self, start: float = T0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class FakeBackend:
    """A ``MemoryBackend`` that records deliveries and fails on command.

    ``fail_next`` is consumed one exception per call; ``fail_always`` fails every call while
    set; ``on_call`` runs inside ``retain_batch`` (e.g. to enqueue concurrently).
    """

    name = "fake"

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.delivered: list[dict[str, Any]] = []
        self.fail_next: list[BaseException] = []
        self.fail_always: BaseException | None = None
        self.on_call: Callable[[dict[str, Any]], None] | None = None
        self.ensured: list[str] = []
        self.outcome_tokens = 7
        self._lock = threading.Lock()

    def health(self, timeout_s: float | None = None) -> dict[str, Any]:
        return {"status": "healthy"}

    def ensure_bank(self, bank_id: str, spec: BankSpec, timeout_s: float | None = None) -> bool:
        self.ensured.append(bank_id)
        return False

    def retain_batch(
        self,
        bank_id: str,
        items: list[dict[str, Any]],
        *,
        operation_id: str,
        async_: bool = True,
        timeout_s: float | None = None,
    ) -> RetainOutcome:
        call = {
            "bank_id": bank_id,
            "items": items,
            "operation_id": operation_id,
            "async": async_,
            "timeout_s": timeout_s,
        }
        with self._lock:
            self.calls.append(call)
        if self.on_call is not None:
            self.on_call(call)
        if self.fail_next:
            raise self.fail_next.pop(0)
        if self.fail_always is not None:
            raise self.fail_always
        with self._lock:
            self.delivered.append(call)
        return RetainOutcome(items_count=len(items), operation_ids=[f"op-{operation_id}"], tokens=self.outcome_tokens)

    def recall(
        self, bank_id: str, request: RecallRequest, timeout_s: float | None = None, signal: Any = None
    ) -> RecallResult:
        return RecallResult()

    def reflect(
        self, bank_id: str, request: ReflectRequest, timeout_s: float | None = None, signal: Any = None
    ) -> ReflectResult:
        return ReflectResult(text="")

    def close(self) -> None:
        pass

    def delivered_ids(self) -> list[str]:
        return [c["operation_id"] for c in self.delivered]

    def delivered_markers(self) -> list[str]:
        return [m for c in self.delivered for m in markers_of_items(c["items"])]


def transient(detail: str = "connection refused", status: int | None = None) -> BackendError:
    return BackendError("retain", "transient", detail, status)


def permanent(detail: str = "bad request", status: int | None = 400) -> BackendError:
    return BackendError("retain", "permanent", detail, status)


def auth_error() -> BackendError:
    return BackendError("retain", "auth", "invalid API key", 401)


def item(marker: str = "m", *, doc: str = "doc-1", mode: str = "append", **extra: Any) -> dict[str, Any]:
    """A wire item whose content is a JSON array holding ``marker`` (so merges stay traceable)."""
    out = {
        "content": orjson.dumps([marker]).decode(),
        "context": "Coding session (test)",
        "document_id": doc,
        "update_mode": mode,
        "tags": ["repo:test"],
        "metadata": {"session_id": "s1"},
    }
    out.update(extra)
    return out


def markers_of_items(items: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for it in items:
        try:
            value = orjson.loads(it["content"])
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, list):
            out.extend(str(v) for v in value)
    return out


def job(
    bank: str = "bank-a", marker: str = "m", *, source: str = "auto", now: float | None = None, **kw: Any
) -> dict[str, Any]:
    return new_job(bank, source, [item(marker, **kw)], True, now=T0 if now is None else now)


def make_cfg(**overrides: Any) -> QueueConfig:
    base: dict[str, Any] = {"lock_timeout_ms": 5000, "lock_retry_ms": 5}
    base.update(overrides)
    return QueueConfig(**base)


def read_lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


@pytest.fixture
def qpath(tmp_path: Path) -> Path:
    return tmp_path / ".hindsight" / "retain-queue.jsonl"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def backend() -> FakeBackend:
    return FakeBackend()


@pytest.fixture
def make_queue(qpath: Path, clock: FakeClock) -> Iterator[Callable[..., RetainQueue]]:
    def factory(path: Path | None = None, **cfg: Any) -> RetainQueue:
        return RetainQueue(path or qpath, make_cfg(**cfg), clock=clock)

    yield factory
