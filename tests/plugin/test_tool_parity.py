"""Tool-level parity (issue 13 item 5, ADR 119): a memory retained through the tool is stored
with the same context the transcript path gives its units, so both rank alike."""

from __future__ import annotations

from hindsight_hooks.backends.local_windows import item_context_of
from hindsight_hooks.hooks import assistant_message, user_message

from .hostkit import Project, injected_block, isolated, local_project

__all__ = ["isolated", "local_project"]  # fixtures, re-exported for pytest


def test_a_tool_memory_carries_the_sessions_context(local_project: Project) -> None:
    with local_project.host() as host:
        messages = [user_message("Which package manager do we use?"), assistant_message("We use uv for builds.")]
        host.context(messages)
        host.agent_end(messages)
        result = host.call_tool("hindsight_retain", {"items": [{"content": "Releases are cut on Tuesdays."}],
                                                     "async": False})  # fmt: skip
        assert not result.is_error, result
    rows = local_project._query("SELECT content, context FROM units ORDER BY rowid")
    contexts = {content: item_context_of(context) for content, context in rows}
    transcript = contexts["user: Which package manager do we use?"]
    assert transcript.startswith("Coding session (") and local_project.root.name in transcript
    assert contexts["Releases are cut on Tuesdays."] == transcript


def test_an_explicit_context_is_kept(local_project: Project) -> None:
    with local_project.host() as host:
        result = host.call_tool(
            "hindsight_retain", {"items": [{"content": "Ship on Fridays.", "context": "release notes"}], "async": False}
        )
        assert not result.is_error, result
    assert local_project._query("SELECT context FROM units") == [("release notes",)]


def test_words_of_the_sessions_context_do_not_pull_every_memory_into_the_block(local_project: Project) -> None:
    """ADR 179: the context and the role label are provenance. Every memory of a session carries
    the context, so when the store searched it, "review the code" (the context says "Coding
    session") injected every memory; "user" did the same through every prompt's label."""
    with local_project.host(host_name="claude-code") as host:
        messages = [user_message("Which database do we run?"), assistant_message("We run Postgres 16.")]
        host.context(messages)
        host.agent_end(messages)
        for fact in ("The launch is on Friday.", "The parser rejects tabs in indentation."):
            result = host.call_tool("hindsight_retain", {"items": [{"content": fact}], "async": False})
            assert not result.is_error, result
    with local_project.host("s2", host_name="claude-code") as host:
        block = injected_block(host.context([user_message("can you review the code in the parser?")]))
        assert block is not None
        body = str(block["content"])
        assert "The parser rejects tabs in indentation." in body
        assert "Friday" not in body and "Postgres" not in body
        named = f"what did we decide in the {local_project.root.name} repo this claude session?"
        assert injected_block(host.context([user_message(named)])) is None
        # The role label is provenance too: "user" is on every prompt of the transcript.
        assert injected_block(host.context([user_message("add a user table with an email column")])) is None


def test_a_tool_calls_keys_do_not_pull_it_into_the_block(local_project: Project) -> None:
    """ADR 179: "file_path" and "command" are on every read and shell call of a transcript."""
    call = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"file_path": "billing/rates.py"}}
    with local_project.host() as host:
        messages = [user_message("Check the billing rates."), assistant_message("Reading it."), assistant_message("")]
        messages[-1]["content"] = [call]
        host.context(messages[:1])
        host.agent_end(messages)
    with local_project.host("s2") as host:
        assert injected_block(host.context([user_message("which command updates the file path?")])) is None
        block = injected_block(host.context([user_message("where are the rates defined?")]))
        assert block is not None and "billing/rates.py" in str(block["content"])
