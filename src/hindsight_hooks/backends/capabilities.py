"""What a backend can do beyond the core ``MemoryBackend`` protocol, and the typed views of it.

The plugin never asks which backend is active; it asks what the active one can do (ADR 140).
Each backend declares a ``Capabilities`` value; each optional group of methods has a small
protocol here, and a view function that hands the backend out typed as that protocol only
when the backend declares the matching capability. No ``hasattr``, no name comparisons.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast

if TYPE_CHECKING:
    from .base import MemoryBackend, MemoryHit


@dataclass(frozen=True)
class Capabilities:
    """A backend's self-description. Every flag defaults to "cannot", so a new backend opts in.

    ``label`` is the word the status line, the startup notice and doctor use for the store.
    """

    label: str
    remote: bool = False
    """It answers over the network: each request is capped by ``hindsight.timeout_ms``, a bank
    whose server gave no answer cools down, a bank is ensured before a reflect, and doctor asks
    the server (``ServerView``) for its health, version, banks and recent operations."""
    bounded_recall: bool = False
    """``recall`` keeps its ``timeout_s``/``signal`` on the calling thread, so the plugin runs it
    inline without a watchdog thread (ADR 053)."""
    word_query: bool = False
    """Recall searches words, so the automatic query is the transcript's content words
    (``local_search_text``) rather than the composed natural-language query."""
    ranked_hits: bool = False
    """Hits carry stable unit ids and scores: the recall tool merges by id, sorts by score,
    keeps ``local.recall_limit`` of them and shows each with its id."""
    append: bool = False
    """A retain is an append to a store on this machine: delivering is cheap, so coalesced
    turns are delivered at once, and a delivered retain is stored (not just accepted)."""
    edit: bool = False
    """Units can be read, listed, updated, forgotten and invalidated (``UnitEditor``);
    the ``memory_edit`` tool is offered."""
    documents: bool = False
    """A stored document can be read back whole (``DocumentReader``; cursor recovery, ADR 066)."""
    synthesised_reflect: bool = False
    """``reflect`` synthesises an answer with a model, so a reflect after each retain
    (``retain.post_retain_reflect``) is worth its cost."""
    mental_models: bool = False
    """The store keeps mental models (``MentalModelStore``), rendered into the memory block."""
    self_check: bool = False
    """The store can check its own integrity (``SelfChecking``) for doctor."""
    meaning_on_demand: bool = False
    """Recall by meaning needs a model and each bank's vectors in memory, which load in the
    background so a hook never waits (ADR 116). A caller that asked explicitly (a tool, the
    command line) may wait for them, within a bound, with ``MeaningLoader.prepare_meaning``; a
    session that starts in a long-lived process has them loaded for its first turn with
    ``MeaningLoader.warm_meaning``, which never waits."""


OFF = Capabilities(label="off")
"""The capabilities of no backend at all (memory off)."""


class UnitEditor(Protocol):
    """Reading and changing single memory units by id (``Capabilities.edit``)."""

    def get_unit(self, bank_id: str, unit_id: str) -> MemoryHit | None: ...

    def list_units(
        self,
        bank_id: str,
        limit: int,
        offset: int,
        tag_groups: list[dict[str, Any]] | None = None,
        *,
        include_invalid: bool = False,
    ) -> list[MemoryHit]: ...

    def update_unit(
        self, bank_id: str, unit_id: str, content: str | None = None, importance: float | None = None
    ) -> bool: ...

    def forget_unit(self, bank_id: str, unit_id: str) -> bool: ...

    def invalidate_unit(self, bank_id: str, unit_id: str, replacement_id: str | None = None) -> bool: ...


class DocumentReader(Protocol):
    """A stored document's whole text, or None when it does not exist (``Capabilities.documents``)."""

    def document_text(self, bank_id: str, document_id: str, timeout_s: float | None = None) -> str | None: ...


