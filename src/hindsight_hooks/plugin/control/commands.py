"""Slash commands (docs/commands.md): what a person types inside their host.

Handlers return ``CommandResult(text, level, data)`` and never raise: failures become
``error`` (redacted), bad arguments a ``warning`` with the usage line. The same catalog backs
the ``hindsight-hooks <suffix>`` subcommands.
"""

from __future__ import annotations

import shlex
import shutil
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ... import __version__
from ...fsutil import free_name
from ...governance.redact import redact_error, redact_text
from ...hooks import Command, CommandResult, HostContext
from ...hooks.catalog import Level
from ...timefmt import parse_iso
from ..runtime import SessionRuntime

RuntimeFor = Callable[[HostContext], SessionRuntime]
Handler = Callable[[SessionRuntime, list[str]], CommandResult]

MODES = ["normal", "read-only", "ignored"]


def _usage(usage: str, why: str = "") -> CommandResult:
    return CommandResult((f"{why}\n" if why else "") + f"usage: {usage}", "warning", {"usage": usage})


class _SeenContext:
    """The context this host's commands last ran with, held weakly.

    Completion gets no ctx in the host contract, so ``/hindsight:tag remove <Tab>`` completes
    the tags of the session whose command ran last. Each host builds its own commands
    (``register_commands`` is called per host), so this never shows another host's session;
    before the first command of a host nothing is offered rather than a guess.
    """

    def __init__(self) -> None:
        self._ref: weakref.ref[HostContext] | None = None
        self._strong: HostContext | None = None

    def remember(self, ctx: HostContext) -> None:
        try:
            self._ref, self._strong = weakref.ref(ctx), None
        except TypeError:  # a foreign host's SimpleNamespace or __slots__ context (ADR-025)
            self._ref, self._strong = None, ctx

    def get(self) -> HostContext | None:
        if self._strong is not None:
            return self._strong
        return None if self._ref is None else self._ref()


def _split(args: str, free_text: bool) -> list[str]:
    """Shell-style words; free text (a route candidate, a tag) survives a lone apostrophe.

    ``/hindsight:route I don't use tabs`` is prose, not shell: shlex would reject the quote.
    Free-text commands fall back to plain whitespace words when shlex cannot parse the line.
    """
    try:
        return shlex.split(args)
    except ValueError:
        if free_text:
            return args.split()
        raise


def _wrap(
    runtime_for: RuntimeFor, handler: Handler, usage: str, seen: _SeenContext, free_text: bool = False
) -> Callable[[str, HostContext], CommandResult]:
    def run(args: str, ctx: HostContext) -> CommandResult:
        seen.remember(ctx)
        try:
            argv = _split(args, free_text)
        except ValueError as exc:
            return _usage(usage, f"cannot parse arguments: {exc}")
        try:
            return handler(runtime_for(ctx), argv)
        except Exception as exc:
            return CommandResult(f"failed: {redact_error(exc)}", "error")

    return run


