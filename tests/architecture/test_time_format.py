"""One time-format module (ADR 142): every timestamp is written and read by ``hindsight_hooks.timefmt``."""

from __future__ import annotations

import re
from pathlib import Path

import hindsight_hooks
from hindsight_hooks.timefmt import (
    epoch_ms,
    iso_from_epoch,
    iso_from_ms,
    iso_ms,
    iso_now,
    iso_utc,
    normalize_timestamp,
    parse_iso,
)

SRC = Path(hindsight_hooks.__file__).parent
OURS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
#: What formatting or parsing an ISO timestamp by hand looks like.
HAND_MADE = ("fromisoformat(", "%Y-%m-%dT", "isoformat(timespec", "microsecond // 1000")


def test_no_module_formats_or_parses_iso_timestamps_by_hand() -> None:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        if path.name == "timefmt.py" and path.parent == SRC:
            continue
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if any(token in line for token in HAND_MADE):
                found.append(f"{path.relative_to(SRC)}:{lineno}: {line.strip()}")
    assert found == []


def test_every_writer_gives_our_form_and_the_readers_read_it_back() -> None:
    moment_s = 1_714_564_800.123
    written = [iso_now(), iso_from_epoch(moment_s), iso_ms(moment_s), iso_from_ms(1_714_564_800_123)]
    written.append(iso_utc(1_714_564_800_123))
    assert all(OURS.match(text) for text in written), written
    assert written[1:] == ["2024-05-01T12:00:00.123Z"] * 4
    back = parse_iso(written[1])
    assert back is not None and abs(back - moment_s) < 0.001
    assert epoch_ms("2024-05-01T12:00:00.123Z") == 1_714_564_800_123
    assert normalize_timestamp(1_714_564_800_123) == "2024-05-01T12:00:00.123Z"
    assert normalize_timestamp("2024-05-01T14:00:00.123+02:00") == "2024-05-01T12:00:00.123Z"


def test_readers_never_raise_on_bad_input() -> None:
    for bad in ("", "yesterday", "2024-13-45", None, 12, "unset"):
        assert parse_iso(bad) is None
    assert epoch_ms("not a time") is None and epoch_ms(True) is None
    assert normalize_timestamp("unset") is None and normalize_timestamp(float("nan")) is None
