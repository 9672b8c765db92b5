"""``hindsight-hooks serve --stdio``: one agent session over JSON-RPC on stdin/stdout.

Only the arguments live here; the server is :mod:`hindsight_hooks.hosts.serve_stdio`, imported
when the subcommand runs. Hosts that start it on every session (the Pi extension) run the
lighter ``python -m hindsight_hooks.hosts.serve_stdio``, which skips building this CLI.
"""

from __future__ import annotations

import argparse

from .cli import cwd_of, register


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """The serve options, shared with ``python -m hindsight_hooks.hosts.serve_stdio``."""
    from .hosts.rpc_wire import DEFAULT_MAX_MESSAGE_BYTES

    parser.add_argument("--stdio", action="store_true", required=True, help="speak JSON-RPC 2.0 on stdin/stdout")
    parser.add_argument(
        "--max-message-bytes",
        type=int,
        default=DEFAULT_MAX_MESSAGE_BYTES,
        metavar="N",
        help=f"refuse messages longer than N bytes (default: {DEFAULT_MAX_MESSAGE_BYTES})",
    )


def _run(ns: argparse.Namespace) -> int:
    from .hosts.serve_stdio import serve

    return serve(cwd_of(ns), max_message_bytes=ns.max_message_bytes)


register(
    "serve",
    "serve one agent session to a host over JSON-RPC 2.0 on stdin/stdout (the Pi extension runs it)",
    add_serve_arguments,
    _run,
)
