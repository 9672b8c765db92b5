"""The resumable record of a migration: per bank, where the current pass has got to.

Why a cursor and not a list of ids: documents are read and sent in one fixed order (ADR 151)
and a batch is recorded only after the server answered for all of it, so "every document up
to (created_at, document_id) C" is exactly what this pass has done, in a few bytes however
large the bank. A kill -9 between the server's answer and the record costs one batch sent
again, which the server turns into a replacement, not a copy (ADR 150).

A pass that reaches the end records its start time as ``since``; the next run's pass sends
only documents written to at or after it (sessions that grew, documents that are new), from
the start of the order again.

The file (``.hindsight/migrate-progress.json``, 0600, replaced atomically) holds one entry per
(store, server) pair, so migrating to a second server starts from zero there. A file that does
not parse is moved aside (never deleted) and the run starts over, which is safe because
sending again replaces.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..backends.local_documents import START, Cursor
from ..fsutil import atomic_write_bytes, ensure_private_dir, move_aside
from ..timefmt import iso_now

VERSION = 1
FILE_NAME = "migrate-progress.json"


def run_key(store: Path, target_url: str) -> str:
    """Which (store, server) pair an entry belongs to, without writing the URL's userinfo to disk."""
    return hashlib.sha256(f"{store.resolve()}\n{target_url.rstrip('/')}".encode()).hexdigest()[:16]


@dataclass
class BankProgress:
    """``cursor`` is the last document the current pass has done, ``pass_started`` when that
    pass began, ``since`` the start of the last pass that reached the end (``None``: never).
    ``in_flight`` names the last document of a batch sent but not yet answered, ``in_flight_at``
    when it was sent, and ``batch_s`` how long the last answer took: a resumed run waits for a
    killed run's request to land before sending the same documents again (ADR 151)."""

    cursor: Cursor = START
    pass_started: str | None = None
    since: str | None = None
    sent: int = 0
    in_flight: str | None = None
    in_flight_at: float = 0.0
    batch_s: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "cursor": list(self.cursor),
            "pass_started": self.pass_started,
            "since": self.since,
            "sent": self.sent,
            "in_flight": self.in_flight,
            "in_flight_at": round(self.in_flight_at, 3),
            "batch_s": round(self.batch_s, 3),
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> BankProgress:
        cursor = raw.get("cursor")
        if not (isinstance(cursor, list) and len(cursor) == 2 and all(isinstance(c, str) for c in cursor)):
            raise ValueError("cursor")
        return cls(
            (cursor[0], cursor[1]),
            _opt_str(raw.get("pass_started")),
            _opt_str(raw.get("since")),
            int(raw.get("sent") or 0),
            _opt_str(raw.get("in_flight")),
            float(raw.get("in_flight_at") or 0.0),
            float(raw.get("batch_s") or 0.0),
        )


def _opt_str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


@dataclass
class Progress:
    """What is done for one (store, server) pair; ``save`` writes the whole file again."""

    path: Path
    key: str
    banks: dict[str, BankProgress] = field(default_factory=dict)
    moved_aside: Path | None = None
    _others: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path, key: str) -> Progress:
        runs: dict[str, Any] = {}
        moved: Path | None = None
        if path.exists():
            try:
                data = orjson.loads(path.read_bytes())
                if (
                    not isinstance(data, dict)
                    or data.get("version") != VERSION
                    or not isinstance(data.get("runs"), dict)
                ):
                    raise ValueError("not a migrate progress file")
                runs = data["runs"]
            except (ValueError, OSError):
                moved = move_aside(path, time.strftime("%Y%m%dT%H%M%S"))
                runs = {}
        banks: dict[str, BankProgress] = {}
        entry = runs.pop(key, None)
        if isinstance(entry, dict) and isinstance(entry.get("banks"), dict):
            for name, raw in entry["banks"].items():
                try:
                    banks[str(name)] = BankProgress.from_dict(raw)
                except (ValueError, TypeError, AttributeError):
                    continue  # a bank we cannot read starts over: sending again only replaces
        return cls(path, key, banks, moved, runs)

    def bank(self, bank_id: str) -> BankProgress:
        return self.banks.setdefault(bank_id, BankProgress())

    def reset(self) -> None:
        self.banks = {}

    def save(self) -> None:
        ensure_private_dir(self.path.parent, gitignore=True)
        entry = {
            "updated_at": iso_now(),
            "banks": {name: b.as_dict() for name, b in sorted(self.banks.items())},
        }
        data = {"version": VERSION, "runs": {**self._others, self.key: entry}}
        atomic_write_bytes(self.path, orjson.dumps(data, option=orjson.OPT_INDENT_2))
