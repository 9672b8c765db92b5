"""Importing Codex sessions (issue 10 item 7, ADR-110), on the real embedded store.

Rollouts are real files written line by line in the shape Codex CLI 0.169 writes them
(``tests/hosts/codex_lines.py``, read off the real program; a real ``codex exec`` run here also
showed that the ``session_id`` and ``cwd`` its hooks get are the rollout's ``session_meta``
fields), under a tmp ``$CODEX_HOME/sessions/YYYY/MM/DD/``. The hooks are the real
``hindsight-hooks hook codex`` child processes.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from ..chat.conftest import SCRIPT
from ..hosts.codex_lines import CodexRollout
from ..hosts.hookproc import HookRunner
from ..plugin.hostkit import Project, wait_until
from .host_sessions_kit import BLOCK, cli_env, delivered, hooks, hooks_sid, import_cmd, repo, texts

__all__ = ["hooks", "repo"]  # fixtures

SESSION = "01a20ed7-9f14-7760-87a1-0e48a75e48a6"


def rollout_in(codex_home: Path, cwd: Path, session_id: str = SESSION) -> CodexRollout:
    """A rollout where Codex puts it: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``."""
    folder = codex_home / "sessions" / "2026" / "11" / "24"
    return CodexRollout(folder / f"rollout-2026-11-24T18-35-41-{session_id}.jsonl", cwd, session_id)


def test_a_codex_rollout_imports_into_the_project_bank_once(repo: Project, tmp_path: Path) -> None:
    r = rollout_in(tmp_path / "home" / ".codex", repo.root)
    r.harness("<environment_context>\n  <cwd>/somewhere</cwd>\n</environment_context>")
    r.exchange("We decided to use Postgres 16 for the cache", "Noted: Postgres 16 for the cache.")
    r.user("Which queue do we use?")
    r.hook_context(BLOCK)
    r.reasoning("Thinking about queues")
    call = r.call("shell", {"command": ["ls"]})
    r.output(call, "README.md")
    r.assistant("Redis streams, as before.")
    r.turn_done("Redis streams, as before.")
    r.exchange("Rolled back prompt yy-rolled", "Rolled back reply yy-rolled")
    r.rollback(1)
    r.compacted("Summary: xx-summary of the queue talk")
    r.exchange("And the deploy target?", "Fly.io in two regions.")

    preview = import_cmd(repo, f"import-file {r.path} --dry-run --json")
    assert preview.level == "info", preview.text
    assert not (repo.state / "retain-cursors.json").exists() and texts(repo) == []
    result = import_cmd(repo, f"import-file {r.path} --yes")

    assert result.data["counts"] == {"completed": 1, "queued": 0, "skipped": 0, "failed": 0}, result.text
    stored = "\n".join(texts(repo))
    for said in ("Postgres 16 for the cache", "Redis streams", "Fly.io in two regions", "deploy target"):
        assert said in stored
    for never in ("hindsight-memory", "recalled line", "environment_context", "yy-rolled", "xx-summary"):
        assert never not in stored
    [(_bank, doc_id, text)] = repo.documents()
    sid = hooks_sid(repo.root, SESSION)
    assert doc_id.startswith(f"hh-import:{sid}:leaf:")
    body = json.loads(text)
    assert (body["host"], body["host_session_id"]) == ("codex", SESSION)

    before = sorted(texts(repo))
    again = import_cmd(repo, f"import-file {r.path} --yes")
    assert again.text.startswith("nothing to import") and "already taken care of" in again.text
    assert sorted(texts(repo)) == before and repo.queue_jobs() == []


def test_codex_hooks_do_not_retain_again_what_an_import_stored(
    repo: Project, hooks: HookRunner, tmp_path: Path
) -> None:
    r = rollout_in(tmp_path / "home" / ".codex", repo.root)
    r.exchange("We decided to use Postgres 16 for the cache", "Noted: Postgres 16 for the cache.")
    r.exchange("Which queue do we use?", "Redis streams, as before.", block=BLOCK)
    assert import_cmd(repo, f"import-file {r.path} --yes").level == "info"
    before = len(texts(repo))

    r.exchange("Also: the cache TTL is 30 minutes", "Noted: TTL 30 minutes.")  # codex exec resume
    done = hooks.run("Stop", r.event("Stop", last_assistant_message="Noted: TTL 30 minutes."), host="codex")
    assert done.returncode == 0
    assert wait_until(lambda: delivered(repo, "TTL", 2), 60)
    assert len(texts(repo)) == before + 2
    assert repo.unit_count("Postgres 16") == 2 and repo.unit_count("Redis streams") == 1


def test_import_project_sessions_finds_this_projects_rollouts_under_codex_home(repo: Project, tmp_path: Path) -> None:
    home = tmp_path / "home"
    codex_home = tmp_path / "codex-home"  # $CODEX_HOME, not ~/.codex
    rollout_in(codex_home, repo.root).exchange("We decided to use Postgres 16 for the cache", "Noted.")
    other = tmp_path / "billing"
    other.mkdir()
    foreign = CodexRollout(codex_home / "sessions" / "2026" / "11" / "25" / "rollout-b.jsonl", other, "b")
    foreign.exchange("billing uses MySQL zz-foreign", "ok")
    (codex_home / "sessions" / "2026" / "11" / "25" / "rollout-torn.jsonl").write_text("{torn\n")

    done = subprocess.run(
        [str(SCRIPT), "import-project-sessions", "--yes", "--json"],
        cwd=repo.root,
        env=cli_env(home, CODEX_HOME=str(codex_home)),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(done.stdout)
    assert data["counts"] == {"completed": 1, "queued": 0, "skipped": 0, "failed": 0}
    assert data["scope"].endswith(f"from 1 Codex session(s) in {codex_home / 'sessions'}")
    assert data["refused"] == []  # other projects' rollouts are not this project's business
    stored = "\n".join(texts(repo))
    assert "Postgres 16" in stored and "zz-foreign" not in stored
