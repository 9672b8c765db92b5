"""Mental models on Hindsight (docs/recall.md#mental-models): seed once, load in the background, render cached.

Curated summaries are injected with the recall block. Loading never blocks a turn for long:
the first ``context`` call waits at most 1.5 s, later calls use the cache, and ``agent_end``
refreshes it in the background once ``refresh_interval_ms`` has passed.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from ...backends.capabilities import mental_model_store

if TYPE_CHECKING:
    from ..runtime import SessionRuntime

FIRST_TURN_WAIT_S = 1.5
TRIGGER = {"mode": "delta", "refresh_after_consolidation": True}

SEEDS: list[dict[str, Any]] = [
    {
        "id": "user-preferences",
        "name": "User Preferences",
        "bank": "user",
        "max_tokens": 600,
        "tagged": False,
        "source_query": (
            "What durable preferences has the user shown across sessions in coding style, tooling, "
            "communication and code review? Exclude one-off requests."
        ),
    },
    {
        "id": "project-conventions",
        "name": "Project Conventions",
        "bank": "project",
        "max_tokens": 800,
        "tagged": True,
        "source_query": (
            "What explicit conventions does this project follow for code style, build, testing, "
            "release and pull-request review?"
        ),
    },
    {
        "id": "project-decisions",
        "name": "Project Decisions",
        "bank": "project",
        "max_tokens": 800,
        "tagged": True,
        "source_query": (
            "What stable architectural and product decisions has this project made, with their "
            "rationale and trade-offs? Exclude transient plans and task state."
        ),
    },
]


class MentalModels:
    """Per-session loader and render cache for the mental-models block.

    A load that fails keeps the previous render (a blip never blanks curated summaries) and is
    retried on the refresh schedule, not on every turn. A session that started offline does not
    load at once (the first turn must not wait on a server that just failed, ADR 017); its first
    ``agent_end`` after the banks' cooldown starts the load in the background (ADR 035).
    """

    def __init__(self, rt: SessionRuntime) -> None:
        self._rt = rt
        self._render = ""
        self._loaded = threading.Event()
        self._loading = threading.Lock()
        self._loaded_at = 0.0
        self._started = False
        self._first_context_done = False

    def _seeds_for(self) -> list[tuple[str, dict[str, Any]]]:
        rt = self._rt
        assert rt.identity is not None
        project, user = rt.project_bank(), rt.user_bank()
        explicit = bool(rt.cfg.banks.project.bank_id)
        out: list[tuple[str, dict[str, Any]]] = []
        for seed in SEEDS:
            bank = (user or project) if seed["bank"] == "user" else project
            if not bank:
                continue
            body: dict[str, Any] = {
                "id": seed["id"],
                "name": seed["name"],
                "source_query": seed["source_query"],
                "max_tokens": seed["max_tokens"],
                "trigger": dict(TRIGGER),
                "tags": [],
            }
            if seed["tagged"]:
                body["tags"] = [f"repo:{rt.identity.repo_key}"]
                if explicit:
                    body["id"] = f"{seed['id']}-{rt.identity.repo_key}"
            out.append((bank, body))
        return out

    def _scope_tags(self, bank: str) -> set[str] | None:
        """The tags a model in ``bank`` must share to be visible; ``None`` = every model is.

        The scope is the one recall uses for that bank: ``repo:<key>`` for the project bank,
        ``user_scope_tags`` for the user bank (an empty list is no filter there, as in
        docs/identity-and-scope.md#scope-filters).
        """
        rt = self._rt
        assert rt.identity is not None
        if bank == rt.project_bank():
            return {f"repo:{rt.identity.repo_key}"}
        from ...governance.identity import user_scope_tags

        tags = set(user_scope_tags(rt.cfg, rt.identity.host))
        return tags or None

    def start(self) -> None:
        self._started = True
        threading.Thread(target=self.load, name="hindsight-mental-models", daemon=True).start()

    def load(self) -> None:
        if not self._loading.acquire(blocking=False):
            return
        try:
            with self._rt.backend_use():
                self._render = self._fetch()
        except Exception:
            pass  # keep the previous render; retried after refresh_interval_ms
        finally:
            self._loaded_at = time.monotonic()
            self._loading.release()
            self._loaded.set()

    def _fetch(self) -> str:
        """Ensure, seed (create-only), list with content, filter by scope, render; raises on failure."""
        rt = self._rt
        backend = mental_model_store(rt.backend())
        if backend is None:
            raise RuntimeError("mental models need a backend that keeps them (the Hindsight server)")
        timeout = rt.cfg.hindsight.timeout_ms / 1000.0
        seeds = self._seeds_for()
        banks = sorted({b for b, _ in seeds})
        for bank in banks:
            rt.ensure_bank(bank, timeout_s=timeout)
        if rt.cfg.mental_models.auto_seed:
            for bank in banks:
                try:
                    existing = {m.get("id") for m in backend.list_mental_models(bank, "metadata", timeout)}
                except Exception:
                    continue  # the list failed: create nothing in this bank
                for seed_bank, body in seeds:
                    if seed_bank == bank and body["id"] not in existing:
                        try:
                            backend.create_mental_model(bank, body, timeout)
                        except Exception:
                            pass  # e.g. no LLM on the server; create-only, never retried here
        visible: list[dict[str, Any]] = []
        for bank in banks:
            scope = self._scope_tags(bank)
            for m in backend.list_mental_models(bank, "content", timeout):
                tags = set(m.get("tags") or [])
                if m.get("content") and (not tags or scope is None or tags & scope):
                    visible.append(m)
        visible.sort(key=lambda m: str(m.get("name", "")))
        from .render import render_mental_models

        return render_mental_models(visible, rt.cfg.mental_models.max_render_chars)

    def render_for_context(self, deadline: float | None = None) -> str:
        """The cached render; the session's first call waits for a started load until
        ``deadline`` (monotonic), at most ``FIRST_TURN_WAIT_S`` after the call began."""
        if not self._first_context_done:
            self._first_context_done = True
            if self._started:
                end = time.monotonic() + FIRST_TURN_WAIT_S if deadline is None else deadline
                self._loaded.wait(max(0.0, end - time.monotonic()))
        return self._render

    def maybe_refresh(self) -> None:
        """At ``agent_end``: reload in the background once ``refresh_interval_ms`` has passed,
        or load for the first time once a session that started offline is out of cooldown."""
        rt = self._rt
        if not self._started:
            banks = {b for b, _ in self._seeds_for()}
            if banks and not any(rt.in_cooldown(b) for b in banks):
                self.start()
            return
        interval_s = rt.cfg.mental_models.refresh_interval_ms / 1000.0
        if self._loaded.is_set() and time.monotonic() - self._loaded_at >= interval_s:
            self.start()