def build_commands(runtime_for: RuntimeFor) -> list[Command]:
    specs: list[tuple[str, str, Handler, str, Callable[[str], list[str]] | None]] = [
        ("hindsight", "Memory status report", cmd_status, "/hindsight", None),
        (
            "hindsight:init",
            "Write .hindsight/config.toml for this project",
            cmd_init,
            "/hindsight:init [--force]",
            _opts(["--force"]),
        ),
        (
            "hindsight:session",
            "This session's memory mode, recall, retain and tags",
            cmd_session,
            "/hindsight:session",
            None,
        ),
        ("hindsight:mode", "Set the session mode", cmd_mode, "/hindsight:mode normal|read-only|ignored", _opts(MODES)),
        (
            "hindsight:next-opt-out",
            "Skip automatic retain for the next run only",
            cmd_next_opt_out,
            "/hindsight:next-opt-out",
            None,
        ),
        (
            "hindsight:retain",
            "Turn automatic retain on or off for this session",
            cmd_retain,
            "/hindsight:retain on|off",
            _opts(["on", "off"]),
        ),
        ("hindsight:tag", "Add or remove a session tag", cmd_tag, "/hindsight:tag add|remove <tag>", None),
        (
            "hindsight:last-recall",
            "Show the last recall snapshot",
            cmd_last_recall,
            "/hindsight:last-recall [--json]",
            _opts(["--json"]),
        ),
        (
            "hindsight:recall-cleanup",
            "Find (and prune) persisted recall blocks in a session file",
            cmd_recall_cleanup,
            "/hindsight:recall-cleanup [<session.jsonl>] [--prune]",
            _opts(["--prune"]),
        ),
        (
            "hindsight:queue",
            "Retain queue state",
            cmd_queue,
            "/hindsight:queue [--jobs] [--json] [--requeue-dead]",
            _opts(["--jobs", "--json", "--requeue-dead"]),
        ),
        ("hindsight:flush", "Deliver queued memory now", cmd_flush, "/hindsight:flush [--due]", _opts(["--due"])),
        (
            "hindsight:doctor",
            "Check config, state, server, queue and store",
            cmd_doctor,
            "/hindsight:doctor [--json] [--fix]",
            _opts(["--json", "--fix"]),
        ),
        ("hindsight:route", "Dry-run the memory router on a text", cmd_route, "/hindsight:route <text>", None),
        (
            "hindsight:memories",
            "List, show, edit, forget, export or import stored memories",
            cmd_memories,
            "/hindsight:memories list|show|edit|forget|export|import|markdown [<args>] [key=value ...] "
            "[--dry-run] [--json]",
            _opts(["list", "show", "edit", "forget", "export", "import", "markdown", "--dry-run", "--json"]),
        ),
    ]
    seen = _SeenContext()
    commands: list[Command] = []
    free_text = {"hindsight:route", "hindsight:tag", "hindsight:memories"}
    for name, desc, handler, usage, complete in specs:
        cmd = Command(name, desc, _wrap(runtime_for, handler, usage, seen, name in free_text), usage=usage)
        if complete is not None:
            cmd.complete = complete
        commands.append(cmd)
    tag_cmd = next(c for c in commands if c.name == "hindsight:tag")
    tag_cmd.complete = _tag_completer(runtime_for, seen)
    try:
        from .import_commands import build_import_commands

        commands.extend(build_import_commands(runtime_for))
    except ImportError:
        pass
    return commands


def _opts(options: list[str]) -> Callable[[str], list[str]]:
    def complete(prefix: str) -> list[str]:
        head, _, last = prefix.rpartition(" ")
        lead = f"{head} " if head else ""
        used = set(head.split())  # an option already typed is not offered again
        return [lead + o for o in options if o.startswith(last) and o not in used]

    return complete


def _tag_completer(runtime_for: RuntimeFor, seen: _SeenContext) -> Callable[[str], list[str]]:
    def complete(prefix: str) -> list[str]:
        words = prefix.split(" ")
        if len(words) <= 1:
            return [w for w in ("add", "remove") if w.startswith(words[0] if words else "")]
        ctx = seen.get()
        if words[0] != "remove" or ctx is None:
            return []
        try:
            rt = runtime_for(ctx)
            tags = rt.meta.read().record.tags if rt.meta else ()
        except Exception:
            tags = ()
        rest = " ".join(words[1:])
        return [f"remove {t}" for t in tags if t.startswith(rest)]

    return complete


# -- helpers ----------------------------------------------------------------------------------
def _need_enabled(rt: SessionRuntime) -> CommandResult | None:
    if rt.loaded.error:
        return CommandResult(f"config error: {rt.loaded.error}", "error")
    if not rt.enabled:
        return CommandResult("memory is off (enabled=false or backend=off)", "warning", {"enabled": False})
    return None


def _session_facts(rt: SessionRuntime) -> dict[str, Any]:
    from ...governance.session_meta import effective, mode_label

    assert rt.meta is not None
    read = rt.meta.read()
    rec = read.record
    eff = effective(rec)
    return {
        "mode": rec.mode,
        "recall": "on" if eff.recall else "off",
        "retain": "on" if eff.retain else "off",
        "next_retain": rec.next_retain_mode,
        "tags": list(rec.tags),
        "label": mode_label(rec.mode),
        "failed_closed": read.failed_closed,
        "warning": read.warning,
    }


def _age(iso: str | None) -> str:
    if not iso:
        return "-"
    then = parse_iso(iso)
    if then is None:
        return "-"
    secs = max(0, int(time.time() - then))
    if secs < 120:
        return f"{secs}s"
    if secs < 7200:
        return f"{secs // 60}m"
    return f"{secs // 3600}h"


