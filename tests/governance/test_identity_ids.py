"""docs/identity-and-scope.md#repo-root–docs/identity-and-scope.md#tags and docs/identity-and-scope.md#missions: slugs,
bank ids, session/document ids, tags, identity, missions."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hindsight_hooks.config_model import BankConfig, Config
from hindsight_hooks.governance import identity as ident
from hindsight_hooks.hooks.context import HostContext

from .test_identity_root import make_repo


def h(s: str, n: int) -> str:
    return hashlib.sha256(s.encode("utf-8")).hexdigest()[:n]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("My Repo", "my-repo"),
        ("--weird__NAME!!", "weird-name"),
        ("", "repo"),
        ("!!!", "repo"),
        ("ÄÖÜ", "repo"),
        ("a" * 60, "a" * 48),
        ("a" * 47 + "-b", "a" * 47 + "-"),  # cut after the trim (docs/identity-and-scope.md#repo-root)
    ],
)
def test_slug(raw: str, expected: str) -> None:
    assert ident.slug(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("Pi", "pi"), ("Claude Code", "claude-code"), ("", "agent"), ("my.host_1-x", "my.host_1-x"), ("a/b:c", "a-b-c")],
)
def test_host_slug(raw: str, expected: str) -> None:
    assert ident.host_slug(raw) == expected
    assert ident.host_slug(expected) == expected  # idempotent


def test_hash_n() -> None:
    assert ident.hash_n("abc", 12) == h("abc", 12)
    assert len(ident.hash_n("x", 16)) == 16


def test_project_bank_ids(tmp_path: Path) -> None:
    root = tmp_path / "Root Repo"
    cwd = root / "sub"
    assert ident.project_bank_id(BankConfig(), root, cwd) == f"hh-project-root-repo-{h(str(root), 12)}"
    assert ident.project_bank_id(BankConfig(derive="cwd"), root, cwd) == f"hh-project-sub-{h(str(cwd), 12)}"
    assert ident.project_bank_id(BankConfig(bank_id="mine", derive="manual"), root, cwd) == "mine"
    assert ident.project_bank_id(BankConfig(bank_id="mine"), root, cwd) == "mine"
    assert ident.project_bank_id(BankConfig(enabled=False), root, cwd) is None
    # manual without an id never widens scope: the repo derivation is kept
    assert ident.project_bank_id(BankConfig(derive="manual"), root, cwd) == ident.project_bank_id(
        BankConfig(), root, cwd
    )


def test_user_bank_is_never_derived() -> None:
    cfg = Config()
    assert ident.user_bank_id(cfg) is None
    cfg.banks.user = BankConfig(enabled=True, bank_id="")
    assert ident.user_bank_id(cfg) is None
    cfg.banks.user = BankConfig(enabled=False, bank_id="u")
    assert ident.user_bank_id(cfg) is None
    cfg.banks.user = BankConfig(enabled=True, bank_id="u")
    assert ident.user_bank_id(cfg) == "u"


def test_session_id_from_file_is_stable_and_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "s.jsonl"
    sid = ident.session_id(f, tmp_path)
    assert sid == h(str(f), 16)
    assert ident.session_id(f, tmp_path / "other") == sid  # cwd plays no part
    monkeypatch.chdir(tmp_path)
    assert ident.session_id(Path("s.jsonl"), tmp_path) == sid  # relative → absolute


def test_ephemeral_session_id_is_per_process(tmp_path: Path) -> None:
    a = ident.session_id(None, tmp_path)
    assert a == ident.session_id(None, tmp_path)
    assert len(a) == 16 and all(c in "0123456789abcdef" for c in a)
    assert a == h(f"ephemeral:{os.path.realpath(tmp_path)}:{ident.process_uuid()}", 16)
    assert ident.session_id(None, tmp_path / "x") != a
    code = (
        "import sys; from pathlib import Path; from hindsight_hooks.governance.identity import session_id;"
        "print(session_id(None, Path(sys.argv[1])))"
    )
    other = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=60, check=True
    ).stdout.strip()
    assert len(other) == 16 and other != a


def test_ephemeral_never_equals_a_file_named_like_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    cwd = str(os.path.realpath(tmp_path))
    eph = ident.session_id(None, tmp_path)
    assert ident.session_id(Path(f"ephemeral:{cwd}"), tmp_path) != eph
    assert ident.session_id(Path(f"ephemeral:{cwd}:{ident.process_uuid()}"), tmp_path) != eph


def test_document_ids() -> None:
    assert ident.live_document_id("abc") == "hh-session:abc"
    body = '{"bank_id":"b","content":"héllo","context":"ctx"}'
    assert ident.explicit_document_id("sid", "b", "héllo", "ctx") == f"hh-explicit:sid:{h(body, 16)}"
    no_ctx = '{"bank_id":"b","content":"x"}'
    assert ident.explicit_document_id("sid", "b", "x", None) == f"hh-explicit:sid:{h(no_ctx, 16)}"
    assert ident.explicit_document_id("sid", "b", "x", "") != ident.explicit_document_id("sid", "b", "x", None)
    assert ident.explicit_document_id("sid", "b2", "x", None) != ident.explicit_document_id("sid", "b", "x", None)
    expected = json.dumps({"a": 1, "c": "ü"}, separators=(",", ":"), ensure_ascii=False)
    assert ident.canonical_json({"a": 1, "b": None, "c": "ü"}) == expected


def test_import_and_chat_ids(tmp_path: Path) -> None:
    f = tmp_path / "sess.jsonl"
    assert ident.import_session_id("abc-1.2_x", f) == "abc-1.2_x"
    assert ident.import_session_id("a b/c:d", f) == "a-b-c-d"
    assert ident.import_session_id("", f) == h(str(f), 16)
    assert ident.import_session_id(None, f) == h(str(f), 16)
    assert ident.import_document_id("isid", "leaf1") == "hh-import:isid:leaf:leaf1"
    chunk = ident.CuratedChunk(turns=12, max_bytes=80000, index=2, start=30, end=44)
    assert (
        ident.import_document_id("isid", "leaf1", chunk)
        == "hh-import:isid:leaf:leaf1:turns-12-bytes-80000:curated-turns-v1:chunk-2-30-44"
    )
    assert ident.chat_document_id(f) == f"hh-chat:{h(str(f), 16)}"


def test_base_tags_order_and_dedupe() -> None:
    tags = ident.base_tags("Claude Code", "repo-abc", "s1", ["team:x", "source:claude-code", "team:x", "y"])
    assert tags == ["source:claude-code", "harness:claude-code", "repo:repo-abc", "session:s1", "team:x", "y"]
    assert ident.base_tags("", "k", "s", None) == ["source:agent", "harness:agent", "repo:k", "session:s"]


def test_resolve_identity(tmp_path: Path) -> None:
    ident.clear_repo_root_cache()
    repo = make_repo(tmp_path / "proj")
    cfg = Config()
    cfg.banks.user = BankConfig(enabled=True, bank_id="me")
    sf = tmp_path / "sessions" / "one.jsonl"
    ctx = HostContext(cwd=repo / "src" / "pkg", session_file=sf, host_name="Pi Agent")
    idt = ident.resolve_identity(ctx, cfg)
    assert idt.cwd == repo / "src" / "pkg"
    assert idt.root == repo
    assert idt.repo_key == ident.repo_key(repo)
    assert idt.host == "pi-agent"
    assert idt.sid == h(str(sf), 16)
    assert idt.project_bank_id == f"hh-project-proj-{h(str(repo), 12)}"
    assert idt.user_bank_id == "me"
    assert idt.session_file == sf
    assert idt.base_tags(["t"])[:2] == ["source:pi-agent", "harness:pi-agent"]
    values = idt.observation_values("bank-x")
    assert values == {
        "repoKey": idt.repo_key,
        "sessionId": idt.sid,
        "cwdHash": h(str(idt.cwd), 12),
        "projectBankId": idt.project_bank_id,
        "bankId": "bank-x",
        "hostName": "pi-agent",
    }


def test_bank_spec_missions() -> None:
    cfg = Config()
    spec = ident.bank_spec(cfg, "project")
    assert spec.retain_mission.startswith("Extract durable project memory from raw coding sessions")
    assert spec.reflect_mission.startswith("Help a coding agent recall project-specific architecture")
    assert spec.observations_mission.startswith("Identify durable project patterns")
    assert spec.enable_observations is True and spec.retain_extraction_mode == "concise"
    user = ident.bank_spec(cfg, "user")
    assert user.retain_mission.endswith("unless they generalize across projects.")
    assert user.reflect_mission.endswith("stable assistant behavior guidance.")
    cfg.banks.project = BankConfig(
        retain_mission="Mine.", retain_extraction_mode="verbatim", retain_structured_chunk_size=500
    )
    cfg.observations.enabled = False
    spec = ident.bank_spec(cfg, "project")
    assert spec.retain_mission == "Mine."
    assert spec.reflect_mission == ident.BUILTIN_MISSIONS["project"]["reflect"]
    assert spec.retain_extraction_mode == "verbatim"
    assert spec.retain_structured_chunk_size == 500
    assert spec.enable_observations is False
