"""The migration against a fake server: a real embedded store, the network faked with
``httpx.MockTransport`` (documents in a dict, answering the endpoints the migration uses).

What is pinned here (ADR 150-152): whole documents under their own ids (a second run replaces,
never adds), resuming from the progress file, sessions that grew after a run sent again,
retired memories left behind, secrets redacted on the way out, the check afterwards sending a
lost document again, one bank at a time, dry runs sending nothing.
"""

from __future__ import annotations

import json
import re
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx
import pytest

from hindsight_hooks.backends.base import BackendError, BankSpec
from hindsight_hooks.backends.hindsight import HindsightBackend
from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.backends.local_bank_io import import_records
from hindsight_hooks.backends.local_documents import EmbeddedSource
from hindsight_hooks.migrate.progress import Progress, run_key
from hindsight_hooks.migrate.run import Migration, Options
from hindsight_hooks.plugin.control.memories_jsonl import Parsed

URL = "http://hindsight.test"
AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"


@dataclass
class FakeServer:
    """Banks of documents, each item one memory (like a ``verbatim`` bank); ``replace`` drops
    what a document held before the request, items of one request add up."""

    banks: dict[str, dict[str, list[dict[str, Any]]]] = field(default_factory=dict)
    retains: list[int] = field(default_factory=list)
    fail_retain_at: set[int] = field(default_factory=set)
    created: list[str] = field(default_factory=list)
    lists: list[str | None] = field(default_factory=list)
    updated: dict[str, str] = field(default_factory=dict)

    def handle(self, request: httpx.Request) -> httpx.Response:
        path = unquote(request.url.path)
        m = re.match(r"^/v1/default/banks/([^/]+)(/.*)?$", path)
        assert m, path
        bank, rest = m.group(1), m.group(2) or ""
        if request.method == "GET" and rest == "/config":
            return httpx.Response(200, json={"bank_id": bank}) if bank in self.banks else httpx.Response(404)
        if request.method == "PUT" and rest == "":
            self.banks.setdefault(bank, {})
            self.created.append(bank)
            return httpx.Response(200, json={"bank_id": bank})
        if request.method == "POST" and rest == "/memories":
            self.retains.append(len(self.retains) + 1)
            if len(self.retains) in self.fail_retain_at:
                return httpx.Response(503, json={"detail": "busy"})
            body = json.loads(request.content)
            assert body["async"] is False
            docs = self.banks.setdefault(bank, {})
            seen: set[str] = set()
            for item in body["items"]:
                assert item["update_mode"] == "replace"
                if item["document_id"] not in seen:
                    seen.add(item["document_id"])
                    docs[item["document_id"]] = []
                docs[item["document_id"]].append(item)
            return httpx.Response(200, json={"success": True, "items_count": len(body["items"])})
        if request.method == "GET" and rest == "/memories/list":
            limit, offset = int(request.url.params["limit"]), int(request.url.params["offset"])
            only = request.url.params.get("document_id")
            self.lists.append(only)
            items = [
                {"id": f"m-{n}", "document_id": i["document_id"], "text": i["content"], "metadata": i["metadata"]}
                for n, i in enumerate(i for doc in self.banks.get(bank, {}).values() for i in doc)
                if only is None or i["document_id"] == only
            ]
            return httpx.Response(200, json={"items": items[offset : offset + limit], "total": len(items)})
        if request.method == "GET" and rest.startswith("/documents/"):
            doc = rest.removeprefix("/documents/")
            if doc not in self.banks.get(bank, {}):
                return httpx.Response(404, json={"detail": "nope"})
            return httpx.Response(200, json={"id": doc, "updated_at": self.updated.get(doc)})
        raise AssertionError(f"unexpected {request.method} {path}")