# -- handlers ---------------------------------------------------------------------------------
def cmd_status(rt: SessionRuntime, argv: list[str]) -> CommandResult:
    if argv:
        return _usage("/hindsight")
    cfg = rt.cfg
    data: dict[str, Any] = {"version": __version__, "enabled": rt.enabled, "backend": rt.caps.label}
    lines = [f"hindsight-hooks {__version__}; enabled: {'yes' if rt.enabled else 'no'}"]
    if rt.loaded.error:
        lines.append(f"config error: {rt.loaded.error}")
        return CommandResult("\n".join(lines), "error", data)
    if not rt.enabled:
        lines.append("memory: off (enabled=false or backend=off)")
        return CommandResult("\n".join(lines), "info", data)
    if rt.caps.remote:
        url = redact_text(rt.backend_location())
        src = rt.location_source()
        lines.append(f"backend: {rt.caps.label} {url} (from {src}); connection {rt.connection}")
        data["url"], data["url_source"] = url, src
    else:
        path = rt.backend_location()
        lines.append(f"backend: {rt.caps.label} {path}")
        data["local_path"] = path
        if rt.backend() is None and rt.backend_error:  # "enabled: yes" alone hid a store that cannot open
            data["store_error"] = rt.backend_error
            lines.append(f"store: {rt.not_initialised_message()}")
    project, user = rt.project_bank(), rt.user_bank()
    p_src = rt.loaded.sources.get("banks.project.bank_id", "default")
    p_src = "derived" if p_src == "default" else p_src
    u_src = rt.loaded.sources.get("banks.user.bank_id", "default")
    project_part = f"project={project} ({p_src})" if project else "project=off"
    user_part = f"user={user} ({u_src})" if user else "user=off"
    lines.append(f"banks: {project_part}; {user_part}")
    data["banks"] = {"project": project, "user": user}
    data["bank_sources"] = {"project": p_src if project else None, "user": u_src if user else None}
    facts = _session_facts(rt)
    data["session"] = facts
    lines.append(
        f"session: mode={facts['mode']} recall={facts['recall']} retain={facts['retain']} "
        f"next_retain={facts['next_retain']} tags={','.join(facts['tags']) or 'none'}"
    )
    level: Level = "info"
    if facts["failed_closed"]:
        lines.append(f"session meta: {facts['warning']}")
        level = "warning"
    lines.append(f"user_retain: {cfg.user_retain.mode}")
    data["user_retain"] = cfg.user_retain.mode
    try:
        rep = rt.queue().report()
        active, dead = rep.get("active", {}), rep.get("dead_letter", {})
        data["queue"] = rep
        lines.append(
            f"queue: active={active.get('valid', 0)} due={active.get('due', 0)} waiting={active.get('waiting', 0)} "
            f"dead={dead.get('valid', 0)} malformed={rep.get('malformed', {}).get('total', 0)} "
            f"oldest={_age(active.get('oldest_created_at'))} next_attempt={active.get('next_attempt_at') or '-'}"
        )
        last_error = active.get("last_error") or rt.last_error
        if last_error:
            lines.append(f"last error: {redact_text(str(last_error))}")
        if dead.get("valid") or active.get("malformed"):
            level = "warning"
    except Exception as exc:
        lines.append(f"queue: unreadable ({redact_error(exc)})")
        level = "warning"
    receipt = _last_receipt(rt)
    if receipt is not None:
        data["last_receipt"] = receipt
        lines.append(
            f"last delivery: {receipt.get('created_at')} bank={receipt.get('bank_id')} "
            f"{_describe_outcome(receipt.get('outcome'))}"
        )
    rc = cfg.recall
    lines.append(
        f"recall: {'on' if rc.enabled else 'off'} budget={rc.budget} max_tokens={rc.max_tokens} "
        f"types={','.join(rc.types) or 'all'} top_k={rc.top_k} position={rc.injection_position}"
    )
    if rt.loaded.warnings:
        lines.append("config warnings: " + "; ".join(rt.loaded.warnings))
        data["config_warnings"] = list(rt.loaded.warnings)
    return CommandResult("\n".join(lines), "error" if "store_error" in data else level, data)


