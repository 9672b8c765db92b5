"""``hindsight-hooks ui``: serve the local memory page until Ctrl-C or an idle limit (ADR 155).

Only the arguments live here; the page (:mod:`hindsight_hooks.webui`) is imported when the
subcommand runs. The page runs the same commands as the shell, in the same session the CLI
speaks for (``--cwd``, ``--session-file``), so it sees exactly what ``hindsight-hooks memories``,
``queue`` and ``doctor`` see.
"""

from __future__ import annotations

import argparse
import signal
import sys
from types import FrameType

from .cli import cwd_of, register

DEFAULT_IDLE_MINUTES = 30.0


def _add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--idle-minutes",
        type=float,
        default=DEFAULT_IDLE_MINUTES,
        metavar="N",
        help=f"stop after N minutes without a request (default: {DEFAULT_IDLE_MINUTES:g})",
    )
    parser.epilog = (
        "The page listens on 127.0.0.1 at a random port and prints one link with a one-time token; "
        "only that link opens it. Ctrl-C stops it."
    )


def _stop_on_term(signum: int, frame: FrameType | None) -> None:
    """``kill`` stops the page the way Ctrl-C does (a clean close and the "stopped" line)."""
    raise KeyboardInterrupt


def _run(ns: argparse.Namespace) -> int:
    if not ns.idle_minutes > 0:
        print("hindsight-hooks: --idle-minutes must be more than 0", file=sys.stderr)
        return 2
    from .cli_commands import session_file_for
    from .hooks import Host
    from .webui.actions import Actions, PageUI
    from .webui.server import PageServer

    ui = PageUI()
    host = Host(cwd_of(ns), session_file=session_file_for(ns, None), host_name=ns.host_name, ui=ui)
    server = PageServer(Actions(host, ui, cwd_of(ns)), idle_s=ns.idle_minutes * 60)
    print(
        f"hindsight-hooks ui: memory page for {cwd_of(ns)} (Ctrl-C to stop; stops after "
        f"{ns.idle_minutes:g} idle minutes). Open:",
        file=sys.stderr,
    )
    print(server.url, flush=True)
    sys.stderr.flush()
    signal.signal(signal.SIGTERM, _stop_on_term)
    why = server.serve()
    print(
        "hindsight-hooks ui: stopped" + (f" after {ns.idle_minutes:g} idle minutes" if why == "idle" else ""),
        file=sys.stderr,
    )
    return 0


register(
    "ui", "a local page (loopback only) to browse, search and forget memories, with queue and doctor", _add_args, _run
)