def seed(path: Path, bank: str, texts: list[str], retired: int = 0, per_doc: int = 5, first_doc: int = 0) -> list[str]:
    """``texts`` as memories of ``bank``, ``per_doc`` to a document (``doc-<n>``), the first
    ``retired`` of them retired; returns their ids."""
    parsed = Parsed()
    ids = []
    for i, text in enumerate(texts):
        doc = f"doc-{first_doc + i // per_doc}"
        if i % per_doc == 0:
            parsed.documents.append(
                {
                    "document_id": doc,
                    "text": "",
                    "tags": ["repo:r"],
                    "metadata": {},
                    "created_at": f"2026-01-01T00:00:{first_doc + i // per_doc:02d}.000Z",
                }
            )
        ids.append(f"{bank}-u{first_doc:02d}{i:03d}")
        parsed.memories.append(
            {
                "id": ids[-1],
                "document_id": doc,
                "seq": i % per_doc,
                "text": text,
                "tags": ["repo:r", "session:s1"],
                "metadata": {"session_id": "s1", "turn": 3},
                "valid_until": "2026-02-01T00:00:00Z" if i < retired else None,
            }
        )
    backend = LocalBackend(path)
    try:
        import_records(backend, bank, parsed.documents, parsed.memories, lambda _record: False)
    finally:
        backend.close()
    return ids


@pytest.fixture
def server() -> FakeServer:
    return FakeServer()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LocalBackend]:
    backend = LocalBackend(tmp_path / "memory.db")
    yield backend
    backend.close()


def migration(tmp_path: Path, store: LocalBackend, server: FakeServer, **opts: Any) -> Migration:
    target = HindsightBackend(URL, transport=httpx.MockTransport(server.handle), retry_base_ms=0, retry_jitter_ms=0)
    progress = Progress.load(tmp_path / "proj" / ".hindsight" / "migrate-progress.json", run_key(store.path, URL))
    opts.setdefault("settle_min_s", 0.2)
    return Migration(EmbeddedSource(store), target, progress, lambda b: BankSpec(), Options(**opts))


def memories_on(server: FakeServer, bank: str) -> dict[str, list[str]]:
    """Each server document's memory texts, in order."""
    return {doc: [i["content"] for i in items] for doc, items in server.banks[bank].items()}


def count(server: FakeServer, bank: str) -> int:
    return sum(len(texts) for texts in memories_on(server, bank).values())


def test_every_current_memory_lands_once_in_its_own_document(
    tmp_path: Path, store: LocalBackend, server: FakeServer
) -> None:
    ids = seed(store.path, "proj", [f"fact {i}" for i in range(25)], retired=3)
    report = migration(tmp_path, store, server, batch_size=10).run(URL)
    assert report.complete
    (bank,) = report.banks
    assert (bank.memories, bank.documents, bank.retired_left_behind, bank.sent) == (22, 5, 3, 22)
    assert (bank.documents_on_server, bank.missing_documents, bank.memories_found, bank.server_memories) == (
        5,
        0,
        22,
        22,
    )
    assert memories_on(server, "proj") == {
        "doc-0": ["fact 3", "fact 4"],  # in order, the retired ones left out
        **{f"doc-{n}": [f"fact {i}" for i in range(5 * n, 5 * n + 5)] for n in range(1, 5)},
    }
    assert len(server.retains) == 2  # whole documents until a request holds 10 memories: 2+5+5, then 5+5
    item = server.banks["proj"]["doc-1"][0]
    assert item["tags"] == ["repo:r", "session:s1"]
    assert item["metadata"] == {"session_id": "s1", "turn": "3"}
    assert item["timestamp"] is not None and len(ids) == 25
    assert server.created == ["proj"]


def test_a_second_run_sends_nothing_and_a_restart_replaces_without_copies(
    tmp_path: Path, store: LocalBackend, server: FakeServer
) -> None:
    seed(store.path, "proj", [f"fact {i}" for i in range(12)])
    migration(tmp_path, store, server, batch_size=5).run(URL)
    before = memories_on(server, "proj")
    again = migration(tmp_path, store, server, batch_size=5).run(URL)
    assert again.banks[0].to_send == 0 and again.banks[0].sent == 0 and again.complete
    restarted = migration(tmp_path, store, server, batch_size=5, restart=True).run(URL)
    assert restarted.banks[0].sent == 12
    assert memories_on(server, "proj") == before  # same documents: replaced, not added


