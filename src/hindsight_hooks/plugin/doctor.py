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

from ..governance.redact import redact_error, redact_text
from ..hooks import CommandResult
from .runtime import SessionRuntime


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
    target = path.with_name(f"{path.name}.corrupt-{int(time.time())}")
    os.replace(path, target)
    actions.append(f"moved {path} to {target}")


def run_doctor(rt: SessionRuntime, *, fix: bool, as_json: bool) -> CommandResult:
    checks: list[Check] = []
    actions: list[str] = []
    loaded = rt.loaded

    # config
    if loaded.error:
        checks.append(Check("config", "fail", redact_text(loaded.error), "fix the TOML syntax at the named line"))
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
        checks.append(Check("config", "ok", f"backend={rt.backend_kind}; files: {sources}"))

    # state folder
    sd = rt.state_dir
    if fix and rt.enabled:
        if not sd.exists():
            actions.append(f"created {sd}")
        rt.ensure_state_dir()
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
    try:
        rep = rt.queue().report()
        active, dead = rep.get("active", {}), rep.get("dead_letter", {})
        detail = f"active {active.get('valid', 0)}, dead {dead.get('valid', 0)}, malformed {active.get('malformed', 0)}"
        owner = rep.get("lock_owner")
        if owner:
            detail += f"; lock held by pid {owner.get('pid')} since {owner.get('acquired_at')}"
        bad = dead.get("valid") or active.get("malformed") or active.get("error")
        checks.append(
            Check(
                "queue",
                "warn" if bad else "ok",
                detail,
                "inspect with /hindsight:queue --jobs; /hindsight:queue --requeue-dead to retry",
            )
        )
    except Exception as exc:
        checks.append(Check("queue", "fail", redact_error(exc), "check the queue path and permissions"))

    # cursor, meta, manifest, checkpoint
    files = {
        "cursor": sd / "retain-cursors.json",
        "import manifest": rt.resolve_path(rt.cfg.import_.manifest_path),
        "import checkpoint": rt.resolve_path(rt.cfg.import_.checkpoint_path),
    }
    if rt.meta is not None:
        files["session meta"] = rt.meta.path
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


def _backend_checks(rt: SessionRuntime) -> list[Check]:
    out: list[Check] = []
    backend: Any = rt.backend()
    if backend is None:
        return [Check("backend", "fail", rt.backend_error or "not initialised", "check the config and the store path")]
    if rt.backend_kind == "hindsight":
        try:
            health = backend.health(timeout_s=5.0)
            out.append(
                Check("server", "ok", f"{redact_text(rt.cfg.hindsight_base_url())} health {health.get('status', 'ok')}")
            )
        except Exception as exc:
            return [Check("server", "fail", redact_error(exc), "start the server or fix hindsight.base_url")]
        try:
            ver = backend.version(timeout_s=5.0)
            out.append(Check("server version", "ok", f"api {ver.get('api_version', '?')}"))
        except Exception as exc:
            out.append(Check("server version", "warn", redact_error(exc), "upgrade Hindsight to >= 1.1.0"))
        for bank in [b for b in (rt.project_bank(), rt.user_bank()) if b]:
            try:
                exists = backend.bank_exists(bank, timeout_s=5.0)
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
        out.extend(_verify_writes(rt, backend))
    else:
        try:
            problems = backend.quick_check()
            out.append(
                Check(
                    "local store",
                    "fail" if problems else "ok",
                    "; ".join(problems) if problems else "quick_check ok, FTS5 ok",
                    "restore the database from a backup; it is never overwritten",
                )
            )
        except Exception as exc:
            out.append(Check("local store", "fail", redact_error(exc), "check local.path"))
    return out


def _verify_writes(rt: SessionRuntime, backend: Any) -> list[Check]:
    try:
        from ..queue.receipts import read_receipts

        receipts = read_receipts(rt.receipts_path)[:5]
    except Exception:
        return []
    failed: list[str] = []
    checked = 0
    for r in receipts:
        for op in r.get("operation_ids") or []:
            try:
                st = backend.get_operation(r["bank_id"], op, timeout_s=5.0)
            except Exception:
                continue
            checked += 1
            if str(st.get("status", "")).lower() in ("failed", "error"):
                failed.append(f"{op}: {redact_text(str(st.get('error_message', '')))[:200]}")
    if not checked:
        return []
    if failed:
        return [
            Check(
                "writes",
                "warn",
                f"{len(failed)} failed async operation(s): " + "; ".join(failed),
                "the server accepted but did not store these; check the server logs",
            )
        ]
    return [Check("writes", "ok", f"{checked} recent async operation(s) verified")]
