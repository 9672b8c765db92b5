"""Tab completion of slash commands at the chat prompt, through ``Host.complete``.

``Host.complete`` takes the whole partial line and returns whole candidate lines, so readline
is told to treat the entire line as one "word" (no completer delimiters): the candidate then
replaces what was typed. Plain prompts (no leading ``/``) are never completed.
"""

from __future__ import annotations

from ..hooks import Host

BUILTINS = ("/exit", "/help", "/quit")
"""The chat's own commands, completed alongside the plugins' ones."""


class Completer:
    """Candidates for a partial line, plus the ``readline`` callback protocol."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self._matches: list[str] = []

    def matches(self, line: str) -> list[str]:
        if not line.lstrip().startswith("/"):
            return []
        text = line.lstrip()
        try:
            found = list(self.host.complete(text))
        except Exception:  # completion must never break the prompt
            found = []
        if " " not in text:
            found.extend(b for b in BUILTINS if b.startswith(text))
        unique = sorted(dict.fromkeys(found))
        if len(unique) == 1 and " " not in text and unique[0] not in BUILTINS:
            # A finished command name: add the space readline would add, ready for arguments.
            return [unique[0] + " "]
        return unique

    def __call__(self, text: str, state: int) -> str | None:
        """``readline`` calls this with ``state`` 0, 1, 2… until it returns ``None``."""
        if state == 0:
            # With no delimiters, readline passes the whole line up to the cursor as ``text``.
            self._matches = self.matches(text)
        return self._matches[state] if state < len(self._matches) else None


def install(host: Host) -> bool:
    """Hook the completer into GNU readline / libedit; ``False`` when readline is unavailable."""
    try:
        import readline
    except ImportError:
        return False
    completer = Completer(host)
    readline.set_completer(completer)
    readline.set_completer_delims("")
    if "libedit" in (readline.__doc__ or ""):
        readline.parse_and_bind("bind ^I rl_complete")
    else:
        readline.parse_and_bind("tab: complete")
    return True