def test_a_session_that_grew_after_the_run_is_sent_again_whole(
    tmp_path: Path, store: LocalBackend, server: FakeServer
) -> None:
    seed(store.path, "proj", [f"fact {i}" for i in range(10)])
    migration(tmp_path, store, server).run(URL)
    for doc, text, mode in (("doc-1", "a later turn", "append"), ("doc-7", "a new session", "replace")):
        item = {"content": text, "document_id": doc, "update_mode": mode, "tags": ["repo:r"]}
        store.retain_batch("proj", [item], operation_id=f"op-{doc}")
    report = migration(tmp_path, store, server).run(URL)
    assert report.banks[0].sent == 7  # doc-1 (5 + 1) and the new doc-7, not doc-0
    texts = [i["content"] for i in server.banks["proj"]["doc-1"]]
    assert texts[-1] == "a later turn" and len(texts) == 6
    assert [i["content"] for i in server.banks["proj"]["doc-7"]] == ["a new session"]


def test_a_run_that_dies_mid_way_continues_from_the_progress_file(
    tmp_path: Path, store: LocalBackend, server: FakeServer
) -> None:
    seed(store.path, "proj", [f"fact {i}" for i in range(30)])
    server.fail_retain_at = {3, 4, 5, 6}  # the third batch fails through every retry
    with pytest.raises(BackendError):
        migration(tmp_path, store, server, batch_size=10).run(URL)
    path = tmp_path / "proj" / ".hindsight" / "migrate-progress.json"
    (entry,) = json.loads(path.read_text())["runs"].values()
    assert entry["banks"]["proj"]["sent"] == 20
    assert entry["banks"]["proj"]["in_flight"] == "doc-5"  # the batch that never got an answer
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    resumed = migration(tmp_path, store, server, batch_size=10).run(URL)
    assert resumed.complete and resumed.banks[0].to_send == 10 and resumed.banks[0].sent == 10
    assert count(server, "proj") == 30


def test_a_transient_failure_is_retried_within_the_run(tmp_path: Path, store: LocalBackend, server: FakeServer) -> None:
    seed(store.path, "proj", [f"fact {i}" for i in range(10)])
    server.fail_retain_at = {1}
    report = migration(tmp_path, store, server, batch_size=10).run(URL)
    assert report.complete and count(server, "proj") == 10


def test_the_check_sends_a_document_the_server_lost_again(
    tmp_path: Path, store: LocalBackend, server: FakeServer
) -> None:
    seed(store.path, "proj", [f"fact {i}" for i in range(10)])
    migration(tmp_path, store, server).run(URL)
    del server.banks["proj"]["doc-1"]
    report = migration(tmp_path, store, server).run(URL)
    assert report.complete and report.banks[0].repaired == 5 and report.banks[0].missing_documents == 0
    assert [i["content"] for i in server.banks["proj"]["doc-1"]] == [f"fact {i}" for i in range(5, 10)]


def test_secrets_are_redacted_on_the_way_out(tmp_path: Path, store: LocalBackend, server: FakeServer) -> None:
    seed(store.path, "proj", [f"the deploy key is {AWS_KEY}"])
    migration(tmp_path, store, server).run(URL)
    assert AWS_KEY not in json.dumps(server.banks["proj"])
    assert "the deploy key is" in json.dumps(server.banks["proj"])


def test_only_the_named_banks_move_and_an_unknown_bank_is_an_error(
    tmp_path: Path, store: LocalBackend, server: FakeServer
) -> None:
    seed(store.path, "a", ["fact a"])
    seed(store.path, "b", ["fact b"])
    report = migration(tmp_path, store, server, banks=["b"]).run(URL)
    assert [b.bank_id for b in report.banks] == ["b"] and set(server.banks) == {"b"}
    wrong = migration(tmp_path, store, server, banks=["nope"]).run(URL)
    assert wrong.error == "no such bank in the embedded store: nope" and not wrong.complete


