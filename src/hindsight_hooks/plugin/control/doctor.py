"""``/hindsight:doctor``: one ok/warn/fail line per check, each with what to do; never content.

``--fix`` repairs only what is safe to repair: it creates the state folder and its
``.gitignore``, tightens file modes, and moves (never deletes) a corrupt cursor, meta,
manifest or checkpoint file aside as ``<file>.corrupt-<ts>``.
"""

from __future__ import annotations

import json
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...backends.base import MemoryBackend
from ...backends.capabilities import ServerView, StoreCheck, meaning_loader, self_checking, server_view
from ...config_files import SYNTAX_FIX
from ...fsutil import move_aside
from ...governance.redact import redact_error, redact_text
from ...hooks import CommandResult
from ..runtime import SessionRuntime


@dataclass
class Check:
    name: str
    status: str  # ok | warn | fail
    detail: str
    fix: str = ""

    def line(self) -> str:
        tail = f" — {self.fix}" if self.fix and self.status != "ok" else ""
        return f"{self.status:<4} {self.name}: {self.detail}{tail}"


def _json_file_ok(path: Path) -> str | None:
    """None when absent or a JSON object; else a short reason (no content)."""
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except Exception as exc:
        return type(exc).__name__
    return None if isinstance(data, dict) else "not a JSON object"


def _move_aside(path: Path, actions: list[str]) -> None:
    """Rename ``path`` to a free ``<name>.corrupt-<ts>[-n]`` (an earlier fix in the same second
    must not be overwritten: nothing moved aside is ever lost)."""
    target = move_aside(path, int(time.time()))
    actions.append(f"moved {path} to {target}")


def run_doctor(rt: SessionRuntime, *, fix: bool, as_json: bool) -> CommandResult:
    checks: list[Check] = []
    actions: list[str] = []
    loaded = rt.loaded

    # config
    if loaded.error:
        config_fix = loaded.error_fix or SYNTAX_FIX
        checks.append(Check("config", "fail", redact_text(loaded.error), redact_text(config_fix)))
    elif loaded.warnings:
        checks.append(
            Check(
                "config",
                "warn",
                f"{len(loaded.warnings)} warning(s): " + "; ".join(loaded.warnings),
                "correct or remove the named keys",
            )
        )
    else:
        sources = ", ".join(str(p) for p in loaded.files.values()) or "defaults only"
        checks.append(Check("config", "ok", f"backend={rt.caps.label}; files: {sources}"))

    # state folder
    sd = rt.state_dir
    if fix and rt.enabled:
        gitignore = sd / ".gitignore"
        had_dir, had_gitignore = sd.exists(), gitignore.exists()
        rt.ensure_state_dir()
        if not had_dir:
            actions.append(f"created {sd}")
        if not had_gitignore and gitignore.exists():
            actions.append(f"created {gitignore}")
    if sd.exists():
        problems = []
        mode = stat.S_IMODE(sd.stat().st_mode)
        if mode & 0o077:
            problems.append(f"folder mode {oct(mode)}")
            if fix:
                os.chmod(sd, 0o700)
                actions.append(f"chmod 700 {sd}")
        for p in sd.rglob("*"):
            if p.is_file() and p.name not in (".gitignore", "config.toml") and stat.S_IMODE(p.stat().st_mode) & 0o077:
                problems.append(f"{p.name} mode {oct(stat.S_IMODE(p.stat().st_mode))}")
                if fix:
                    os.chmod(p, 0o600)
                    actions.append(f"chmod 600 {p}")
        if not (sd / ".gitignore").exists():
            problems.append("no .gitignore")
        if problems and not fix:
            checks.append(Check("state folder", "warn", "; ".join(problems), "run /hindsight:doctor --fix"))
        else:
            checks.append(Check("state folder", "ok", f"{sd} private"))
    else:
        checks.append(
            Check(
                "state folder",
                "warn" if rt.enabled else "ok",
                f"{sd} not created yet",
                "it is created at session start, or run --fix",
            )
        )

    # backend
    if rt.enabled:
        checks.extend(_backend_checks(rt))

    # queue
    checks.append(_queue_check(rt, fix, actions))
    checks.append(_temp_files_check(rt, fix, actions))

    # cursor, meta, manifest, checkpoint
    checks.append(_cursor_check(rt, fix, actions))
    checks.extend(_meta_checks(rt, fix, actions))
    files = {
        "import manifest": rt.resolve_path(rt.cfg.import_.manifest_path),
        "import checkpoint": rt.resolve_path(rt.cfg.import_.checkpoint_path),
    }
    for name, path in files.items():
        reason = _json_file_ok(path) if not path.is_dir() else "is a directory"
        if reason is None:
            checks.append(Check(name, "ok", f"{path.name} readable" if path.exists() else "none yet"))
        elif fix and path.is_file():
            _move_aside(path, actions)
            checks.append(Check(name, "ok", f"corrupt file moved aside ({reason})"))
        else:
            checks.append(Check(name, "fail", f"{path} is corrupt ({reason})", "run /hindsight:doctor --fix"))

    worst = "ok"
    for c in checks:
        if c.status == "fail":
            worst = "fail"
        elif c.status == "warn" and worst == "ok":
            worst = "warn"
    data: dict[str, Any] = {
        "checks": [c.__dict__ for c in checks],
        "actions": actions,
        "status": worst,
    }
    level = {"ok": "info", "warn": "warning", "fail": "error"}[worst]
    if as_json:
        return CommandResult(json.dumps(data, indent=2), level, data)  # type: ignore[arg-type]
    text = "\n".join([c.line() for c in checks] + [f"fixed: {a}" for a in actions])
    return CommandResult(text, level, data)  # type: ignore[arg-type]


