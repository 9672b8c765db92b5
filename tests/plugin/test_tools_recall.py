"""``hindsight_recall`` and ``hindsight_reflect`` through ``Host.call_tool`` (docs/tools.md#hindsight_recall–11.4).

The texts are the seeds' (003 recall, 002 reflect) per backend, checked character for
character: Hindsight bullets ``- <text> [<type>] (<mentioned_at>)``, local bullets
``- <content> (id: <id>) [<source>] (<date>) c:<score>``, and the local reflect sandwich.
"""

from __future__ import annotations

import os
import re
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hindsight_hooks.backends.base import RecallRequest
from hindsight_hooks.governance import identity as ident

from .cmdkit import Kit, closed_port_url, hs_kit_fixture, kit_fixture, local_kit_fixture, utc_stamps  # noqa: F401  (fixtures)

LOCAL_BULLET = re.compile(
    r"^- (?P<text>.+) \(id: (?P<id>[0-9a-f]{16})\) \[tool\] "
    r"\((?P<date>\d{4}-\d{2}-\d{2})(?P<time> \d{2}:\d{2} UTC)?\) c:\d\.\d$"
)
HEADER = re.compile(r"^Found (?P<n>\d+) relevant (?P<noun>memory|memories) \(as of (?P<stamp>[\d-]+ [\d:]+) UTC\):$")


def retain(host: Any, bank: str, *texts: str, **extra: Any) -> None:
    result = host.call_tool(
        "hindsight_retain", {"items": [{"content": t} for t in texts], "bank": bank, "async": False, **extra}
    )
    assert not result.is_error, result


def recall(host: Any, **args: Any) -> tuple[Any, set[str], set[str]]:
    before = utc_stamps()
    result = host.call_tool("hindsight_recall", args)
    return result, before, utc_stamps()


def split(text: str) -> tuple[re.Match[str], list[str]]:
    head, _, body = text.partition("\n\n")
    match = HEADER.match(head)
    assert match is not None, text
    return match, body.split("\n\n")


def mentioned(kit: Kit, bank: str, query: str) -> dict[str, str]:
    hits = kit.store.recall(bank, RecallRequest(query=query, types=["world", "experience"]), timeout_s=30).hits
    return {h.text: h.mentioned_at for h in hits}


def test_recall_text_is_the_seed_format_per_backend(kit: Kit) -> None:
    host = kit.host()
    retain(host, "project", "Kestrel builds use uv.", "Kestrel tests run with pytest.")
    retain(host, "user", "Kestrel user prefers short answers.")
    result, before, after = recall(host, query="Kestrel")
    assert not result.is_error and set(result.details) == {"memories"}
    header, bullets = split(result.text)
    assert (header["n"], header["noun"]) == ("3", "memories") and header["stamp"] in before | after
    # the same memories as data, in the order shown, each with its bank (issue 9 item 16)
    records = result.details["memories"]
    assert [r["text"] for r in records] == [b[2:].split(" (id: ")[0].split(" [world] (")[0] for b in bullets]
    assert {r["text"]: r["bank"] for r in records} == {
        "Kestrel builds use uv.": kit.project_bank,
        "Kestrel tests run with pytest.": kit.project_bank,
        "Kestrel user prefers short answers.": kit.user_bank,
    }
    assert all(r["id"] and isinstance(r["tags"], list) for r in records)
    assert len(bullets) == 3
    if kit.backend == "hindsight":
        stamps = mentioned(kit, kit.project_bank, "Kestrel") | mentioned(kit, kit.user_bank, "Kestrel")
        texts = [b[2:].split(" [world] (")[0] for b in bullets]
        assert texts[2] == "Kestrel user prefers short answers."  # scope order: project first, then user
        assert sorted(texts[:2]) == ["Kestrel builds use uv.", "Kestrel tests run with pytest."]
        for bullet, text in zip(bullets, texts, strict=True):
            assert bullet == f"- {text} [world] ({stamps[text]})"
    else:
        today = datetime.now(UTC).strftime("%Y-%m-%d")
        ids = {u["text"]: u["id"] for bank in (kit.project_bank, kit.user_bank) for u in kit.units(bank)}
        seen = []
        for bullet in bullets:
            m = LOCAL_BULLET.match(bullet)
            assert m is not None, bullet
            assert ids[m["text"]] == m["id"] and m["date"] == today
            assert m["time"] is not None  # three memories of one day: each shows its time (ADR 180)
            seen.append(m["text"])
        assert sorted(seen) == sorted(ids)
    one, before, after = recall(host, query="pytest", bank="project")
    header, bullets = split(one.text)
    assert (header["n"], header["noun"]) == ("1", "memory") and len(bullets) == 1
    assert "Kestrel tests run with pytest." in bullets[0]


