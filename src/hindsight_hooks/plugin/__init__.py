"""Our plugin: ``hindsight_hooks.plugin:plugin`` is what the ``agent_hooks`` entry point names."""

from .core import HindsightPlugin

plugin = HindsightPlugin()

__all__ = ["HindsightPlugin", "plugin"]
