"""docs/governance.md#router: router signals, routes, confidence, writes, reasons, targets, safety notes, missions."""

from __future__ import annotations

from typing import Any

import pytest

from hindsight_hooks.config_model import BankConfig, Config
from hindsight_hooks.governance import router as r

TAGS = ["source:pi", "harness:pi", "repo:k", "session:s"]


def decide(
    text: str, mode: Any = "router", project: str | None = "P", user: str | None = "U", **kw: Any
) -> dict[str, Any]:
    context = kw.pop("context", None)
    return r.route_memory(text, context, mode=mode, project_bank=project, user_bank=user, tags=TAGS, **kw)


@pytest.mark.parametrize(
    ("text", "route", "confidence", "matched"),
    [
        ("I always use tabs.", "global", 0.85, ["preference"]),
        ("My nickname is Sam, pronouns they/them.", "global", 0.85, ["identity"]),
        (
            "My workflow: one commit per change across projects.",
            "both",
            0.65,
            ["cross-project workflow/style", "project delivery"],
        ),
        ("Fixed the bug in the config module.", "project", 0.8, ["project implementation"]),
        ("Opened a PR for the API change.", "project", 0.8, ["project delivery"]),
        ("I prefer the repo to keep one module per concern.", "both", 0.65, ["preference", "project implementation"]),
        ("Saved a screenshot of the test run.", "skip", 0.9, ["screenshot artifact", "project implementation"]),
        ("Output went to /var/folders/ab/T/x.txt", "skip", 0.9, ["temporary file path"]),
        ("My commits across projects are small.", "global", 0.85, ["cross-project workflow/style"]),
        ("This is a temporary note; prefer tabs.", "skip", 0.9, ["temporary detail", "preference"]),
        ("Hello there, nice weather.", "skip", 0.4, []),
    ],
)
def test_routes_and_confidence(text: str, route: str, confidence: float, matched: list[str]) -> None:
    d = decide(text)
    assert d["route"] == route
    assert d["confidence"] == confidence
    assert d["matched_signals"] == matched


def test_signal_categories_are_in_skip_global_project_order() -> None:
    d = decide("temporary: I prefer the repo layout")
    assert d["signals"] == ["skip", "global", "project"]
    assert decide("nothing here")["signals"] == []


def test_project_delivery_is_case_sensitive() -> None:
    assert decide("the api is nice and the pr is open")["route"] == "skip"
    assert decide("The API is nice")["matched_signals"] == ["project delivery"]
    assert decide("the tui looks odd")["route"] == "skip"
    assert decide("the TUI looks odd")["route"] == "project"


def test_context_is_matched_too() -> None:
    d = decide("hello", context="about the architecture")
    assert d["route"] == "project"


def test_explicit_only_never_writes_and_says_so() -> None:
    d = decide("I always prefer the repo layout", mode="explicit-only")
    assert d["mode"] == "explicit-only"
    assert d["writes"] == []
    assert d["reason"] == (
        "dry-run only: user_retain.mode=explicit-only; suggested=both; signals=preference, project implementation"
    )
    assert "dry-run only; no automatic writes in explicit-only mode" in d["safety_notes"]
    assert [t["will_write"] for t in d["targets"]] == [False, False]


def test_router_mode_writes_and_filters_by_available_banks() -> None:
    d = decide("I always prefer the repo layout")
    assert d["writes"] == ["project", "global"]
    assert d["reason"] == "router mode: suggested=both; signals=preference, project implementation"
    assert d["targets"] == [
        {"bank_role": "project", "bank_id": "P", "tags": TAGS, "will_write": True},
        {"bank_role": "global", "bank_id": "U", "tags": TAGS, "will_write": True},
    ]
    no_user = decide("I always prefer the repo layout", user=None)
    assert no_user["writes"] == ["project"]
    assert [t["bank_role"] for t in no_user["targets"]] == ["project"]
    assert decide("I always use tabs", user=None)["writes"] == []
    assert decide("fix the bug", project=None)["writes"] == []
    assert decide("hello")["writes"] == [] and decide("hello")["targets"] == []
    assert decide("hello")["reason"] == "router mode: suggested=skip; signals=none"


def test_safety_notes() -> None:
    d = decide("I always paste my password and Bearer tokens from https://internal.example.com/key")
    assert d["safety_notes"][0] == "review/redact before retain: secret-like content, private URL"
    assert "global memory candidate; keep only durable cross-project facts" in d["safety_notes"]
    skip = decide("a screenshot")
    assert skip["safety_notes"] == ["skip candidate; do not retain transient or unsafe content"]
    project = decide("fix the bug")
    assert project["safety_notes"] == []


def test_mission_terms_and_signals() -> None:
    mission = "Track database migrations, schema evolution and durable retain mission facts for the project."
    assert r.mission_terms(mission) == ["track", "database", "migrations", "schema", "evolution", "durable", "facts"]
    d = decide("the migrations changed the schema of our database", project_mission=mission)
    assert d["route"] == "project"
    assert d["matched_signals"] == ["project mission:database/migrations/schema"]
    g = decide("the migrations ran", global_mission="Remember migrations habits")
    assert "global mission:migrations" in g["matched_signals"]
    # built-in missions (configured "") contribute nothing
    assert decide("durable decisions and constraints")["matched_signals"] == []


def test_mission_summaries() -> None:
    d = decide("x")
    assert d["project_mission"] == "built-in project retain mission"
    assert d["global_mission"] == "built-in global retain mission"
    long = "m" * 121
    d = decide("x", project_mission=long, global_mission="short one")
    assert d["project_mission"] == "m" * 117 + "..." and len(d["project_mission"]) == 120
    assert d["global_mission"] == "short one"
    assert decide("x", project_mission="q" * 120)["project_mission"] == "q" * 120


def test_decision_shape_and_route_from_config() -> None:
    cfg = Config()
    cfg.banks.project = BankConfig(retain_mission="Keep kubernetes deployment notes")
    d = r.route("kubernetes deployment pods restarted", None, cfg, project_bank="P", user_bank=None)
    assert list(d) == [
        "route",
        "confidence",
        "signals",
        "matched_signals",
        "reason",
        "mode",
        "writes",
        "targets",
        "safety_notes",
        "project_mission",
        "global_mission",
    ]
    assert d["mode"] == "explicit-only" and d["writes"] == []
    assert d["matched_signals"] == ["project mission:kubernetes/deployment"]
    assert d["project_mission"] == "Keep kubernetes deployment notes"
    assert d["targets"] == [{"bank_role": "project", "bank_id": "P", "tags": [], "will_write": False}]
    cfg.user_retain.mode = "router"
    assert r.route("kubernetes pods", "", cfg, project_bank="P", user_bank="U")["writes"] == ["project"]
