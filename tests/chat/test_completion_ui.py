"""Prompt completion over ``Host.complete`` and the terminal UI's questions and results."""

from __future__ import annotations

import io
from pathlib import Path

from hindsight_hooks.chat.completion import Completer
from hindsight_hooks.chat.terminal_ui import TerminalUI, format_result
from hindsight_hooks.hooks import CommandResult, Host, RecordingUI


def test_completer_completes_command_names_and_arguments(project: Path, isolated_env: dict[str, str]) -> None:
    host = Host(project, host_name="chat", ui=RecordingUI())
    c = Completer(host)
    assert c.matches("/hindsight:mo") == ["/hindsight:mode "]
    assert c.matches("/hindsight:mode re") == ["/hindsight:mode read-only"]
    assert c.matches("/hindsight:queue --j") == ["/hindsight:queue --jobs", "/hindsight:queue --json"]
    names = c.matches("/hind")
    assert "/hindsight" in names and "/hindsight:doctor" in names and len(names) > 10
    assert c.matches("/ex") == ["/exit"]
    assert c.matches("plain text") == []
    assert c.matches("/nope ") == []
    # the readline protocol: state 0, 1, … then None
    assert [c("/hindsight:queue --j", i) for i in range(3)] == [
        "/hindsight:queue --jobs",
        "/hindsight:queue --json",
        None,
    ]


def test_select_asks_with_numbers_and_accepts_names() -> None:
    out = io.StringIO()
    ui = TerminalUI(out=out, inp=io.StringIO("7\n2\n"))
    assert ui.select("Import these?", ["Import", "Cancel"]) == "Cancel"
    shown = out.getvalue()
    assert "Import these?" in shown and "1) Import" in shown and "2) Cancel" in shown and "not an option: 7" in shown
    assert TerminalUI(out=io.StringIO(), inp=io.StringIO("allow\n")).select("?", ["Allow", "Deny"]) == "Allow"


def test_select_returns_none_on_eof_empty_or_non_interactive() -> None:
    assert TerminalUI(out=io.StringIO(), inp=io.StringIO("")).select("?", ["Allow", "Deny"]) is None
    assert TerminalUI(out=io.StringIO(), inp=io.StringIO("\n")).select("?", ["Allow", "Deny"]) is None
    quiet = TerminalUI(out=io.StringIO(), inp=io.StringIO("1\n"), interactive=False)
    assert quiet.select("?", ["Allow", "Deny"]) is None


def test_assume_yes_picks_the_affirmative_option_only() -> None:
    ui = TerminalUI(out=io.StringIO(), assume_yes=True)
    assert ui.select("?", ["Import", "Cancel"]) == "Import"
    assert ui.select("?", ["Deny", "Allow"]) == "Allow"
    assert ui.select("which bank?", ["alpha", "beta"]) is None


def test_notices_and_status() -> None:
    out = io.StringIO()
    ui = TerminalUI(out=out)
    ui.notify("server down", "warning")
    ui.set_status("hindsight", "mem:recalled:2")
    ui.set_status("other", "x")
    assert out.getvalue() == "[hindsight] warning: server down\n"
    assert ui.status_text() == "mem:recalled:2 x"
    ui.set_status("other", None)
    assert ui.status_text() == "mem:recalled:2"


def test_format_result_levels() -> None:
    assert format_result(CommandResult("all good")) == "all good"
    assert format_result(CommandResult("tag not changed", "warning")) == "warning: tag not changed"
    assert format_result(CommandResult("ok a\nwarn b", "warning")) == "warning:\nok a\nwarn b"
    assert format_result(CommandResult("boom", "error")) == "error: boom"
