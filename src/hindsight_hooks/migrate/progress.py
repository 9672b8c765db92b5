"""The resumable record of a migration: per bank, the highest rowid whose memory the server has.

Why a high-water mark and not a list of ids: units are read and sent in rowid order and a
batch is recorded only after the server answered for all of it, so "every current memory up
to rowid N" is exactly the set that is done, in a few bytes however large the bank (ADR 151).
A kill -9 between the server's answer and the record costs one batch sent again, which the
stable document ids turn into a replacement, not a copy (ADR 150).

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

from ..fsutil import atomic_write_bytes, ensure_private_dir, move_aside

VERSION = 1
FILE_NAME = "migrate-progress.json"


def run_key(store: Path, target_url: str) -> str:
    """Which (store, server) pair an entry belongs to, without writing the URL's userinfo to disk."""
    return hashlib.sha256(f"{store.resolve()}\n{target_url.rstrip('/')}".encode()).hexdigest()[:16]


@dataclass
class BankProgress:
    """``in_flight`` names the last document of a batch sent but not yet answered, and
    ``batch_s`` how long the last answer took: a resumed run waits for a killed run's request
    to land before sending the same documents again (ADR 151)."""

    after_rowid: int = 0
    sent: int = 0
    finished: bool = False
    in_flight: str | None = None
    batch_s: float = 0.0


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
                if isinstance(raw, dict) and isinstance(raw.get("after_rowid"), int):
                    flight = raw.get("in_flight")
                    banks[str(name)] = BankProgress(
                        int(raw["after_rowid"]),
                        int(raw.get("sent") or 0),
                        bool(raw.get("finished")),
                        flight if isinstance(flight, str) else None,
                        float(raw.get("batch_s") or 0.0),
                    )
        return cls(path, key, banks, moved, runs)

    def bank(self, bank_id: str) -> BankProgress:
        return self.banks.setdefault(bank_id, BankProgress())

    def reset(self) -> None:
        self.banks = {}

    def save(self) -> None:
        ensure_private_dir(self.path.parent, gitignore=True)
        entry = {
            "updated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "banks": {
                name: {
                    "after_rowid": b.after_rowid,
                    "sent": b.sent,
                    "finished": b.finished,
                    "in_flight": b.in_flight,
                    "batch_s": round(b.batch_s, 3),
                }
                for name, b in sorted(self.banks.items())
            },
        }
        data = {"version": VERSION, "runs": {**self._others, self.key: entry}}
        atomic_write_bytes(self.path, orjson.dumps(data, option=orjson.OPT_INDENT_2))
