"""The memory router (docs/governance.md#router, ADR-002): which bank a candidate memory belongs in.

A transparent keyword classifier, not a model: every decision lists the signals that made it,
so a user can see why `/hindsight:route` suggested what it did. It only *suggests* unless
``user_retain.mode="router"`` is opted into; in the default ``explicit-only`` mode it never
writes. Its input must already be the redacted projection (never recalled memory), and its
output carries labels, bank ids and tags only — never the candidate's text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from ..config_model import Config

Route = Literal["project", "global", "both", "skip"]

_I = re.IGNORECASE

GLOBAL_SIGNALS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(prefer|prefers|preference|likes|wants|always|never)\b", _I), "preference"),
    (re.compile(r"\b(name|nick|nickname|identity|male|female|pronouns?)\b", _I), "identity"),
    (
        re.compile(r"\b(workflow|habit|communication style|response style|across projects|global)\b", _I),
        "cross-project workflow/style",
    ),
)
PROJECT_SIGNALS: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"\b(repo|project|file|path|module|test|bug|fix|architecture|config|implementation)\b", _I),
        "project implementation",
    ),
    # Case-sensitive on purpose: "PR", "API", "TUI" as acronyms, not "api" inside prose.
    (re.compile(r"\b(PR|issue|commit|branch|importer|extension|TUI|API)\b"), "project delivery"),
)
SKIP_SIGNALS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"/var/folders/", _I), "temporary file path"),
    (re.compile(r"\btemporary\b", _I), "temporary detail"),
    (re.compile(r"\bscreenshot\b", _I), "screenshot artifact"),
)
SECRET_SIGNALS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(bearer|api[_-]?key|token|cookie|secret|password)\b", _I), "secret-like content"),
    (re.compile(r"https?://\S*\b(private|internal|token|key)\b\S*", _I), "private URL"),
)

CONFIDENCE: dict[str, float] = {"skip": 0.9, "global": 0.85, "project": 0.8, "both": 0.65, "none": 0.4}
MISSION_STOP_WORDS = frozenset({"built", "global", "memory", "mission", "project", "retain", "reflect"})
DEFAULT_PROJECT_MISSION = "built-in project retain mission"
DEFAULT_GLOBAL_MISSION = "built-in global retain mission"
MISSION_SUMMARY_CHARS = 120

NOTE_EXPLICIT_ONLY = "dry-run only; no automatic writes in explicit-only mode"
NOTE_GLOBAL = "global memory candidate; keep only durable cross-project facts"
NOTE_SKIP = "skip candidate; do not retain transient or unsafe content"


def _matches(text: str, signals: tuple[tuple[re.Pattern[str], str], ...]) -> list[str]:
    return [label for pattern, label in signals if pattern.search(text)]


def mission_terms(mission: str) -> list[str]:
    """Distinct words of ≥5 chars from a configured mission, minus words every mission shares."""
    out: list[str] = []
    for term in re.split(r"[^a-z0-9]+", mission.lower()):
        if len(term) >= 5 and term not in MISSION_STOP_WORDS and term not in out:
            out.append(term)
    return out


def mission_signal(text: str, mission: str, label: str) -> list[str]:
    """``"<label> mission:t1/t2/t3"`` with the first three mission terms found in ``text``."""
    lower = text.lower()
    found = [t for t in mission_terms(mission) if t in lower]
    return [f"{label} mission:{'/'.join(found[:3])}"] if found else []


def mission_summary(mission: str, default: str) -> str:
    if not mission:
        return default
    if len(mission) > MISSION_SUMMARY_CHARS:
        return mission[: MISSION_SUMMARY_CHARS - 3] + "..."
    return mission


@dataclass(frozen=True)
class Classification:
    route: Route
    confidence: float
    signals: list[str]
    matched_signals: list[str]


def classify(content: str, context: str | None, project_mission: str = "", global_mission: str = "") -> Classification:
    """Route one candidate from its signals; the missions are the *configured* retain missions.

    Built-in missions (configured ``""``) contribute no mission terms: their words describe
    every coding session, so they would tip every candidate into both banks.
    """
    text = f"{content}\n{context or ''}"
    global_hits = _matches(text, GLOBAL_SIGNALS) + mission_signal(text, global_mission, "global")
    project_hits = _matches(text, PROJECT_SIGNALS) + mission_signal(text, project_mission, "project")
    skip_hits = _matches(text, SKIP_SIGNALS)
    is_skip, is_global, is_project = bool(skip_hits), bool(global_hits), bool(project_hits)
    route: Route
    if is_skip:
        route, confidence = "skip", CONFIDENCE["skip"]
    elif is_global and is_project:
        route, confidence = "both", CONFIDENCE["both"]
    elif is_global:
        route, confidence = "global", CONFIDENCE["global"]
    elif is_project:
        route, confidence = "project", CONFIDENCE["project"]
    else:
        route, confidence = "skip", CONFIDENCE["none"]
    signals = [name for name, hit in (("skip", is_skip), ("global", is_global), ("project", is_project)) if hit]
    return Classification(route, confidence, signals, [*skip_hits, *global_hits, *project_hits])


def route_memory(
    content: str,
    context: str | None,
    *,
    mode: Literal["explicit-only", "router"],
    project_bank: str | None,
    user_bank: str | None,
    project_mission: str = "",
    global_mission: str = "",
    tags: list[str] | None = None,
) -> dict[str, Any]:
    """The full decision dict of docs/governance.md#router. ``project_bank``/``user_bank`` = ``None`` when
    unavailable."""
    c = classify(content, context, project_mission, global_mission)
    wanted: list[str] = []
    if mode == "router":
        wanted = ["project", "global"] if c.route == "both" else [] if c.route == "skip" else [c.route]
    available = {"project": project_bank, "global": user_bank}
    writes = [w for w in wanted if available[w]]
    signals_csv = ", ".join(c.matched_signals) or "none"
    if mode == "explicit-only":
        reason = f"dry-run only: user_retain.mode=explicit-only; suggested={c.route}; signals={signals_csv}"
    else:
        reason = f"router mode: suggested={c.route}; signals={signals_csv}"
    targets: list[dict[str, Any]] = []
    for role in ("project", "global"):
        bank_id = available[role]
        if bank_id and c.route in (role, "both"):
            targets.append(
                {"bank_role": role, "bank_id": bank_id, "tags": list(tags or []), "will_write": role in writes}
            )
    notes: list[str] = []
    secret_hits = _matches(f"{content}\n{context or ''}", SECRET_SIGNALS)
    if secret_hits:
        notes.append(f"review/redact before retain: {', '.join(secret_hits)}")
    if mode == "explicit-only":
        notes.append(NOTE_EXPLICIT_ONLY)
    if c.route in ("global", "both"):
        notes.append(NOTE_GLOBAL)
    if c.route == "skip":
        notes.append(NOTE_SKIP)
    return {
        "route": c.route,
        "confidence": c.confidence,
        "signals": list(c.signals),
        "matched_signals": list(c.matched_signals),
        "reason": reason,
        "mode": mode,
        "writes": writes,
        "targets": targets,
        "safety_notes": notes,
        "project_mission": mission_summary(project_mission, DEFAULT_PROJECT_MISSION),
        "global_mission": mission_summary(global_mission, DEFAULT_GLOBAL_MISSION),
    }


def route(
    content: str,
    context: str | None,
    cfg: Config,
    *,
    project_bank: str | None,
    user_bank: str | None,
    tags: list[str] | None = None,
) -> dict[str, Any]:
    """``route_memory`` with the mode and missions taken from ``cfg``."""
    return route_memory(
        content,
        context,
        mode=cfg.user_retain.mode,
        project_bank=project_bank,
        user_bank=user_bank,
        project_mission=cfg.banks.project.retain_mission,
        global_mission=cfg.banks.user.retain_mission,
        tags=tags,
    )