def _queue_check(rt: SessionRuntime, fix: bool, actions: list[str]) -> Check:
    try:
        queue = rt.queue()
        lock = queue.lock
        if fix and lock.soft and lock.soft_lock_is_stale() and lock._break_if_stale():
            actions.append(f"removed stale soft lock {lock.lock_path}")
        if fix:
            _repair_dead_letter_file(queue.paths.dead, actions)
        rep = queue.report()
    except Exception as exc:
        return Check("queue", "fail", redact_error(exc), "check retain.queue_path and the folder's permissions")
    active, dead = rep.get("active", {}), rep.get("dead_letter", {})
    malformed = rep.get("malformed", {})
    detail = f"active {active.get('valid', 0)}, dead {dead.get('valid', 0)}, malformed {malformed.get('total', 0)}"
    if malformed.get("quarantined"):
        detail += f" ({malformed['quarantined']} quarantined in {Path(str(rep.get('malformed_path'))).name})"
    problems: list[str] = []
    fixes: list[str] = []
    status = "ok"
    if active.get("error"):
        problems.append(f"queue file unreadable: {active['error']}")
        fixes.append("check the queue file's permissions")
        status = "fail"
    if dead.get("error"):
        # a dead-letter file that cannot be read blocks every dead-lettering flush (ADR 003)
        problems.append(f"dead-letter file unreadable: {dead['error']}")
        fixes.append("run /hindsight:doctor --fix to move it aside (it is kept) or fix its permissions")
        status = "fail"
    elif dead.get("malformed"):
        problems.append(f"dead-letter file has {dead['malformed']} unreadable line(s)")
        fixes.append("run /hindsight:doctor --fix to move it aside when it holds no readable job (it is kept)")
        status = "warn"
    lock_error = rep.get("lock_error")
    if lock_error:
        # every enqueue and flush fails on this file: say so, and what to do, instead of "lock free"
        problems.append(f"lock file unusable: {lock_error}")
        fixes.append("every retain fails until the lock file is fixed or removed")
        status = "fail"
    owner = rep.get("lock_owner")
    if owner:
        age = owner.get("age_ms")
        held = "" if age is None else f", {age // 1000}s"
        detail += f"; lock held by pid {owner.get('pid')} on {owner.get('hostname') or '?'} since "
        detail += f"{owner.get('acquired_at')}{held}"
    elif not lock_error:
        detail += "; lock free"
    if problems:
        detail += "; " + "; ".join(problems)
    if dead.get("valid"):
        fixes.append("/hindsight:queue --jobs shows why; /hindsight:queue --requeue-dead retries them")
        status = "warn" if status == "ok" else status
    if malformed.get("in_queue"):
        fixes.append("/hindsight:flush quarantines malformed lines (nothing is deleted)")
        status = "warn" if status == "ok" else status
    return Check("queue", status, detail, "; ".join(fixes))


