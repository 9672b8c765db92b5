"""``hindsight-hooks mcp``: serve the plugin's tools to an MCP client over stdio (ADR-085).

Only the arguments live here. The server is :mod:`hindsight_hooks.hosts.mcp_server`, imported
when this subcommand runs, so the ``mcp`` SDK (the optional ``[mcp]`` extra, with its web
stack) is never loaded by other subcommands, and a missing extra is one clear message instead of
a broken CLI.
"""

from __future__ import annotations

import argparse
import os
import sys

from .cli import cwd_of, register

SESSION_ENV = "HINDSIGHT_HOOKS_SESSION_ID"
INSTALL_HINT = "hindsight-hooks mcp needs the MCP SDK: pip install 'hindsight-hooks[mcp]'"


def _add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--session-id",
        default=None,
        help=f"the session the tools speak for (default: ${SESSION_ENV}, else a new one; "
        "'cli' is the session plain shell commands use)",
    )
    parser.add_argument(
        "--session-id-env",
        default=None,
        metavar="NAME",
        help="take the session id from this environment variable when --session-id is not given "
        "(Claude Code gives its MCP servers CLAUDE_CODE_SESSION_ID; ADR-083)",
    )
    parser.set_defaults(host_name="mcp")


def _run(ns: argparse.Namespace) -> int:
    try:
        from .hosts.mcp_server import ServerOptions, main
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in ("mcp", "mcp_types"):
            raise
        print(INSTALL_HINT, file=sys.stderr)
        return 1
    return main(
        ServerOptions.resolve(
            cwd=cwd_of(ns),
            session_file=ns.session_file,
            session_id=ns.session_id or (os.environ.get(ns.session_id_env) if ns.session_id_env else None),
            host_name=ns.host_name,
        )
    )


register("mcp", "serve the memory tools to an MCP client over stdio", _add_args, _run)
