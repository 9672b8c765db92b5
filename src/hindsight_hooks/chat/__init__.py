"""``hindsight-hooks chat``: the reference interactive host (REPL, models, session file, completion).

Imported only by the CLI: nothing here is loaded into a host that uses the plugin.
"""

from .app import run_chat

__all__ = ["run_chat"]
