"""Every timestamp we write or read, in one place (ADR 142).

The project's form is ISO 8601 UTC with milliseconds and ``Z``: ``2024-05-01T12:00:00.123Z``.
It sorts as text and reads the same in the queue, the stores, the cursor, snapshots, session
files and import manifests. Readers never raise: a time that cannot be read is absent, which
each caller already treats as "unknown" (a queue job without a readable ``next_attempt_at`` is
due; an item without a readable timestamp keeps its memory, undated).

The module imports only the standard library, so every layer may use it.
"""

from __future__ import annotations

import functools
import os
import re
import time
from collections import Counter
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_last_second: tuple[int, str] = (-1, "")


# -- writing ----------------------------------------------------------------------------------


def iso_now() -> str:
    """The current time in our form."""
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def iso_from_epoch(seconds: float) -> str:
    """Epoch seconds in our form, the sub-millisecond part dropped (the stored times of the
    embedded store). Raises ``OverflowError``/``OSError``/``ValueError`` beyond year 9999."""
    dt = datetime.fromtimestamp(seconds, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def iso_ms(epoch_s: float) -> str:
    """Epoch seconds in our form, rounded to the millisecond, the seconds part memoised: the
    queue formats its clock on every state change, mostly within the same second."""
    global _last_second
    whole = int(epoch_s // 1)
    millis = round((epoch_s - whole) * 1000)
    if millis >= 1000:
        whole += 1
        millis -= 1000
    cached = _last_second
    if cached[0] != whole:
        cached = _last_second = (whole, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)))
    return f"{cached[1]}.{millis:03d}Z"


def iso_from_ms(epoch_ms: int) -> str:
    """Epoch milliseconds (message timestamps) in our form, exact; raises ``OverflowError``
    beyond the datetime range."""
    moment = _EPOCH + timedelta(milliseconds=epoch_ms)
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T"
        f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}.{moment.microsecond // 1000:03d}Z"
    )


def iso_utc(moment: datetime | int | float | str) -> str:
    """A datetime (naive = UTC) or epoch ms in our form; a string is taken as already formatted."""
    if isinstance(moment, str):
        return moment
    if isinstance(moment, int | float):
        moment = datetime.fromtimestamp(moment / 1000.0, tz=UTC)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# -- reading ----------------------------------------------------------------------------------


def _parse_aware(value: object) -> datetime | None:
    """An ISO 8601 string (``Z``, an offset, or naive = UTC) as an aware datetime, else ``None``."""
    if not isinstance(value, str) or not value:
        return None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed


def parse_iso(value: object) -> float | None:
    """Epoch seconds for an ISO 8601 string (``Z``, an offset, or naive = UTC); ``None`` when
    it is missing or unreadable."""
    parsed = _parse_aware(value)
    if parsed is None:
        return None
    try:
        return parsed.timestamp()
    except (OverflowError, OSError, ValueError):
        return None


def instant_ms(value: object) -> int | None:
    """An ISO 8601 string as whole epoch milliseconds, floored, computed exactly (no float): for
    comparing two instants written in different forms (``Z`` or an offset, with or without
    sub-millisecond digits) where one millisecond decides (the tombstones' "at or before",
    ADR 173). ``None`` when missing or unreadable."""
    parsed = _parse_aware(value)
    if parsed is None:
        return None
    try:
        return (parsed - _EPOCH) // timedelta(milliseconds=1)
    except OverflowError:
        return None


def _local_day_and_minute(value: object) -> tuple[str, str, str] | None:
    """``("YYYY-MM-DD", "HH:MM", zone label)`` of an ISO 8601 date-time on this machine's clock
    (ADR 212); ``None`` for a plain date (it has no time of day) or a value that does not read."""
    if not isinstance(value, str) or len(value.strip()) < 16:
        return None
    parsed = _parse_aware(value)
    if parsed is None:
        return None
    try:
        moment = parsed.astimezone()
    except (OverflowError, OSError, ValueError):
        moment = parsed.astimezone(UTC)
    offset = moment.utcoffset()
    label = _zone_label(0.0 if offset is None else offset.total_seconds())
    return f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}", f"{moment.hour:02d}:{moment.minute:02d}", label


# -- the user's days ---------------------------------------------------------------------------


def utc_offset_s(epoch_s: float) -> float:
    """This machine's offset from UTC at ``epoch_s``, in seconds (``TZ`` sets the zone; 0 for a
    time the platform cannot place). A user's "yesterday" and the days their memories are shown
    on are days of this zone (ADR 212): the plugin runs where its user is."""
    try:
        offset = datetime.fromtimestamp(epoch_s, tz=UTC).astimezone().utcoffset()
    except (OverflowError, OSError, ValueError):
        return 0.0
    return 0.0 if offset is None else offset.total_seconds()


# Zones south of the tropics, by name: there "last summer" is December to February (ADR 213).
# A zone in the tropics, or one we cannot name, keeps the northern seasons.
_SOUTHERN_ZONES = (
    "Australia/", "Antarctica/", "NZ", "Pacific/Auckland", "Pacific/Chatham", "Pacific/Norfolk",
    "America/Argentina/", "America/Buenos_Aires", "America/Cordoba", "America/Mendoza", "America/Sao_Paulo",
    "Brazil/East", "America/Santiago", "America/Punta_Arenas", "Chile/", "America/Montevideo", "America/Asuncion",
    "Atlantic/Stanley", "Africa/Johannesburg", "Africa/Maseru", "Africa/Mbabane", "Africa/Windhoek",
    "Africa/Maputo", "Africa/Gaborone", "Indian/Mauritius", "Indian/Reunion",
)  # fmt: skip


