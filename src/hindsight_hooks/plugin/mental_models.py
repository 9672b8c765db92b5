"""Mental models on Hindsight (BEHAVIOUR.md §5.9): seed once, load in the background, render cached.

Curated summaries are injected with the recall block. Loading never blocks a turn for long:
the first ``context`` call waits at most 1.5 s, later calls use the cache, and ``agent_end``
refreshes it in the background once ``refresh_interval_ms`` has passed.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .runtime import SessionRuntime

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
    """Per-session loader and render cache for the mental-models block."""

    def __init__(self, rt: SessionRuntime) -> None:
        self._rt = rt
        self._render = ""
        self._loaded = threading.Event()
        self._loading = threading.Lock()
        self._loaded_at = 0.0
        self._first_context_done = False

    def _scope_tag(self) -> str:
        assert self._rt.identity is not None
        return f"repo:{self._rt.identity.repo_key}"

    def _seeds_for(self) -> list[tuple[str, dict[str, Any]]]:
        rt = self._rt
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
                body["tags"] = [self._scope_tag()]
                if explicit and rt.identity is not None:
                    body["id"] = f"{seed['id']}-{rt.identity.repo_key}"
            out.append((bank, body))
        return out

    def start(self) -> None:
        threading.Thread(target=self.load, name="hindsight-mental-models", daemon=True).start()

    def load(self) -> None:
        if not self._loading.acquire(blocking=False):
            return
        try:
            self._render = self._fetch()
            self._loaded_at = time.monotonic()
        except Exception:
            pass
        finally:
            self._loading.release()
            self._loaded.set()

    def _fetch(self) -> str:
        rt = self._rt
        backend: Any = rt.backend()
        if backend is None or rt.backend_kind != "hindsight":
            return ""
        timeout = rt.cfg.hindsight.timeout_ms / 1000.0
        seeds = self._seeds_for()
        banks = sorted({b for b, _ in seeds})
        for bank in banks:
            try:
                rt.ensure_bank(bank, timeout_s=timeout)
            except Exception:
                return ""
        if rt.cfg.mental_models.auto_seed:
            for bank in banks:
                try:
                    existing = {m.get("id") for m in backend.list_mental_models(bank, detail="metadata")}
                except Exception:
                    continue
                for seed_bank, body in seeds:
                    if seed_bank == bank and body["id"] not in existing:
                        try:
                            backend.create_mental_model(bank, body)
                        except Exception:
                            pass
        visible: list[dict[str, Any]] = []
        scope_tags = {self._scope_tag()}
        if rt.identity is not None:
            scope_tags.update(f"{p}:{rt.identity.host}" for p in ("source", "harness"))
        for bank in banks:
            try:
                models = backend.list_mental_models(bank, detail="content")
            except Exception:
                continue
            for m in models:
                tags = set(m.get("tags") or [])
                if m.get("content") and (not tags or tags & scope_tags):
                    visible.append(m)
        visible.sort(key=lambda m: str(m.get("name", "")))
        from .render import render_mental_models

        return render_mental_models(visible, rt.cfg.mental_models.max_render_chars)

    def render_for_context(self) -> str:
        if not self._first_context_done:
            self._first_context_done = True
            self._loaded.wait(FIRST_TURN_WAIT_S)
        return self._render

    def maybe_refresh(self) -> None:
        interval_s = self._rt.cfg.mental_models.refresh_interval_ms / 1000.0
        if self._loaded.is_set() and time.monotonic() - self._loaded_at >= interval_s:
            self.start()