def _repair_dead_letter_file(path: Path, actions: list[str]) -> None:
    """``--fix``: a dead-letter file nothing can read or append to is moved aside (kept as
    ``.corrupt-<ts>``), as is one with unreadable lines and no readable job; one we cannot open
    for lack of permission gets mode 0600 first."""
    from ...queue import QueueError, read_tolerant

    if not os.path.lexists(path):
        return
    if path.is_file() and not os.access(path, os.R_OK | os.W_OK):
        try:
            os.chmod(path, 0o600)
            actions.append(f"chmod 600 {path}")
        except OSError:
            pass
    try:
        snap = read_tolerant(path)
    except QueueError:
        _move_aside(path, actions)
        return
    if snap.malformed_lines and not snap.jobs:
        _move_aside(path, actions)


def _temp_files_check(rt: SessionRuntime, fix: bool, actions: list[str]) -> Check:
    """Temp files of killed writers (``<file>.<pid>.<hex>.tmp``) next to the queue and in the state
    folder: they hold nothing acknowledged, only disk space (ADR 071)."""
    from ...queue.tempfiles import find_temp_files, remove_abandoned

    try:
        queue = rt.queue()
        folder = queue.paths.active.parent
        if fix:
            removed = queue.remove_temp_files()
            if rt.state_dir != folder:
                removed += remove_abandoned(rt.state_dir)
            for temp in removed:
                actions.append(f"removed {temp.path} (left by pid {temp.pid}, {_size(temp.size)})")
        temps = queue.temp_files()
        if rt.state_dir != folder:
            temps += find_temp_files(rt.state_dir)
    except Exception as exc:
        return Check("temp files", "warn", redact_error(exc), "check the state folder's permissions")
    if not temps:
        return Check("temp files", "ok", "none left behind")
    size = sum(t.size for t in temps)
    gone = [t for t in temps if t.removable]
    in_use = len(temps) - len(gone)
    detail = f"{len(temps)} temp file(s), {_size(size)}, left by killed writers"
    if in_use:
        detail += f" ({in_use} may still be in use: a live writer, or one that stopped moments ago)"
    names = ", ".join(sorted({t.path.name for t in temps})[:5])
    return Check(
        "temp files",
        "warn",
        f"{detail}: {names}",
        "run /hindsight:doctor --fix to remove them (they hold nothing acknowledged)",
    )


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / (1024 * 1024):.1f} MB"


def _cursor_check(rt: SessionRuntime, fix: bool, actions: list[str]) -> Check:
    from ...retain.cursor import CursorCorruptError

    path = rt.state_dir / "retain-cursors.json"
    if not path.exists():
        return Check("cursor", "ok", "none yet")
    try:
        snapshot = rt.cursors().read()
    except CursorCorruptError as exc:
        if fix and path.is_file():
            _move_aside(path, actions)
            return Check("cursor", "ok", f"corrupt cursor moved aside ({exc.reason})")
        return Check(
            "cursor",
            "fail",
            f"{path} is corrupt ({exc.reason}); the next automatic retain moves it aside and resumes (ADR-066)",
            "run /hindsight:doctor --fix (the file is kept as .corrupt-<ts>)",
        )
    except Exception as exc:
        return Check("cursor", "fail", redact_error(exc), "check the state folder's permissions")
    if snapshot.warnings:
        return Check(
            "cursor",
            "warn",
            f"{len(snapshot.sessions)} session(s); {len(snapshot.warnings)} unusable entr(y/ies) dropped",
            "nothing to do: those sessions start a fresh cursor",
        )
    return Check("cursor", "ok", f"{len(snapshot.sessions)} session(s)")