def southern_hemisphere() -> bool:
    """Is this machine's zone one of the southern temperate ones? Read from ``TZ`` when it names
    a zone, else from where ``/etc/localtime`` points (Linux, macOS)."""
    return _southern(os.environ.get("TZ", ""))


@functools.lru_cache(maxsize=8)
def _southern(tz: str) -> bool:
    name = tz.lstrip(":")
    if not name:  # no TZ: the zone /etc/localtime points at ("…/zoneinfo/Australia/Sydney")
        target = os.path.realpath("/etc/localtime")
        name = target.split("zoneinfo/", 1)[1] if "zoneinfo/" in target else ""
    return name.startswith(_SOUTHERN_ZONES)


def _zone_label(offset_s: float) -> str:
    """``UTC`` or ``UTC-08:00`` / ``UTC+05:30``: how a shown time names its zone."""
    if offset_s == 0:
        return "UTC"
    sign = "+" if offset_s > 0 else "-"
    minutes = int(abs(offset_s)) // 60
    return f"UTC{sign}{minutes // 60:02d}:{minutes % 60:02d}"


# -- when a memory was said, as the model is shown it ------------------------------------------------------------------

_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def day_of(stamp: object) -> str:
    """The user's day a stamp names (``YYYY-MM-DD``): the day of its time on this machine's clock
    (ADR 212), or the day as written for a plain date; '' when it names none."""
    local = _local_day_and_minute(stamp)
    if local is not None:
        return local[0]
    text = stamp if isinstance(stamp, str) else ""
    return text[:10] if _DAY.fullmatch(text[:10]) else ""


def days_said_twice(stamps: Iterable[object]) -> frozenset[str]:
    """The days on which more than one of ``stamps`` (the shown memories' times) falls.

    Their memories show the time as well as the day (ADR 180): a decision changed within one day
    — in one session, often — would otherwise show two equal dates, and the model could not tell
    which statement is the newer.
    """
    days = Counter(day for day in map(day_of, stamps) if day)
    return frozenset(day for day, count in days.items() if count > 1)


SAID_PATTERN = r"\d{4}-\d{2}-\d{2}(?: \d{2}:\d{2} UTC(?:[+-]\d{2}:\d{2})?)?"
"""What :func:`when_said` writes, as a regular expression: readers of a rendered memory (the echo
guard, the block bench) take it off a line with this one pattern."""


def when_said(stamp: object, timed_days: frozenset[str]) -> str:
    """What a memory shows of when it was said: the user's day ``YYYY-MM-DD`` (ADR 212), with the
    time and its zone (``HH:MM UTC``, ``HH:MM UTC-08:00``) when that day is one of ``timed_days``;
    '' when the stamp names no day. A plain date (no time of day) shows as written."""
    local = _local_day_and_minute(stamp)  # read once: this runs for every item of every block
    if local is None:
        return day_of(stamp)
    day, minute, zone = local
    return f"{day} {minute} {zone}" if day in timed_days else day


def local_minute(stamp: object) -> str:
    """``YYYY-MM-DD HH:MM`` of a stamp on this machine's clock: how a list shows when a memory was
    said, on the days the block shows (ADR 216); a plain date as written, '' when it names none."""
    local = _local_day_and_minute(stamp)
    return day_of(stamp) if local is None else f"{local[0]} {local[1]}"


def utc_bound(text: str) -> str | None:
    """A date or date-time the user typed (``2026-11-28``, ``2026-11-28T09:30``, ``…Z``) as an
    instant in our form, to compare with stored times: one without a zone is on this machine's
    clock, so ``since=2026-11-28`` starts at the user's midnight, the day the block shows (ADR 216).
    None when it does not read, or names a moment our form cannot hold."""
    try:
        parsed = datetime.fromisoformat(text.strip().replace(" ", "T"))
    except ValueError:
        return None
    try:
        moment = parsed.astimezone() if parsed.tzinfo is None else parsed  # naive: the system's zone
        return iso_from_epoch(moment.timestamp())
    except (OverflowError, OSError, ValueError):
        return None


def is_iso8601(text: str) -> bool:
    """Whether ``text`` reads as an ISO 8601 date or date-time (how user input is checked)."""
    try:
        datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


@functools.lru_cache(maxsize=8192)
def epoch_from_iso(value: str) -> float | None:
    """``parse_iso`` for a value known to be a string (the embedded store's columns).

    Cached: a recall reads the times of ~100 candidates, and the same units come back turn after
    turn (8,192 short strings, well under a megabyte)."""
    return parse_iso(value)


def epoch_ms(value: Any) -> int | None:
    """An ISO 8601 time or a number (already epoch ms) as epoch milliseconds; else ``None``."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, str) and value:
        try:
            return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
        except (ValueError, OverflowError):
            return None
    return None


def normalize_timestamp(value: object) -> str | None:
    """An item/message timestamp in our form; epoch ms numbers accepted; else ``None``.

    ``"unset"`` and anything unparsable give ``None``: a bad timestamp must not cost the memory.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            return iso_from_epoch(float(value) / 1000.0)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str) and value != "unset":
        seconds = parse_iso(value)
        if seconds is not None:
            try:
                return iso_from_epoch(seconds)
            except (OverflowError, OSError, ValueError):
                return None
    return None
