"""The four import commands (docs/commands.md rows, docs/import.md): current session, a file, discovery.

``/hindsight:import`` and ``/hindsight:import-current`` import the current session file,
``/hindsight:import-file <path>`` a session file (Pi, Claude Code, Codex) or a chat transcript,
and ``/hindsight:import-project-sessions`` every session of this project found beside the
current one and where Claude Code and Codex keep theirs (ADR-110). All take ``--dry-run``/
``--preview`` (write nothing), ``--all-leaves`` (one document set per branch), ``--yes`` (skip
the confirmation, for scripts and the CLI) and ``--json``.

Imports ignore next-opt-out and run in every session mode: they are an explicit request.
Handlers never raise: failures are ``error`` results (redacted), bad arguments a ``warning``
with the usage line.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...governance.redact import redact_error
from ...hooks import Command, CommandResult, HostContext
from ..runtime import SessionRuntime

RuntimeFor = Callable[[HostContext], SessionRuntime]

FLAGS = ["--dry-run", "--preview", "--all-leaves", "--yes", "--json"]
USAGE = {
    "hindsight:import": "/hindsight:import [--dry-run|--preview] [--all-leaves] [--yes] [--json]",
    "hindsight:import-current": "/hindsight:import-current [--dry-run|--preview] [--all-leaves] [--yes] [--json]",
    "hindsight:import-file": "/hindsight:import-file <path> [--dry-run|--preview] [--all-leaves] [--yes] [--json]",
    "hindsight:import-project-sessions": (
        "/hindsight:import-project-sessions [--dry-run|--preview] [--all-leaves] [--yes] [--json]"
    ),
}
DESCRIPTIONS = {
    "hindsight:import": "Import the current session into project memory",
    "hindsight:import-current": "Import the current session into project memory",
    "hindsight:import-file": "Import a session file (Pi, Claude Code, Codex) or a chat transcript",
    "hindsight:import-project-sessions": "Import this project's sessions: Pi, Claude Code and Codex",
}


@dataclass
class ImportArgs:
    dry_run: bool = False
    all_leaves: bool = False
    yes: bool = False
    as_json: bool = False
    path: str | None = None


def parse_args(argv: list[str], *, wants_path: bool) -> ImportArgs | str:
    """The options, or the reason the arguments are wrong."""
    args = ImportArgs()
    positional: list[str] = []
    for a in argv:
        if a in ("--dry-run", "--preview"):
            args.dry_run = True
        elif a == "--all-leaves":
            args.all_leaves = True
        elif a == "--yes":
            args.yes = True
        elif a == "--json":
            args.as_json = True
        elif a.startswith("--"):
            return f"unknown option {a}"
        else:
            positional.append(a)
    if wants_path:
        if len(positional) != 1:
            return "give exactly one file path"
        args.path = positional[0]
    elif positional:
        return f"unexpected argument {positional[0]!r}"
    return args


def _usage(name: str, why: str) -> CommandResult:
    usage = USAGE[name]
    return CommandResult(f"{why}\nusage: {usage}", "warning", {"usage": usage})


def _result(text: str, level: str, data: dict[str, Any], as_json: bool) -> CommandResult:
    if as_json:
        text = json.dumps(data, indent=2, ensure_ascii=False, default=str)
    return CommandResult(text, level, data)  # type: ignore[arg-type]


def build_import_commands(runtime_for: RuntimeFor) -> list[Command]:
    """The import commands for the command catalog (and the CLI built from it)."""
    commands: list[Command] = []
    for name in USAGE:
        handler = _handler(runtime_for, name)
        cmd = Command(name, DESCRIPTIONS[name], handler, usage=USAGE[name])
        cmd.complete = _complete
        commands.append(cmd)
    return commands


def _complete(prefix: str) -> list[str]:
    head, _, last = prefix.rpartition(" ")
    lead = f"{head} " if head else ""
    return [lead + f for f in FLAGS if f.startswith(last) and f not in head.split()]


def _handler(runtime_for: RuntimeFor, name: str) -> Callable[[str, HostContext], CommandResult]:
    def run(raw: str, ctx: HostContext) -> CommandResult:
        try:
            argv = shlex.split(raw)
        except ValueError as exc:
            return _usage(name, f"cannot parse arguments: {exc}")
        parsed = parse_args(argv, wants_path=name == "hindsight:import-file")
        if isinstance(parsed, str):
            return _usage(name, parsed)
        try:
            rt = runtime_for(ctx)
            return run_import_command(rt, name, parsed)
        except Exception as exc:
            try:
                runtime_for(ctx).set_activity("import-failed")
            except Exception:
                pass
            return CommandResult(f"import failed: {redact_error(exc)}", "error", {"error": redact_error(exc)})

    return run


def _no_sessions(
    folder: Path, missing: bool, refused: list[dict[str, str]], as_json: bool, host_folders: list[Path]
) -> CommandResult:
    """Discovery found nothing to import: say so plainly, as a warning (never an error).

    Other agents' folders (Claude Code's, Codex's) are named only when they exist: a person who
    never ran those agents should not read about them.
    """
    data: dict[str, Any] = {"action": "import", "status": "no-sessions", "folder": str(folder), "refused": refused}
    where = f"{folder}" + "".join(f" or {f}" for f in host_folders)
    if host_folders:
        data["host_folders"] = [str(f) for f in host_folders]
    if refused:
        text = f"no sessions of this project found in {where}" + "".join(
            f"\nskipped {r['file']}: {r['reason']}" for r in refused
        )
    else:
        gone = missing and not host_folders
        text = f"no sessions found in {where}" + (" (the folder does not exist)" if gone else "")
    return _result(text, "warning", data, as_json)


def run_import_command(rt: SessionRuntime, name: str, args: ImportArgs) -> CommandResult:
    """Plan, preview, confirm, import — the whole command, for any of the four names."""
    from ...importer.discovery import plan_project_sessions
    from ...importer.documents import ImportSettings
    from ...importer.runner import (
        ImportFailure,
        NothingToImport,
        Plan,
        build_preview,
        confirm,
        execute,
        plan_current,
        plan_file,
    )
    from ...importer.sources import ImportRefused

    if rt.loaded.error:
        return CommandResult(f"config error: {rt.loaded.error}", "error")
    if not rt.enabled or rt.identity is None:
        return CommandResult("memory is off (enabled=false or backend=off): nothing to import into", "warning")
    settings = ImportSettings.from_config(rt.cfg, all_leaves=args.all_leaves)
    refused: list[dict[str, str]] = []
    plans: list[Plan] = []
    session_file = rt.ctx.session_file
    try:
        if name == "hindsight:import-file":
            assert args.path is not None
            path = Path(os.path.expanduser(args.path))
            path = path if path.is_absolute() else rt.cwd / path
            plans.append(plan_file(rt, path, settings))
            scope = f"{'user' if plans[0].kind == 'chat' else 'project'} bank {plans[0].bank_id} from file {path}"
        elif name == "hindsight:import-project-sessions":
            found = plan_project_sessions(rt, session_file, settings)
            refused = [{"file": str(p), "reason": redact_error(why)} for p, why in found.refused]
            if found.folder is None and not found.candidates:
                return CommandResult(
                    "no session file: this session is not saved to disk, so there is no session folder to search",
                    "warning",
                )
            if not found.candidates:
                assert found.folder is not None and found.pi is not None
                return _no_sessions(found.folder, found.pi.missing, refused, args.as_json, found.host_folders)
            plans = found.plans
            scope = found.scope(rt.project_bank())
        else:
            if session_file is None:
                return CommandResult("no session file: this session is not saved to disk; nothing to import", "warning")
            path = Path(os.path.abspath(session_file))
            if not path.is_file():
                return CommandResult(f"the session file {path} does not exist yet; nothing to import", "warning")
            plans.append(plan_current(rt, path, settings))
            scope = f"project bank {plans[0].bank_id} from current session {path}"
    except NothingToImport as exc:
        text = redact_error(exc)
        return _result(text, "warning", {"status": "nothing-to-import", "reason": text}, args.as_json)
    except (ImportRefused, ImportFailure) as exc:
        return CommandResult(redact_error(exc), "error", {"error": redact_error(exc)})

    preview = build_preview(rt, scope, plans)
    branches = "all leaves" if settings.include_branches == "all-leaves" else "current branch"
    data: dict[str, Any] = {
        "action": "preview" if args.dry_run else "import",
        "scope": scope,
        "branches": settings.include_branches,
        "mode": settings.mode,
        "refused": refused,
    }
    if preview.notes:
        data["notes"] = preview.notes
    refused_text = "".join(f"\nskipped {r['file']}: {r['reason']}" for r in refused)
    notes_text = "".join(f"\nnote: {n}" for n in preview.notes)
    if not preview.views:
        data.update(summary=preview.summary(status="nothing-to-import", write=False), documents=[])
        level = "warning" if refused or preview.warnings else "info"
        warned_text = "".join(f"\nwarning: {w}" for w in preview.warnings)
        text = f"nothing to import ({scope}){notes_text}{warned_text}{refused_text}"
        return _result(text, level, data, args.as_json)

    if args.dry_run:
        data["documents"] = [v.as_dict(preview=True) for v in preview.views]
        data["summary"] = preview.summary(status="preview", write=False)
        data["warnings"] = preview.warnings
        level = "warning" if preview.warnings or refused else "info"
        return _result(preview.text() + refused_text, level, data, args.as_json)

    if not any(v.status == "pending" for v in preview.views):
        data["documents"] = [v.as_dict(preview=False) for v in preview.views]
        data["summary"] = preview.summary(status="unchanged", write=False)
        skipped = len(preview.views)
        return _result(
            f"nothing new to import: {skipped} document(s) already imported or empty ({scope})"
            f"{notes_text}{refused_text}",
            "info",
            data,
            args.as_json,
        )

    rt.info(f"hindsight import: {scope}; action=import; branches={branches}; write=yes")
    if not args.yes and not confirm(rt, preview):
        data["cancelled"] = True
        return _result("import cancelled", "info", data, args.as_json)

    rt.set_activity("importing")
    outcome = execute(rt, preview)
    rt.set_activity(outcome.activity)
    data["documents"] = [v.as_dict(preview=False) for v in outcome.views]
    data["summary"] = preview.summary(status=outcome.activity, write=True)
    data["warnings"] = preview.warnings + outcome.notes
    data["delivery_errors"] = outcome.delivery_errors
    if outcome.enqueue_error:
        data["enqueue_error"] = outcome.enqueue_error
    counts = {s: outcome.count(s) for s in ("completed", "queued", "skipped", "failed")}
    data["counts"] = counts
    lines = [
        f"import {outcome.activity}: {scope}",
        f"completed {counts['completed']}, queued {counts['queued']}, skipped {counts['skipped']}, "
        f"failed {counts['failed']}",
    ]
    if counts["queued"]:
        lines.append(f"{counts['queued']} document(s) stay queued on disk and will be delivered by a later flush")
    lines += [f"delivery to {b} failed: {e}" for b, e in outcome.delivery_errors.items()]
    if outcome.enqueue_error:
        lines.append(f"could not queue: {outcome.enqueue_error}")
    lines += [f"note: {n}" for n in preview.notes]
    lines += [f"warning: {w}" for w in data["warnings"]]
    attention = bool(counts["queued"] or refused or data["warnings"])
    level = "error" if outcome.activity == "import-failed" else "warning" if attention else "info"
    return _result("\n".join(lines) + refused_text, level, data, args.as_json)