def _meta_checks(rt: SessionRuntime, fix: bool, actions: list[str]) -> list[Check]:
    """Every session meta file of this project: one that fails closed silences its session."""
    from ...governance.session_meta import read_meta

    folder = rt.state_dir / "session-meta"
    paths = sorted(folder.glob("*.json")) if folder.is_dir() else []
    if rt.meta is not None and rt.meta.path not in paths and os.path.lexists(rt.meta.path):
        paths.append(rt.meta.path)
    bad: list[tuple[Path, str]] = []
    for path in paths:
        read = read_meta(path)
        if read.failed_closed:
            bad.append((path, read.reason or "unreadable"))
    if not bad:
        return [Check("session meta", "ok", f"{len(paths)} file(s) readable" if paths else "none yet")]
    out: list[Check] = []
    for path, reason in bad:
        if fix and path.is_file():
            _move_aside(path, actions)
            out.append(Check("session meta", "ok", f"{path.name}: corrupt file moved aside ({reason})"))
        else:
            out.append(
                Check(
                    "session meta",
                    "fail",
                    f"{path.name} fails closed ({reason}): recall and retain are off for that session",
                    "run /hindsight:mode normal in that session, or /hindsight:doctor --fix (the file is kept)",
                )
            )
    return out


def _backend_checks(rt: SessionRuntime) -> list[Check]:
    out: list[Check] = []
    built = rt.backend()
    if built is None:
        return [Check("backend", "fail", rt.backend_error or "not initialised", "check the config and the store path")]
    backend = server_view(built)
    checking = self_checking(built)
    if backend is not None:
        wait_s = min(5.0, rt.cfg.hindsight.timeout_ms / 1000.0)  # doctor answers promptly, even when down
        try:
            health = backend.health(timeout_s=wait_s)
            out.append(
                Check("server", "ok", f"{redact_text(rt.backend_location())} health {health.get('status', 'ok')}")
            )
        except Exception as exc:
            return [Check("server", "fail", redact_error(exc), "start the server or fix hindsight.base_url")]
        try:
            ver = backend.version(timeout_s=wait_s)
            api = str(ver.get("api_version", "?"))
            raw = ver.get("features")
            features: dict[str, Any] = raw if isinstance(raw, dict) else {}
            on = sorted(k for k, v in features.items() if v is True)
            detail = f"api {api}; features: {', '.join(on) or 'none'}"
            old = _version_tuple(api) < (1, 1, 0)
            out.append(Check("server version", "warn" if old else "ok", detail, "upgrade Hindsight to >= 1.1.0"))
        except Exception as exc:
            out.append(Check("server version", "warn", redact_error(exc), "upgrade Hindsight to >= 1.1.0"))
        for bank in [b for b in (rt.project_bank(), rt.user_bank()) if b]:
            try:
                exists = backend.bank_exists(bank, timeout_s=wait_s)
                out.append(
                    Check(
                        f"bank {bank}",
                        "ok" if exists else "warn",
                        "exists" if exists else "missing",
                        "it is created at the next session start",
                    )
                )
            except Exception as exc:
                kind = getattr(exc, "kind", "")
                fix = "check HINDSIGHT_API_KEY" if kind == "auth" else "check the server"
                out.append(Check(f"bank {bank}", "fail", redact_error(exc), fix))
        out.extend(_verify_writes(rt, backend, wait_s))
    elif checking is not None:
        try:
            out.append(_store_check(checking.check_store(), rt.local_path))
        except Exception as exc:
            out.append(Check("local store", "fail", redact_error(exc), "check local.path"))
        out.extend(_meaning_checks(built))
    else:  # a store with neither a server to ask nor a self-check: its health is all there is
        try:
            health = built.health()
            out.append(Check("store", "ok", f"{rt.caps.label} health {health.get('status', 'ok')}"))
        except Exception as exc:
            out.append(Check("store", "fail", redact_error(exc), "check the backend's configuration"))
    return out


