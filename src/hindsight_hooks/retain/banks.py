"""Ensuring a bank exists before its first write, once per process and store.

The queue's flush ensures a bank before it delivers the bank's first job; so do startup, the
tools and the commands. They all go through :class:`BankEnsurer`, which holds what that needs
(the backend, the bank's settings, which store it is) so the flush never has to call back up
into the session that owns them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from ..backends.base import BankSpec, MemoryBackend
from ..config_model import Config
from ..governance import identity as ident

_ensured_lock = threading.Lock()
_ensured: set[tuple[str, str]] = set()
_ENSURED_MAX = 10_000


def _memo(store_key: str, bank_id: str) -> None:
    with _ensured_lock:
        if len(_ensured) >= _ENSURED_MAX:  # bounded: a long-lived process may see many banks
            for item in sorted(_ensured)[: _ENSURED_MAX // 2]:
                _ensured.discard(item)
        _ensured.add((store_key, bank_id))


def is_ensured(store_key: str, bank_id: str) -> bool:
    with _ensured_lock:
        return (store_key, bank_id) in _ensured


def forget(store_key: str, bank_id: str) -> None:
    with _ensured_lock:
        _ensured.discard((store_key, bank_id))


def bank_spec(cfg: Config, user_bank_id: str | None, bank_id: str) -> BankSpec:
    """A bank's settings: the user bank's when ``bank_id`` is the user's, else the project's."""
    return ident.bank_spec(cfg, "user" if user_bank_id is not None and bank_id == user_bank_id else "project")


class BankEnsurer:
    """Creates a bank if missing, at most once per process per store after a success.

    ``store_key`` names the store a bank lives in (backend label and location), so the same
    bank id in two stores is ensured in each; ``spec_for`` gives a bank's settings.
    """

    def __init__(self, backend: MemoryBackend, store_key: str, spec_for: Callable[[str], BankSpec]) -> None:
        self.backend = backend
        self.store_key = store_key
        self.spec_for = spec_for

    @classmethod
    def for_config(cls, backend: MemoryBackend, store_key: str, cfg: Config, user_bank_id: str | None) -> BankEnsurer:
        """An ensurer whose bank settings come from ``cfg`` (the user bank's for ``user_bank_id``)."""
        return cls(backend, store_key, lambda bank_id: bank_spec(cfg, user_bank_id, bank_id))

    def __call__(self, bank_id: str, timeout_s: float | None = None) -> None:
        if is_ensured(self.store_key, bank_id):
            return
        self.backend.ensure_bank(bank_id, self.spec_for(bank_id), timeout_s=timeout_s)
        _memo(self.store_key, bank_id)
