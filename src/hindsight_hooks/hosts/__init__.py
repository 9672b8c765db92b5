"""Adapters that make other agent programs (Claude Code, Codex, Gemini CLI, MCP clients) hosts of the plugin."""