def _describe_outcome(outcome: Any) -> str:
    """A receipt's outcome in words (``1 item(s) stored, 2 operation(s)``), not a Python dict."""
    if not isinstance(outcome, dict):
        return "delivered"
    parts = []
    if isinstance(outcome.get("items_count"), int):
        parts.append(f"{outcome['items_count']} item(s) stored")
    if outcome.get("operations"):
        parts.append(f"{len(outcome['operations'])} operation(s)")
    if isinstance(outcome.get("tokens"), int):
        parts.append(f"{outcome['tokens']} token(s)")
    return ", ".join(parts) or "delivered"


def _backup_path(path: Path) -> Path:
    """A new ``config.toml.bak-<time>`` beside ``path``, reserved so two runs never share one
    (``init --force`` twice in one second keeps both earlier files)."""
    return free_name(path, "bak", time.strftime("%Y%m%dT%H%M%S"), reserve=True)


def _last_receipt(rt: SessionRuntime) -> dict[str, Any] | None:
    try:
        from ...queue.receipts import read_receipts

        receipts = read_receipts(rt.receipts_path)
    except Exception:
        return None
    return receipts[0] if receipts else None


def cmd_init(rt: SessionRuntime, argv: list[str]) -> CommandResult:
    usage = "/hindsight:init [--force]"
    if any(a != "--force" for a in argv):
        return _usage(usage)
    rt.ensure_state_dir()
    path = rt.state_dir / "config.toml"
    backup = None
    if path.exists():
        if "--force" not in argv:
            return CommandResult(f"{path} exists; re-run with --force to replace it (a backup is kept)", "warning")
        backup = _backup_path(path)
        shutil.copy2(path, backup)
    assert rt.identity is not None
    bank = rt.identity.project_bank_id or ""
    url = rt.cfg.hindsight.base_url or "http://localhost:8888"
    text = (
        "# hindsight-hooks project config (keys: see the README)\n"
        f'# backend = "hindsight"\n# [hindsight]\n# base_url = "{url}"\n\n'
        "[banks.project]\n"
        f'bank_id = "{bank}"\n'
    )
    from ...fsutil import atomic_write_text

    atomic_write_text(path, text, mode=0o644)
    msg = f"wrote {path} (project bank {bank})" + (f"; previous file kept as {backup}" if backup else "")
    return CommandResult(msg, "info", {"path": str(path), "bank_id": bank, "backup": str(backup) if backup else None})


def cmd_session(rt: SessionRuntime, argv: list[str]) -> CommandResult:
    if argv:
        return _usage("/hindsight:session")
    blocked = _need_enabled(rt)
    if blocked:
        return blocked
    f = _session_facts(rt)
    text = (
        f"mode={f['mode']} recall={f['recall']} retain={f['retain']} next_retain={f['next_retain']} "
        f"tags={','.join(f['tags']) or 'none'}\n{f['label']}"
    )
    if rt.cfg.user_retain.mode == "router":
        text += "\nuser_retain=router"
    if f["failed_closed"]:
        text += f"\n{f['warning']}"
    return CommandResult(text, "warning" if f["failed_closed"] else "info", f)


def cmd_mode(rt: SessionRuntime, argv: list[str]) -> CommandResult:
    usage = "/hindsight:mode normal|read-only|ignored"
    blocked = _need_enabled(rt)
    if blocked:
        return blocked
    if len(argv) != 1:
        return _usage(usage)
    if argv[0] == "tools-only":
        return _usage(usage, "tools-only is reserved and not available")
    if argv[0] not in MODES:
        return _usage(usage, f"unknown mode {argv[0]!r}")
    assert rt.meta is not None
    rt.meta.set_mode(argv[0])
    f = _session_facts(rt)
    rt.set_activity("idle")
    return CommandResult(f"mode={f['mode']} recall={f['recall']} retain={f['retain']}\n{f['label']}", "info", f)


def cmd_next_opt_out(rt: SessionRuntime, argv: list[str]) -> CommandResult:
    blocked = _need_enabled(rt)
    if blocked:
        return blocked
    if argv:
        return _usage("/hindsight:next-opt-out")
    assert rt.meta is not None
    rt.meta.set_next_opt_out()
    return CommandResult("the next agent run skips automatic retain (next_retain=off)", "info", {"next_retain": "off"})


