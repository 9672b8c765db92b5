"""Recall and reflect queries are redacted before any backend sees them (issue 9 item 1, ADR-060).

What the model or the user typed may hold a secret; a query is sent to the Hindsight server or
searched in the embedded store, so it goes through the same redaction as retained content. The
proofs are behavioural: a real loopback server records every request body (the automatic
recall, both tools through ``Host.call_tool``, the CLI as a child process), and the embedded
store shows it was searched with the redacted words.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from hindsight_hooks.config_model import RecallConfig
from hindsight_hooks.governance.redact import redact_text
from hindsight_hooks.hooks import Host, RecordingUI
from hindsight_hooks.plugin.recall.recall_query import REDACT_MARGIN_CHARS, ComposedQuery, compose_query

from ..chat.conftest import SCRIPT, clean_env
from ..plugin.hostkit import LOCAL_CONFIG, Project, injected_block, isolated, merged, to_toml, user
from .recording_server import RecordingServer, recording_server

__all__ = ["isolated", "recording_server"]  # fixtures, re-exported for pytest

AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
PASSWORD = "Zq81hunterZ"
PROMPT = f"deploy with {AWS_KEY} and DB_PASSWORD={PASSWORD} to the staging parser"
SECRETS = (AWS_KEY.encode(), PASSWORD.encode())


def _server_config(url: str, **extra: Any) -> dict[str, Any]:
    config: dict[str, Any] = {
        "backend": "hindsight",
        "hindsight": {"base_url": url, "timeout_ms": 10000},
        "banks": {"project": {"bank_id": "hh-redact-bank"}},
        "recall": {"timeout_ms": 5000, "store_last_recall": True},
        "retain": {"enabled": False},
        "notifications": {"startup": False},
    }
    return merged(config, extra)


def _assert_nothing_leaked(server: RecordingServer) -> None:
    blob = server.everything()
    for secret in SECRETS:
        assert secret not in blob, f"{secret!r} reached the server"


def test_automatic_recall_query_reaches_the_server_redacted(
    tmp_path: Path, isolated: Path, recording_server: RecordingServer
) -> None:
    project = Project(tmp_path / "repo", _server_config(recording_server.url))
    ui = RecordingUI()
    with project.host(ui=ui) as host:
        host.context([user(PROMPT, 1)])
    bodies = recording_server.bodies("/memories/recall")
    assert bodies, "the automatic recall reached the server"
    for body in bodies:
        assert "[REDACTED_AWS_KEY]" in body["query"] and "DB_PASSWORD=[REDACTED]" in body["query"]
        assert "staging parser" in body["query"], "the rest of the query is kept"
    _assert_nothing_leaked(recording_server)
    snapshot = (project.state / "last-recall.json").read_text(encoding="utf-8")
    assert AWS_KEY not in snapshot and PASSWORD not in snapshot


def test_recall_and_reflect_tools_send_redacted_queries(
    tmp_path: Path, isolated: Path, recording_server: RecordingServer
) -> None:
    project = Project(tmp_path / "repo", _server_config(recording_server.url))
    with project.host() as host:
        # Tag filters leave the process too: redacted like the tags a retain stores.
        filters = {"tags": [f"key:{AWS_KEY}"], "tag_groups": [{"tags": [AWS_KEY], "match": "any"}]}
        recalled = host.call_tool("hindsight_recall", {"query": PROMPT, **filters})
        reflected = host.call_tool(
            "hindsight_reflect", {"query": PROMPT, "context": f"the key is {AWS_KEY}", "bank": "project", **filters}
        )
    assert not recalled.is_error and not reflected.is_error, (recalled, reflected)
    recall_bodies = recording_server.bodies("/memories/recall")
    reflect_bodies = recording_server.bodies("/reflect")
    assert recall_bodies and reflect_bodies
    assert all("[REDACTED_AWS_KEY]" in b["query"] for b in recall_bodies + reflect_bodies)
    assert all("[REDACTED_AWS_KEY]" in b.get("context", b["query"]) for b in reflect_bodies)
    assert all("[REDACTED_AWS_KEY]" in json.dumps(b["tag_groups"]) for b in recall_bodies + reflect_bodies)
    _assert_nothing_leaked(recording_server)


def test_cli_recall_and_reflect_send_redacted_queries(tmp_path: Path, recording_server: RecordingServer) -> None:
    root = tmp_path / "proj"
    (root / ".hindsight").mkdir(parents=True)
    (root / ".hindsight" / "config.toml").write_text(to_toml(_server_config(recording_server.url)), encoding="utf-8")
    env = clean_env(tmp_path)
    for args in (["recall", *PROMPT.split()], ["reflect", *PROMPT.split(), "--context", f"key {AWS_KEY}"]):
        done = subprocess.run(
            [str(SCRIPT), *args], cwd=root, env=env, capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode == 0, done.stderr
    assert recording_server.bodies("/memories/recall") and recording_server.bodies("/reflect")
    _assert_nothing_leaked(recording_server)


# -- the embedded store: it is searched with the redacted words -------------------------------------------
# A memory retained with redaction on holds ``[REDACTED_AWS_KEY]``. Searching for the raw key
# finds nothing (no shared word); searching with the redacted query shares the placeholder's
# words, so finding the memory proves the store received the redacted query.


def _local_project(tmp_path: Path) -> Project:
    return Project(
        tmp_path / "repo", merged(LOCAL_CONFIG, {"retain": {"enabled": False}, "recall": {"store_last_recall": True}})
    )


def _retain_the_key(host: Host) -> None:
    """Store one memory holding ``AWS_KEY`` through the retain tool (redacted on the way in)."""
    stored = host.call_tool(
        "hindsight_retain",
        {"items": [{"content": f"rotate leaked credential {AWS_KEY} quarterly"}], "async": False},
    )
    assert not stored.is_error, stored


def test_recall_tool_searches_the_embedded_store_with_the_redacted_query(tmp_path: Path, isolated: Path) -> None:
    project = _local_project(tmp_path)
    with project.host() as host:
        _retain_the_key(host)
        assert project.unit_count("[REDACTED_AWS_KEY]") == 1
        found = host.call_tool("hindsight_recall", {"query": AWS_KEY})
        reflected = host.call_tool("hindsight_reflect", {"query": AWS_KEY})
    assert "rotate leaked credential [REDACTED_AWS_KEY] quarterly" in found.text, found.text
    assert "rotate leaked credential" in reflected.text, reflected.text


def test_automatic_recall_searches_the_embedded_store_with_the_redacted_query(tmp_path: Path, isolated: Path) -> None:
    project = _local_project(tmp_path)
    with project.host() as host:
        _retain_the_key(host)
    with project.host("s2") as host:
        block = injected_block(host.context([user(AWS_KEY, 1)]))
    assert block is not None and "rotate leaked credential [REDACTED_AWS_KEY]" in str(block["content"])
    snapshot = json.loads((project.state / "last-recall.json").read_text(encoding="utf-8"))
    assert AWS_KEY not in json.dumps(snapshot)


# -- composing the automatic query: redacted before it is cut --------------------------------------------

PEM_BODY = "\n".join("MIIEpAIBAAKCAQEA" + f"{i:04d}" * 11 for i in range(200))
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----"


def _compose(text: str, *, redact: bool = True, max_query_chars: int = 800) -> ComposedQuery:
    cfg = RecallConfig(max_query_chars=max_query_chars, project_query_preamble="P.")
    return compose_query([user(text, 1)], "project", cfg, repo_key="abc", cwd=Path("/w/repo"), redact=redact)


def test_a_secret_cut_by_truncation_is_redacted_first() -> None:
    # The AWS key straddles the cut: cutting first would leave its tail, which no rule knows.
    text = f"id {AWS_KEY} " + "y" * 790
    composed = _compose(text)
    assert AWS_KEY[-8:] not in composed.query and AWS_KEY[-8:] not in composed.body
    assert composed.query.endswith("y" * 700)
    # A key block far longer than the query: the kept tail is inside it, and none of it survives.
    composed = _compose("the key\n" + PEM + "\nend")
    assert "MIIE" not in composed.query and "0199" not in composed.query
    assert composed.body.endswith("[REDACTED_PRIVATE_KEY]\nend")


def test_a_long_transcript_is_redacted_in_a_window_with_the_same_result() -> None:
    # 300 KB of text before the key block: only the tail and its margin are redacted, and the
    # block that reaches into the tail is still seen whole.
    filler = "\n".join(f"line {i} of an ordinary tool result" for i in range(10000))
    text = filler + "\n" + PEM + "\nend"
    assert len(text) > REDACT_MARGIN_CHARS * 4
    composed = _compose(text)
    assert "MIIE" not in composed.query and composed.body.endswith("[REDACTED_PRIVATE_KEY]\nend")
    whole = redact_text("user: " + text)
    assert whole.endswith(composed.body)


def test_with_redaction_off_the_query_is_the_text() -> None:
    composed = _compose(PROMPT, redact=False)
    assert composed.body == f"user: {PROMPT}"


def test_with_redact_secrets_off_the_tools_send_the_query_as_typed(
    tmp_path: Path, isolated: Path, recording_server: RecordingServer
) -> None:
    """The user's switch covers queries as it covers content: with it off, what is retained is
    the raw transcript anyway, and a search for the exact string is what they asked for."""
    config = _server_config(recording_server.url, retain={"redact_secrets": False})
    with Project(tmp_path / "repo", config).host() as host:
        assert not host.call_tool("hindsight_recall", {"query": PROMPT}).is_error
    assert [b["query"] for b in recording_server.bodies("/memories/recall")] == [PROMPT]


def test_a_secret_in_the_query_preamble_is_redacted_turn_after_turn() -> None:
    """The prefix sections (preamble, date, repo hints) are redacted once and the answer kept
    (ADR 227): every later query carries the redacted form, never the secret."""
    cfg = RecallConfig(project_query_preamble=f"deploy with {AWS_KEY}")
    for turn in range(3):
        composed = compose_query(
            [user(f"question {turn}", turn)], "project", cfg, repo_key="abc", cwd=Path("/w/repo"), redact=True
        )
        assert AWS_KEY not in composed.query and "deploy with [REDACTED" in composed.query
    plain = compose_query([user("q", 9)], "project", cfg, repo_key="abc", cwd=Path("/w/repo"), redact=False)
    assert AWS_KEY in plain.query  # redaction off: the preamble as configured
