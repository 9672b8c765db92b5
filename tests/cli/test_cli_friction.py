"""What a new user hits at a shell (issue 9 items 15-18), through the real console script.

Each test runs ``hindsight-hooks`` as a child process in a tmp project on the embedded store,
with ``HOME``/``XDG_*`` in ``tmp_path``, and asserts what the person sees: the exit code, what
lands on stdout and on stderr, and what was (not) written to disk.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from hindsight_hooks.cli_commands import ARG_HELP, FLAG_HELP, cli_name, usage_flags, usage_words
from hindsight_hooks.hooks import Host, NullUI

from .conftest import Cli, write_chat_session

FACT = "The billing service retries webhooks five times with exponential backoff."


# -- item 15: --cwd must name a folder that exists ------------------------------------------------
def test_a_cwd_that_does_not_exist_is_refused_and_nothing_is_created(tmp_path: Path, cli: Cli) -> None:
    missing = tmp_path / "typo" / "project"
    commands = [
        ["status"],
        ["doctor"],
        ["queue"],
        ["config"],
        ["init"],
        ["flush"],
        ["mode", "read-only"],
        ["retain", FACT],
        ["recall", "webhooks"],
    ]
    for command in commands:
        result = cli(*command, "--cwd", str(missing))
        assert result.returncode == 2, (command, result.stdout, result.stderr)
        assert f"no such folder: {missing}" in result.stderr, command
        assert result.stdout == "", command
    assert not (tmp_path / "typo").exists()  # not the folder, not its parent, not .hindsight

    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a project\n", encoding="utf-8")
    as_file = cli("status", "--cwd", str(a_file))
    assert as_file.returncode == 2 and "not a folder" in as_file.stderr
    assert not (tmp_path / ".hindsight").exists()

    here = cli("status", "--cwd", str(cli.cwd))  # an existing folder still works
    assert here.returncode == 0, here.stderr


# -- item 16: `retain -` reads stdin; `recall --json` carries the memories ----------------------------
def test_retain_dash_reads_the_memory_from_stdin(cli: Cli) -> None:
    body = "zebracorn: the nightly export runs at 02:00 UTC.\n" + "filler line about exports\n" * 40_000
    assert len(body.encode()) > 1_000_000  # more than an argument can safely carry
    stored = cli("retain", "-", stdin=body)
    assert stored.returncode == 0, stored.stderr
    assert stored.stdout.strip() == "1 memory stored."

    found = json.loads(cli("recall", "zebracorn nightly export", "--json").stdout)
    texts = [m["text"] for m in found["details"]["memories"]]
    assert texts and texts[0].startswith("zebracorn: the nightly export runs at 02:00 UTC.")
    assert "-" not in texts  # the dash itself was never the memory

    empty = cli("retain", "-", stdin="")
    assert empty.returncode == 2 and "give the text to store" in empty.stderr


def test_recall_json_returns_the_memories_as_data(cli: Cli) -> None:
    assert cli("retain", FACT, "--tag", "team:billing").returncode == 0
    bank = json.loads(cli("status", "--json").stdout)["banks"]["project"]
    result = cli("recall", "webhook retries", "--json")
    assert result.returncode == 0, result.stderr
    (memory,) = json.loads(result.stdout)["details"]["memories"]
    assert memory["text"] == FACT and memory["bank"] == bank
    assert re.fullmatch(r"[0-9a-f]{16}", memory["id"]) and memory["id"] in json.loads(result.stdout)["text"]
    assert "team:billing" in memory["tags"]
    assert isinstance(memory["score"], float) and memory["created_at"].startswith("20")


# -- item 17: quiet on success, human errors, real help ----------------------------------------------
def test_recall_and_retain_are_quiet_on_success(tmp_path: Path, cli: Cli) -> None:
    fresh = tmp_path / "fresh"  # no config at all: the defaults, start notice included
    fresh.mkdir()
    stored = cli("retain", FACT, cwd=fresh)
    assert stored.returncode == 0 and stored.stderr == "", stored.stderr
    found = cli("recall", "webhook retries", cwd=fresh)
    assert found.returncode == 0 and found.stderr == "", found.stderr
    assert FACT in found.stdout


def test_a_warning_notice_is_still_shown(tmp_path: Path, cli: Cli) -> None:
    """Quiet is for info only: an unreachable server is still told, as a warning."""
    cli.env["HINDSIGHT_BASE_URL"] = "http://127.0.0.1:1"
    server = tmp_path / "server-project"
    server.mkdir()
    result = cli("recall", "webhooks", cwd=server)
    assert result.returncode == 1
    assert "[hindsight] warning: could not reach memory bank" in result.stderr


def test_reports_have_no_bare_level_line_and_status_has_no_python_dict(cli: Cli, project: Path) -> None:
    with (project / ".hindsight" / "config.toml").open("a", encoding="utf-8") as f:
        f.write('\n[recall]\ntop_k = "many"\n')  # a bad value: one config warning
    doctor = cli("doctor")
    assert doctor.returncode == 0, doctor.stderr
    assert re.search(r"^warn +config: .*recall\.top_k", doctor.stdout, re.M)
    assert not re.search(r"^(warning|error):\s*$", doctor.stdout + doctor.stderr, re.M)

    assert cli("retain", FACT).returncode == 0
    status = cli("status")
    assert status.returncode == 0, status.stderr
    assert not re.search(r"^(warning|error):\s*$", status.stdout + status.stderr, re.M)
    (delivery,) = [line for line in status.stdout.splitlines() if line.startswith("last delivery:")]
    assert delivery.endswith("1 item(s) stored") and "{" not in delivery


def test_import_success_report_has_no_bare_warning_line(cli: Cli, project: Path) -> None:
    session = write_chat_session(project, "We agreed that invoices are archived after 90 days.")
    done = cli("import-file", str(session), "--yes")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("import "), done.stdout
    assert not re.search(r"^(warning|error):\s*$", done.stdout + done.stderr, re.M)
    assert "[hindsight] hindsight import:" not in done.stderr  # the info announcement is not shown


def test_bad_tool_arguments_say_what_to_type(cli: Cli) -> None:
    cases = {
        ("recall", ""): "give a non-empty query: hindsight-hooks recall 'what we decided about X'",
        ("reflect", "  "): "give a question: hindsight-hooks reflect",
        ("retain", ""): "give the text to store: hindsight-hooks retain",
        ("recall", "x", "--max-tokens", "-1"): "--max-tokens must be 0 or more",
        ("retain", "x", "--tag", " "): "--tag: tag 1 is empty",
    }
    for args, advice in cases.items():
        result = cli(*args)
        assert result.returncode == 2, (args, result.stderr)
        assert advice in result.stderr, (args, result.stderr)
        assert "String should" not in result.stderr and "Value error" not in result.stderr
        assert "[hindsight]" not in result.stderr  # refused before any session started


def test_a_slash_command_usage_error_is_spelled_for_the_shell(cli: Cli) -> None:
    result = cli("tag", "add")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == "usage: hindsight-hooks tag add|remove <tag>\n"


def test_every_flag_and_argument_has_real_help(tmp_path: Path, cli: Cli) -> None:
    common = {"--json", "--yes", "--cwd", "--session-file", "--host-name"}
    for command in Host(tmp_path, ui=NullUI()).commands().values():
        if cli_name(command.name) is None:
            continue
        missing = set(usage_flags(command.usage)) - common - set(FLAG_HELP)
        assert not missing, f"{command.usage}: add help for {missing} to cli_commands.FLAG_HELP"
        if usage_words(command.name, command.usage) and command.name != "hindsight:retain":
            assert command.name in ARG_HELP, f"{command.usage}: add help for its words to cli_commands.ARG_HELP"
    for name in ("queue", "doctor", "init", "import-file", "recall-cleanup", "mode", "tag", "recall", "retain"):
        page = cli(name, "--help")
        assert page.returncode == 0, name
        assert "the command's" not in page.stdout, (name, page.stdout)
    queue = cli("queue", "--help").stdout
    assert re.search(r"--jobs\s+also list every queued job", queue)
    assert re.search(r"--requeue-dead\s+move the dead-letter jobs back", queue)
    assert "ARG" not in queue  # the queue takes no positional words
    assert "normal|read-only|ignored" in cli("mode", "--help").stdout
    import_file = re.sub(r"\s+", " ", cli("import-file", "--help").stdout)
    assert "--dry-run show what would be imported and write nothing" in import_file
    assert "PATH the session file or chat transcript to import" in import_file


# -- item 18: config errors first, unique backups, no silent cancel ------------------------------------
def test_a_config_that_does_not_parse_shows_the_error_first(tmp_path: Path, cli: Cli) -> None:
    broken = tmp_path / "broken"
    (broken / ".hindsight").mkdir(parents=True)
    (broken / ".hindsight" / "config.toml").write_text('backend = "local"\n[recall\n', encoding="utf-8")
    result = cli("config", "--cwd", str(broken))
    assert result.returncode == 1
    assert result.stdout == ""  # not the page of defaults
    lines = result.stderr.splitlines()
    assert lines[0].startswith("hindsight-hooks: config error:") and "config.toml" in lines[0]
    assert re.search(r"line \d+", lines[0])
    assert len(lines) <= 3
    as_json = json.loads(cli("config", "--cwd", str(broken), "--json").stdout)  # scripts still get it all
    assert as_json["error"] and "values" in as_json


def test_init_force_in_the_same_second_keeps_every_backup(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    config = project / ".hindsight" / "config.toml"
    with Host(project, ui=NullUI()) as host:
        assert host.command("/hindsight:init").level == "info"
        versions = []
        for n in range(3):  # three forced inits, milliseconds apart
            versions.append(f"# version {n}\n")
            config.write_text(versions[-1], encoding="utf-8")
            result = host.command("/hindsight:init --force")
            assert result.level == "info" and result.data is not None and result.data["backup"]
    backups = sorted(config.parent.glob("config.toml.bak-*"))
    assert len(backups) == 3
    assert sorted(b.read_text(encoding="utf-8") for b in backups) == versions


def test_import_file_without_a_terminal_or_yes_fails_and_says_to_pass_yes(cli: Cli, project: Path) -> None:
    session = write_chat_session(project, "We agreed that invoices are archived after 90 days.")
    refused = cli("import-file", str(session))  # stdin is a pipe: no one to ask
    assert refused.returncode == 1
    assert "--yes" in refused.stderr and "no terminal" in refused.stderr
    assert not (project / ".hindsight" / "import-manifest.json").exists()
    assert cli("recall", "invoices archived").stdout.strip() == "No relevant memories found."
