"""``hindsight-hooks migrate --to hindsight``: copy the embedded store's banks to a Hindsight server.

For someone who outgrows one machine (docs/migrate.md, ADR 150-153). Every current memory of
every bank (or of the ``--bank`` ones) is retained on the server, whole documents under their
own ids, in batches; a progress file records what is done, so a run that was interrupted
(Ctrl-C, a crash, kill -9) continues when started again, and a run that is repeated replaces
instead of duplicating. Afterwards the server is checked document by document, memories by
text. ``--switch-config`` then points the project at the server. Progress goes to stderr;
``--json`` prints the summary on stdout.

Exit codes (ADR-072): 0 complete, 1 failed or incomplete (run again to continue), 2 usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from .cli import cwd_of, register

if TYPE_CHECKING:
    from .backends.base import BankSpec
    from .config_model import Config
    from .migrate.run import Report

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
TAG = "hindsight-hooks: "


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text}") from None
    if not 1 <= value <= 1000:
        raise argparse.ArgumentTypeError("must be between 1 and 1000")
    return value


def _add_migrate(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--to", required=True, choices=["hindsight"], help="where to: a Hindsight server")
    parser.add_argument("--url", default=None, help="the server's base URL (default: hindsight.base_url of the config)")
    parser.add_argument("--store", type=Path, default=None, help="the embedded store (default: local.path)")
    parser.add_argument("--bank", action="append", default=None, help="only this bank (repeatable; default: all)")
    parser.add_argument("--batch-size", type=_positive, default=100, help="memories per request (default: 100)")
    parser.add_argument("--dry-run", action="store_true", help="only count what would be sent; nothing is sent")
    parser.add_argument("--restart", action="store_true", help="send everything again, ignoring recorded progress")
    parser.add_argument("--no-verify", action="store_true", help="skip checking the server after sending")
    parser.add_argument(
        "--switch-config",
        action="store_true",
        help="on success, set backend = hindsight and base_url in the project's .hindsight/config.toml (backup kept)",
    )


def _spec_for(cfg: Config) -> Callable[[str], BankSpec]:
    from .governance.identity import bank_spec

    def spec(bank_id: str) -> BankSpec:
        return bank_spec(cfg, "user" if bank_id and bank_id == cfg.banks.user.bank_id else "project")

    return spec


def _run_migrate(ns: argparse.Namespace) -> int:
    from .backends.hindsight import HindsightBackend
    from .backends.local import LocalBackend
    from .backends.local_documents import EmbeddedSource
    from .cli_progress import Progress
    from .config import load_config, resolve_api_key, resolve_local_path
    from .governance.redact import redact_error
    from .migrate import progress as progress_file
    from .migrate.run import Migration, Options
    from .migrate.switch import CREDENTIALS_IN_URL, has_credentials

    cwd = cwd_of(ns)
    loaded = load_config(cwd)
    if loaded.error:
        print(f"{TAG}config error: {loaded.error}", file=sys.stderr)
        return EXIT_FAILED
    cfg = loaded.config
    url = (ns.url or cfg.hindsight.base_url or "").strip().rstrip("/")
    if not url:
        print(f"{TAG}no server to migrate to: pass --url or set hindsight.base_url", file=sys.stderr)
        return EXIT_USAGE
    store = Path(ns.store).expanduser() if ns.store else resolve_local_path(cfg, cwd=cwd)
    if not store.is_file():
        print(f"{TAG}no embedded store at {store} (nothing to migrate)", file=sys.stderr)
        return EXIT_FAILED
    label = redact_error(url, 200)
    prog = progress_file.Progress.load(cwd / ".hindsight" / progress_file.FILE_NAME, progress_file.run_key(store, url))
    if prog.moved_aside is not None:
        print(f"{TAG}an unreadable progress file was moved to {prog.moved_aside}; starting over", file=sys.stderr)
    bar: list[Progress] = []

    def on_progress(done: int, total: int) -> None:
        if total <= 0:
            return
        if not bar:
            bar.append(Progress("migrating", total))
        bar[0].show(done)

    if ns.switch_config and has_credentials(url):
        print(f"{TAG}--switch-config: {CREDENTIALS_IN_URL}", file=sys.stderr)
        return EXIT_USAGE
    try:
        target = HindsightBackend(url, resolve_api_key(cfg), timeout_ms=300_000)
    except ValueError as exc:
        print(f"{TAG}{redact_error(exc)}", file=sys.stderr)
        return EXIT_USAGE
    try:
        source_backend = LocalBackend(store)
    except Exception as exc:  # a store that cannot be opened: say why, change nothing
        target.close()
        print(f"{TAG}cannot open the embedded store {store}: {redact_error(exc)}", file=sys.stderr)
        return EXIT_FAILED
    options = Options(
        banks=ns.bank,
        batch_size=ns.batch_size,
        dry_run=ns.dry_run,
        restart=ns.restart,
        verify=not ns.no_verify,
        redact=cfg.retain.redact_secrets,
    )
    source = EmbeddedSource(source_backend)
    migration = Migration(source, target, prog, _spec_for(cfg), options, on_progress)
    try:
        report = migration.run(label)
    except KeyboardInterrupt:
        if bar:
            bar[0].end()
        print(f"{TAG}interrupted; run the same command again to continue", file=sys.stderr)
        return EXIT_FAILED
    except Exception as exc:
        if bar:
            bar[0].end()
        print(f"{TAG}migration stopped: {redact_error(exc)}; run the same command again to continue", file=sys.stderr)
        return EXIT_FAILED
    finally:
        source_backend.close()
        target.close()
    if bar:
        bar[0].end()
    data = report.as_dict()
    code = EXIT_OK if report.complete else EXIT_FAILED
    if report.complete and ns.switch_config and not ns.dry_run:
        from .migrate.switch import SwitchError, switch_project_config

        try:
            switched = switch_project_config(cwd, url)
        except SwitchError as exc:
            print(f"{TAG}config not switched: {exc}", file=sys.stderr)
            code = EXIT_FAILED
        else:
            data["config"] = {"path": str(switched.path), "backup": str(switched.backup) if switched.backup else None}
    if ns.json:  # the summary is data: stdout even when incomplete
        print(json.dumps(data, indent=2))
    else:  # a non-zero exit speaks on stderr (ADR-072)
        print(_text(report, data), file=sys.stdout if code == EXIT_OK else sys.stderr)
    return code


def _text(report: Report, data: dict[str, object]) -> str:
    if report.error:
        return f"error: {report.error}"
    lines = []
    for b in report.banks:
        line = f"{b.bank_id}: {b.memories} memories in {b.documents} documents"
        if b.retired_left_behind:
            line += f" ({b.retired_left_behind} retired ones stay behind)"
        if report.dry_run:
            line += f"; {b.to_send} to send"
        else:
            line += f"; sent {b.sent}"
            if b.documents_on_server is not None:
                line += (
                    f"; checked: {b.documents_on_server} documents on the server, {b.missing_documents} missing, "
                    f"{b.memories_found} memories found as {b.server_memories} server memories"
                )
                if b.memories_repeated:
                    line += f", {b.memories_repeated} of them more than once"
            if b.repaired:
                line += f" (sent {b.repaired} again)"
        lines.append(line)
    if not report.banks:
        lines.append("the embedded store holds no banks")
    head = f"{'would migrate' if report.dry_run else 'migrated'} to {report.target}"
    if not report.dry_run:
        head += f" in {report.seconds:.0f} s" + ("" if report.complete else " (INCOMPLETE: run again)")
    config = data.get("config")
    if isinstance(config, dict):
        lines.append(f"project config now uses the server: {config['path']}")
        if config.get("backup"):
            lines.append(f"previous config kept as {config['backup']}")
    return "\n".join([head, *lines])


register("migrate", "copy the embedded store's banks to a Hindsight server (resumable)", _add_migrate, _run_migrate)
