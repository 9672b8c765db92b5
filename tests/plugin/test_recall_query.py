"""Query composition (docs/recall.md#query) and reading recall responses (docs/recall.md#per-bank-recall)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hindsight_hooks.config_model import RecallConfig
from hindsight_hooks.plugin.recall.recall_query import compose_query, local_search_text, query_body, read_results

CWD = Path("/home/dev/work/repo")
DEFAULT_HINTS = "Context hints: scope:project; repo:abc; cwd:repo"


def user(text: Any, **extra: Any) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": 1, **extra}


def assistant(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": list(parts), "timestamp": 2}


def tool_result(text: str) -> dict[str, Any]:
    return {"role": "toolResult", "toolCallId": "c1", "toolName": "bash", "content": [{"type": "text", "text": text}]}


def compose(messages: list[dict[str, Any]], kind: str = "project", **cfg: Any) -> tuple[str, str]:
    composed = compose_query(messages, kind, RecallConfig(**cfg), repo_key="abc", cwd=CWD)  # type: ignore[arg-type]
    return composed.query, composed.body


def test_spec_example_exactly() -> None:
    query, body = compose([user("ship it")], project_query_preamble="Find memory.")
    assert query == "Find memory.\n\nContext hints: scope:project; repo:abc; cwd:repo\n\nuser: ship it"
    assert body == "user: ship it"


def test_default_preambles_and_user_scope_hints() -> None:
    query, _ = compose([user("x")])
    assert query.startswith(RecallConfig().project_query_preamble + "\n\n" + DEFAULT_HINTS + "\n\n")
    query, _ = compose([user("x")], "user", user_query_preamble="U.")
    assert query == "U.\n\nContext hints: scope:user\n\nuser: x"
    query, _ = compose([user("x")], project_query_preamble="P.", include_repo_hints_in_query=False)
    assert query == "P.\n\nContext hints: scope:project\n\nuser: x"
    query, _ = compose([user("x")], project_query_preamble="")
    assert query == DEFAULT_HINTS + "\n\nuser: x"


def test_date_section_is_utc() -> None:
    late_evening_ahead_of_utc = datetime(2024, 5, 7, 1, 30, tzinfo=timezone(timedelta(hours=2)))
    composed = compose_query(
        [user("x")],
        "project",
        RecallConfig(project_query_preamble="P.", include_date_in_query=True),
        repo_key="abc",
        cwd=CWD,
        now=late_evening_ahead_of_utc,
    )
    assert composed.query == f"P.\n\nCurrent date: 2024-05-06\n\n{DEFAULT_HINTS}\n\nuser: x"
    no_date = compose_query([user("x")], "project", RecallConfig(), repo_key="abc", cwd=CWD, now=datetime.now(UTC))
    assert "Current date" not in no_date.query


def test_parts_rendering() -> None:
    msgs = [
        user(
            [
                {"type": "text", "text": "  look at this  "},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            ]
        ),
        assistant(
            {"type": "thinking", "thinking": "secret plan"},
            {"type": "text", "text": "running"},
            {"type": "toolCall", "id": "1", "name": "bash", "arguments": {"cmd": "ls -la", "n": 1}},
            {"type": "toolCall", "id": "2", "name": "read", "arguments": {}},
            {"type": "mystery", "text": "ignored"},
        ),
    ]
    _, body = compose(msgs)
    assert body == (
        "user: look at this  \n[image omitted]\n"  # only the joined text is trimmed, not each part
        'assistant: running\n[toolCall bash] {"cmd":"ls -la","n":1}\n[toolCall read]'
    )


def test_roles_filter_and_tool_label() -> None:
    msgs = [user("q"), tool_result("exit 1"), {"role": "system", "content": "sys"}, {"role": "custom", "content": "z"}]
    assert compose(msgs)[1] == "user: q"
    assert compose(msgs, roles=["tool", "system"], context_turns=5)[1] == "tool: exit 1\nsystem: sys"


def test_injected_messages_are_dropped_but_mid_text_mentions_kept() -> None:
    msgs = [
        user("about the <hindsight-memory> tag"),
        user("<hindsight-memory>\nold\n</hindsight-memory>", customType="hindsight-recall"),
        user("  \n<hindsight_memories>\nold"),
        user([{"type": "text", "text": "<hindsight-memory>x"}]),
        {"role": "user", "type": "hindsight-recall", "content": "tagged"},
    ]
    assert compose(msgs, context_turns=10)[1] == "user: about the <hindsight-memory> tag"


def test_context_turns_keeps_the_last_non_empty_turns() -> None:
    msgs = [user("one"), assistant({"type": "text", "text": "two"}), user("three"), assistant(), user("   ")]
    assert compose(msgs)[1] == "assistant: two\nuser: three"
    assert compose(msgs, context_turns=0)[1] == "user: three"
    assert compose(msgs, context_turns=9)[1] == "user: one\nassistant: two\nuser: three"


def test_empty_body_falls_back() -> None:
    query, body = compose([], project_query_preamble="P.")
    assert body == "current coding task"
    assert query == f"P.\n\n{DEFAULT_HINTS}\n\ncurrent coding task"
    assert compose([assistant({"type": "thinking", "thinking": "t"})])[1] == "current coding task"


def test_truncation_keeps_prefix_and_newest_text() -> None:
    long_text = "old " * 100 + "NEWEST-WORDS"
    query, body = compose([user(long_text)], project_query_preamble="P.", max_query_chars=120)
    prefix = f"P.\n\n{DEFAULT_HINTS}"
    remaining = 120 - len(prefix) - 2
    assert query == prefix + "\n\n" + ("user: " + long_text)[-remaining:].lstrip()
    assert len(query) <= 120
    assert query.endswith("NEWEST-WORDS")
    assert body.endswith("NEWEST-WORDS") and len(body) <= 120


def test_truncation_drops_prefix_when_too_little_room() -> None:
    long_text = "x" * 50 + " tail-end"
    prefix = f"P.\n\n{DEFAULT_HINTS}"
    limit = len(prefix) + 2 + 19  # remaining = 19 < 20
    query, _ = compose([user(long_text)], project_query_preamble="P.", max_query_chars=limit)
    full = prefix + "\n\nuser: " + long_text
    assert query == full[-limit:].lstrip()
    assert query.endswith("tail-end")
    # remaining == 20 keeps the prefix.
    query, _ = compose([user(long_text)], project_query_preamble="P.", max_query_chars=limit + 1)
    assert query.startswith(prefix + "\n\n") and query.endswith("tail-end")


def test_short_query_is_not_truncated() -> None:
    query, _ = compose([user("short")], project_query_preamble="P.", max_query_chars=800)
    assert query == f"P.\n\n{DEFAULT_HINTS}\n\nuser: short"


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.text(min_size=0, max_size=200), min_size=0, max_size=6),
    st.integers(1, 400),
    st.text(max_size=60),
)
def test_truncation_properties(texts: list[str], limit: int, preamble: str) -> None:
    msgs = [user(t) if i % 2 == 0 else assistant({"type": "text", "text": t}) for i, t in enumerate(texts)]
    cfg: dict[str, Any] = {"project_query_preamble": preamble, "max_query_chars": limit, "context_turns": 3}
    untruncated, body = compose(msgs, **{**cfg, "max_query_chars": 10**6})
    query, _ = compose(msgs, **cfg)
    assert len(query) <= limit
    if len(untruncated) <= limit:
        assert query == untruncated
        return
    prefix = untruncated[: len(untruncated) - len(body) - 2]
    if query.startswith(prefix + "\n\n") and limit - len(prefix) - 2 >= 20:
        tail = query[len(prefix) + 2 :]
        assert body.endswith(tail)  # the newest text survives
        assert len(tail) == len(body[-(limit - len(prefix) - 2) :].lstrip())
    else:
        assert untruncated.endswith(query)
        assert len(query) == len(untruncated[-limit:].lstrip())


# --- reading results ------------------------------------------------------------------------------


def test_results_then_memories_then_bare_array() -> None:
    assert [h.text for h in read_results({"results": [{"text": "a"}], "memories": [{"text": "b"}]})] == ["a"]
    assert [h.text for h in read_results({"results": None, "memories": [{"text": "b"}]})] == ["b"]
    assert [h.text for h in read_results([{"text": "c"}, "plain"])] == ["c", "plain"]
    assert read_results({"unexpected": 1}) == []
    assert read_results(None) == []
    assert read_results("garbage") == []


def test_text_content_or_json() -> None:
    hits = read_results(
        {"results": [{"text": "t", "content": "c"}, {"content": "c2"}, {"fact": "x", "n": 1}, {"text": "  ", "id": 7}]}
    )
    assert [h.text for h in hits] == ["t", "c2", '{"fact":"x","n":1}', ""]
    assert hits[3].id == "7"


def test_fields_and_evidence_through_source_facts() -> None:
    payload = {
        "results": [
            {
                "id": "m1",
                "text": "uses uv",
                "type": "observation",
                "tags": ["repo:x", 3, "python"],
                "mentioned_at": "2025-01-01T00:00:00Z",
                "document_id": "hh-session:1",
                "source_fact_ids": ["f1", "missing", "f2", "f3"],
            },
            {"id": "m2", "text": "no evidence", "source_fact_ids": None},
        ],
        "source_facts": {"f1": {"text": "fact one"}, "f2": {"text": "fact two"}, "f3": {"id": "f3"}},
    }
    first, second = read_results(payload)
    assert first.id == "m1" and first.type == "observation"
    assert first.tags == ["repo:x", "python"]
    assert first.mentioned_at == "2025-01-01T00:00:00Z"
    assert first.document_id == "hh-session:1"
    assert first.evidence == ["fact one", "fact two"]
    assert second.evidence == []


def test_source_facts_as_list() -> None:
    payload = {"results": [{"text": "a", "source_fact_ids": ["x"]}], "source_facts": [{"id": "x", "text": "ex"}]}
    assert read_results(payload)[0].evidence == ["ex"]


# -- the embedded store's word query (ADR 187) ------------------------------------------------------

LONG_REPLY = (
    "Sure, I refactored the billing module, moved the invoices into a separate table, added "
    "indexes on customer id and created a migration script for the old rows."
)


def _store_query(*messages: dict[str, Any]) -> str:
    return local_search_text(query_body(list(messages), RecallConfig()))


def test_the_store_searches_the_prompt_not_the_reply_before_it() -> None:
    """The default body is the reply and the prompt; the store searches its first 12 words, which
    were all the reply's: the prompt was not searched at all."""
    query = _store_query(assistant({"type": "text", "text": LONG_REPLY}), user("how do we run the tests?"))
    assert query == "how do we run the tests?"


