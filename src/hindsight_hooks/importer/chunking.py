"""Curated chunking: turns grouped into documents of bounded size (docs/import.md "Modes" 4).

One document per whole session would be too big to extract well and would be re-processed
entirely whenever one word changed; one per message loses the question/answer context. A
*turn* — a user message and everything up to the next one — is the smallest unit that keeps
its context, so chunks are made of whole turns:

* a turn starts at each user message (messages before the first one form a leading turn);
* a chunk is closed before adding a turn when it already holds ``turns_per_document`` turns,
  or when the compact UTF-8 JSON of its raw messages would then exceed ``max_document_bytes``;
* a single turn larger than the byte limit still becomes a chunk of its own (it is never cut:
  half a tool call is worse than a big document).

``start``/``end`` are inclusive indexes into the branch's message list, so they stay stable
whatever was dropped around them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..hooks.messages import Message

Indexed = tuple[int, Message]


@dataclass
class Chunk:
    """Consecutive whole turns of one branch; ``items`` are ``(branch index, raw message)``."""

    index: int
    items: list[Indexed] = field(default_factory=list)
    turns: int = 0

    @property
    def start(self) -> int:
        return self.items[0][0]

    @property
    def end(self) -> int:
        return self.items[-1][0]

    @property
    def messages(self) -> list[Message]:
        return [m for _, m in self.items]


def json_size(msg: Message) -> int:
    """Bytes of ``msg`` as compact UTF-8 JSON (non-JSON leaves count as their type name)."""
    text = json.dumps(msg, ensure_ascii=False, separators=(",", ":"), default=lambda v: f"<{type(v).__qualname__}>")
    return len(text.encode("utf-8"))


def array_size(sizes: list[int]) -> int:
    """Bytes of a compact JSON array whose elements have these sizes: ``[`` ``,``… ``]``."""
    return 2 + sum(sizes) + max(0, len(sizes) - 1)


def split_turns(items: list[Indexed]) -> list[list[Indexed]]:
    """Cut ``items`` before every user message."""
    turns: list[list[Indexed]] = []
    for idx, msg in items:
        if not turns or msg.get("role") == "user":
            turns.append([])
        turns[-1].append((idx, msg))
    return turns


def chunk_turns(items: list[Indexed], *, turns_per_document: int, max_document_bytes: int) -> list[Chunk]:
    """Group the turns of ``items`` into chunks by the two limits above."""
    if turns_per_document < 1 or max_document_bytes < 1:
        raise ValueError("turns_per_document and max_document_bytes must be positive")
    chunks: list[Chunk] = []
    current: Chunk | None = None
    sizes: list[int] = []
    for turn in split_turns(items):
        turn_sizes = [json_size(m) for _, m in turn]
        if current is not None and (
            current.turns >= turns_per_document or array_size(sizes + turn_sizes) > max_document_bytes
        ):
            chunks.append(current)
            current = None
        if current is None:
            current = Chunk(index=len(chunks))
            sizes = []
        current.items.extend(turn)
        current.turns += 1
        sizes.extend(turn_sizes)
    if current is not None:
        chunks.append(current)
    return chunks
