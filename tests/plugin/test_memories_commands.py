"""``/hindsight:memories`` through ``Host.command`` (docs/commands.md#hindsightmemories).

Everything is real: memories stored through the retain tool and the hooks, a real SQLite store
(or the real test server for the ``kit`` tests), the real queue files. What a forget removed is
checked in the store itself, in recall, in the injected block and in the queue.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hindsight_hooks.hooks import Host, assistant_message, user_message

from .cmdkit import Kit, hs_kit_fixture, kit_fixture, local_kit_fixture, sid_of, ui_of  # noqa: F401  (fixtures)


def remember(host: Host, *texts: str, tags: list[str] | None = None) -> list[str]:
    args: dict[str, Any] = {"items": [{"content": t} for t in texts], "async": False}
    if tags:
        args["tags"] = tags
    stored = host.call_tool("hindsight_retain", args)
    assert not stored.is_error, stored.text
    return list(stored.details.get("ids") or [])


def listed(host: Host, line: str = "list") -> dict[str, Any]:
    result = host.command(f"/hindsight:memories {line} --json")
    assert result.level == "info", result.text
    assert result.data is not None and json.loads(result.text) == json.loads(json.dumps(result.data, default=str))
    return result.data


def test_list_is_newest_first_paged_and_filtered(local_kit: Kit) -> None:
    host = local_kit.host()
    for n in range(5):
        remember(host, f"Fact number {n} about the zebra service.")
    remember(host, "An unrelated note on penguins.", tags=["animals"])
    first = listed(host, "list limit=2")
    assert first["total"] == 6 and first["page"] == 1 and first["next_page"] == 2
    assert [m["text"] for m in first["memories"]] == [
        "An unrelated note on penguins.",
        "Fact number 4 about the zebra service.",
    ]
    third = listed(host, "list limit=2 page=3")
    assert [m["text"] for m in third["memories"]] == [
        "Fact number 1 about the zebra service.",
        "Fact number 0 about the zebra service.",
    ]
    assert third["next_page"] is None
    assert [m["text"] for m in listed(host, "list tag=animals")["memories"]] == ["An unrelated note on penguins."]
    assert listed(host, "list text=ZEBRA limit=50")["total"] == 5
    assert listed(host, "list zebra number 3")["total"] == 0  # free words are one substring
    assert listed(host, "list text=number_3")["total"] == 0  # _ is literal, not a wildcard
    assert listed(host, "list since=2999-01-01")["total"] == 0
    assert listed(host, "list until=2999-01-01")["total"] == 6
    mine = listed(host, "list session=current")
    assert mine["total"] == 6 and all(m["session_id"] == sid_of(local_kit) for m in mine["memories"])
    assert listed(host, "list session=0000000000000000")["total"] == 0
    text = host.command("/hindsight:memories list limit=2").text.splitlines()
    assert text[0] == f"bank {local_kit.project_bank}: 6 memories; page 1 (1-2)"
    assert text[1].endswith("An unrelated note on penguins.") and text[-1] == "next: page=2"


def test_show_names_document_session_and_position(local_kit: Kit) -> None:
    host = local_kit.host()
    (uid,) = remember(host, "The deploy window is Tuesday at 14:00 UTC.")
    shown = host.command(f"/hindsight:memories show {uid} --json")
    assert shown.data is not None and shown.data["found"] is True
    mem = shown.data["memory"]
    assert mem["id"] == uid and mem["text"] == "The deploy window is Tuesday at 14:00 UTC."
    assert mem["session_id"] == sid_of(local_kit) and mem["position"] == 0
    assert mem["session_file"] == str(local_kit.session_file())
    assert f"session:{sid_of(local_kit)}" in mem["tags"] and mem["document_id"].startswith("hh-explicit:")
    assert shown.data["history"] == []
    text = host.command(f"/hindsight:memories show {uid}").text
    assert f"document: {mem['document_id']} (position 0)" in text and f"session: {sid_of(local_kit)}" in text
    missing = host.command("/hindsight:memories show 0123456789abcdef")
    assert missing.level == "warning" and missing.data == {"found": False, "bank_id": local_kit.project_bank}


def test_bad_arguments_answer_with_the_usage_line(local_kit: Kit) -> None:
    host = local_kit.host()
    for line in (
        "",
        "frobnicate",
        "list since=yesterday",
        "list page=0",
        "list --verbose",
        "show",
        "forget everything x",
    ):
        result = host.command(f"/hindsight:memories {line}")
        assert result.level == "warning" and result.data is not None and "usage" in result.data, line
        assert "usage: /hindsight:memories list|show|edit|forget" in result.text
    assert host.command("/hindsight:memories list bank=user").level == "info"


def test_an_impossible_date_is_refused_not_matched_against_nothing(local_kit: Kit) -> None:
    """``since=2026-13-45`` fits the date pattern, so it was accepted and listed nothing; a
    date that does not exist is now refused with what is wrong."""
    host = local_kit.host()
    for line in ("list since=2026-13-45", "list until=2026-02-30", "list since=2026-01-31T25:00"):
        result = host.command(f"/hindsight:memories {line}")
        assert result.level == "warning" and result.data is not None and "usage" in result.data, line
        assert f"{line.split()[1]} is not a real date or time" in result.text, result.text
    assert host.command("/hindsight:memories list since=2026-01-31T10:00:00Z").level == "info"


def test_edit_changes_the_text_recall_finds_and_keeps_history(local_kit: Kit) -> None:
    host = local_kit.host()
    (uid,) = remember(host, "The staging database runs Postgres 14.")
    secret = "ghp_" + "ZYXWVUTSRQPONMLKJIHGFEDCBA0123456789"
    edited = host.command(f"/hindsight:memories edit {uid} The staging database runs Postgres 16 token {secret}")
    assert edited.level == "info", edited.text
    (unit,) = local_kit.units(local_kit.project_bank)
    assert unit["text"].startswith("The staging database runs Postgres 16") and secret not in unit["text"]
    recalled = host.call_tool("hindsight_recall", {"query": "Postgres 16 staging"}).text
    assert f"(id: {uid})" in recalled and "Postgres 14" not in recalled
    shown = host.command(f"/hindsight:memories show {uid} --json").data
    assert shown is not None
    (entry,) = shown["history"]
    assert entry["previous"] == "The staging database runs Postgres 14." and entry["text"] == unit["text"]
    assert shown["memory"]["edited_at"] == entry["edited_at"]
    assert host.command("/hindsight:memories edit 0123456789abcdef new text").level == "warning"
    # forgetting the memory forgets its history too (the history table cascades)
    host.command(f"/hindsight:memories forget id {uid}")
    import sqlite3

    with sqlite3.connect(local_kit.db) as conn:
        assert conn.execute("SELECT count(*) FROM unit_edits").fetchone()[0] == 1  # not confirmed: kept
    answered = local_kit.host("other", answers=["Confirm"])
    assert answered.command(f"/hindsight:memories forget id {uid}").level == "info"
    with sqlite3.connect(local_kit.db) as conn:
        assert conn.execute("SELECT count(*) FROM unit_edits").fetchone()[0] == 0


def run_turn(host: Host, prompt: str, answer: str) -> str | None:
    """One agent run; returns the injected block's text, if any."""
    msgs = [user_message(prompt)]
    for_model = host.context(msgs)
    blocks = [m for m in for_model if m.get("customType") == "hindsight-recall"]
    host.agent_end([*msgs, assistant_message(answer)])
    return str(blocks[0].get("content")) if blocks else None


