"""The forget proof on both backends (the embedded file and the real test server).

A session is imported, its memories are forgotten by session, and then everything that could
bring them back is tried: recall, the injected block, the queue, and a re-import of the same
session file from a fresh import state (manifest and checkpoint gone, as on another machine or
after a reinstall). Nothing of it may come back; a memory of another session stays.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from hindsight_hooks.hooks import Host, user_message
from tests.importer.conftest import install

from .cmdkit import Kit, kit_fixture  # noqa: F401  (fixtures)

SESSION_HEADER_ID = "5f1d2c3a-7b8e-4c1d-9a0b-1c2d3e4f5a60"  # decisions.jsonl's session id


def wait_texts(kit: Kit, want: bool, needle: str, timeout_s: float = 90.0) -> list[str]:
    """The bank's texts once ``needle`` is (``want``) or is not among them; the server extracts
    asynchronously, so its memories may appear a little after the retain answered."""
    end = time.monotonic() + timeout_s
    while True:
        texts = kit.texts(kit.project_bank)
        if any(needle in t for t in texts) == want or time.monotonic() > end:
            return texts
        time.sleep(0.5)


def import_file(host: Host, path: Path) -> None:
    result = host.command(f"/hindsight:import-file {path} --yes")
    assert result.level in ("info", "warning"), result.text
    assert result.data is not None and result.data["counts"]["failed"] == 0, result.text


def test_forget_by_session_survives_recall_block_queue_and_reimport(kit: Kit) -> None:
    kit.configure(sections={"import": {"turns_per_document": 1}})
    host = kit.host(answers=["Confirm"])  # the imports run with --yes
    stored = host.call_tool(
        "hindsight_retain", {"items": [{"content": "The marmot service is owned by team Ibex."}], "async": False}
    )
    assert not stored.is_error, stored.text
    session = install("decisions.jsonl", kit.tmp / "imported", cwd=kit.root)
    import_file(host, session)
    kit.settle(kit.project_bank)  # every memory of the import made, not only the first one listed
    before = wait_texts(kit, True, "advisory")
    assert any("advisory" in t for t in before) and any("marmot" in t for t in before)

    dry = host.command(f"/hindsight:memories forget session {SESSION_HEADER_ID} --dry-run --json")
    assert dry.data is not None and dry.data["memories"] >= 1 and dry.data["documents"], dry.text
    assert kit.texts(kit.project_bank) == before  # the dry run changed nothing

    done = host.command(f"/hindsight:memories forget session {SESSION_HEADER_ID} --json")
    assert done.level == "info" and done.data is not None, done.text
    assert done.data["forgotten"] >= 1
    after = wait_texts(kit, False, "advisory")
    assert not any("advisory" in t for t in after) and any("marmot" in t for t in after)
    recalled = host.call_tool("hindsight_recall", {"query": "advisory lock export scheduler"}).text
    assert "advisory" not in recalled
    block = [m for m in host.context([user_message("advisory lock scheduler?")]) if m.get("customType")]
    assert all("advisory" not in json.dumps(m) for m in block)
    assert not any(SESSION_HEADER_ID in json.dumps(j) for j in kit.jobs())

    # A re-import from a fresh import state: the importer sends it all again, the tombstones drop it.
    for name in ("import-manifest.json", "import-checkpoint.json"):
        (kit.state / name).unlink(missing_ok=True)
    import_file(host, session)
    host.command("/hindsight:flush")
    time.sleep(2.0 if kit.backend == "hindsight" else 0.0)  # the server would have extracted by now
    again = kit.texts(kit.project_bank)
    assert not any("advisory" in t for t in again) and any("marmot" in t for t in again)
    assert kit.jobs() == []


def test_list_show_edit_and_forget_by_id_on_each_backend(kit: Kit) -> None:
    host = kit.host(answers=["Confirm"])
    stored = host.call_tool(
        "hindsight_retain", {"items": [{"content": "The walrus cron runs at 03:00 UTC."}], "async": False}
    )
    assert not stored.is_error, stored.text
    wait_texts(kit, True, "walrus")
    page = host.command("/hindsight:memories list text=walrus --json").data
    assert page is not None and page["total"] >= 1, page
    mem = page["memories"][0]
    assert "walrus" in mem["text"] and mem["session_id"]
    shown = host.command(f"/hindsight:memories show {mem['id']} --json").data
    assert shown is not None and shown["found"] and shown["memory"]["id"] == mem["id"]
    edited = host.command(f"/hindsight:memories edit {mem['id']} The walrus cron runs at 04:00 UTC.")
    assert edited.level == "info", edited.text
    assert "The walrus cron runs at 04:00 UTC." in wait_texts(kit, True, "04:00")
    after = host.command(f"/hindsight:memories show {mem['id']} --json").data
    assert after is not None and after["memory"]["edited_at"]
    gone = host.command(f"/hindsight:memories forget id {mem['id']} --json")
    assert gone.data is not None and gone.data["forgotten"] == 1, gone.text
    recalled = host.call_tool("hindsight_recall", {"query": "walrus cron"}).text
    assert "walrus" not in recalled
    if kit.backend == "hindsight":  # no single-memory delete in API 1.1.0: said plainly
        assert gone.level == "warning" and "invalidated instead" in str(gone.data["note"])
    else:
        assert gone.level == "info" and not any("walrus" in t for t in kit.texts(kit.project_bank))


def test_export_and_markdown_from_each_backend_and_import_twice_adds_nothing(kit: Kit) -> None:
    host = kit.host()
    stored = host.call_tool(
        "hindsight_retain", {"items": [{"content": "The heron build cache is pruned weekly."}], "async": False}
    )
    assert not stored.is_error, stored.text
    wait_texts(kit, True, "heron")
    out = kit.tmp / "export.jsonl"
    exported = host.command(f"/hindsight:memories export {out} --json")
    assert exported.level == "info" and exported.data is not None, exported.text
    lines = [json.loads(ln) for ln in out.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["backend"] == kit.backend and exported.data["memories"] >= 1
    assert any(ln["kind"] == "memory" and "heron" in ln["text"] for ln in lines)
    assert any(ln["kind"] == "document" for ln in lines)
    view = host.command("/hindsight:memories markdown").data
    assert view is not None and "heron" in Path(view["path"]).read_text(encoding="utf-8")
    count = len(kit.texts(kit.project_bank))
    for _ in range(2):  # into the bank it came from: everything is already there
        again = host.command(f"/hindsight:memories import {out} --json")
        assert again.level == "info" and again.data is not None, again.text
        if kit.backend == "local":
            assert again.data["memories_added"] == 0
    time.sleep(2.0 if kit.backend == "hindsight" else 0.0)
    assert len(kit.texts(kit.project_bank)) == count
