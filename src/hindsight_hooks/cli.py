"""The ``hindsight-hooks`` console entry: every slash command as a subcommand, plus chat/demo/import.

Why a registry: many subcommands are written by different people in different modules, and the
plugin must stay cheap to import. So this module only knows a table of ``Subcommand`` records;
feature modules add themselves with :func:`register` when they are imported, and ``main`` imports
them lazily (only the CLI pays for them, never the plugin).

To add a subcommand::

    # src/hindsight_hooks/cli_queue.py
    from hindsight_hooks.cli import register

    def _add_args(parser): parser.add_argument("--jobs", action="store_true")
    def _run(ns) -> int: ...; return 0

    register("queue", "show the retain queue", _add_args, _run)

and list ``"hindsight_hooks.cli_queue"`` in :data:`SUBCOMMAND_MODULES`. Every subcommand gets the
common options of docs/commands.md (``--cwd``, ``--session-file``, ``--host-name``, ``--yes``, ``--json``);
use :func:`cwd_of` to read ``--cwd``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

AddArgs = Callable[[argparse.ArgumentParser], None]
Run = Callable[[argparse.Namespace], int]

#: Modules that call :func:`register` on import. Imported lazily by :func:`build_parser`.
SUBCOMMAND_MODULES: tuple[str, ...] = (
    "hindsight_hooks.cli_commands",
    "hindsight_hooks.cli_mcp",
    "hindsight_hooks.cli_hosts",
    "hindsight_hooks.cli_serve",
    "hindsight_hooks.cli_embed",
    "hindsight_hooks.cli_webui",
    "hindsight_hooks.cli_migrate",
    "hindsight_hooks.cli_repair",
)


@dataclass(frozen=True)
class Subcommand:
    name: str
    help: str
    add_args: AddArgs | None
    run: Run


_REGISTRY: dict[str, Subcommand] = {}


def register(name: str, help: str, add_args: AddArgs | None, run: Run) -> Subcommand:
    """Add a subcommand. Registering the same name twice is a programming error."""
    if name in _REGISTRY:
        raise ValueError(f"subcommand {name!r} is already registered")
    command = Subcommand(name, help, add_args, run)
    _REGISTRY[name] = command
    return command


def subcommands() -> dict[str, Subcommand]:
    """The registered subcommands (after loading :data:`SUBCOMMAND_MODULES`)."""
    _load_modules()
    return dict(_REGISTRY)


def _load_modules() -> None:
    for module in SUBCOMMAND_MODULES:
        try:
            importlib.import_module(module)
        except Exception as exc:  # one broken module must not take the whole CLI down
            print(f"hindsight-hooks: could not load {module}: {type(exc).__name__}", file=sys.stderr)


def existing_folder(text: str) -> Path:
    """``--cwd``: a folder that exists, or a usage error (exit 2) before anything runs.

    Every command keeps its state under ``<cwd>/.hindsight``; a mistyped ``--cwd`` must not
    quietly become a new project (made as whoever runs it, wherever the typo points) that
    ``status``, ``doctor`` and ``queue`` then report on as if it were the real one (ADR-072).
    """
    path = Path(text).expanduser()
    if not path.exists():
        raise argparse.ArgumentTypeError(
            f"no such folder: {text} (give an existing project folder; nothing was created)"
        )
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"not a folder: {text} (give the project folder, not a file in it)")
    return path


def add_common_args(parser: argparse.ArgumentParser) -> None:
    """The options every subcommand accepts (docs/commands.md)."""
    parser.add_argument(
        "--cwd",
        type=existing_folder,
        default=None,
        metavar="FOLDER",
        help="the project folder, which must exist (default: the current folder)",
    )
    parser.add_argument(
        "--session-file",
        type=Path,
        default=None,
        metavar="FILE",
        help="the host session (transcript) file this command speaks for (default: the CLI's own session)",
    )
    parser.add_argument("--host-name", default="agent", metavar="NAME", help="host name used in tags (default: agent)")
    parser.add_argument(
        "--yes", action="store_true", help="answer yes to any question (needed when there is no terminal to ask)"
    )
    parser.add_argument("--json", action="store_true", help="print structured data as JSON instead of text")


def cwd_of(ns: argparse.Namespace) -> Path:
    cwd: Path | None = getattr(ns, "cwd", None)
    return (cwd if cwd is not None else Path.cwd()).absolute()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hindsight-hooks", description="Long-term memory for AI agents.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in subcommands().values():
        child = sub.add_parser(command.name, help=command.help, description=command.help)
        add_common_args(child)
        if command.add_args is not None:
            command.add_args(child)
        child.set_defaults(_run=command.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):  # a non-UTF-8 terminal must not turn output into a crash
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="replace")
    parser = build_parser()
    try:
        ns = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits on --help and usage errors; report it as a code
        return exc.code if isinstance(exc.code, int) else 2
    run: Run | None = getattr(ns, "_run", None)
    if run is None:
        parser.print_help()
        return 2
    return run(ns)


# --------------------------------------------------------------------------- config


def _show(value: Any) -> str:
    from hindsight_hooks.config import MASK

    if value is None:
        return "unset"
    if value == MASK:
        return MASK
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return json.dumps(value, ensure_ascii=False)


def _run_config(ns: argparse.Namespace) -> int:
    from hindsight_hooks.config import describe_config, load_config, project_config_path

    cwd = cwd_of(ns)
    loaded = load_config(cwd)
    rows = describe_config(loaded)
    if ns.json:
        payload = {
            "values": {key: {"value": value, "source": source} for key, value, source in rows},
            "warnings": loaded.warnings,
            "error": loaded.error,
            "files": {name: str(path) for name, path in loaded.files.items()},
            "effective_backend": loaded.config.effective_backend(),
        }
        print(json.dumps(payload, indent=2, ensure_ascii=False))
    elif loaded.error:
        # The error is the one thing to read: a page of defaults above it would bury it.
        print(f"hindsight-hooks: config error: {loaded.error}", file=sys.stderr)
        print(
            "hindsight-hooks: memory stays off until this is fixed; then run `hindsight-hooks config` again",
            file=sys.stderr,
        )
    else:
        files = dict(loaded.files)
        print(f"# project config: {files.get('project') or str(project_config_path(cwd)) + ' (not found)'}")
        if "user" in files:
            print(f"# user config: {files['user']}")
        print(f"# effective backend: {loaded.config.effective_backend()}")
        for key, value, source in rows:
            print(f"{key} = {_show(value)}  ({source})")
        for warning in loaded.warnings:
            print(f"warning: {warning}")
    return 1 if loaded.error else 0


register("config", "show the effective configuration, its sources, warnings and errors", None, _run_config)