def test_forget_by_session_dry_run_confirm_queue_and_tombstone(local_kit: Kit) -> None:
    local_kit.configure(sections={"retain": {"delivery": "coalesced"}})
    gone = local_kit.host("gone", answers=["Cancel", "Confirm"])
    kept = local_kit.host("kept")
    remember(gone, "The quokka cache lives in Redis cluster seven.")
    remember(kept, "The quokka dashboard is owned by the platform team.")
    run_turn(gone, "Where does the quokka queue spill to?", "The quokka queue spills to bucket nine.")
    assert any(i.get("document_id", "").startswith("hh-session:") for j in local_kit.jobs() for i in j["items"]) or (
        local_kit.texts(local_kit.project_bank)
    )
    sid = sid_of(local_kit, "gone")

    dry = gone.command("/hindsight:memories forget session current --dry-run --json")
    assert dry.data is not None and dry.data["dry_run"] is True and dry.data["value"] == sid
    before = local_kit.texts(local_kit.project_bank)
    assert dry.data["memories"] + dry.data["queued_items"] >= 2
    assert ui_of(gone).questions == []  # a dry run asks nothing

    cancelled = gone.command("/hindsight:memories forget session current")
    assert cancelled.level == "warning" and "not confirmed" in cancelled.text
    assert local_kit.texts(local_kit.project_bank) == before
    title, options = ui_of(gone).questions[-1]
    assert options == ["Confirm", "Cancel"] and title.startswith("Forget ")

    done = gone.command("/hindsight:memories forget session current --json")
    assert done.data is not None and done.level == "info", done.text
    left = local_kit.units(local_kit.project_bank)
    assert [u["text"] for u in left] == ["The quokka dashboard is owned by the platform team."]
    assert not any(sid in json.dumps(j) for j in local_kit.jobs() + local_kit.jobs(local_kit.dead_file))
    recalled = kept.call_tool("hindsight_recall", {"query": "quokka cache Redis bucket"}).text
    assert "Redis cluster seven" not in recalled and "bucket nine" not in recalled
    block = run_turn(kept, "Tell me about the quokka cache and bucket", "ok")
    assert block is None or ("Redis cluster seven" not in block and "bucket nine" not in block)
    stones = json.loads((local_kit.state / "tombstones.json").read_text(encoding="utf-8"))["tombstones"]
    assert {"bank_id": local_kit.project_bank, "kind": "session", "value": sid} in [
        {k: s[k] for k in ("bank_id", "kind", "value")} for s in stones
    ]
    assert (local_kit.state / "tombstones.json").stat().st_mode & 0o777 == 0o600

    # The session goes on: what is said and retained after the forget is new and is kept, even
    # the same text again (ADR 173); what the forget covered does not come back. A replay of the
    # old transcript stays out: tests/plugin/test_forget_tombstone_times.py.
    run_turn(gone, "And the quokka archive?", "The quokka archive is on tape eleven.")
    remember(gone, "The quokka cache lives in Redis cluster seven.")
    flushed = gone.command("/hindsight:flush")
    assert flushed.level in ("info", "warning")
    texts = " ".join(local_kit.texts(local_kit.project_bank))
    assert "The quokka dashboard is owned by the platform team." in texts
    assert "Redis cluster seven" in texts and "tape eleven" in texts and "bucket nine" not in texts
    assert local_kit.jobs() == []


