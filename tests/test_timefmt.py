"""``timefmt``'s user-clock readers (ADR 216): what a user types as a bound, and how a list shows a time."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hindsight_hooks.timefmt import local_minute, utc_bound


@pytest.mark.parametrize(
    ("zone", "typed", "bound"),
    [
        ("UTC", "2026-11-28", "2026-11-28T00:00:00.000Z"),
        ("EST5", "2026-11-28", "2026-11-28T05:00:00.000Z"),  # New York's midnight
        ("EST5", "2026-11-28 23:30", "2026-11-29T04:30:00.000Z"),
        ("JST-9", "2026-11-28T09:00", "2026-11-28T00:00:00.000Z"),
        ("EST5", "2026-11-28T10:00:00Z", "2026-11-28T10:00:00.000Z"),  # a zone typed is kept
        ("EST5", "2026-11-28T10:00:00+01:00", "2026-11-28T09:00:00.000Z"),
    ],
)
def test_a_typed_bound_without_a_zone_is_on_the_users_clock(
    user_zone: Callable[[str], None], zone: str, typed: str, bound: str
) -> None:
    user_zone(zone)
    assert utc_bound(typed) == bound


@pytest.mark.parametrize("typed", ["yesterday", "2026-13-45", "", "9999-12-31T23:59:59-12:00"])
def test_a_bound_that_does_not_read_or_that_our_form_cannot_hold_is_none(typed: str) -> None:
    assert utc_bound(typed) is None


def test_a_list_shows_the_minute_on_the_users_clock(user_zone: Callable[[str], None]) -> None:
    user_zone("EST5")
    assert local_minute("2026-11-29T04:30:00.000Z") == "2026-11-28 23:30"
    assert local_minute("2026-11-29") == "2026-11-29"  # a plain date as written
    assert local_minute("not a time") == ""


@settings(max_examples=200, deadline=None)
@given(
    zone=st.sampled_from(["UTC", "EST5", "JST-9", "IST-5:30", "NZST-12", "HST10"]),
    moment=st.datetimes(min_value=datetime(1901, 1, 1), max_value=datetime(9998, 12, 31)),
)
def test_a_typed_minute_is_shown_back_as_typed(zone: str, moment: datetime) -> None:
    """On a clock without daylight saving, a minute typed as a bound and a stored time shown in a
    list are the same minute: ``since=`` what the list shows lists that memory (ADR 216)."""
    os.environ["TZ"] = zone
    time.tzset()
    try:
        typed = moment.strftime("%Y-%m-%dT%H:%M")
        bound = utc_bound(typed)
        assert bound is not None and bound.endswith("Z")
        assert local_minute(bound) == typed.replace("T", " ")
    finally:
        os.environ["TZ"] = "UTC"
        time.tzset()
