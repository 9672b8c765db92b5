"""``memory_edit`` through ``Host.call_tool`` (docs/tools.md#memory_edit): local store only.

Ids come from what ``hindsight_recall`` printed, as a model would use them. Updated content
goes through the same write policy as retain (recalled blocks out, secrets redacted).
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from .cmdkit import Kit, hs_kit_fixture, local_kit_fixture, ui_of  # noqa: F401  (fixtures)

ID = re.compile(r"\(id: ([0-9a-f]{16})\)")


def remember(host: Any, text: str, bank: str = "project") -> str:
    """Retain ``text`` and return the id ``hindsight_recall`` shows for it."""
    stored = host.call_tool("hindsight_retain", {"items": [{"content": text}], "bank": bank, "async": False})
    assert stored.text == "1 memory stored.", stored
    (unit_id,) = stored.details["ids"]
    shown = host.call_tool("hindsight_recall", {"query": text, "bank": bank}).text
    assert f"(id: {unit_id})" in shown
    return str(unit_id)


def edit(host: Any, **args: Any) -> Any:
    return host.call_tool("memory_edit", args)


def test_update_replaces_content_and_reindexes(local_kit: Kit) -> None:
    host = local_kit.host()
    uid = remember(host, "The staging database is Postgres 14.")
    result = edit(host, op="update", id=uid, content="The staging database is Postgres 16.")
    assert result.text == f"Memory {uid} updated in bank {local_kit.project_bank}."
    assert result.details == {"status": "updated", "bank_id": local_kit.project_bank}
    assert local_kit.texts(local_kit.project_bank) == ["The staging database is Postgres 16."]
    found = host.call_tool("hindsight_recall", {"query": "Postgres 16"}).text
    assert f"The staging database is Postgres 16. (id: {uid})" in found


def test_update_redacts_secrets_and_strips_recalled_blocks(local_kit: Kit) -> None:
    host = local_kit.host()
    uid = remember(host, "Deploy token lives in the vault.")
    secret = "ghp_" + "ZYXWVUTSRQPONMLKJIHGFEDCBA0123456789"
    content = f"<hindsight-memory>\n1. old\n</hindsight-memory>\nDeploy with GITHUB_TOKEN={secret} now."
    result = edit(host, op="update", id=uid, content=content)
    assert result.details["status"] == "updated"
    (unit,) = local_kit.units(local_kit.project_bank)
    assert secret not in unit["text"] and "hindsight-memory" not in unit["text"]
    assert unit["text"].startswith("Deploy with GITHUB_TOKEN=") and unit["text"].endswith(" now.")
    emptied = edit(host, op="update", id=uid, content="<hindsight-memory>only recall</hindsight-memory>")
    assert emptied.is_error and "content is empty" in emptied.text
    assert local_kit.units(local_kit.project_bank)[0]["text"] == unit["text"]


def test_update_importance_is_clamped_and_needs_something(local_kit: Kit) -> None:
    host = local_kit.host()
    uid = remember(host, "Importance clamp fact.")
    nothing = edit(host, op="update", id=uid)
    assert nothing.is_error and nothing.text == "Error: memory_edit update requires content or importance."
    assert edit(host, op="update", id=uid, importance=7.5).details["status"] == "updated"
    hit = local_kit.store.get_unit(local_kit.project_bank, uid)
    assert hit is not None and hit.importance == 1.0
    assert edit(host, op="update", id=uid, importance=-3).details["status"] == "updated"
    hit = local_kit.store.get_unit(local_kit.project_bank, uid)
    assert hit is not None and hit.importance == 0.0


def test_forget_and_invalidate(local_kit: Kit) -> None:
    host = local_kit.host()
    gone = remember(host, "Forget me fact.")
    old = remember(host, "Superseded plan fact.")
    new = remember(host, "Replacement plan fact.")
    assert edit(host, op="forget", id=gone).text == f"Memory {gone} deleted in bank {local_kit.project_bank}."
    assert local_kit.store.get_unit(local_kit.project_bank, gone) is None
    again = edit(host, op="forget", id=gone)
    assert again.details["status"] == "not_found" and "not_found" in again.text
    inv = edit(host, op="invalidate", id=old, replacement_id=new)
    assert inv.text == f"Memory {old} invalidated in bank {local_kit.project_bank}."
    plans = host.call_tool("hindsight_recall", {"query": "plan fact"}).text
    assert "Replacement plan fact." in plans and "Superseded plan fact." not in plans
    assert local_kit.store.get_unit(local_kit.project_bank, old) is not None  # kept, only invalid


def test_lookup_covers_the_user_bank_and_respects_scope(local_kit: Kit) -> None:
    host = local_kit.host()
    user_id = remember(host, "User bank preference fact.", bank="user")
    assert edit(host, op="forget", id=user_id).text == f"Memory {user_id} deleted in bank {local_kit.user_bank}."
    foreign = local_kit.store.retain_batch(
        local_kit.project_bank,
        [{"content": "Another repo's fact.", "context": "t", "document_id": "foreign", "tags": ["repo:elsewhere"]}],
        operation_id=str(uuid.uuid4()),
    )
    (foreign_id,) = foreign.unit_ids
    refused = edit(host, op="forget", id=foreign_id)
    assert refused.text == f"Memory {foreign_id} not_editable in bank {local_kit.project_bank}."
    assert refused.details["status"] == "not_editable"
    assert local_kit.store.get_unit(local_kit.project_bank, foreign_id) is not None
    missing = edit(host, op="update", id="ffffffffffffffff", content="x")
    assert missing.text == f"Memory ffffffffffffffff not_found in bank {local_kit.project_bank}."


def test_memory_edit_is_gated_like_retain(local_kit: Kit) -> None:
    host = local_kit.host(answers=["Deny", "Allow"])
    uid = remember(host, "Gated edit fact.")
    host.command("/hindsight:mode read-only")
    denied = edit(host, op="forget", id=uid)
    assert denied.text == "Error: retain refused: session is read-only"
    assert edit(host, op="forget", id=uid).details["status"] == "deleted"
    assert [q[1] for q in ui_of(host).questions] == [["Allow", "Deny"], ["Allow", "Deny"]]
    host.command("/hindsight:mode ignored")
    assert edit(host, op="forget", id="0123456789abcdef").text == "Error: retain disabled for this session"


def test_memory_edit_on_hindsight_is_a_clear_error(hs_kit: Kit) -> None:
    host = hs_kit.host()
    assert "memory_edit" in host.tools()  # registered for every backend (ADR 020)
    result = host.call_tool("memory_edit", {"op": "forget", "id": "abc"})
    assert result.is_error and result.details["error"]["kind"] == "unsupported"
    assert result.text == "Error: memory_edit is only available with the local backend"
