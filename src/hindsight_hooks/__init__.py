"""hindsight-hooks: long-term memory for AI agents, as a pluggy plugin.

Importing this package is deliberately cheap: the plugin object and the heavy pieces
(httpx client, SQLite store) are loaded lazily, because we live inside other people's
processes.
"""

from .errors import HindsightHooksError

__version__ = "0.1.0"
__all__ = ["HindsightHooksError", "__version__"]
