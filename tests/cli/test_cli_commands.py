"""Every slash command as a ``hindsight-hooks`` subcommand, the tool subcommands, and ``demo``.

All run the installed console script as real child processes in a tmp project on the
embedded store (``XDG_*``/``HOME`` in ``tmp_path``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from pathlib import Path

import pytest

from hindsight_hooks import cli
from hindsight_hooks.chat.session_file import SessionFile
from hindsight_hooks.cli_commands import cli_name, usage_flags
from hindsight_hooks.hooks import Host, assistant_message, user_message

from .conftest import Cli

ROOT = Path(__file__).resolve().parents[2]
FACT = "The billing service retries webhooks five times with exponential backoff."


def subcommand_names() -> set[str]:
    parser = cli.build_parser()
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return set(actions[0].choices)


def test_every_catalog_command_is_a_subcommand(tmp_path: Path) -> None:
    catalog = Host(tmp_path).commands()
    ours = [name for name in catalog if name == "hindsight" or name.startswith("hindsight:")]
    assert len(ours) >= 13
    names = subcommand_names()
    for name in ours:
        assert cli_name(name) in names, name
    assert {"status", "mode", "session", "queue", "doctor", "chat", "demo", "recall", "retain", "reflect"} <= names
    assert cli_name("hindsight") == "status" and cli_name("hindsight:import-file") == "import-file"
    assert cli_name("other:thing") is None
    assert usage_flags("/hindsight:import [--dry-run|--preview] [--all-leaves]") == [
        "--dry-run",
        "--preview",
        "--all-leaves",
    ]


def test_mode_then_session_in_separate_processes(cli: Cli) -> None:
    set_mode = cli("mode", "read-only")
    assert set_mode.returncode == 0, set_mode.stderr
    assert "mode=read-only" in set_mode.stdout and "retain=off" in set_mode.stdout
    shown = cli("session")
    assert shown.returncode == 0
    assert shown.stdout.startswith("mode=read-only recall=on retain=off")
    data = json.loads(cli("session", "--json").stdout)
    assert data["mode"] == "read-only" and data["retain"] == "off"
    # an explicit --session-file is another session, with its own (default) mode
    other = cli("session", "--session-file", str(cli.cwd / "other.jsonl"))
    assert other.stdout.startswith("mode=normal")


def test_bad_arguments_exit_2_with_the_usage(cli: Cli) -> None:
    bad = cli("mode", "bogus")
    assert bad.returncode == 2
    assert bad.stdout == "" and "usage: hindsight-hooks mode normal|read-only|ignored" in bad.stderr
    unknown_flag = cli("queue", "--nope")
    assert unknown_flag.returncode == 2
    assert "unrecognized arguments" in unknown_flag.stderr


def test_retain_then_recall_then_reflect(cli: Cli) -> None:
    stored = cli("retain", FACT, "--context", "ops notes")
    assert stored.returncode == 0, stored.stderr
    assert stored.stdout.strip() == "1 memory stored."
    found = cli("recall", "webhook", "retries")
    assert found.returncode == 0, found.stderr
    assert found.stdout.startswith("Found 1 relevant memory")
    assert FACT in found.stdout
    as_json = json.loads(cli("recall", "webhook retries", "--json").stdout)
    assert FACT in as_json["text"] and "details" in as_json
    reflected = cli("reflect", "how", "are", "webhooks", "retried?")
    assert reflected.returncode == 0
    assert reflected.stdout.startswith("Based on recalled memories:") and "five times" in reflected.stdout
    nothing = cli("recall", "kubernetes helm chart")
    assert nothing.returncode == 0 and nothing.stdout.strip() == "No relevant memories found."


def test_recall_from_the_command_line_finds_by_meaning(cli: Cli) -> None:
    """Issue 13's own example, as a user types it: each command is a process of its own, the one
    that retains exits before any vector is computed, and the model loads in the background only
    in a process that lives a while (ADR 116). The read tools may wait for it (ADR 164), so
    "database" finds Postgres from the command line, not only in a long-lived host."""
    assert cli("retain", "we run Postgres 16").returncode == 0
    found = cli("recall", "database")
    assert found.returncode == 0, found.stderr
    assert found.stdout.startswith("Found 1 relevant memory") and "we run Postgres 16" in found.stdout
    reflected = cli("reflect", "what database do we use?")
    assert reflected.returncode == 0, reflected.stderr
    assert "we run Postgres 16" in reflected.stdout.split("## Top Facts")[1]


def test_recall_from_the_command_line_shows_a_changed_decision_newest_first(cli: Cli) -> None:
    """The store puts the statement that changed a decision above the older one (ADR 118), even
    when the older one scores higher; the recall tool's merge of the banks keeps that order."""
    assert cli("retain", "Decision: the cache is Redis").returncode == 0
    time.sleep(0.01)  # a later time for the later statement
    assert cli("retain", "Change of plan: the cache is now Memcached, Redis is out").returncode == 0
    found = cli("recall", "which cache do we use now?")
    assert found.returncode == 0, found.stderr
    lines = [line for line in found.stdout.splitlines() if line.startswith("- ")]
    assert [line.split(" (id:")[0] for line in lines] == [
        "- Change of plan: the cache is now Memcached, Redis is out",
        "- Decision: the cache is Redis",
    ]
    # said the same day: each shows its time, so the order is plain to the model too (ADR 180)
    assert all(re.search(r" \(\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC\) c:\d\.\d$", line) for line in lines), lines


