"""Which recalled units the model already reads in this turn's messages (ADR 183).

The embedded store keeps a transcript as one unit per message (pieces of a long one), so in a
long session the best matches for a prompt are often the session's own earlier turns, which the
host sends to the model anyway. Shown again in the block they cost tokens and push out what the
block is for: memories from other sessions. Here a unit is *seen* when

- its text is a message of this turn, as the store would write that message's unit (same role
  label, same text), whichever session said it; or
- it belongs to this session's document and is a piece of one of this turn's long messages.

A session the host has compacted no longer sends its early turns, so their units are not seen
and are recalled like any other memory. The check is exact: a message the retain path changed
(a redacted secret, say) does not match its unit, which is then shown, as before this ADR.

Cost: the messages' texts are read once per turn (the project and user banks' recalls share the
request's ``InContext``, and with it what was read), and only when a candidate reaches the cut;
a unit is one set lookup, and only this session's units are searched in the long messages. A hook
pays for the transcript's tail, not its length: only the newest :data:`VIEW_MESSAGES` messages
and :data:`VIEW_CHARS` characters are read (about 1 ms for 400 messages here), and a unit said before them is
shown as it was before this check.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from weakref import ref

from .base import InContext, same_text_key
from .local_rank import Candidate
from .local_units import message_text, piece_limit, unit_prefix

VIEW_MESSAGES = 400
VIEW_CHARS = 400_000


@dataclass
class _View:
    """What the model reads, as units: whole messages as the store writes their unit, and the
    long messages the store cuts into pieces (with their whitespace-collapsed text, made once)."""

    whole: set[str] = field(default_factory=set)
    long: list[tuple[str, str]] = field(default_factory=list)  # (label, message text)
    _long_keys: list[tuple[str, str]] | None = None

    def long_keys(self) -> list[tuple[str, str]]:
        # A piece joins a message's paragraphs with one blank line, whatever the message had
        # between them: compare with whitespace collapsed.
        if self._long_keys is None:
            self._long_keys = [(prefix, same_text_key(text)) for prefix, text in self.long]
        return self._long_keys


def _read(messages: Iterable[object]) -> _View:
    view = _View()
    chars = 0
    for message in messages:
        if not isinstance(message, Mapping) or not isinstance(message.get("role"), str):
            continue
        chars += _text_size(message.get("content"))  # before reading it: a 5 MB tool output stops here
        if chars > VIEW_CHARS:
            break
        text = message_text(message)
        if not text:
            continue
        prefix = unit_prefix(message)
        if len(text) <= piece_limit(prefix):
            view.whole.add(prefix + text)
        else:
            view.long.append((prefix, text))
    return view


_last: tuple[ref[InContext], _View] | None = None
"""The view of the last request's messages: a turn's recalls (project bank, user bank) pass the
same ``InContext``, so the second one reuses what the first read. Held by a weak reference, so a
finished turn's messages are never kept alive or mistaken for another's, and the texts read from
them go when it does."""


def _view_of(in_context: InContext) -> _View:
    global _last
    last = _last
    if last is not None and last[0]() is in_context:
        return last[1]
    view = _read(reversed(in_context.messages[-VIEW_MESSAGES:]))
    _last = (ref(in_context, _forget), view)
    return view


def _forget(gone: ref[InContext]) -> None:
    """The request is gone: drop the texts read from its messages with it."""
    global _last
    last = _last
    if last is not None and last[0] is gone:
        _last = None


class SeenInContext:
    """``seen(document_id, content)``: whether a unit is already in front of the model (module doc)."""

    def __init__(self, in_context: InContext) -> None:
        self._in_context = in_context
        self._view: _View | None = None

    def __call__(self, document_id: str, content: str) -> bool:
        if self._view is None:
            self._view = _view_of(self._in_context)
        view = self._view
        if content in view.whole:
            return True
        if document_id != self._in_context.document_id or not view.long:
            return False
        for prefix, key in view.long_keys():
            if content.startswith(prefix) and same_text_key(content[len(prefix) :]) in key:
                return True
        return False


def _text_size(content: object) -> int:
    """About how many characters of text ``content`` holds, without copying any of it."""
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list):
        return sum(
            len(part["text"]) for part in content if isinstance(part, Mapping) and isinstance(part.get("text"), str)
        )
    return 0


def seen_in_context(in_context: InContext | None) -> Callable[[str, str], bool] | None:
    """The check for ``in_context``, or ``None`` when the request says nothing about it."""
    if in_context is None or not in_context.messages:
        return None
    return SeenInContext(in_context)


def unseen(ordered: Iterable[Candidate], seen: Callable[[str, str], bool] | None) -> Iterable[Candidate]:
    """``ordered`` without the units the model already reads (all of them when ``seen`` is None)."""
    if seen is None:
        return ordered
    return (cand for cand in ordered if not seen(cand.document_id, cand.content))
