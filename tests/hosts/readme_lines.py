"""The README's copy-paste lines for each agent, read from README.md so the tests run them exactly."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def install_line(agent: str) -> str:
    """The one bash line under ``## Use it in your agent`` -> ``### <agent>``."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Use it in your agent", 1)
    assert len(section) == 2, "README.md has no 'Use it in your agent' section"
    match = re.search(rf"### {re.escape(agent)}\n.*?```bash\n(?P<line>[^\n]+)\n```", section[1], re.S)
    assert match is not None, f"README.md has no bash line for {agent}"
    return match.group("line").strip()