class MentalModelStore(Protocol):
    """Listing and creating mental models (``Capabilities.mental_models``)."""

    def list_mental_models(
        self, bank_id: str, detail: str = "metadata", timeout_s: float | None = None
    ) -> list[dict[str, Any]]: ...

    def create_mental_model(
        self, bank_id: str, body: dict[str, Any], timeout_s: float | None = None
    ) -> dict[str, Any]: ...


class ServerView(Protocol):
    """What doctor asks a server (``Capabilities.remote``)."""

    def health(self, timeout_s: float | None = None) -> dict[str, Any]: ...

    def version(self, timeout_s: float | None = None) -> dict[str, Any]: ...

    def bank_exists(self, bank_id: str, timeout_s: float | None = None) -> bool: ...

    def get_operation(self, bank_id: str, operation_id: str, timeout_s: float | None = None) -> dict[str, Any]: ...


@dataclass(frozen=True)
class MeaningReport:
    """What doctor and ``embed --check`` say of recall by meaning (``MeaningLoader.meaning_report``).

    ``on`` False: recall is by words (the extra is not installed, or ``[local] semantic = "off"``).
    """

    on: bool
    model: str = ""
    units: int = 0
    without_vector: int = 0
    damaged: int = 0
    """Stored vectors recall cannot use (wrong size, NaN or inf); ``embed`` computes them again."""


class MeaningLoader(Protocol):
    """Loading recall by meaning now, for a caller that can wait (``Capabilities.meaning_on_demand``)."""

    def prepare_meaning(self, bank_ids: list[str], timeout_s: float) -> bool: ...

    def warm_meaning(self, bank_ids: list[str], *, long_lived: bool) -> bool: ...

    def meaning_report(self) -> MeaningReport: ...


@dataclass(frozen=True)
class StoreCheck:
    """What ``check_store`` found: damage, and apart from it, whether the store can be written.

    Apart because the fixes are opposite: damage is restored from a backup, a read-only file is
    made writable. Reporting "attempt to write a readonly database" as damage told users to
    replace a healthy file.
    """

    problems: list[str]
    """Damage found (empty = healthy as far as it could be checked)."""
    read_only: str = ""
    """Why this process cannot write the store ("" = it can); checks that need write access
    (the FTS5 index check) did not run."""


class SelfChecking(Protocol):
    """An integrity check of the store itself: the problems found, empty when healthy."""

    def quick_check(self) -> list[str]: ...

    def check_store(self) -> StoreCheck: ...


def unit_editor(backend: MemoryBackend | None) -> UnitEditor | None:
    return cast("UnitEditor", backend) if backend is not None and backend.capabilities.edit else None


def document_reader(backend: MemoryBackend | None) -> DocumentReader | None:
    return cast("DocumentReader", backend) if backend is not None and backend.capabilities.documents else None


def mental_model_store(backend: MemoryBackend | None) -> MentalModelStore | None:
    if backend is None or not backend.capabilities.mental_models:
        return None
    return cast("MentalModelStore", backend)


def server_view(backend: MemoryBackend | None) -> ServerView | None:
    return cast("ServerView", backend) if backend is not None and backend.capabilities.remote else None


def self_checking(backend: MemoryBackend | None) -> SelfChecking | None:
    return cast("SelfChecking", backend) if backend is not None and backend.capabilities.self_check else None


def meaning_loader(backend: MemoryBackend | None) -> MeaningLoader | None:
    if backend is None or not backend.capabilities.meaning_on_demand:
        return None
    return cast("MeaningLoader", backend)


HINDSIGHT = Capabilities(label="hindsight", remote=True, documents=True, synthesised_reflect=True, mental_models=True)
"""The Hindsight server (``backends.hindsight``)."""

LOCAL = Capabilities(
    label="local",
    bounded_recall=True,
    word_query=True,
    ranked_hits=True,
    append=True,
    edit=True,
    documents=True,
    self_check=True,
    meaning_on_demand=True,
)
"""The embedded SQLite store (``backends.local``); without a foreign embedder, whose calls
have no bound, its recall bounds itself."""