def test_no_match_and_the_bank_choice(kit: Kit) -> None:
    host = kit.host()
    retain(host, "project", "Osprey project fact about caching.")
    retain(host, "user", "Osprey user fact about tabs.")
    none = host.call_tool("hindsight_recall", {"query": "zeppelin"})
    assert none.text == "No relevant memories found." and none.details == {}
    project = host.call_tool("hindsight_recall", {"query": "Osprey", "bank": "project"}).text
    user = host.call_tool("hindsight_recall", {"query": "Osprey", "bank": "user"}).text
    user_alias = host.call_tool("hindsight_recall", {"query": "Osprey", "bank": "global"}).text
    assert "caching" in project and "tabs" not in project
    assert "tabs" in user and "caching" not in user
    assert user_alias.split("\n\n")[1:] == user.split("\n\n")[1:]
    typed = host.call_tool("hindsight_recall", {"query": "Osprey", "types": ["experience"]})
    assert typed.text == "No relevant memories found."  # explicit facts are world facts


def test_scope_filters_keep_other_projects_and_untagged_memories_out(kit: Kit) -> None:
    host = kit.host()
    retain(host, "project", "Heron scoped project memory.")
    retain(host, "user", "Heron scoped user memory.")
    foreign = [
        {"content": "Heron memory of another repo.", "document_id": "f1", "tags": ["repo:other-0123456789ab"]},
        {"content": "Heron memory with no tags.", "document_id": "f2", "tags": []},
    ]
    for bank in (kit.project_bank, kit.user_bank):
        out = kit.store.retain_batch(
            bank, [dict(i, context="test") for i in foreign], operation_id=str(uuid.uuid4()), async_=False, timeout_s=30
        )
        assert out.items_count == 2
    text = host.call_tool("hindsight_recall", {"query": "Heron memory"}).text
    assert "Heron scoped project memory." in text and "Heron scoped user memory." in text
    assert "another repo" not in text and "no tags" not in text


def test_caller_tags_and_tag_groups_narrow_the_scope(kit: Kit) -> None:
    host = kit.host()
    retain(host, "project", "Lark fact tagged alpha.", tags=["alpha"])
    retain(host, "project", "Lark fact tagged beta.", tags=["beta"])
    alpha = host.call_tool("hindsight_recall", {"query": "Lark fact", "tags": ["alpha"]}).text
    assert "alpha" in alpha and "beta" not in alpha
    not_alpha = host.call_tool(
        "hindsight_recall", {"query": "Lark fact", "tag_groups": [{"not": {"tags": ["alpha"], "match": "any_strict"}}]}
    ).text
    assert "beta" in not_alpha and "alpha" not in not_alpha
    either = host.call_tool(
        "hindsight_recall",
        {"query": "Lark fact", "tag_groups": [{"or": [{"tags": ["alpha"]}, {"tags": ["beta"]}]}], "bank": "project"},
    )
    assert split(either.text)[0]["n"] == "2"


def test_recall_never_touches_the_snapshot(kit: Kit) -> None:
    kit.configure(sections={"recall": {"store_last_recall": True}})
    host = kit.host()
    retain(host, "project", "Snapshot test memory.")
    assert host.call_tool("hindsight_recall", {"query": "snapshot test"}).text.startswith("Found 1")
    assert not (kit.state / "last-recall.json").exists()
    assert host.command("/hindsight:last-recall").text.startswith("no snapshot")


def test_one_failed_bank_is_reported_in_details(hs_kit: Kit) -> None:
    kit = hs_kit
    host = kit.host()
    retain(host, "project", "Partial failure project memory.")
    kit.store.delete_bank(kit.user_bank, timeout_s=30)  # gone after the session ensured it
    result = host.call_tool("hindsight_recall", {"query": "partial failure"})
    assert not result.is_error
    assert "Partial failure project memory." in result.text
    (failure,) = result.details["failures"]
    assert failure["bank_id"] == kit.user_bank and kit.user_bank in failure["error"]


def test_all_banks_failing_is_an_error(hs_kit: Kit) -> None:
    hs_kit.configure(sections={"hindsight": {"timeout_ms": 1500}})
    hs_kit.use_url(closed_port_url())
    host = hs_kit.host()
    result = host.call_tool("hindsight_recall", {"query": "anything"})
    assert result.is_error and result.details["error"]["kind"] == "backend"
    assert result.text.startswith("Error: recall failed: ")
    assert hs_kit.project_bank in result.text and hs_kit.user_bank in result.text
    reflect = host.call_tool("hindsight_reflect", {"query": "anything"})
    assert reflect.is_error and reflect.text.startswith("Error: ")


