"""Subcommands for agent programs that are hosts through their own hook systems.

``hindsight-hooks hook <host> <event>`` is what a host's hook configuration runs (it reads the
event on stdin, answers on stdout, always exits 0; see :mod:`hindsight_hooks.hosts.hookcmd`).
Everything is imported when a subcommand runs, never when the CLI is built.
"""

from __future__ import annotations

import argparse

from hindsight_hooks.cli import register


def _hook_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("host", help="the agent program: claude-code")
    parser.add_argument("event", help="the host's hook event name, e.g. UserPromptSubmit")


def _run_hook(ns: argparse.Namespace) -> int:
    from hindsight_hooks.hosts.hookcmd import run_process

    run_process(ns.host, ns.event)
    return 0  # not reached: run_process ends the process with exit 0


register(
    "hook",
    "answer one hook event of an agent program (JSON on stdin -> JSON on stdout; always exits 0)",
    _hook_args,
    _run_hook,
)