def test_retain_on_off_is_the_command_and_memory_flag_stores_the_word(cli: Cli) -> None:
    off = cli("retain", "off")
    assert off.returncode == 0 and off.stdout.strip() == "requested=off effective=off mode=normal"
    assert json.loads(cli("session", "--json").stdout)["retain"] == "off"
    assert cli("retain", "on").stdout.strip() == "requested=on effective=on mode=normal"
    stored = cli("retain", "--memory", "off")
    assert stored.returncode == 0 and stored.stdout.strip() == "1 memory stored."


def test_read_only_retain_needs_yes(cli: Cli) -> None:
    assert cli("mode", "read-only").returncode == 0
    refused = cli("retain", FACT)
    assert refused.returncode == 1
    assert refused.stdout == "" and "read-only" in refused.stderr
    allowed = cli("retain", FACT, "--yes")
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stdout.strip() == "1 memory stored."


def test_queue_json_doctor_status_tag_and_route(cli: Cli) -> None:
    queue = cli("queue", "--json")
    assert queue.returncode == 0, queue.stderr
    report = json.loads(queue.stdout)
    assert report["active"]["valid"] == 0 and report["queue_path"].endswith("retain-queue.jsonl")
    assert json.loads(cli("queue", "--jobs", "--json").stdout)["jobs"] == []

    doctor = cli("doctor")
    assert doctor.returncode in (0,), doctor.stderr
    assert re.search(r"^(ok|warn) +config", doctor.stdout, re.M)
    assert re.search(r"^ok +local store", doctor.stdout, re.M)

    assert cli("tag", "add", "team:payments").stdout.strip() == "tags: team:payments"
    status = json.loads(cli("status", "--json").stdout)
    assert status["backend"] == "local" and status["session"]["tags"] == ["team:payments"]
    route = cli("route", "I", "always", "prefer", "tabs")
    assert route.returncode == 0 and route.stdout.startswith("route: global")


def test_errors_go_to_stderr_with_exit_1(tmp_path: Path, cli: Cli) -> None:
    off = tmp_path / "off"
    (off / ".hindsight").mkdir(parents=True)
    (off / ".hindsight" / "config.toml").write_text('backend = "off"\n', encoding="utf-8")
    result = cli("recall", "anything", "--cwd", str(off))
    assert result.returncode == 1
    assert result.stdout == "" and "disabled" in result.stderr
    broken = tmp_path / "broken"
    (broken / ".hindsight").mkdir(parents=True)
    (broken / ".hindsight" / "config.toml").write_text("backend = [\n", encoding="utf-8")
    status = cli("status", "--cwd", str(broken))
    assert status.returncode == 1 and "config error" in status.stderr


def test_chat_sessions_import_through_the_cli(cli: Cli, project: Path) -> None:
    """A chat session file is a Pi v3 session: the importer takes it as it is."""
    folder = project / ".hindsight" / "sessions"
    session = SessionFile.create(folder / "20250101T000000-abcdef.jsonl", project)
    session.append(user_message("We agreed that invoices are archived after 90 days."))
    session.append(assistant_message("Noted: invoices are archived after 90 days."))
    session.close()
    preview = cli("import-project-sessions", "--dry-run")
    assert preview.returncode == 0, preview.stderr
    assert "documents=1" in preview.stdout and "write=no" in preview.stdout
    cancelled = cli("import-file", str(session.path))  # no terminal, no --yes: nothing is written
    assert cancelled.returncode == 1 and "cancelled" in cancelled.stdout and "--yes" in cancelled.stderr
    done = cli("import-file", str(session.path), "--yes")
    assert done.returncode == 0, done.stderr
    found = cli("recall", "invoices archived")
    assert "90 days" in found.stdout


