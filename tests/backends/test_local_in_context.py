"""Memories the model already reads this turn are not recalled into the block (ADR 183), on real SQLite files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hindsight_hooks.backends.base import InContext, RecallRequest
from hindsight_hooks.backends.local_seen import VIEW_CHARS, VIEW_MESSAGES
from hindsight_hooks.backends.local_units import MESSAGE_UNIT_CHARS
from tests.backends.test_local_support import item, make

BANK = "b"
NOW = "hh-session:now"
EARLIER = "hh-session:earlier"


def msg(role: str, content: Any) -> dict[str, Any]:
    return {"role": role, "content": content}


def transcript(*messages: dict[str, Any]) -> str:
    return json.dumps(list(messages))


EARLIER_TURNS = [
    msg("user", "The invoice service keeps invoices immutable after they are issued."),
    msg("assistant", "Right: invoices are append-only once issued."),
]
TODAY_TURNS = [
    msg("user", "Invoice numbers are sequential per customer."),
    msg("assistant", "Added: invoice numbers count up per customer."),
    msg("user", "Do invoices need a due date?"),
]


def store_both(tmp_path: Path) -> Any:
    backend = make(tmp_path)
    backend.retain_batch(BANK, [item(transcript(*EARLIER_TURNS), EARLIER, source="auto")], operation_id="op1")
    backend.retain_batch(BANK, [item(transcript(*TODAY_TURNS), NOW, source="auto")], operation_id="op2")
    return backend


def recalled(backend: Any, query: str, in_context: InContext | None, limit: int = 8) -> list[str]:
    request = RecallRequest(query=query, limit=limit, max_tokens=100_000, in_context=in_context)
    return [hit.text for hit in backend.recall(BANK, request).hits]


def test_the_sessions_own_turns_are_not_shown_and_other_sessions_fill_the_block(tmp_path: Path) -> None:
    backend = store_both(tmp_path)
    try:
        everything = recalled(backend, "invoices", None)
        assert "user: Invoice numbers are sequential per customer." in everything  # what it was before
        shown = recalled(backend, "invoices", InContext(NOW, [*TODAY_TURNS, msg("user", "what about invoices?")]))
        assert sorted(shown) == sorted(f"{t['role']}: {t['content']}" for t in EARLIER_TURNS)
        # with a limit of one, the one shown is from the other session, not a slot lost to a skipped unit
        assert recalled(backend, "invoices", InContext(NOW, TODAY_TURNS), limit=1)[0] in {
            "user: " + EARLIER_TURNS[0]["content"],
            "assistant: " + EARLIER_TURNS[1]["content"],
        }
    finally:
        backend.close()


def test_turns_the_host_compacted_away_are_recalled_again(tmp_path: Path) -> None:
    backend = store_both(tmp_path)
    try:
        compacted = [msg("user", "Summary of the conversation so far: billing work."), TODAY_TURNS[2]]
        shown = recalled(backend, "invoice numbers per customer", InContext(NOW, compacted))
        assert "user: Invoice numbers are sequential per customer." in shown
        assert "user: Do invoices need a due date?" not in shown
    finally:
        backend.close()


def test_the_same_words_said_in_another_session_are_not_shown_either(tmp_path: Path) -> None:
    backend = store_both(tmp_path)
    try:
        again = [msg("user", EARLIER_TURNS[0]["content"])]  # said again, word for word, in this session
        shown = recalled(backend, "immutable invoices", InContext(NOW, again))
        assert "user: " + EARLIER_TURNS[0]["content"] not in shown
        assert "assistant: " + EARLIER_TURNS[1]["content"] in shown
        # the role is part of the unit: the assistant saying the user's words hides nothing
        said_by_other = [msg("assistant", EARLIER_TURNS[0]["content"])]
        assert "user: " + EARLIER_TURNS[0]["content"] in recalled(
            backend, "immutable invoices", InContext(NOW, said_by_other)
        )
    finally:
        backend.close()


def long_message() -> str:
    paragraphs = [f"Paragraph {n} about the ledger export format and column {n}." * 6 for n in range(20)]
    text = "\n\n \n".join(paragraphs)  # blank lines with a space in them: a piece joins them with one blank line
    assert len(text) > 2 * MESSAGE_UNIT_CHARS
    return text


def test_pieces_of_a_long_message_in_context_are_not_shown_but_another_sessions_are(tmp_path: Path) -> None:
    backend = make(tmp_path)
    try:
        text = long_message()
        backend.retain_batch(BANK, [item(transcript(msg("assistant", text)), NOW, source="auto")], operation_id="op3")
        backend.retain_batch(
            BANK, [item(transcript(msg("assistant", text)), EARLIER, source="auto")], operation_id="op4"
        )
        everything = recalled(backend, "ledger export format", None, limit=20)
        assert len(everything) > 1  # the message was cut into pieces
        in_view = InContext(NOW, [msg("assistant", text)])
        request = RecallRequest(query="ledger export format", limit=20, max_tokens=100_000, in_context=in_view)
        hits = backend.recall(BANK, request).hits
        # this session's pieces are hidden; the earlier session's copy of the same long text is the one shown
        assert len(hits) == len(everything) and all(hit.document_id == EARLIER for hit in hits)
    finally:
        backend.close()


def test_a_message_the_retain_path_changed_is_still_shown(tmp_path: Path) -> None:
    backend = make(tmp_path)
    try:
        said = "deploy with token ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
        backend.retain_batch(
            BANK,
            [item(transcript(msg("user", "deploy with token [REDACTED]")), NOW, source="auto")],
            operation_id="op5",
        )
        shown = recalled(backend, "deploy token", InContext(NOW, [msg("user", said)]))
        assert shown == ["user: deploy with token [REDACTED]"]
    finally:
        backend.close()


@settings(max_examples=40, deadline=None)
@given(
    words=st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta", "omega", "kappa"]), min_size=2, max_size=6),
    in_view=st.sets(st.integers(min_value=0, max_value=5)),
)
def test_recall_with_context_is_recall_without_the_messages_in_view(
    tmp_path_factory: Any, words: list[str], in_view: set[int]
) -> None:
    """Whatever is in view, the block is the plain recall with the in-view units removed, in the same
    order, as long as the plain recall had room to spare."""
    tmp = tmp_path_factory.mktemp("ctx")
    turns = [
        msg("user" if n % 2 == 0 else "assistant", f"note {n}: {' '.join(words[: 1 + n % len(words)])}")
        for n in range(6)
    ]
    backend = make(tmp)
    try:
        backend.retain_batch(BANK, [item(transcript(*turns), NOW, source="auto")], operation_id="op6")
        query = " ".join(words)
        plain = recalled(backend, query, None, limit=20)
        view = [turns[n] for n in sorted(in_view)]
        hidden = {f"{t['role']}: {t['content']}" for t in view}
        assert recalled(backend, query, InContext(NOW, view), limit=20) == [t for t in plain if t not in hidden]
    finally:
        backend.close()


def test_only_the_transcripts_tail_is_read(tmp_path: Path) -> None:
    """A hook pays for the newest VIEW_MESSAGES messages, not the whole transcript: a turn older than
    that is shown as before, the newest ones are not."""
    backend = make(tmp_path)
    try:
        oldest, newest = msg("user", "kickoff decision zeta one"), msg("user", "latest decision zeta two")
        backend.retain_batch(BANK, [item(transcript(oldest, newest), NOW, source="auto")], operation_id="op7")
        filler = [msg("assistant", f"filler {n}") for n in range(VIEW_MESSAGES)]
        shown = recalled(backend, "zeta decision", InContext(NOW, [oldest, *filler, newest]))
        assert shown == ["user: kickoff decision zeta one"]
    finally:
        backend.close()


def test_a_huge_message_ends_the_reading_before_its_text_is_copied(tmp_path: Path) -> None:
    """The view's character bound is checked on a message's size before its text is read: a tool
    output larger than VIEW_CHARS ends the view, and the turns before it are shown as before."""
    backend = make(tmp_path)
    try:
        said = msg("user", "kickoff decision omega one")
        backend.retain_batch(BANK, [item(transcript(said), NOW, source="auto")], operation_id="op8")
        huge = {"role": "toolResult", "content": [{"type": "text", "text": "x " * VIEW_CHARS}]}
        assert recalled(backend, "omega decision", InContext(NOW, [said, huge])) == ["user: kickoff decision omega one"]
        assert recalled(backend, "omega decision", InContext(NOW, [huge, said])) == []
    finally:
        backend.close()


class CountedReads(list[dict[str, Any]]):
    """A host's message list that counts how often its tail is taken (what a view reads)."""

    reads = 0

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            CountedReads.reads += 1
        return super().__getitem__(index)


def test_a_turns_recalls_in_two_banks_read_its_messages_once(tmp_path: Path) -> None:
    backend = store_both(tmp_path)
    try:
        backend.retain_batch("other", [item(transcript(*TODAY_TURNS), NOW, source="auto")], operation_id="op9")
        view = InContext(NOW, CountedReads(TODAY_TURNS))
        CountedReads.reads = 0
        for bank in (BANK, "other"):  # the project bank, then the user bank, as the context hook asks
            request = RecallRequest(query="invoice numbers", limit=8, max_tokens=100_000, in_context=view)
            shown = [hit.text for hit in backend.recall(bank, request).hits]
            assert "user: Invoice numbers are sequential per customer." not in shown
        assert CountedReads.reads == 1
    finally:
        backend.close()
