"""Helpers for the two-backend contract suite (``test_contract.py``, ADR 016).

``ContractBackend`` wraps one real ``MemoryBackend`` (the embedded SQLite store or a
``HindsightBackend`` talking to the real 1.1.0 test server) behind the few verbs the contract
tests need, so each test reads the same for both and only the set-up differs:

* writes are *synchronous* on Hindsight (``async=false``), so what a test stored is recallable
  when ``retain`` returns; the one test about ``operation_id`` de-duplication uses async and
  ``settle`` (which waits for the server's operation);
* every bank is fresh and uniquely named, created like the plugin does with observations off
  and ``verbatim`` extraction: the mock LLM of the test server would otherwise store prompt
  boilerplate or invent observation twins, and a test could not say what it stored (ADR 010).

Contents use made-up words (``zorblax``, ``quillfeather`` ...): the test server's fake
embeddings only see shared words, and Hindsight's graph arm pulls every linked memory of a
small bank into the results once *any* memory matches, so assertions are made through tag
filters, document ids and "this word never comes back", never through exact ranking.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hindsight_hooks.backends.base import BankSpec, Budget, MemoryBackend, MemoryHit, RecallRequest, RetainOutcome

# Nothing ever stored contains this token, in any test or bank.
NONSENSE = "qxvjzptlorkwimb"
BIG_BUDGET = 8192
REQUEST_TIMEOUT_S = 60.0


def contract_spec() -> BankSpec:
    """How every contract bank is created (observations off: nothing the test did not write)."""
    return BankSpec(retain_extraction_mode="verbatim", enable_observations=False)


def new_bank_id(prefix: str = "hh-contract") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def op_id() -> str:
    """A fresh ``operation_id``: a UUID, as the server requires and the queue's job ids are."""
    return str(uuid.uuid4())


def item(
    content: str,
    document_id: str,
    *,
    mode: str = "replace",
    tags: list[str] | None = None,
    context: str = "hindsight-hooks contract test",
) -> dict[str, Any]:
    """One retain item in the wire shape both backends take (docs/backends.md#hindsight-server)."""
    out: dict[str, Any] = {"content": content, "context": context, "document_id": document_id, "update_mode": mode}
    if tags is not None:
        out["tags"] = list(tags)
    return out


@dataclass
class ContractBackend:
    """One backend under contract. ``impl`` is the real ``MemoryBackend``."""

    name: str
    impl: MemoryBackend
    make_bank: Callable[[], str]
    settle_operation: Callable[[str, str], None]
    forget_bank: Callable[[str], None]
    _unused: list[str] = field(default_factory=list)

    # -- banks ---------------------------------------------------------------------------------

    def bank(self) -> str:
        """A fresh, empty, ensured bank."""
        return self.make_bank()

    def unused_bank_id(self) -> str:
        """A unique bank id nobody created yet; removed at teardown if a test creates it."""
        bank_id = new_bank_id("hh-contract-new")
        self._unused.append(bank_id)
        return bank_id

    def cleanup(self) -> None:
        for bank_id in self._unused:
            self.forget_bank(bank_id)

    # -- writes --------------------------------------------------------------------------------

    def retain(self, bank: str, items: list[dict[str, Any]], *, operation_id: str | None = None) -> RetainOutcome:
        """Synchronous delivery: recallable as soon as this returns, on both backends."""
        return self.impl.retain_batch(
            bank, items, operation_id=operation_id or op_id(), async_=False, timeout_s=REQUEST_TIMEOUT_S
        )

    def retain_async(self, bank: str, items: list[dict[str, Any]], *, operation_id: str) -> RetainOutcome:
        """The plugin's default delivery (``retain.async=true``), as the queue sends it."""
        return self.impl.retain_batch(bank, items, operation_id=operation_id, async_=True, timeout_s=REQUEST_TIMEOUT_S)

    def settle(self, bank: str, operation_id: str) -> None:
        """Wait until an async delivery has been processed (a no-op on the embedded store)."""
        self.settle_operation(bank, operation_id)

    # -- reads ---------------------------------------------------------------------------------

    def hits(
        self,
        bank: str,
        query: str,
        *,
        tag_groups: list[dict[str, Any]] | None = None,
        max_tokens: int = BIG_BUDGET,
        budget: Budget = "mid",
    ) -> list[MemoryHit]:
        request = RecallRequest(query=query, budget=budget, tag_groups=tag_groups, max_tokens=max_tokens)
        return self.impl.recall(bank, request, timeout_s=REQUEST_TIMEOUT_S).hits

    def texts(self, bank: str, query: str, **kw: Any) -> list[str]:
        return [h.text for h in self.hits(bank, query, **kw)]


def words_of(texts: list[str], position: int) -> set[str]:
    """The ``position``-th word of each text (the marker word of the contract contents)."""
    return {t.split()[position] for t in texts if len(t.split()) > position}
