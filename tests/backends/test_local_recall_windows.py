"""Turn windows for search (ADR 052): a transcript unit is found by its turn, shown as its message."""

from __future__ import annotations

from pathlib import Path

from hindsight_hooks.backends.base import RecallRequest
from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.backends.local_windows import LOOK_BACK, SEP, TURN_CHARS, neighbour_of, novel_terms
from tests.backends.test_local_support import item, make, messages_json, raw

ASK = "What port should the billing service use?"
REPLY = "Use 4821, the lower ones are taken by the proxy."


def found(backend: LocalBackend, query: str) -> list[str]:
    return [h.text for h in backend.recall("b", RecallRequest(query=query, limit=10, max_tokens=100_000)).hits]


def append(backend: LocalBackend, op: str, *pairs: tuple[str, str]) -> None:
    content = messages_json(*pairs)
    backend.retain_batch("b", [item(content, "session", mode="append", source="auto", context="ctx")], operation_id=op)


def contexts(backend: LocalBackend) -> dict[str, str]:
    return dict(raw(backend.path).execute("SELECT content, context FROM units ORDER BY seq").fetchall())


def test_reply_is_found_by_the_question_and_shown_as_itself(tmp_path: Path) -> None:
    backend = make(tmp_path)
    append(backend, "1", ("user", ASK), ("assistant", REPLY))
    hits = found(backend, "billing service port")
    assert f"assistant: {REPLY}" in hits and f"user: {ASK}" in hits
    assert backend.quick_check() == []


def test_neighbour_adds_only_missing_searchable_terms() -> None:
    assert novel_terms("What port should the billing service use?", "Use the ports 4821") == "billing service"
    assert novel_terms("the a I of", "x") == ""
    assert novel_terms("deploying deployed deploy", "") == "deploying"


def test_only_the_reply_carries_its_prompt(tmp_path: Path) -> None:
    backend = make(tmp_path)
    append(
        backend,
        "1",
        ("user", ASK),
        ("assistant", "[toolCall read] compose.yaml"),
        ("toolResult", "ports: 80 443"),
        ("assistant", REPLY),
        ("user", "rename the helper"),
        ("assistant", "Renamed it everywhere."),
    )
    ctx = contexts(backend)
    assert neighbour_of(ctx["assistant: [toolCall read] compose.yaml"]) == "port billing service use"
    assert neighbour_of(ctx["toolResult: ports: 80 443"]) == ""
    assert neighbour_of(ctx[f"assistant: {REPLY}"]) == ""  # a later message of the turn
    assert ctx["assistant: Renamed it everywhere."] == "ctx" + SEP + "helper"  # "rename" it says already
    assert ctx["user: rename the helper"] == "ctx"
    assert ctx[f"user: {ASK}"] == "ctx"


def test_turn_split_across_two_appends(tmp_path: Path) -> None:
    backend = make(tmp_path)
    append(backend, "1", ("assistant", "Hello."), ("user", "Quick one."), ("user", ASK))
    assert f"assistant: {REPLY}" not in found(backend, "billing service port")
    append(backend, "2", ("assistant", REPLY), ("assistant", "Anything else?"))
    hits = found(backend, "billing service port")
    assert f"assistant: {REPLY}" in hits and "assistant: Anything else?" in hits  # one reply run, two units
    assert "quick" in neighbour_of(contexts(backend)[f"assistant: {REPLY}"])  # both prompt messages count
    append(backend, "3", ("assistant", "Still there?"))  # a later append never continues a reply
    assert neighbour_of(contexts(backend)["assistant: Still there?"]) == ""
    assert backend.quick_check() == []


def test_look_back_is_bounded(tmp_path: Path) -> None:
    backend = make(tmp_path)
    users = [("user", f"note {i} billing{i}") for i in range(LOOK_BACK + 4)]
    append(backend, "1", *users)
    append(backend, "2", ("assistant", REPLY))
    added = neighbour_of(contexts(backend)[f"assistant: {REPLY}"])
    assert f"billing{LOOK_BACK + 3}" in added and "billing0" not in added


def test_replace_and_plain_items_start_fresh(tmp_path: Path) -> None:
    backend = make(tmp_path)
    append(backend, "1", ("user", ASK))
    content = messages_json(("assistant", REPLY))
    backend.retain_batch("b", [item(content, "session", mode="replace", source="auto")], operation_id="2")
    assert neighbour_of(contexts(backend)[f"assistant: {REPLY}"]) == ""
    backend.retain_batch("b", [item("plain note about billing", "note", mode="append")], operation_id="3")
    assert SEP not in contexts(backend)["plain note about billing"]


def test_plain_item_between_ends_the_turn(tmp_path: Path) -> None:
    backend = make(tmp_path)
    turn = item(messages_json(("user", ASK)), "session", mode="append", source="auto")
    plain = item("a plain note", "session", mode="append")
    reply = item(messages_json(("assistant", REPLY)), "session", mode="append", source="auto")
    backend.retain_batch("b", [turn, plain, reply], operation_id="1")
    assert neighbour_of(contexts(backend)[f"assistant: {REPLY}"]) == ""


def test_long_prompt_is_capped(tmp_path: Path) -> None:
    backend = make(tmp_path)
    long_prompt = " ".join(f"word{i}" for i in range(1000))
    append(backend, "1", ("user", long_prompt), ("assistant", REPLY))
    added = neighbour_of(contexts(backend)[f"assistant: {REPLY}"])
    assert 0 < len(added) <= TURN_CHARS and "word0" in added and "word999" not in added