def test_demo_in_a_given_folder(tmp_path: Path, cli: Cli) -> None:
    folder = tmp_path / "demo-here"
    result = cli("demo", "--dir", str(folder), timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert_demo_output(result.stdout)
    assert (folder / ".hindsight" / "memory.db").exists()


def test_demo_with_no_arguments_from_an_empty_folder(tmp_path: Path) -> None:
    """``hindsight-hooks demo`` from an empty folder makes its own folder under TMPDIR, not there.

    The README's full command (new venv, ``pip install -e .``, demo) runs exactly as written in
    ``test_readme_main_job.py``; this is the quick check of the last step with this venv.
    """
    clean = tmp_path / "clean"
    clean.mkdir()
    result = Cli(tmp_path, clean)("demo", timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert_demo_output(result.stdout)
    assert list(clean.iterdir()) == []  # the demo made its own folder (under TMPDIR), not here
    made = [p for p in tmp_path.glob("hindsight-demo-*") if p.is_dir()]
    assert len(made) == 1 and (made[0] / ".hindsight" / "memory.db").exists()


def assert_demo_output(out: str) -> None:
    assert "<hindsight-memory>" in out and "</hindsight-memory>" in out
    block = out.split("<hindsight-memory>", 1)[1].split("</hindsight-memory>", 1)[0]
    assert "SQLite" in block and "Redis" in block  # the decision from session 1
    assert "pytest" in block  # the preference from session 1


def test_recall_cleanup_and_import_current_as_subcommands(cli: Cli, project: Path) -> None:
    """The transcript commands take their transcript from ``--session-file`` or an explicit path."""
    block = "<hindsight-memory>\n1. recalled fact\n</hindsight-memory>"
    rows = [
        {"type": "session", "version": 3, "id": "s1", "cwd": str(project)},
        {"type": "message", "id": "a", "parentId": None, "message": {"role": "user", "content": "We use SQLite."}},
        {"type": "message", "id": "b", "parentId": "a", "message": {"role": "user", "content": block}},
        {"type": "message", "id": "c", "parentId": "b", "message": {"role": "assistant", "content": "Noted."}},
    ]
    path = project / "old.jsonl"
    original = "\n".join(json.dumps(r) for r in rows) + "\n"
    path.write_text(original, encoding="utf-8")

    none = cli("recall-cleanup")
    assert none.returncode == 0 and none.stdout.strip() == "warning: no session file available"
    scan = json.loads(cli("recall-cleanup", str(path), "--json").stdout)
    assert scan == {"path": str(path.resolve()), "count": 1, "lines": [3], "injected": [3], "quoted": []}
    # the active session (named by --session-file) is never pruned
    refused = cli("recall-cleanup", str(path), "--prune", "--session-file", str(path))
    assert refused.returncode == 0 and "refusing to prune the active session file" in refused.stdout
    assert path.read_text(encoding="utf-8") == original
    pruned = cli("recall-cleanup", str(path), "--prune", "--json")
    assert pruned.returncode == 0, pruned.stderr
    data = json.loads(pruned.stdout)
    assert data["pruned"] == 1 and Path(data["backup"]).read_text(encoding="utf-8") == original
    kept = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in kept] == ["s1", "a", "c"] and kept[2]["parentId"] == "a"

    no_file = cli("import", "--dry-run")
    assert no_file.returncode == 0 and no_file.stdout.startswith("warning:")
    preview = cli("import-current", "--dry-run", "--session-file", str(path))
    assert preview.returncode == 0, preview.stderr
    assert "write=no" in preview.stdout and not (project / ".hindsight" / "import-manifest.json").exists()


@pytest.mark.parametrize("how", ["mode 000", "directory"])
def test_an_unreadable_config_file_is_named_with_its_reason_and_fix(tmp_path: Path, cli: Cli, how: str) -> None:
    """A config file the OS will not read: recall and retain said "memory is disabled for this
    session (enabled=false or backend=off)", a setting the user never made, and retain did not
    say its text was lost; doctor told them to "fix the TOML syntax at the named line". Now each
    names the file and the OS reason, retain says nothing was stored, and doctor's fix matches
    the cause. Root ignores mode bits, so the children run without CAP_DAC_OVERRIDE (as
    tests/queue and tests/plugin/test_commands_queue_files do)."""
    import subprocess

    from ..chat.conftest import SCRIPT
    from ..queue.test_lock import _without_file_permission_override

    project = tmp_path / "unreadable"
    (project / ".hindsight").mkdir(parents=True)
    config = project / ".hindsight" / "config.toml"
    if how == "directory":
        config.mkdir()
        reason, fix = "Is a directory", f"{config} is a directory: move it away"
    else:
        config.write_text('backend = "local"\n', encoding="utf-8")
        os.chmod(config, 0o000)
        reason, fix = "Permission denied", f"chmod u+r {config}"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(SCRIPT), *args, "--cwd", str(project)], env=cli.env, capture_output=True,
                              text=True, timeout=60, check=False,
                              preexec_fn=_without_file_permission_override)  # fmt: skip

    said = f"{config}: cannot read config file: {reason}"
    for command in (("recall", "anything"), ("retain", "a fact worth keeping")):
        result = run(*command)
        assert result.returncode == 1
        assert "enabled=false or backend=off" not in result.stderr, result.stderr
        assert f"Error: memory is off for this session: config error: {said}" in result.stderr, result.stderr
    assert "nothing was stored" in result.stderr
    doctor = run("doctor", "--json")
    (check,) = [c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "config"]
    assert check["status"] == "fail" and check["detail"] == said
    assert fix in check["fix"] and "TOML syntax" not in check["fix"]