def test_forget_by_id_tag_query_and_document(local_kit: Kit) -> None:
    host = local_kit.host(answers=["Confirm"] * 4)
    remember(host, "Alpha fact about kiwis.", "Beta fact about kiwis.")
    remember(host, "Gamma note tagged secret-project.", tags=["secret-project"])
    (d,) = remember(host, "Delta note in its own document.")
    remember(host, "Epsilon kiwi fact.")
    a = next(u["id"] for u in local_kit.units(local_kit.project_bank) if u["text"] == "Alpha fact about kiwis.")
    assert host.command(f"/hindsight:memories forget id {a} 0123456789abcdef").level == "info"
    assert "Alpha fact about kiwis." not in local_kit.texts(local_kit.project_bank)
    assert host.command("/hindsight:memories forget tag secret-project").level == "info"
    assert "Gamma note tagged secret-project." not in local_kit.texts(local_kit.project_bank)
    doc = local_kit.units(local_kit.project_bank)
    doc_id = next(u["document_id"] for u in doc if u["id"] == d)
    assert host.command(f"/hindsight:memories forget document {doc_id}").level == "info"
    q = host.command("/hindsight:memories forget query kiwi --json")
    assert q.data is not None and q.data["forgotten"] == 2, q.text
    assert local_kit.texts(local_kit.project_bank) == []
    # The same fact retained again by a tool after the forget is a new decision: stored (ADR 173).
    stored = host.call_tool("hindsight_retain", {"items": [{"content": "Epsilon kiwi fact."}], "async": False})
    assert not stored.is_error and stored.text == "1 memory stored.", stored.text
    host.command("/hindsight:flush")
    assert local_kit.texts(local_kit.project_bank) == ["Epsilon kiwi fact."]
    nothing = host.command("/hindsight:memories forget id 0123456789abcdef")
    assert nothing.level == "info" and "would forget 0 memories" in nothing.text


def vectors_settled(db: Path, timeout_s: float = 120.0) -> None:
    """With the [semantic] extra, wait until the background worker embedded every unit (recall
    scores depend on the vectors, so two stores compare equal only once both are complete)."""
    import sqlite3
    import time

    from hindsight_hooks.backends.semantic import available

    if not available():
        return
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            units = conn.execute("SELECT count(*) FROM units").fetchone()[0]
            vectors = conn.execute("SELECT count(*) FROM unit_vectors").fetchone()[0]
        if vectors >= units:
            return
        time.sleep(0.05)
    raise AssertionError(f"vectors of {db} not written within {timeout_s}s")


def recall_view(host: Host, query: str) -> list[str]:
    return [ln for ln in host.call_tool("hindsight_recall", {"query": query}).text.splitlines() if "(id: " in ln]


