"""The ``hindsight`` status-line formatter (docs/session-start.md "Status line").

Formatting is separated from the UI call so every style, detail level and cut can be tested
as plain strings. The one stateful rule is ``style="off"``: the line is cleared once (so a
status left over from an earlier session with another style disappears) and then never
touched again — :meth:`StatusLine.update` tells the caller whether to call ``set_status``.
"""

from __future__ import annotations

from ..config_model import StatusConfig

STATUS_KEY = "hindsight"
PROJECT_BANK_PREFIX = "hh-project-"

TRANSIENT_ACTIVITIES = frozenset({"recalling", "retaining", "importing"})
"""Hidden when ``show_activity`` is false: they flicker on every turn and say little."""

RESTING_ACTIVITIES = frozenset({"idle", "connected"})
"""States in which the session's mode (when not normal) is shown instead of the activity."""

MODE_LABELS = {"ignored": "memory-off", "memory-off": "memory-off", "read-only": "read-only"}

_ICONS = {
    # style: (healthy, broken)
    "emoji": ("🧠", "🤯"),
    "nerdfont": ("\U000f09d1", "\U000f0028"),  # nf-md-brain, nf-md-alert_circle
}


def is_failure(activity: str) -> bool:
    """Offline and every ``*-failed`` activity get the "broken" icon."""
    return activity == "offline" or activity.endswith("-failed")


def cut(text: str, max_length: int) -> str:
    """At most ``max_length`` characters: ``max_length-1`` of them plus ``…`` when cut."""
    limit = max(1, max_length)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class StatusLine:
    """Formats the status text for one session.

    ``label`` is the project bank id; a leading ``hh-project-`` is dropped (derived ids are
    long, and the prefix says nothing to the user).
    """

    def __init__(self, cfg: StatusConfig, label: str) -> None:
        self.cfg = cfg
        self.label = label.removeprefix(PROJECT_BANK_PREFIX)
        self._cleared = False

    def shown_activity(self, activity: str, mode: str | None) -> str:
        """The activity as displayed: a resting state shows a non-normal session mode instead."""
        if activity in RESTING_ACTIVITIES and mode is not None and mode in MODE_LABELS:
            return MODE_LABELS[mode]
        return activity

    def body(self, activity: str, mode: str | None = None) -> str:
        shown = self.shown_activity(activity, mode)
        detail = self.cfg.detail
        if detail == "minimal":
            return ""
        if detail == "project":
            return self.label
        if detail == "verbose":
            return f"{self.label}:{shown}" if self.label else shown
        return shown

    def text(self, activity: str, mode: str | None = None) -> str | None:
        """The status text, or ``None`` when this activity shows nothing (style off, hidden activity).

        ``None`` here means "no text", not necessarily "clear": use :meth:`update`, or call
        :meth:`should_clear` when this returns ``None``.
        """
        style = self.cfg.style
        if style == "off":
            return None
        if not self.cfg.show_activity and activity in TRANSIENT_ACTIVITIES:
            return None
        body = self.body(activity, mode)
        if style == "text":
            text = f"mem:{body}" if body else "mem"
        else:
            healthy, broken = _ICONS[style]
            icon = broken if is_failure(activity) else healthy
            text = f"{icon} {body}" if body else icon
        return cut(text, self.cfg.max_length)

    def should_clear(self) -> bool:
        """True exactly once for ``style="off"``: the caller then sends ``set_status(key, None)``."""
        if self.cfg.style != "off" or self._cleared:
            return False
        self._cleared = True
        return True

    def update(self, activity: str, mode: str | None = None) -> tuple[bool, str | None]:
        """``(send, text)``: whether to call ``set_status`` at all, and with what."""
        text = self.text(activity, mode)
        if text is not None:
            return True, text
        return self.should_clear(), None