def test_a_dry_run_counts_and_sends_nothing(tmp_path: Path, store: LocalBackend, server: FakeServer) -> None:
    seed(store.path, "a", ["one", "two", "three"], retired=1)
    report = migration(tmp_path, store, server, dry_run=True).run(URL)
    assert [(b.bank_id, b.memories, b.retired_left_behind, b.to_send) for b in report.banks] == [("a", 2, 1, 2)]
    assert server.banks == {} and server.retains == []
    assert not (tmp_path / "proj" / ".hindsight" / "migrate-progress.json").exists()


def test_an_unreadable_progress_file_is_moved_aside_and_the_run_starts_over(
    tmp_path: Path, store: LocalBackend, server: FakeServer
) -> None:
    seed(store.path, "a", ["one", "two"])
    state = tmp_path / "proj" / ".hindsight"
    state.mkdir(parents=True)
    (state / "migrate-progress.json").write_text("{not json")
    run = migration(tmp_path, store, server)
    assert run.progress.moved_aside is not None and run.progress.moved_aside.read_text() == "{not json"
    assert run.run(URL).banks[0].sent == 2


def test_a_bank_too_large_for_one_list_is_checked_document_by_document(
    tmp_path: Path, store: LocalBackend, server: FakeServer
) -> None:
    seed(store.path, "proj", [f"fact {i}" for i in range(10)])
    report = migration(tmp_path, store, server, single_list_max=5).run(URL)
    assert report.complete and report.banks[0].memories_found == 10 and report.banks[0].server_memories == 10
    assert server.lists == [None, "doc-0", "doc-1"]  # the total first, then each document
    server.banks["proj"]["doc-1"].append(dict(server.banks["proj"]["doc-1"][0]))  # a copy on the server
    again = migration(tmp_path, store, server).run(URL)
    assert again.banks[0].memories_found == 10 and again.banks[0].server_memories == 11
    assert again.banks[0].memories_repeated == 1 and report.banks[0].memories_repeated == 0


def test_a_bank_with_only_retired_memories_is_counted_and_not_sent(
    tmp_path: Path, store: LocalBackend, server: FakeServer
) -> None:
    seed(store.path, "old", ["was true", "also was"], retired=2)
    report = migration(tmp_path, store, server).run(URL)
    (bank,) = report.banks
    assert report.complete and (bank.memories, bank.retired_left_behind, bank.sent) == (0, 2, 0)
    assert server.banks == {} and server.lists == []  # no bank made, nothing asked


def _in_flight(tmp_path: Path, store: LocalBackend, server: FakeServer, sent_at: float) -> Migration:
    """A run whose progress says a request for doc-0 left at ``sent_at`` and was never answered."""
    run = migration(tmp_path, store, server, settle_min_s=1.5)
    state = run.progress.bank("proj")
    state.in_flight, state.in_flight_at, state.pass_started = "doc-0", sent_at, "2026-01-01T00:00:00.000Z"
    run.progress.save()
    return run


def test_a_resumed_run_waits_for_the_killed_request_only_until_it_has_landed(
    tmp_path: Path, store: LocalBackend, server: FakeServer
) -> None:
    seed(store.path, "proj", ["one", "two"])
    server.banks["proj"] = {"doc-0": []}
    server.updated["doc-0"] = "2099-01-01T00:00:00+00:00"  # written after the request left: it landed
    began = time.monotonic()
    assert _in_flight(tmp_path, store, server, time.time()).run(URL).complete
    assert time.monotonic() - began < 1.0

    server.updated["doc-0"] = "2020-01-01T00:00:00+00:00"  # older than the request: still on its way
    began = time.monotonic()
    assert _in_flight(tmp_path, store, server, time.time()).run(URL).complete
    assert time.monotonic() - began >= 1.5  # waited to the bound before sending it again