def _store_check(found: StoreCheck, path: Path) -> Check:
    """The local store's line: damage is repaired (ADR 189) or restored from a backup; a read-only
    store is only made writable, so it is never told to repair or restore (that advice would throw
    good data away)."""
    if found.problems:
        detail = "; ".join(found.problems)
        if found.read_only:
            detail += "; the store is also read-only"
        return Check(
            "local store",
            "fail",
            detail,
            "run `hindsight-hooks repair` (it salvages what can be read and keeps the damaged file), "
            "or restore the database from a backup",
        )
    if found.read_only:
        return Check(
            "local store",
            "fail",
            f"read-only: {path} cannot be written, so nothing new is stored (quick_check ok; "
            "the FTS5 index check needs write access and was skipped)",
            f"make it writable: chmod u+w {path} (and check its folder's permissions); the data is not damaged",
        )
    return Check("local store", "ok", "quick_check ok, FTS5 ok")


def _meaning_checks(built: MemoryBackend) -> list[Check]:
    """Recall by meaning: off (words only), or on with how many memories still lack a vector."""
    loader = meaning_loader(built)
    if loader is None:
        return []
    try:
        report = loader.meaning_report()
    except Exception as exc:
        return [Check("recall by meaning", "warn", redact_error(exc), "run hindsight-hooks embed --check")]
    if not report.on:
        return [Check("recall by meaning", "ok", "off: recall is by words (the [semantic] extra adds meaning)")]
    detail = f"on ({report.model}); {report.units - report.without_vector} of {report.units} memories have a vector"
    if report.damaged:
        fix = "run hindsight-hooks embed: it computes them again from their memories"
        return [Check("recall by meaning", "warn", f"{detail}; {report.damaged} stored vectors are damaged", fix)]
    if report.without_vector:
        detail += " (the rest get one in the background, or now with hindsight-hooks embed)"
    return [Check("recall by meaning", "ok", detail)]


def _version_tuple(text: str) -> tuple[int, ...]:
    parts: list[int] = []
    for piece in text.split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts) if parts else (0,)


# What ``GET …/operations/{id}`` may say (Hindsight 1.1.0 ``OperationStatusResponse``).
_OP_LANDED = "completed"
_OP_RUNNING = ("pending", "processing")
_OP_LOST = {
    "failed": "failed",
    "error": "failed",
    "cancelled": "was cancelled",
    "not_found": "is unknown to the server (reset, or its bank was deleted)",
}


def _verify_writes(rt: SessionRuntime, backend: ServerView, wait_s: float) -> list[Check]:
    """Ask the server about the operations of the 5 newest receipts (docs/commands.md write verification).

    A receipt only proves the server *accepted* a retain. Only ``completed`` proves it landed;
    ``failed``, ``cancelled`` and ``not_found`` (the server no longer knows the operation) are
    writes that did not land, and each is named with its redacted error. An operation still
    running is reported as such, neither verified nor failed; one the server could not be asked
    about is counted as unchecked.
    """
    try:
        from ...queue.receipts import read_receipts

        receipts = read_receipts(rt.receipts_path)[:5]
    except Exception:
        return []
    lost: list[str] = []
    landed = running = unchecked = 0
    seen: set[str] = set()
    for r in receipts:
        for op in r.get("operation_ids") or []:
            if op in seen:  # the items of one job share its operation
                continue
            seen.add(op)
            try:
                st = backend.get_operation(r["bank_id"], op, timeout_s=wait_s)
            except Exception:
                unchecked += 1
                continue
            status = str(st.get("status", "")).lower()
            if status == _OP_LANDED:
                landed += 1
            elif status in _OP_RUNNING:
                running += 1
            else:
                why = _OP_LOST.get(status, f"has status {status or 'none'!r}")
                err = redact_text(str(st.get("error_message") or "")).strip()[:200]
                lost.append(f"{op} in {r['bank_id']} {why}" + (f": {err}" if err else ""))
    if not (landed or running or lost or unchecked):
        return []
    parts = [f"{landed} recent async operation(s) verified"]
    if running:
        parts.append(f"{running} still running")
    if unchecked:
        parts.append(f"{unchecked} could not be checked")
    if lost:
        return [
            Check(
                "writes",
                "warn",
                f"{len(lost)} async operation(s) did not land: " + "; ".join(lost) + f" ({', '.join(parts)})",
                "the server accepted but did not store these; check the server logs and retain them again",
            )
        ]
    if unchecked:
        return [Check("writes", "warn", "; ".join(parts), "the server did not answer about them; run doctor again")]
    return [Check("writes", "ok", "; ".join(parts))]