def test_export_fresh_store_import_gives_the_same_recall_and_twice_adds_nothing(local_kit: Kit) -> None:
    host = local_kit.host()
    (uid,) = remember(host, "The billing service retries webhooks three times.")
    remember(host, "Invoices are generated on the first of the month.", tags=["billing"])
    run_turn(host, "How do billing exports work?", "Billing exports land in bucket acme-exports nightly.")
    host.command(f"/hindsight:memories edit {uid} The billing service retries webhooks five times.")
    host.command("/hindsight:flush")
    out = local_kit.tmp / "bank.jsonl"
    exported = host.command(f"/hindsight:memories export {out}")
    assert exported.level == "info" and exported.data is not None, exported.text
    assert out.stat().st_mode & 0o777 == 0o600
    lines = [json.loads(ln) for ln in out.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["kind"] == "header" and lines[0]["bank_id"] == local_kit.project_bank
    assert exported.data["memories"] == len(local_kit.units(local_kit.project_bank)) >= 3
    queries = ["billing webhooks retries", "invoices first of the month", "billing exports bucket"]
    vectors_settled(local_kit.db)
    before = {q: recall_view(host, q) for q in queries}
    assert all(before.values())

    local_kit.monkeypatch.setenv("HINDSIGHT_HOOKS_LOCAL__PATH", str(local_kit.tmp / "fresh" / "memory.db"))
    fresh = local_kit.host()  # the same session: recall treats its own turns alike
    first = fresh.command(f"/hindsight:memories import {out} --json")
    assert first.level == "info" and first.data is not None, first.text
    assert first.data["memories_added"] == exported.data["memories"] and first.data["skipped"] == 0
    vectors_settled(local_kit.tmp / "fresh" / "memory.db")
    for q in queries:
        assert recall_view(fresh, q) == before[q], q
    shown = fresh.command(f"/hindsight:memories show {uid} --json").data
    assert shown is not None and shown["history"][0]["previous"].endswith("three times.")
    again = fresh.command(f"/hindsight:memories import {out} --json").data
    assert again is not None and again["memories_added"] == 0 and again["documents_added"] == 0
    assert again["skipped"] == exported.data["memories"]
    assert listed(fresh, "list limit=100")["total"] == exported.data["memories"]


def test_import_refuses_a_foreign_file_and_honours_tombstones(local_kit: Kit) -> None:
    host = local_kit.host(answers=["Confirm"])
    bad = local_kit.tmp / "bad.jsonl"
    bad.write_text('{"kind": "memory"}\n', encoding="utf-8")
    refused = host.command(f"/hindsight:memories import {bad}")
    assert refused.level == "error" and "not a memories export" in refused.text
    remember(host, "Zeppelin hangar is in building four.", tags=["zeppelin"])
    out = local_kit.tmp / "z.jsonl"
    assert host.command(f"/hindsight:memories export {out}").level == "info"
    assert host.command("/hindsight:memories forget tag zeppelin").level == "info"
    back = host.command(f"/hindsight:memories import {out} --json").data
    assert back is not None and back["memories_added"] == 0 and back["forgotten"] >= 1
    assert local_kit.texts(local_kit.project_bank) == []


def test_markdown_view_groups_by_document_and_day(local_kit: Kit) -> None:
    host = local_kit.host()
    remember(host, "Markdown fact one <b>bold</b>.")
    remember(host, "Markdown fact two.")
    done = host.command("/hindsight:memories markdown")
    assert done.level == "info" and done.data is not None
    text = Path(done.data["path"]).read_text(encoding="utf-8")
    assert text.startswith(f"# Memories of bank `{local_kit.project_bank}`")
    assert text.count("\n## hh-explicit:") == 2 and "\n### 20" in text
    assert "Markdown fact one &lt;b>bold&lt;/b>." in text and "<b>" not in text
    assert Path(done.data["path"]).parent == local_kit.state / "exports"


def test_dates_typed_and_shown_are_on_the_users_clock(kit: Kit, user_zone: Any) -> None:
    """ADR 216, on both backends: in New York (``EST5``) ``until=`` two minutes from now on the wall
    clock lists what was just said, ``since=`` it lists nothing, and the list shows the wall-clock
    minute; before, the typed time was compared with stored UTC text, five hours off, so both were
    the other way round."""
    from datetime import UTC, datetime, timedelta

    user_zone("EST5")
    host = kit.host()
    remember(host, "The release train leaves on Thursdays.")
    (mem,) = listed(host)["memories"]
    wall = timedelta(hours=-5)
    stored = datetime.fromisoformat(mem["created_at"]).astimezone(UTC) + wall
    later = (stored + timedelta(minutes=2)).strftime("%Y-%m-%dT%H:%M")
    assert listed(host, f"list until={later}")["total"] == 1
    assert listed(host, f"list since={later}")["total"] == 0
    assert listed(host, f"list since={stored.strftime('%Y-%m-%d')}")["total"] == 1
    said = datetime.fromisoformat(mem["occurred_at"] or mem["created_at"]).astimezone(UTC) + wall
    line = host.command("/hindsight:memories list").text.splitlines()[1]
    assert said.strftime("%Y-%m-%d %H:%M") in line, line
