"""What a forget keeps out, by time, through the ``Host`` (ADR 173 amending ADR 132).

A tombstone forgets what was said or queued at or before it: an old transcript replayed after
the forget and a job queued before it stay out; the session going on, and a deliberate retain
made after it, are stored. A retain that a tombstone does keep out says so instead of "stored".
Everything is real: the embedded store's file, the queue files, the hooks and the tools.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from hindsight_hooks.hooks import assistant_message, user_message

from .cmdkit import Kit, local_kit_fixture, store_locked  # noqa: F401  (fixtures)

OLD_MS = int(datetime(2024, 3, 1, 9, 30, tzinfo=UTC).timestamp() * 1000)


def test_old_transcript_replayed_after_the_forget_stays_out_and_the_session_goes_on(local_kit: Kit) -> None:
    host = local_kit.host(answers=["Confirm"])
    old = [
        user_message("Where do the narwhal backups go?", timestamp=OLD_MS),
        assistant_message("The narwhal backups go to bucket twelve.", timestamp=OLD_MS + 1000),
    ]
    host.agent_end(old)
    host.command("/hindsight:flush")
    assert any("bucket twelve" in t for t in local_kit.texts(local_kit.project_bank))
    done = host.command("/hindsight:memories forget session current --json")
    assert done.data is not None and done.data["forgotten"] >= 1, done.text
    assert local_kit.texts(local_kit.project_bank) == []

    # The cursor is lost: the whole transcript is retained again, with its messages' own times.
    (local_kit.state / "retain-cursors.json").unlink()
    host.agent_end(old)
    host.command("/hindsight:flush")
    assert local_kit.texts(local_kit.project_bank) == []
    assert local_kit.jobs() == []

    # The session goes on after the forget: what is said now is new and is kept.
    host.agent_end([*old, user_message("And the walrus logs?"), assistant_message("The walrus logs go to bucket 3.")])
    host.command("/hindsight:flush")
    texts = " ".join(local_kit.texts(local_kit.project_bank))
    assert "bucket 3" in texts and "bucket twelve" not in texts


def test_a_job_queued_before_the_forget_stays_out_when_it_comes_back(local_kit: Kit) -> None:
    local_kit.configure(sections={"retain": {"flush_timeout_ms": 500}})
    host = local_kit.host(answers=["Confirm"])
    assert host.command("/hindsight").data is not None  # store opened and banks ensured first
    with store_locked(local_kit.db):
        queued = host.call_tool(
            "hindsight_retain", {"items": [{"content": "The yak shaving rota is on the wiki."}], "async": False}
        )
    assert queued.text.startswith("1 memory queued.") and queued.details["queued"] is True, queued.text
    (line,) = local_kit.queue_file.read_text(encoding="utf-8").splitlines()
    done = host.command("/hindsight:memories forget session current --json")
    assert done.data is not None and done.data["queued_items_removed"] == 1, done.text
    assert local_kit.jobs() == []

    # The job comes back (a copy of the state folder restored from before the forget).
    with local_kit.queue_file.open("a", encoding="utf-8") as fh:
        fh.write(line + "\n")
    flushed = host.command("/hindsight:flush")
    assert flushed.data is not None and flushed.data["sent"] == 1, flushed.text  # delivered as empty
    assert local_kit.texts(local_kit.project_bank) == [] and local_kit.jobs() == []

    # A retain made after the forget, in the same session, is stored.
    stored = host.call_tool("hindsight_retain", {"items": [{"content": "The yak rota moved to Fridays."}]})
    assert not stored.is_error and stored.text == "1 memory stored.", stored.text
    assert local_kit.texts(local_kit.project_bank) == ["The yak rota moved to Fridays."]


def test_a_retain_a_tombstone_keeps_out_says_not_stored(local_kit: Kit) -> None:
    host = local_kit.host(answers=["Confirm"])
    first = host.call_tool("hindsight_retain", {"items": [{"content": "The ibis service pages team Heron."}]})
    assert not first.is_error, first.text
    assert host.command("/hindsight:memories forget session current").level == "info"
    stones = json.loads((local_kit.state / "tombstones.json").read_text(encoding="utf-8"))["tombstones"]
    day = stones[0]["created_at"][:10]

    # Dated (by the caller) before the forget: what the forget covers, so it stays out, and says so.
    dated = host.call_tool(
        "hindsight_retain",
        {
            "items": [{"content": "The ibis service paged team Heron in 2023."}, {"content": "Ibis runs on ARM."}],
            "timestamp": "2023-06-01T12:00:00+02:00",
        },
    )
    assert dated.is_error and dated.text.startswith("Error: 2 memories not stored: it matches memories you forgot")
    assert f" on {day} " in dated.text and "without an earlier timestamp" in dated.text
    assert dated.details["stored"] == 0 and dated.details["forgotten"] == 2 and dated.details["ids"] == []
    assert dated.details["forgotten_at"] == stones[0]["created_at"]
    assert local_kit.texts(local_kit.project_bank) == []

    # The same without a date of its own is said now, after the forget: stored.
    now = host.call_tool("hindsight_retain", {"items": [{"content": "Ibis runs on ARM."}]})
    assert not now.is_error and now.text == "1 memory stored." and len(now.details["ids"]) == 1, now.text
    assert local_kit.texts(local_kit.project_bank) == ["Ibis runs on ARM."]
