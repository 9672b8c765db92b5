"""``python -m hindsight_hooks.hosts hook <host> <event>``: the hook command, on its light path.

Installed hooks call this rather than the ``hindsight-hooks`` console script because the hook is a
fresh process on every prompt: the full CLI builds its parser from every subcommand module, which
imports the plugin's command and tool machinery before the hook could even start. This entry
imports a few stdlib modules and hands the event to the warm helper (:mod:`.hookclient`, ADR-080),
or answers in-process when there is none. It answers exactly like ``hindsight-hooks hook <host> <event>``.
"""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[0] != "hook":
        print("usage: python -m hindsight_hooks.hosts hook <host> <event>", file=sys.stderr)
        return 2
    from .hookclient import main as client

    client(argv[1], argv[2])
    return 0  # not reached: the client ends the process


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