def test_a_prompt_that_names_nothing_is_searched_with_the_reply_before_it() -> None:
    for prompt in ("fix it", "why?", "and the invoices?"):
        query = _store_query(assistant({"type": "text", "text": LONG_REPLY}), user(prompt))
        assert query == f"{prompt}\n{LONG_REPLY}"  # the prompt's words first


def test_a_prompt_that_asks_where_we_left_off_is_searched_alone() -> None:
    """Its subject is the sessions before this one, not the reply before it (ADRs 222, 223): with the
    reply's words the store would search them, and not tell where the last session stopped."""
    for prompt in ("where did we leave off?", "where were we?", "Wo waren wir stehen geblieben?",
                   "what do you remember?", "Was weißt du über mich?"):  # fmt: skip
        query = _store_query(assistant({"type": "text", "text": "Hello! How can I help?"}), user(prompt))
        assert query == prompt
    query = _store_query(assistant({"type": "text", "text": LONG_REPLY}), user("where were we on it?"))
    assert query == f"where were we on it?\n{LONG_REPLY}"  # "on it" is about the reply


def test_no_role_label_is_a_search_word() -> None:
    assert local_search_text("assistant: moved the invoices\nuser: run tests") == "run tests"
    assert local_search_text("user: ok\nassistant: tool: done\nuser: why") == "why\ntool: done\nok"
    # a body cut to its tail starts inside a message: that part is a message too
    assert local_search_text("the invoices table\nuser: why?") == "why?\nthe invoices table"
    assert local_search_text("") == ""


def test_the_marks_for_an_image_or_a_tool_call_are_not_search_words() -> None:
    """A screenshot with "why does this look broken?" searched "image" too, and found the memories
    about container images; a tool call's mark matched every stored tool call."""
    shot = {"role": "user", "content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"},
                                        {"type": "text", "text": "why does this look broken?"}]}  # fmt: skip
    assert _store_query(shot) == "why does this look broken?"
    call = assistant({"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "pytest -q"}})
    assert _store_query(call, user("why?")) == 'why?\nbash {"command":"pytest -q"}'


@given(st.lists(st.tuples(st.sampled_from(["user", "assistant"]), st.text(max_size=60)), max_size=5))
def test_the_store_query_takes_whole_messages_newest_first(messages: list[tuple[str, str]]) -> None:
    body = "\n".join(f"{role}: {text}" for role, text in messages)
    query = local_search_text(body)
    assert len(query) <= len(body)
    newest = next((t.strip() for _, t in reversed(messages) if t.strip()), None)
    labelled = any(mark in t for _, t in messages for mark in ("user: ", "assistant: ", "[image omitted]", "[toolCall"))
    if newest is not None and not labelled:  # a text with a label in it would split where it says so
        assert query.startswith(newest)
