"""Chat and gateway transcripts: JSONL event logs with no session header (docs/import.md).

Chat gateways (a bot on a messaging channel, a web chat) log events, not a conversation
tree: the person's messages, the agent's replies, process ends, and a stream of UI updates.
Only the first three are conversation; the rest is redraw noise. Such a transcript has no
``cwd`` and so cannot be proven to belong to this repository: it goes to the *user* bank (and
is refused when there is none), as one ``replace`` document per file.

Pure: parsing and document building only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..governance import identity as ident
from ..governance.redact import redact_text
from ..retain.injected import is_injected
from .documents import ImportDocument, content_hash, dump_content
from .pi_session import BadLines, numbered_lines

KEPT_KINDS = {"user_message": "user", "assistant_reply": "assistant", "process_end": "process"}
KIND_FIELDS = ("type", "event", "event_type", "kind")
TEXT_FIELDS = ("text", "content", "message", "reply")
PROVENANCE_FIELDS = (
    "channel",
    "channel_id",
    "session_id",
    "sessionId",
    "conversation_id",
    "conversationId",
    "thread_id",
)


@dataclass
class ChatTranscript:
    """The kept messages of one transcript and the counts of what was not kept."""

    path: Path
    messages: list[dict[str, Any]] = field(default_factory=list)
    provenance: dict[str, str] = field(default_factory=dict)
    events: int = 0
    dropped_events: int = 0
    bad: BadLines = field(default_factory=BadLines)

    @property
    def bad_lines(self) -> int:
        return self.bad.count


def event_kind(event: dict[str, Any]) -> str | None:
    for key in KIND_FIELDS:
        value = event.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def event_text(event: dict[str, Any]) -> str | None:
    """The first string of ``text``/``content``/``message``/``reply``, else the text parts."""
    for key in TEXT_FIELDS:
        value = event.get(key)
        if isinstance(value, str) and value.strip():
            return value
    for key in TEXT_FIELDS:
        value = event.get(key)
        if isinstance(value, list):
            texts = [p["text"] for p in value if isinstance(p, dict) and isinstance(p.get("text"), str)]
            joined = "\n".join(t for t in texts if t)
            if joined.strip():
                return joined
    return None


def _timestamp(event: dict[str, Any]) -> str | int | None:
    for key in ("timestamp", "ts", "time", "created_at"):
        value = event.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool):
            return value
    return None


def parse_chat(path: Path) -> ChatTranscript:
    """Keep user messages, assistant replies and process ends; count everything else."""
    transcript = ChatTranscript(path=Path(path))
    for lineno, raw in numbered_lines(Path(path)):
        try:
            event = orjson.loads(raw)
        except orjson.JSONDecodeError:
            event = None
        if not isinstance(event, dict):
            transcript.bad.add(lineno)
            transcript.bad.truncated_tail = not raw.endswith(b"\n")
            continue
        transcript.events += 1
        kind = event_kind(event)
        text = event_text(event) if kind in KEPT_KINDS else None
        if kind not in KEPT_KINDS or text is None:
            transcript.dropped_events += 1
            continue
        role = KEPT_KINDS[kind]
        if is_injected({"role": role, "content": text}):
            transcript.dropped_events += 1  # a recalled block that leaked into the log: no echo
            continue
        msg: dict[str, Any] = {"role": role, "kind": kind, "text": text}
        ts = _timestamp(event)
        if ts is not None:
            msg["timestamp"] = ts
        for key in PROVENANCE_FIELDS:
            value = event.get(key)
            if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
                msg[key] = str(value)
                transcript.provenance.setdefault(key, str(value))
        transcript.messages.append(msg)
    return transcript


def build_chat_document(transcript: ChatTranscript, *, host: str, redact: bool) -> ImportDocument:
    """The one ``replace`` document ``hh-chat:<hash16(path)>`` for the user bank."""
    source_file = os.path.abspath(transcript.path)
    doc_id = ident.chat_document_id(Path(source_file))
    body: dict[str, Any] = {
        "source": "chat-import",
        "transcript_file": source_file,
        "event_count": transcript.events,
        "message_count": len(transcript.messages),
        "messages": transcript.messages,
    }
    content = dump_content(body)
    if redact:
        content = redact_text(content)
    digest = content_hash(content)
    h = ident.host_slug(host)
    metadata: dict[str, str] = {
        "session_file": source_file,
        "imported": "true",
        "import_mode": "chat",
        "content_hash": digest,
        "source": "hindsight-hooks",
        "retain_source": "import",
    }
    for key in PROVENANCE_FIELDS:
        if key in transcript.provenance:
            metadata[key] = transcript.provenance[key]
    last_ts = transcript.messages[-1].get("timestamp") if transcript.messages else None
    return ImportDocument(
        document_id=doc_id,
        leaf_id="chat",
        session_id=doc_id.removeprefix("hh-chat:"),
        source_file=source_file,
        cwd="",
        content=content,
        content_hash=digest,
        context=f"Chat transcript import from {os.path.basename(source_file)}",
        tags=[f"source:{h}", "import:chat", "imported:true"],
        metadata=metadata,
        update_mode="replace",
        timestamp=last_ts if isinstance(last_ts, str) else None,
        message_count=len(transcript.messages),
        projected_count=len(transcript.messages),
        dropped_tool_results=0,
    )
