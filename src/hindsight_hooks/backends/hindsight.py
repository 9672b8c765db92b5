"""Our own thin client for a Hindsight 1.1.0 server (docs/backends.md#hindsight-server), as a ``MemoryBackend``.

Imported only when the hindsight backend is chosen, so ``httpx`` loads only then.

Decisions (ADR 013):
- One shared ``httpx.Client`` (created lazily, keep-alive) for every call except recall and
  reflect, which run on abandonable lanes (``hindsight_lanes``) so a deadline or the host's
  abort signal returns control at once and closes the socket.
- Each request's timeout is ``min(timeout_ms, caller's remaining budget)``.
- Only GETs retry in-call (≤3 retries when the server *answered* 408/425/429/5xx, 1 s·2^(n-1)
  + 0-500 ms jitter, never past the caller's deadline). A request that got no answer at all (a
  refused or reset connection, a peer that hung up) is not retried here: it is definitive for
  this call, and the caller's cooldown and the durable queue decide when to try again (ADR 069).
  Writes never retry here: the durable queue resends with the same ``operation_id``.
- Every failure is one ``HindsightError`` with a kind the queue can act on; its detail is
  redacted, bounded, and never echoes request content or the API key.
"""

from __future__ import annotations

import json
import random
import ssl
import threading
import time
from typing import Any

import httpx

from .. import __version__
from ..governance.redact import redact_error
from .base import (
    BackendError,
    BankSpec,
    ErrorKind,
    RecallRequest,
    RecallResult,
    ReflectRequest,
    ReflectResult,
    RetainOutcome,
)
from .capabilities import HINDSIGHT
from .hindsight_lanes import Abandoned, Lane, LanePool, TraceFn
from .hindsight_wire import (
    bank_create_body,
    bank_path,
    classify_status,
    error_detail,
    fmt_seconds,
    names_context,
    omit_none,
    parse_recall_payload,
    parse_retain_outcome,
    recall_body,
    reflect_body,
    retain_body,
    seg,
)

__all__ = ["HindsightBackend", "HindsightError", "parse_recall_payload", "parse_retain_outcome"]

MAX_GET_RETRIES = 3


class HindsightError(BackendError):
    """Every Hindsight failure. ``status`` is ``None`` for transport failures (no response).

    ``kind``: ``transient`` (connection errors, 408, 425, 429, 5xx), ``auth`` (401/403),
    ``not_found`` (404), ``permanent`` (other 4xx), ``timeout``, ``aborted``.
    """

    def __init__(
        self,
        operation: str,
        kind: ErrorKind,
        detail: str,
        status: int | None = None,
        *,
        message: str | None = None,
    ) -> None:
        self._message = message or f"{operation} failed: {detail}"
        super().__init__(operation, kind, detail, status)

    @property
    def message(self) -> str:
        return self._message

    def __repr__(self) -> str:
        return f"HindsightError(kind={self.kind!r}, status={self.status!r}, message={self._message!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_error, (self.operation, self.kind, self.detail, self.status, self._message))


def _rebuild_error(operation: str, kind: ErrorKind, detail: str, status: int | None, message: str) -> HindsightError:
    return HindsightError(operation, kind, detail, status, message=message)


def _timeout_error(op: str, seconds: float) -> HindsightError:
    s = fmt_seconds(seconds)
    return HindsightError(op, "timeout", f"request timed out after {s}s", message=f"{op} request timed out after {s}s")


def _aborted_error(op: str) -> HindsightError:
    return HindsightError(op, "aborted", "request aborted", message=f"{op} request aborted")


def _transport_error(op: str, exc: BaseException) -> HindsightError:
    text = str(exc)
    reason = redact_error(f"{type(exc).__name__}: {text}" if text else type(exc).__name__)
    return HindsightError(op, "transient", reason, message=f"{op} request failed: {reason}")


