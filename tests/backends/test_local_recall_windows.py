"""Turn windows for search (ADR 052): a transcript unit is found by its turn, shown as its message."""

from __future__ import annotations

from pathlib import Path

from hindsight_hooks.backends.base import RecallRequest
from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.backends.local_windows import PROMPT_LOOK_BACK, SEP, TURN_CHARS, neighbour_of, novel_terms
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
    # and the question is found by the answer's words
    assert f"user: {ASK}" in found(backend, "proxy 4821")
    assert backend.quick_check() == []


def test_neighbour_adds_only_missing_searchable_terms() -> None:
    assert novel_terms("What port should the billing service use?", "Use the ports 4821") == "billing service"
    assert novel_terms("the a I of", "x") == ""
    assert novel_terms("deploying deployed deploy", "") == "deploying"


def test_units_of_other_turns_get_nothing_of_this_turn(tmp_path: Path) -> None:
    backend = make(tmp_path)
    append(
        backend,
        "1",
        ("user", ASK),
        ("assistant", REPLY),
        ("user", "rename the helper"),
        ("assistant", "Renamed it everywhere."),
    )
    ctx = contexts(backend)
    assert neighbour_of(ctx["user: rename the helper"]) == "everywhere"  # "renamed" is said already
    assert neighbour_of(ctx["assistant: Renamed it everywhere."]) == "helper"
    assert ctx["assistant: Renamed it everywhere."] == "ctx" + SEP + "helper"


def test_turn_split_across_two_appends_links_both_ways(tmp_path: Path) -> None:
    backend = make(tmp_path)
    append(backend, "1", ("assistant", "Hello."), ("user", ASK))
    assert f"assistant: {REPLY}" not in found(backend, "billing service port")
    append(backend, "2", ("assistant", REPLY))
    assert f"assistant: {REPLY}" in found(backend, "billing service port")
    assert f"user: {ASK}" in found(backend, "proxy 4821")  # the stored ask was updated with its reply
    assert backend.quick_check() == []  # the FTS index followed the update


def test_mid_turn_append_keeps_the_turns_prompt(tmp_path: Path) -> None:
    backend = make(tmp_path)
    append(backend, "1", ("user", ASK), ("assistant", "[toolCall read] compose.yaml"))
    append(backend, "2", ("toolResult", "ports: 80 443"), ("assistant", REPLY))
    ctx = contexts(backend)
    assert "billing" in neighbour_of(ctx[f"assistant: {REPLY}"])
    assert "billing" in neighbour_of(ctx["toolResult: ports: 80 443"])
    # the ask got its first reply only, not later messages of the turn
    assert "4821" not in neighbour_of(ctx[f"user: {ASK}"])


def test_prompt_beyond_the_look_back_is_not_searched_for(tmp_path: Path) -> None:
    backend = make(tmp_path)
    tools = [("toolResult", f"line {i}") for i in range(PROMPT_LOOK_BACK + 1)]
    append(backend, "1", ("user", ASK), *tools)
    append(backend, "2", ("assistant", REPLY))
    assert neighbour_of(contexts(backend)[f"assistant: {REPLY}"]) == ""


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
    ctx = contexts(backend)
    assert neighbour_of(ctx[f"assistant: {REPLY}"]) == "" and neighbour_of(ctx[f"user: {ASK}"]) == ""


def test_long_neighbour_is_capped(tmp_path: Path) -> None:
    backend = make(tmp_path)
    long_reply = " ".join(f"word{i}" for i in range(1000))
    append(backend, "1", ("user", ASK), ("assistant", long_reply))
    added = neighbour_of(contexts(backend)[f"user: {ASK}"])
    assert 0 < len(added) <= TURN_CHARS and "word0" in added and "word999" not in added