def cmd_retain(rt: SessionRuntime, argv: list[str]) -> CommandResult:
    usage = "/hindsight:retain on|off"
    blocked = _need_enabled(rt)
    if blocked:
        return blocked
    if len(argv) != 1 or argv[0] not in ("on", "off"):
        return _usage(usage)
    assert rt.meta is not None
    rt.meta.set_retain(argv[0] == "on")
    f = _session_facts(rt)
    data = {"requested": argv[0], "effective": f["retain"], "mode": f["mode"]}
    return CommandResult(f"requested={argv[0]} effective={f['retain']} mode={f['mode']}", "info", data)


def cmd_tag(rt: SessionRuntime, argv: list[str]) -> CommandResult:
    usage = "/hindsight:tag add|remove <tag>"
    blocked = _need_enabled(rt)
    if blocked:
        return blocked
    if len(argv) < 2 or argv[0] not in ("add", "remove"):
        return _usage(usage)
    from ...governance.session_meta import TagError

    tag = " ".join(argv[1:])
    assert rt.meta is not None
    try:
        if argv[0] == "add":
            rt.meta.add_tag(tag)
        else:
            rt.meta.remove_tag(tag)
    except TagError as exc:
        return CommandResult(f"tag not changed: {exc}", "warning", {"tags": list(rt.meta.read().record.tags)})
    tags = list(rt.meta.read().record.tags)
    return CommandResult(f"tags: {', '.join(tags) or 'none'}", "info", {"tags": tags})


def cmd_last_recall(rt: SessionRuntime, argv: list[str]) -> CommandResult:
    if any(a != "--json" for a in argv):
        return _usage("/hindsight:last-recall [--json]")
    import json

    path = rt.resolve_path(rt.cfg.recall.last_recall_path)
    if not path.exists():
        return CommandResult("no snapshot; enable `recall.store_last_recall`", "info", {"path": str(path)})
    try:
        raw = path.read_text(encoding="utf-8")
        snap = json.loads(raw)
        if not isinstance(snap, dict):
            raise ValueError("not an object")
    except Exception as exc:
        return CommandResult(f"snapshot {path} is unreadable: {redact_error(exc)}", "warning", {"path": str(path)})
    if "--json" in argv:
        return CommandResult(raw, "info", snap)
    blocks = snap.get("blocks") or []
    failures = snap.get("failures") or []
    memories = sum(int(b.get("memory_count", 0)) for b in blocks if isinstance(b, dict))
    query = " ".join(str(snap.get("query", "")).split())  # one line: the query has sections
    lines = [
        f"created_at: {snap.get('created_at')}",
        f"memories: {memories}",
        "banks: " + (",".join(f"{b.get('bank_id')}:{b.get('memory_count', 0)}" for b in blocks) or "none"),
        f"failed: {snap.get('failed', 0)}",
    ]
    if failures:
        lines.append("failures: " + ",".join(f"{f.get('bank_id')}:{f.get('error')}" for f in failures))
    lines.append(f"query: {query[:180]}")
    lines.append(f"path: {path}")
    lines.append("visibility only, not a provider cache")
    return CommandResult("\n".join(lines), "info", {"path": str(path), "memories": memories})


def cmd_recall_cleanup(rt: SessionRuntime, argv: list[str]) -> CommandResult:
    from ..recall.recall_cleanup import recall_cleanup

    return recall_cleanup(rt, argv)


