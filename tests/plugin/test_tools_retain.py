"""``hindsight_retain`` and ``hindsight_retain_global`` through ``Host.call_tool``
(docs/tools.md#hindsight_retain–11.2).

Outputs are the seed's per backend (seed 000): "<n> memories queued." on Hindsight, "<n> memories
stored." on the embedded store, except that a failed local write says so instead of claiming
the requested count. What landed is read back from the store itself.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from hindsight_hooks.governance import identity as ident
from hindsight_hooks.hooks import Host, RecordingUI
from hindsight_hooks.plugin.core import HindsightPlugin

from .cmdkit import Kit, closed_port_url, hs_kit_fixture, kit_fixture, local_kit_fixture, sid_of, store_locked, ui_of  # noqa: F401  (fixtures)

EXPLICIT_ID = re.compile(r"^hh-explicit:[0-9a-f]{16}:[0-9a-f]{16}$")


def repo_tag(kit: Kit) -> str:
    return "repo:" + ident.repo_key(ident.find_repo_root(Path(os.path.realpath(kit.root))))


def test_retain_output_details_and_what_lands(kit: Kit) -> None:
    host = kit.host()
    assert host.command("/hindsight:tag add team-x").level == "info"
    result = host.call_tool(
        "hindsight_retain",
        {
            "items": [
                {"content": "The build uses uv and ruff."},
                {"content": "Releases are cut on Tuesdays.", "context": "release notes"},
            ],
            "tags": ["topic-a"],
            "metadata": {"ticket": "T-1", "session_id": "forged", "source": "forged", "imported": "true"},
            "async": False,
        },
    )
    assert not result.is_error, result
    units = kit.units(kit.project_bank)
    assert sorted(u["text"] for u in units) == ["Releases are cut on Tuesdays.", "The build uses uv and ruff."]
    sid = sid_of(kit)
    if kit.backend == "local":
        assert result.text == "2 memories stored."
        assert set(result.details) == {"count", "bank_id", "ids"}
        assert result.details["count"] == 2 and result.details["bank_id"] == kit.project_bank
        assert sorted(result.details["ids"]) == sorted(u["id"] for u in units)
    else:
        assert result.text == "2 memories queued."
        d = result.details
        assert set(d) == {"count", "bank_id", "queue_job_id", "document_ids", "delivered", "pending"}
        assert (d["count"], d["bank_id"], d["delivered"], d["pending"]) == (2, kit.project_bank, True, False)
        assert sorted(d["document_ids"]) == sorted(u["document_id"] for u in units)
    base = ["source:pi", "harness:pi", repo_tag(kit), f"session:{sid}", "team-x", "topic-a"]
    for u in units:
        assert sorted(u["tags"]) == sorted(base)
        if kit.backend == "local":
            assert u["tags"] == base  # base, then session tags, then the caller's
        assert EXPLICIT_ID.match(u["document_id"]) and u["document_id"].split(":")[1] == sid
        meta = u["metadata"]
        assert meta["ticket"] == "T-1"
        assert (meta["session_id"], meta["source"], meta["retain_source"]) == (sid, "hindsight-hooks", "tool")
        assert meta["cwd"] == os.path.realpath(kit.root)
        assert meta["session_file"] == str(kit.session_file())
        assert "imported" not in meta
    contexts = {u["text"]: u["context"] for u in units}
    assert contexts["Releases are cut on Tuesdays."] == "release notes"
    assert contexts["The build uses uv and ruff."].startswith("Coding session (pi) for repo ")  # ADR 119
    assert kit.jobs() == []  # queue-first, then delivered and removed


def test_one_item_is_singular_and_the_same_memory_twice_replaces_itself(kit: Kit) -> None:
    host = kit.host()
    args: dict[str, Any] = {"items": [{"content": "The API listens on port 8080."}], "async": False}
    first = host.call_tool("hindsight_retain", args)
    second = host.call_tool("hindsight_retain", args)
    noun = "stored" if kit.backend == "local" else "queued"
    assert first.text == second.text == f"1 memory {noun}."
    assert first.details["count"] == 1
    assert kit.texts(kit.project_bank) == ["The API listens on port 8080."]


def test_shared_document_id_and_timestamps(kit: Kit) -> None:
    host = kit.host()
    result = host.call_tool(
        "hindsight_retain",
        {
            "items": [{"content": "Shared doc fact one."}, {"content": "Shared doc fact two."}],
            "document_id": "notes-2024",
            "timestamp": "2024-01-15T10:30:00Z",
            "entities": [{"text": "Kestrel", "type": "project"}],
            "async": False,
        },
    )
    assert not result.is_error, result
    units = kit.units(kit.project_bank)
    assert sorted(u["text"] for u in units) == ["Shared doc fact one.", "Shared doc fact two."]
    assert {u["document_id"] for u in units} == {"notes-2024"}
    timeless = host.call_tool(
        "hindsight_retain", {"items": [{"content": "A timeless reference fact."}], "timestamp": "unset", "async": False}
    )
    assert not timeless.is_error, timeless
    assert "A timeless reference fact." in kit.texts(kit.project_bank)


def test_retain_global_and_the_user_alias_write_the_user_bank(kit: Kit) -> None:
    host = kit.host()
    g = host.call_tool("hindsight_retain_global", {"items": [{"content": "The user prefers tabs."}], "async": False})
    u = host.call_tool(
        "hindsight_retain", {"items": [{"content": "The user writes terse commits."}], "bank": "global", "async": False}
    )
    assert not g.is_error and not u.is_error
    assert g.details["bank_id"] == u.details["bank_id"] == kit.user_bank
    assert kit.texts(kit.user_bank) == ["The user prefers tabs.", "The user writes terse commits."]
    assert kit.texts(kit.project_bank) == []
    doc_ids = {x["document_id"] for x in kit.units(kit.user_bank)}
    assert all(EXPLICIT_ID.match(d) for d in doc_ids) and len(doc_ids) == 2


def test_retain_global_without_a_user_bank_names_the_keys(kit: Kit) -> None:
    kit.configure(sections={"banks.user": {"enabled": False}})
    host = kit.host()
    for tool, extra in (("hindsight_retain_global", {}), ("hindsight_retain", {"bank": "user"})):
        result = host.call_tool(tool, {"items": [{"content": "Some durable preference."}], **extra})
        assert result.is_error
        assert "banks.user.enabled" in result.text and "bank_id" in result.text
    assert kit.jobs() == [] and kit.texts(kit.project_bank) == []


def test_secrets_are_redacted_before_anything_is_stored(kit: Kit) -> None:
    host = kit.host()
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4"
    gh = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"
    result = host.call_tool(
        "hindsight_retain",
        {
            "items": [{"content": f"Deploy uses OPENAI_API_KEY={key} for the bot.", "context": f"token {gh}"}],
            "metadata": {"note": f"password=hunter2-{gh}"},
            "async": False,
        },
    )
    assert not result.is_error
    (unit,) = kit.units(kit.project_bank)
    dumped = repr(unit)
    assert key not in dumped and gh not in dumped and "hunter2" not in dumped
    assert unit["text"].startswith("Deploy uses OPENAI_API_KEY=")
    # What the model passes besides content is written too: tags, a document id, entities.
    slack = "xoxb-" + "123456789012-abcdefghijkl"
    other = host.call_tool(
        "hindsight_retain",
        {
            "items": [{"content": "The deploy bot posts to the ops channel."}],
            "tags": [f"bot-{slack}", "ops"],
            "document_id": f"doc-{gh}",
            "entities": [{"text": f"bot {slack}"}],
            "async": False,
        },
    )
    assert not other.is_error, other.text
    (bot,) = [u for u in kit.units(kit.project_bank) if "ops channel" in str(u["text"])]
    assert slack not in repr(bot) and gh not in repr(bot) and "ops" in bot["tags"]
    assert str(bot["document_id"]).startswith("doc-[REDACTED")


def test_recalled_blocks_are_stripped_and_an_emptied_item_refuses_the_call(kit: Kit) -> None:
    host = kit.host()
    block = "<hindsight-memory>\n1. an old recalled memory\n</hindsight-memory>"
    ok = host.call_tool(
        "hindsight_retain", {"items": [{"content": f"{block}\nThe cache TTL is 60 s."}], "async": False}
    )
    assert not ok.is_error
    assert kit.texts(kit.project_bank) == ["The cache TTL is 60 s."]
    bad = host.call_tool(
        "hindsight_retain", {"items": [{"content": "A fine fact."}, {"content": f"  {block}  "}], "async": False}
    )
    assert bad.is_error and bad.details["error"]["kind"] == "invalid"
    assert "items[1].content is empty" in bad.text
    assert kit.texts(kit.project_bank) == ["The cache TTL is 60 s."]  # nothing of the refused call
    assert kit.jobs() == []


def test_a_failed_local_write_is_reported_truthfully_and_a_backlog_is_never_retried(local_kit: Kit) -> None:
    """Store busy (another process holds its write lock): the job stays queued and the tool says
    so; a later explicit retain queues behind it without spending a retry on the backlog."""
    kit = local_kit
    kit.configure(sections={"retain": {"flush_timeout_ms": 500}})  # the tool's attempt waits at most this
    host = kit.host()
    assert host.command("/hindsight").level == "info"  # store created and open
    with store_locked(kit.db):
        result = host.call_tool("hindsight_retain", {"items": [{"content": "Written while the store is locked."}]})
    first, second = result.text.split("\n")
    assert first == "1 memory queued."  # the truth, not "1 memory stored."
    assert second.startswith("The local write did not happen now (") and "database is locked" in second
    assert second.endswith("; it stays queued and will be retried.")
    d = result.details
    assert (d["count"], d["stored"], d["queued"], d["bank_id"]) == (1, 0, True, kit.project_bank)
    assert isinstance(d["error"], str) and "database is locked" in d["error"]
    assert result.is_error  # the write did fail; the details say it is queued, not lost
    (backlog,) = kit.jobs()
    assert backlog["attempts"] == 1 and backlog.get("next_attempt_at")
    assert [i["content"] for i in backlog["items"]] == ["Written while the store is locked."]
    assert kit.texts(kit.project_bank) == []

    later = host.call_tool("hindsight_retain", {"items": [{"content": "New fact behind the backlog."}]})
    assert later.text.split("\n")[0] == "1 memory queued."
    assert later.details["stored"] == 0 and "earlier job" in later.details["error"]
    jobs = kit.jobs()
    assert [j["attempts"] for j in jobs if j["id"] == backlog["id"]] == [1]  # no retry spent on it
    assert sorted(i["content"] for j in jobs for i in j["items"]) == [
        "New fact behind the backlog.",
        "Written while the store is locked.",
    ]
    assert kit.texts(kit.project_bank) == []
    flushed = host.command("/hindsight:flush")
    assert flushed.level == "info" and flushed.data is not None and flushed.data["sent"] == len(jobs)
    assert kit.texts(kit.project_bank) == ["New fact behind the backlog.", "Written while the store is locked."]
    assert kit.jobs() == []


def test_server_down_reports_queued_with_the_error_and_keeps_the_job(hs_kit: Kit) -> None:
    kit = hs_kit
    assert kit.url is not None
    kit.configure(sections={"hindsight": {"timeout_ms": 2000}})
    kit.use_url(closed_port_url())
    down = kit.host()
    result = down.call_tool(
        "hindsight_retain", {"items": [{"content": "Sent while the server is down."}], "async": False}
    )
    assert not result.is_error and result.text == "1 memory queued."
    d = result.details
    assert (d["delivered"], d["pending"], d["count"]) == (False, True, 1)
    assert d["last_error"]
    (job,) = kit.jobs()
    assert job["id"] == d["queue_job_id"] and job["attempts"] == 1
    queue = down.command("/hindsight:queue")
    assert "active: 1" in queue.text and "last error: -" not in queue.text
    kit.use_url(kit.url)
    up = kit.host("other")
    flushed = up.command("/hindsight:flush")
    assert flushed.data is not None and flushed.data["sent"] == 1, flushed
    assert kit.texts(kit.project_bank) == ["Sent while the server is down."]


def test_explicit_retains_never_retry_a_backlog_on_hindsight(hs_kit: Kit) -> None:
    """An older failed job for the bank waits out its backoff; a new explicit retain only queues."""
    kit = hs_kit
    assert kit.url is not None
    kit.configure(sections={"hindsight": {"timeout_ms": 2000}})
    kit.use_url(closed_port_url())
    failed = kit.host("down").call_tool("hindsight_retain", {"items": [{"content": "Backlog job."}], "async": False})
    assert failed.details["delivered"] is False
    kit.use_url(kit.url)
    later = kit.host()
    (backlog,) = kit.jobs()
    assert backlog["attempts"] == 1 and backlog.get("next_attempt_at")
    result = later.call_tool("hindsight_retain", {"items": [{"content": "Behind the backlog."}], "async": False})
    assert result.text == "1 memory queued."
    assert result.details["delivered"] is False and result.details["pending"] is True
    jobs = kit.jobs()
    assert [j["attempts"] for j in jobs if j["id"] == backlog["id"]] == [1]  # no retry spent on it
    assert sorted(i["content"] for j in jobs for i in j["items"]) == ["Backlog job.", "Behind the backlog."]
    assert kit.texts(kit.project_bank) == []
    flushed = later.command("/hindsight:flush")
    assert flushed.level == "info", flushed
    assert kit.texts(kit.project_bank) == ["Backlog job.", "Behind the backlog."]


def test_a_full_queue_is_an_error_and_nothing_is_written(kit: Kit) -> None:
    kit.configure(sections={"queue": {"max_active_bytes": 512}})
    host = kit.host()
    result = host.call_tool("hindsight_retain", {"items": [{"content": "x" * 4000}]})
    assert result.is_error and result.details["error"]["kind"] == "queue"
    assert result.text.startswith("Error: could not queue the memory: ")
    assert kit.jobs() == [] and kit.texts(kit.project_bank) == []


def test_async_hindsight_retain_is_acknowledged_and_lands(hs_kit: Kit) -> None:
    kit = hs_kit
    host = kit.host()
    result = host.call_tool("hindsight_retain", {"items": [{"content": "Async explicit retain lands later."}]})
    assert result.text == "1 memory queued." and result.details["delivered"] is True
    receipts = host.command("/hindsight").data
    assert receipts is not None
    ops = receipts["last_receipt"]["operation_ids"]
    assert len(ops) == 1
    status = kit.store.wait_operation(kit.project_bank, ops[0], timeout_s=30, poll_s=0.05)
    assert status["status"] == "completed"
    assert kit.texts(kit.project_bank) == ["Async explicit retain lands later."]


# -- governance gates (docs/governance.md#modes) -----------------------------------------------------------------------


def test_read_only_asks_before_each_explicit_write(kit: Kit) -> None:
    host = kit.host(answers=["Allow", "Deny", None, "Allow"])
    assert host.command("/hindsight:mode read-only").level == "info"
    allowed = host.call_tool("hindsight_retain", {"items": [{"content": "Allowed in read-only."}], "async": False})
    denied = host.call_tool("hindsight_retain", {"items": [{"content": "Denied in read-only."}], "async": False})
    cancelled = host.call_tool("hindsight_retain_global", {"items": [{"content": "Cancelled question."}]})
    allowed_global = host.call_tool(
        "hindsight_retain_global", {"items": [{"content": "Allowed global."}], "async": False}
    )
    assert not allowed.is_error and not allowed_global.is_error
    for refused in (denied, cancelled):
        assert refused.is_error and refused.text == "Error: retain refused: session is read-only"
    questions = ui_of(host).questions
    assert len(questions) == 4 and all(opts == ["Allow", "Deny"] for _, opts in questions)
    assert "read-only" in questions[0][0] and "hindsight_retain" in questions[0][0]
    assert kit.texts(kit.project_bank) == ["Allowed in read-only."]
    assert kit.texts(kit.user_bank) == ["Allowed global."]
    assert not host.call_tool("hindsight_recall", {"query": "read-only"}).is_error  # reads need no question
    assert len(ui_of(host).questions) == 4


def test_ignored_and_retain_off_refuse_without_asking(kit: Kit) -> None:
    host = kit.host(answers=["Allow"] * 5)
    host.command("/hindsight:mode ignored")
    for tool in ("hindsight_retain", "hindsight_retain_global"):
        r = host.call_tool(tool, {"items": [{"content": "Should not be stored."}]})
        assert r.text == "Error: retain disabled for this session"
    for tool in ("hindsight_recall", "hindsight_reflect"):
        r = host.call_tool(tool, {"query": "anything"})
        assert r.text == "Error: recall disabled for this session"
    host.command("/hindsight:mode normal")
    host.command("/hindsight:retain off")
    r = host.call_tool("hindsight_retain", {"items": [{"content": "Should not be stored."}]})
    assert r.text == "Error: retain disabled for this session"
    assert not host.call_tool("hindsight_recall", {"query": "anything"}).is_error
    assert ui_of(host).questions == []
    assert kit.jobs() == [] and kit.texts(kit.project_bank) == [] and kit.texts(kit.user_bank) == []


def test_next_opt_out_does_not_touch_explicit_retains(kit: Kit) -> None:
    host = kit.host()
    host.command("/hindsight:next-opt-out")
    r = host.call_tool("hindsight_retain", {"items": [{"content": "Explicit despite opt-out."}], "async": False})
    assert not r.is_error
    assert kit.texts(kit.project_bank) == ["Explicit despite opt-out."]
    session = host.command("/hindsight:session")
    assert session.data is not None and session.data["next_retain"] == "off"  # not consumed


def test_fail_closed_meta_refuses_every_tool(kit: Kit) -> None:
    folder = kit.state / "session-meta"
    folder.mkdir(mode=0o700)
    (folder / f"{sid_of(kit)}.json").write_text('{"retained": true, "mode": "bogus"}', encoding="utf-8")
    host = kit.host(answers=["Allow"])
    assert host.call_tool("hindsight_retain", {"items": [{"content": "x"}]}).text == (
        "Error: retain disabled for this session"
    )
    assert host.call_tool("hindsight_recall", {"query": "x"}).text == "Error: recall disabled for this session"
    assert host.call_tool("hindsight_reflect", {"query": "x"}).text == "Error: recall disabled for this session"
    assert ui_of(host).questions == [] and kit.jobs() == []
    warnings = [t for t in ui_of(host).texts("warning") if "session meta" in t]
    assert len(warnings) == 1 and f"{sid_of(kit)}.json" in warnings[0]


class _AbortingUI(RecordingUI):
    """The person aborts the run while the read-only question is open (then the host answers)."""

    def __init__(self, host_box: list[Host]) -> None:
        super().__init__(answers=["Allow"])
        self.host_box = host_box

    def select(self, title: str, options: list[str]) -> str | None:
        self.host_box[0].abort()
        return super().select(title, options)


def test_an_abort_during_the_question_wins(local_kit: Kit) -> None:
    box: list[Host] = []
    host = Host(
        local_kit.root,
        session_file=local_kit.session_file(),
        plugins=[HindsightPlugin()],
        ui=_AbortingUI(box),
        host_name="pi",
    )
    box.append(host)
    local_kit.hosts.append(host)
    host.start()
    host.command("/hindsight:mode read-only")
    result = host.call_tool("hindsight_retain", {"items": [{"content": "Aborted before the write."}]})
    assert result.text == "Error: request aborted" and result.details["error"]["kind"] == "aborted"
    assert local_kit.jobs() == [] and local_kit.texts(local_kit.project_bank) == []