def test_an_unusable_local_store_says_why_it_cannot_be_opened(local_kit: Kit) -> None:
    local_kit.store.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{local_kit.db}{suffix}").unlink(missing_ok=True)
    local_kit.db.mkdir()  # a folder where the database file should be
    host = local_kit.host()
    for tool, args in (
        ("hindsight_recall", {"query": "q"}),
        ("hindsight_reflect", {"query": "q"}),
        ("memory_edit", {"op": "forget", "id": "0123456789abcdef"}),
    ):
        result = host.call_tool(tool, args)
        # the open error itself, not "not initialised for this session" (a setup step that is not missing)
        assert result.text == (
            f"Error: Local memory backend could not be opened: local memory store {local_kit.db}: "
            "is a directory, not a database file"
        ), (tool, result)
    assert local_kit.jobs() == []
    # A retain is not dropped: it is queued durably like agent_end's turns, and says so (issue 9 item 10).
    queued = host.call_tool("hindsight_retain", {"items": [{"content": "c"}]})
    assert queued.text.startswith("1 memory queued.") and queued.details["queued"] is True, queued
    assert len(local_kit.jobs()) == 1


# -- reflect ------------------------------------------------------------------------------------------


def test_reflect_on_hindsight_returns_the_server_text(hs_kit: Kit) -> None:
    host = hs_kit.host()
    retain(host, "project", "Reflect source fact.")
    result = host.call_tool("hindsight_reflect", {"query": "What do we know?", "context": "for a test"})
    assert result.text == "mock response" and result.details == {}  # the mock LLM's answer, trimmed
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}}
    shaped = host.call_tool("hindsight_reflect", {"query": "q", "responseSchema": schema, "bank": "user"})
    assert shaped.text == "mock response"
    assert isinstance(shaped.details["structured_output"], dict) and "answer" in shaped.details["structured_output"]


# The day, with its time when another memory shown was said that day too (ADR 180).
LOCAL_LINE = re.compile(
    r"^- (?P<text>.+) \((?P<date>\d{4}-\d{2}-\d{2}(?: \d{2}:\d{2} UTC)?|\?), (?P<src>tool|unknown), c:\d\.\d\)$"
)


def _sections(text: str) -> dict[str, list[str]]:
    assert text.startswith("Based on recalled memories:\n\n"), text
    out: dict[str, list[str]] = {}
    current = ""
    for line in text.removeprefix("Based on recalled memories:\n\n").split("\n"):
        if line.startswith("## "):
            current = line[3:]
            out[current] = []
        elif line.startswith("- "):
            assert LOCAL_LINE.match(line), line
            out[current].append(line)
    return out


def test_reflect_on_the_local_store_is_the_sandwich(local_kit: Kit) -> None:
    host = local_kit.host()
    none = host.call_tool("hindsight_reflect", {"query": "Wren"})
    assert none.text == "No relevant information found to reflect on." and none.details == {}
    retain(host, "project", "Wren fact one.", "Wren fact two.")
    two = host.call_tool("hindsight_reflect", {"query": "Wren"}).text
    assert two.endswith("\n\n_(2 memories retrieved)_")
    assert {k: len(v) for k, v in _sections(two).items()} == {"Top Facts": 1, "Supporting Context": 1}
    retain(host, "project", *[f"Wren fact number {i}." for i in range(3, 11)])
    many = host.call_tool("hindsight_reflect", {"query": "Wren fact"}).text
    sections = _sections(many)
    assert {k: len(v) for k, v in sections.items()} == {"Top Facts": 3, "Supporting Context": 5}
    assert many.endswith("\n\n_(8 memories retrieved)_")  # capped at local.recall_limit
    assert "\n\n## Supporting Context\n" in many
    # The context joins the recall query: a query that matches nothing finds memories through it.
    via_context = host.call_tool("hindsight_reflect", {"query": "zeppelin", "context": "  Wren fact one  "}).text
    assert via_context.startswith("Based on recalled memories:")
    assert host.call_tool("hindsight_reflect", {"query": "zeppelin", "context": "   "}).text == (
        "No relevant information found to reflect on."
    )


def test_reflect_scope_is_the_chosen_bank(local_kit: Kit) -> None:
    host = local_kit.host()
    retain(host, "user", "Finch user preference.")
    assert host.call_tool("hindsight_reflect", {"query": "Finch"}).text == (
        "No relevant information found to reflect on."
    )
    user = host.call_tool("hindsight_reflect", {"query": "Finch", "bank": "user"}).text
    assert "Finch user preference." in user


def test_repo_scope_matches_identity(local_kit: Kit) -> None:
    """The project scope the tools use is the repo tag of this project's root."""
    host = local_kit.host()
    retain(host, "project", "Scope identity memory.")
    (unit,) = local_kit.units(local_kit.project_bank)
    key = ident.repo_key(ident.find_repo_root(Path(os.path.realpath(local_kit.root))))
    assert f"repo:{key}" in unit["tags"]