def cmd_queue(rt: SessionRuntime, argv: list[str]) -> CommandResult:
    usage = "/hindsight:queue [--jobs] [--json] [--requeue-dead]"
    if any(a not in ("--jobs", "--json", "--requeue-dead") for a in argv):
        return _usage(usage)
    import json

    queue = rt.queue()
    if "--requeue-dead" in argv:
        n = queue.requeue_dead()
        return CommandResult(f"requeued {n} dead-letter job(s)", "info", {"requeued": n})
    rep = queue.report()
    data: dict[str, Any] = dict(rep)
    if "--jobs" in argv:
        data["jobs"] = queue.jobs_view()
    active, dead = rep.get("active", {}), rep.get("dead_letter", {})
    warn = bool(
        dead.get("valid")
        or active.get("malformed")
        or active.get("error")
        or dead.get("malformed")
        or dead.get("error")
        or rep.get("lock_error")
    )
    if "--json" in argv:
        return CommandResult(json.dumps(data, indent=2, default=str), "warning" if warn else "info", data)
    lines = [
        f"active: {active.get('valid', 0)} (due {active.get('due', 0)}, waiting {active.get('waiting', 0)})",
        f"dead-letter: {dead.get('valid', 0)}",
        _malformed_line(rep),
        f"next attempt: {active.get('next_attempt_at') or '-'}",
        f"last error: {redact_text(str(active.get('last_error') or rt.last_error or '-'))}",
        f"last outcome: {rep.get('last_outcome') or rt.last_outcome or '-'}",
        f"path: {rep.get('queue_path')}",
    ]
    if active.get("error"):
        lines.append(f"error: {active.get('error')}")
    if dead.get("error"):
        lines.append(f"dead-letter file error: {dead.get('error')}")
    if rep.get("lock_error"):
        lines.append(f"lock error: {rep.get('lock_error')}")
    if "--jobs" in argv:
        for j in data["jobs"]:
            lines.append(
                f"- {j.get('id')} bank={j.get('bank_id')} source={j.get('source')} attempts={j.get('attempts')} "
                f"next={j.get('next_attempt_at') or '-'} items={len(j.get('items', []))}"
            )
    return CommandResult("\n".join(lines), "warning" if warn else "info", data)


def _malformed_line(rep: dict[str, Any]) -> str:
    """Every line that did not parse: still in the queue file, or already quarantined."""
    counts = rep.get("malformed", {})
    line = f"malformed: {counts.get('total', 0)}"
    if counts.get("quarantined"):
        line += f" ({counts['quarantined']} quarantined in {rep.get('malformed_path')})"
    return line


FLUSH_BUDGET_MS = 120_000
DUE_FLUSH_BUDGET_MS = 60_000
"""``--due`` is the delivery worker's flush: it must end well inside the worker's own limit."""


def cmd_flush(rt: SessionRuntime, argv: list[str]) -> CommandResult:
    if argv not in ([], ["--due"]):
        return _usage("/hindsight:flush [--due]")
    blocked = _need_enabled(rt)
    if blocked:
        return blocked
    from ...retain.delivery import flush_now

    due_only = argv == ["--due"]
    # waits (bounded) for a flush already running
    done = flush_now(rt, budget_ms=DUE_FLUSH_BUDGET_MS if due_only else FLUSH_BUDGET_MS, due_only=due_only)
    report = done.report
    if report.error:
        return CommandResult(f"flush failed: {report.error}", "error", {"error": report.error})
    data = {
        "sent": report.sent,
        "dead_lettered": report.dead_lettered,
        "remaining": report.remaining,
        "quarantined": report.malformed,
        "waiting": report.waiting,
        "errors": report.errors,
        "waited_for": done.waited_for,
        "waited_s": round(done.waited_s, 3),
        "in_flight": done.still_in_flight,
    }
    text = done.describe()
    if report.errors:
        text += "\n" + "\n".join(f"{b}: {e}" for b, e in report.errors.items())
    level: Level = "warning" if (report.remaining or report.dead_lettered or report.malformed) else "info"
    return CommandResult(text, level, data)


def cmd_doctor(rt: SessionRuntime, argv: list[str]) -> CommandResult:
    if any(a not in ("--json", "--fix") for a in argv):
        return _usage("/hindsight:doctor [--json] [--fix]")
    from .doctor import run_doctor

    return run_doctor(rt, fix="--fix" in argv, as_json="--json" in argv)


def cmd_route(rt: SessionRuntime, argv: list[str]) -> CommandResult:
    if not argv:
        return _usage("/hindsight:route <text>")
    from ...governance.router import route

    # The router only ever sees redacted text (docs/governance.md#router input boundary), typed or projected.
    text = redact_text(" ".join(argv))
    decision = route(text, "", rt.cfg, project_bank=rt.project_bank(), user_bank=rt.user_bank())
    lines = [
        f"route: {decision['route']} (confidence {decision['confidence']})",
        f"reason: {decision['reason']}",
        f"writes: {', '.join(decision['writes']) or 'none'}",
    ]
    for note in decision.get("safety_notes", []):
        lines.append(f"note: {note}")
    return CommandResult("\n".join(lines), "info", decision)


def cmd_memories(rt: SessionRuntime, argv: list[str]) -> CommandResult:
    from .memories import cmd_memories as run

    return run(rt, argv)
