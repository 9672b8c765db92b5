"""The status-line formatter (docs/session-start.md "Status line")."""

from __future__ import annotations

import pytest

from hindsight_hooks.config_model import StatusConfig
from hindsight_hooks.hooks import RecordingUI
from hindsight_hooks.plugin.status import STATUS_KEY, StatusLine

BANK = "hh-project-demo-abc123"


def line(**kw: object) -> StatusLine:
    return StatusLine(StatusConfig(**kw), BANK)


@pytest.mark.parametrize(
    ("detail", "expected"),
    [
        ("minimal", "mem"),
        ("project", "mem:demo-abc123"),
        ("activity", "mem:recalled:3"),
        ("verbose", "mem:demo-abc123:recalled:3"),
    ],
)
def test_text_style_per_detail(detail: str, expected: str) -> None:
    assert line(detail=detail, max_length=100).text("recalled:3", None) == expected


@pytest.mark.parametrize(
    ("activity", "expected"),
    [
        ("recalled:3", "🧠 recalled:3"),
        ("connected", "🧠 connected"),
        ("offline", "🤯 offline"),
        ("recall-failed", "🤯 recall-failed"),
        ("retain-failed", "🤯 retain-failed"),
        ("import-failed", "🤯 import-failed"),
    ],
)
def test_emoji_style(activity: str, expected: str) -> None:
    assert line(style="emoji", max_length=100).text(activity, None) == expected


def test_emoji_minimal_is_just_the_icon() -> None:
    assert line(style="emoji", detail="minimal").text("idle", None) == "🧠"
    assert line(style="emoji", detail="minimal").text("offline", None) == "🤯"


def test_nerdfont_style_uses_glyphs_not_emoji() -> None:
    ok = line(style="nerdfont", max_length=100).text("retained", None)
    bad = line(style="nerdfont", max_length=100).text("offline", None)
    assert ok is not None and bad is not None
    assert ok.endswith(" retained") and bad.endswith(" offline")
    assert ok[0] != bad[0]
    assert "🧠" not in ok and "🤯" not in bad
    assert ord(ok[0]) >= 0xE000 and ord(bad[0]) >= 0xE000  # private-use (nerd font) glyphs


def test_cut_to_max_length_with_ellipsis() -> None:
    status = line(max_length=10)
    assert status.text("recalled:12345", None) == "mem:recal…"
    assert len(status.text("recalled:12345", None) or "") == 10
    assert line(max_length=10).text("retain:1", None) == "mem:retai…"
    assert line(max_length=12).text("retained", None) == "mem:retained"  # exactly fits: not cut
    assert line(max_length=24).text("retained queued:12345678901", None) == "mem:retained queued:123…"


def test_show_activity_false_hides_transient_activities_only() -> None:
    status = line(show_activity=False)
    for transient in ("recalling", "retaining", "importing"):
        assert status.text(transient, None) is None
        assert status.update(transient, None) == (False, None)
    assert status.text("recalled:2", None) == "mem:recalled:2"
    assert line(show_activity=True).text("recalling", None) == "mem:recalling"


@pytest.mark.parametrize(
    ("mode", "expected"),
    [("ignored", "mem:memory-off"), ("read-only", "mem:read-only"), ("normal", "mem:idle"), (None, "mem:idle")],
)
def test_mode_shown_when_idle(mode: str | None, expected: str) -> None:
    assert line().text("idle", mode) == expected


def test_mode_not_shown_for_real_activities() -> None:
    assert line().text("recalled:1", "read-only") == "mem:recalled:1"
    assert line(detail="verbose", max_length=100).text("idle", "ignored") == "mem:demo-abc123:memory-off"


def test_off_style_clears_once_then_stays_silent() -> None:
    status = line(style="off")
    assert status.text("recalled:1", None) is None
    assert status.update("connected", None) == (True, None)
    for activity in ("recalling", "recalled:1", "offline", "idle"):
        assert status.update(activity, None) == (False, None)
        assert status.should_clear() is False


def test_update_drives_a_real_ui() -> None:
    ui = RecordingUI()
    for style in ("text", "off"):
        status = StatusLine(StatusConfig(style=style, show_activity=False), BANK)
        for activity in ("connected", "recalling", "recalled:2", "idle"):
            send, text = status.update(activity, None)
            if send:
                ui.set_status(STATUS_KEY, text)
    assert ui.status_history == [
        ("hindsight", "mem:connected"),
        ("hindsight", "mem:recalled:2"),
        ("hindsight", "mem:idle"),
        ("hindsight", None),
    ]
    assert ui.status == {}


def test_label_keeps_manual_bank_ids() -> None:
    assert StatusLine(StatusConfig(detail="project"), "team-bank").text("idle", None) == "mem:team-bank"
    assert StatusLine(StatusConfig(detail="verbose"), "").text("idle", None) == "mem:idle"
