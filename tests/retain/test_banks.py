"""Bank ensuring (ADR 144): once per process per store after a success, never after a failure."""

from __future__ import annotations

import uuid
from typing import cast

import pytest

from hindsight_hooks.backends.base import BackendError, BankSpec, MemoryBackend
from hindsight_hooks.config_model import Config
from hindsight_hooks.governance import identity as ident
from hindsight_hooks.retain.banks import BankEnsurer, bank_spec, forget, is_ensured


class Recording:
    """Only the one backend call an ensurer makes; ``fail`` makes it raise."""

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[tuple[str, BankSpec, float | None]] = []
        self.fail = fail

    def ensure_bank(self, bank_id: str, spec: BankSpec, timeout_s: float | None = None) -> bool:
        self.calls.append((bank_id, spec, timeout_s))
        if self.fail:
            raise BackendError("ensure bank", "transient", "connection refused")
        return True


def _ensurer(backend: Recording, store: str, cfg: Config | None = None, user: str | None = None) -> BankEnsurer:
    return BankEnsurer.for_config(cast(MemoryBackend, backend), store, cfg or Config(), user)


def test_a_bank_is_ensured_once_per_process_and_store() -> None:
    store, bank = f"local:{uuid.uuid4()}", f"bank-{uuid.uuid4()}"
    first, second = Recording(), Recording()
    _ensurer(first, store)(bank, timeout_s=2.5)
    _ensurer(second, store)(bank)  # another session, same store: already ensured
    assert [(b, t) for b, _, t in first.calls] == [(bank, 2.5)] and second.calls == []
    other_store = Recording()
    _ensurer(other_store, store + "-elsewhere")(bank)  # the same id in another store is its own bank
    assert len(other_store.calls) == 1
    forget(store, bank)
    assert not is_ensured(store, bank)
    _ensurer(second, store)(bank)
    assert len(second.calls) == 1


def test_a_failed_ensure_is_tried_again() -> None:
    store, bank = f"local:{uuid.uuid4()}", f"bank-{uuid.uuid4()}"
    broken = Recording(fail=True)
    with pytest.raises(BackendError):
        _ensurer(broken, store)(bank)
    assert not is_ensured(store, bank)
    working = Recording()
    _ensurer(working, store)(bank)
    assert len(working.calls) == 1 and is_ensured(store, bank)


def test_the_user_bank_gets_the_user_settings() -> None:
    cfg = Config()
    backend = Recording()
    _ensurer(backend, f"local:{uuid.uuid4()}", cfg, user="me")("me")
    _ensurer(backend, f"local:{uuid.uuid4()}", cfg, user="me")("project-x")
    seen = {b: spec for b, spec, _ in backend.calls}
    user, project = ident.bank_spec(cfg, "user"), ident.bank_spec(cfg, "project")
    assert user != project  # the missions differ, so a mix-up shows
    assert seen["me"] == user and seen["project-x"] == project
    assert bank_spec(cfg, None, "me") == bank_spec(cfg, "someone-else", "me") == project