class HindsightBackend:
    """``MemoryBackend`` over the Hindsight HTTP API. Thread-safe; one instance per process.

    ``timeout_ms`` caps every request; a caller's ``timeout_s`` lowers it further. The API key
    is sent only as a Bearer header and never appears in errors or ``repr``.
    """

    name = "hindsight"
    capabilities = HINDSIGHT

    def __init__(
        self,
        base_url: str,
        api_key: str = "",
        *,
        timeout_ms: int = 30000,
        transport: httpx.BaseTransport | None = None,
        user_agent_version: str = __version__,
        retry_base_ms: float = 1000.0,
        retry_jitter_ms: float = 500.0,
    ) -> None:
        base = (base_url or "").strip().rstrip("/")
        if not base:
            raise ValueError("Hindsight base URL is empty")
        key = (api_key or "").strip()
        if any(ord(c) < 0x21 or ord(c) == 0x7F for c in key):
            raise ValueError("Hindsight API key contains whitespace or control characters")
        self._base_url = base
        self._timeout_s = max(0.001, timeout_ms / 1000.0)
        self._transport = transport
        self._retry_base_s = max(0.0, retry_base_ms) / 1000.0
        self._retry_jitter_s = max(0.0, retry_jitter_ms) / 1000.0
        headers = {
            "User-Agent": f"hindsight-hooks/{user_agent_version}",
            "Content-Type": "application/json",
            "Accept": "application/json",
        }
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self._headers = headers
        self._has_key = bool(key)
        self._lock = threading.Lock()
        self._client: httpx.Client | None = None
        self._ssl: ssl.SSLContext | None = None
        self._lanes = LanePool(self._new_lane)

    def __repr__(self) -> str:
        url = redact_error(self._base_url, 200)
        return f"HindsightBackend(base_url={url!r}, api_key={'set' if self._has_key else 'unset'})"

    # ------------------------------------------------------------------ plumbing

    def _tls(self) -> ssl.SSLContext:
        """One TLS context for the shared client and every lane: building one loads the CA
        bundle (~100 ms), which must not come out of a recall's budget on each new lane."""
        with self._lock:
            if self._ssl is None:
                self._ssl = httpx.create_ssl_context()
            return self._ssl

    def _make_client(self, *, single: bool) -> httpx.Client:
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1) if single else httpx.Limits()
        if self._transport is not None:
            return httpx.Client(
                base_url=self._base_url,
                headers=self._headers,
                timeout=self._timeout_s,
                transport=self._transport,
                follow_redirects=False,
            )
        return httpx.Client(
            base_url=self._base_url,
            headers=self._headers,
            timeout=self._timeout_s,
            verify=self._tls(),
            limits=limits,
            follow_redirects=False,
        )

    def _shared(self) -> httpx.Client:
        with self._lock:
            client = self._client
        if client is not None:
            return client
        fresh = self._make_client(single=False)
        with self._lock:
            won = self._client is None
            if won:
                self._client = fresh
            client = self._client
        if not won:  # another thread created it first
            fresh.close()
        assert client is not None
        return client

    def _new_lane(self) -> Lane:
        if self._transport is not None:  # no socket to own: borrow the shared client
            return Lane(self._shared(), owned=False)
        return Lane(self._make_client(single=True), owned=True)

    def close(self) -> None:
        """Close the shared client and idle lanes; a later call reconnects lazily."""
        with self._lock:
            client, self._client = self._client, None
        self._lanes.close()
        if client is not None:
            client.close()

    def _attempt_timeout(self, op: str, deadline: float | None) -> float:
        if deadline is None:
            return self._timeout_s
        left = deadline - time.monotonic()
        if left <= 0:
            raise _timeout_error(op, 0.0)
        return min(self._timeout_s, left)

    def _call(
        self,
        op: str,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: dict[str, Any] | None = None,
        timeout_s: float | None = None,
        signal: threading.Event | None = None,
        retry: bool = False,
        abandonable: bool = False,
        lenient: bool = False,
    ) -> Any:
        """One API call: JSON in, parsed JSON out (``{}`` for an empty 2xx body)."""
        deadline = None if timeout_s is None else time.monotonic() + max(0.0, timeout_s)
        attempt = 0
        while True:
            if signal is not None and signal.is_set():
                raise _aborted_error(op)
            budget = self._attempt_timeout(op, deadline)
            try:
                return self._once(op, method, path, body, params, budget, signal, abandonable, lenient)
            except HindsightError as err:
                # Only a server that answered "try again" is retried; no answer at all (refused,
                # reset, hung up) would cost seconds of backoff inside a hook for nothing (ADR 069).
                answered = err.status is not None
                if not (retry and answered and err.kind == "transient" and attempt < MAX_GET_RETRIES):
                    raise
                attempt += 1
                delay = self._retry_base_s * 2 ** (attempt - 1) + random.uniform(0.0, self._retry_jitter_s)
                if deadline is not None and time.monotonic() + delay >= deadline:
                    raise
                if signal is not None:
                    if signal.wait(delay):
                        raise _aborted_error(op) from err
                else:
                    time.sleep(delay)

    def _once(
        self,
        op: str,
        method: str,
        path: str,
        body: Any,
        params: dict[str, Any] | None,
        budget: float,
        signal: threading.Event | None,
        abandonable: bool,
        lenient: bool,
    ) -> Any:
        query = omit_none(params) if params else None
        try:
            if abandonable:

                def build(client: httpx.Client, trace: TraceFn) -> httpx.Request:
                    return client.build_request(
                        method, path, json=body, params=query, timeout=budget, extensions={"trace": trace}
                    )

                resp = self._lanes.exchange(build, budget, signal)
            else:
                resp = self._shared().request(method, path, json=body, params=query, timeout=budget)
        except Abandoned as ab:
            if ab.reason == "aborted":
                raise _aborted_error(op) from None
            raise _timeout_error(op, budget) from None
        except httpx.TimeoutException:
            raise _timeout_error(op, budget) from None
        except (httpx.HTTPError, httpx.InvalidURL, OSError, RuntimeError) as exc:
            # RuntimeError: httpx refuses a client closed by a concurrent close()/shutdown.
            raise _transport_error(op, exc) from None
        return self._parse(op, resp, lenient)

    @staticmethod
    def _parse(op: str, resp: httpx.Response, lenient: bool) -> Any:
        status = resp.status_code
        text = resp.text
        if 200 <= status < 300:
            if not text.strip():
                return {}
            try:
                return json.loads(text)
            except ValueError:
                if lenient:
                    return {}
                raise HindsightError(op, "permanent", "response is not JSON", status) from None
        try:
            parsed: Any = json.loads(text) if text.strip() else None
        except ValueError:
            parsed = None
        fallback = f"HTTP {status} {resp.reason_phrase}".strip()
        raise HindsightError(op, classify_status(status), error_detail(parsed, text, fallback), status)

    # ------------------------------------------------------------------ service

    def health(self, timeout_s: float | None = None) -> dict[str, Any]:
        """``GET /health`` → ``{status, database, ...}``."""
        return _as_dict(self._call("Hindsight health", "GET", "/health", timeout_s=timeout_s, retry=True))

    def version(self, timeout_s: float | None = None) -> dict[str, Any]:
        """``GET /version`` → ``{api_version, features}``."""
        return _as_dict(self._call("Hindsight version", "GET", "/version", timeout_s=timeout_s, retry=True))

    # ------------------------------------------------------------------ banks

    def get_bank_config(self, bank_id: str, timeout_s: float | None = None) -> dict[str, Any]:
        """``GET …/config`` → ``{bank_id, config, overrides}``; 404 raises ``not_found``."""
        path = bank_path(bank_id, "config")
        return _as_dict(self._call("Hindsight bank config", "GET", path, timeout_s=timeout_s, retry=True))

    def bank_exists(self, bank_id: str, timeout_s: float | None = None) -> bool:
        """200 → True, 404 → False; anything else raises (1.1.0 has no bank-profile probe)."""
        try:
            self.get_bank_config(bank_id, timeout_s)
        except HindsightError as err:
            if err.kind == "not_found":
                return False
            raise
        return True

    def ensure_bank(self, bank_id: str, spec: BankSpec, timeout_s: float | None = None) -> bool:
        """Create the bank with ``spec`` if it is missing; an existing bank is never modified.

        Returns True when it was created now. Both steps share the caller's one budget.
        """
        deadline = None if timeout_s is None else time.monotonic() + max(0.0, timeout_s)
        if self.bank_exists(bank_id, timeout_s):
            return False
        left = None if deadline is None else deadline - time.monotonic()
        self._call("Hindsight bank create", "PUT", bank_path(bank_id), body=bank_create_body(spec), timeout_s=left)
        return True

    def delete_bank(self, bank_id: str, timeout_s: float | None = None) -> dict[str, Any]:
        """``DELETE /banks/{id}`` (tests and explicit clean-up only)."""
        return _as_dict(self._call("Hindsight bank delete", "DELETE", bank_path(bank_id), timeout_s=timeout_s))

    def bank_stats(self, bank_id: str, timeout_s: float | None = None) -> dict[str, Any]:
        """``GET …/stats`` (doctor): node, document and pending-operation counts."""
        path = bank_path(bank_id, "stats")
        return _as_dict(self._call("Hindsight bank stats", "GET", path, timeout_s=timeout_s, retry=True))

    # ------------------------------------------------------------------ memories

    def retain_batch(
        self,
        bank_id: str,
        items: list[dict[str, Any]],
        *,
        operation_id: str,
        async_: bool = True,
        timeout_s: float | None = None,
    ) -> RetainOutcome:
        """``POST …/memories``. Never retried here: the queue resends the same ``operation_id``.

        A 2xx with a missing or unreadable body is still a delivery, with an empty outcome.
        """
        payload = self._call(
            "Hindsight retain",
            "POST",
            bank_path(bank_id, "memories"),
            body=retain_body(items, operation_id, async_),
            timeout_s=timeout_s,
            lenient=True,
        )
        return parse_retain_outcome(payload)

    def recall(
        self,
        bank_id: str,
        request: RecallRequest,
        timeout_s: float | None = None,
        signal: threading.Event | None = None,
    ) -> RecallResult:
        """``POST …/memories/recall``; returns within ~20 ms of the signal or the deadline."""
        payload = self._call(
            "Hindsight recall",
            "POST",
            bank_path(bank_id, "memories", "recall"),
            body=recall_body(request),
            timeout_s=timeout_s,
            signal=signal,
            abandonable=True,
        )
        return RecallResult(hits=parse_recall_payload(payload))

    def reflect(
        self,
        bank_id: str,
        request: ReflectRequest,
        timeout_s: float | None = None,
        signal: threading.Event | None = None,
    ) -> ReflectResult:
        """``POST …/reflect``. A 422 naming the deprecated ``context`` is resent once with the
        context folded into the query; the retry shares the original budget."""
        op = "Hindsight reflect"
        path = bank_path(bank_id, "reflect")
        deadline = None if timeout_s is None else time.monotonic() + max(0.0, timeout_s)
        body = reflect_body(request)
        try:
            payload = self._call(op, "POST", path, body=body, timeout_s=timeout_s, signal=signal, abandonable=True)
        except HindsightError as err:
            if not (err.status == 422 and "context" in body and names_context(err.detail)):
                raise
            left = None if deadline is None else deadline - time.monotonic()
            folded = reflect_body(request, fold_context=True)
            payload = self._call(op, "POST", path, body=folded, timeout_s=left, signal=signal, abandonable=True)
        data = _as_dict(payload)
        text = data.get("text")
        return ReflectResult(
            text=text if isinstance(text, str) else "", structured_output=data.get("structured_output")
        )

    def list_memories(
        self,
        bank_id: str,
        *,
        document_id: str | None = None,
        fact_type: str | None = None,
        q: str | None = None,
        limit: int = 100,
        offset: int = 0,
        timeout_s: float | None = None,
    ) -> dict[str, Any]:
        """``GET …/memories/list`` → ``{items, total, limit, offset}`` (doctor, tests)."""
        params = {"document_id": document_id, "type": fact_type, "q": q, "limit": limit, "offset": offset}
        path = bank_path(bank_id, "memories", "list")
        return _as_dict(
            self._call("Hindsight list memories", "GET", path, params=params, timeout_s=timeout_s, retry=True)
        )

    # ------------------------------------------------------------------ documents

    def list_documents(
        self, bank_id: str, *, limit: int = 100, offset: int = 0, timeout_s: float | None = None
    ) -> dict[str, Any]:
        """``GET …/documents`` → ``{items, total, limit, offset}``."""
        params = {"limit": limit, "offset": offset}
        path = bank_path(bank_id, "documents")
        return _as_dict(
            self._call("Hindsight list documents", "GET", path, params=params, timeout_s=timeout_s, retry=True)
        )

    def get_document(self, bank_id: str, document_id: str, timeout_s: float | None = None) -> dict[str, Any]:
        """``GET …/documents/{doc}`` → ``{id, original_text, tags, document_metadata, memory_unit_count, ...}``."""
        path = bank_path(bank_id, "documents", seg(document_id))
        return _as_dict(self._call("Hindsight get document", "GET", path, timeout_s=timeout_s, retry=True))

    def document_text(self, bank_id: str, document_id: str, timeout_s: float | None = None) -> str | None:
        """A document's ``original_text``; None when the bank holds no such document or the
        server keeps no text for it (the ``DocumentReader`` view, ADR 140)."""
        try:
            text = self.get_document(bank_id, document_id, timeout_s=timeout_s).get("original_text")
        except BackendError as exc:
            if exc.kind == "not_found":
                return None
            raise
        return text if isinstance(text, str) else None

    def delete_document(self, bank_id: str, document_id: str, timeout_s: float | None = None) -> dict[str, Any]:
        """``DELETE …/documents/{doc}`` → ``{success, memory_units_deleted, ...}``."""
        path = bank_path(bank_id, "documents", seg(document_id))
        return _as_dict(self._call("Hindsight delete document", "DELETE", path, timeout_s=timeout_s))

    # ------------------------------------------------------------------ operations

    def get_operation(self, bank_id: str, operation_id: str, timeout_s: float | None = None) -> dict[str, Any]:
        """``GET …/operations/{op}`` → ``{status, error_message, ...}``."""
        path = bank_path(bank_id, "operations", seg(operation_id))
        return _as_dict(self._call("Hindsight operation status", "GET", path, timeout_s=timeout_s, retry=True))

    def wait_operation(self, bank_id: str, operation_id: str, timeout_s: float, poll_s: float = 0.1) -> dict[str, Any]:
        """Poll an operation until it leaves pending/processing or ``timeout_s`` passes.

        Returns the last status document; the caller decides what a non-terminal one means.
        """
        end = time.monotonic() + max(0.0, timeout_s)
        while True:
            status = self.get_operation(bank_id, operation_id, timeout_s=max(0.001, end - time.monotonic()))
            if status.get("status") not in ("pending", "processing") or time.monotonic() + poll_s >= end:
                return status
            time.sleep(poll_s)

    # ------------------------------------------------------------------ mental models

    def list_mental_models(
        self, bank_id: str, detail: str = "metadata", timeout_s: float | None = None
    ) -> list[dict[str, Any]]:
        """``GET …/mental-models?detail=metadata|content|full`` → the ``items`` list."""
        path = bank_path(bank_id, "mental-models")
        payload = self._call(
            "Hindsight list mental models", "GET", path, params={"detail": detail}, timeout_s=timeout_s, retry=True
        )
        items = payload.get("items") if isinstance(payload, dict) else payload
        return [m for m in items if isinstance(m, dict)] if isinstance(items, list) else []

    def create_mental_model(self, bank_id: str, body: dict[str, Any], timeout_s: float | None = None) -> dict[str, Any]:
        """``POST …/mental-models`` with ``{id, name, source_query, tags, max_tokens, trigger}``
        → ``{mental_model_id, operation_id}`` (the first refresh runs in the background)."""
        path = bank_path(bank_id, "mental-models")
        return _as_dict(
            self._call("Hindsight create mental model", "POST", path, body=omit_none(body), timeout_s=timeout_s)
        )

    def get_mental_model(
        self, bank_id: str, model_id: str, detail: str = "content", timeout_s: float | None = None
    ) -> dict[str, Any]:
        """``GET …/mental-models/{id}?detail=…`` → one ``MentalModelResponse``."""
        path = bank_path(bank_id, "mental-models", seg(model_id))
        return _as_dict(
            self._call(
                "Hindsight get mental model", "GET", path, params={"detail": detail}, timeout_s=timeout_s, retry=True
            )
        )

    def refresh_mental_model(self, bank_id: str, model_id: str, timeout_s: float | None = None) -> dict[str, Any]:
        """``POST …/mental-models/{id}/refresh`` → ``{operation_id, status}`` (runs the model's own mode)."""
        path = bank_path(bank_id, "mental-models", seg(model_id), "refresh")
        return _as_dict(self._call("Hindsight refresh mental model", "POST", path, body={}, timeout_s=timeout_s))


def _as_dict(payload: Any) -> dict[str, Any]:
    return payload if isinstance(payload, dict) else {}
