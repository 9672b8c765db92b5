"""Progress on a long import: a live bar on a terminal, plain countable lines anywhere else.

The console script imports a real sample session (three documents) twice from fresh projects:
once on a real pseudo-terminal, where the per-document notices redraw one bar in place, and
once through pipes, where each stays a grep-able ``import: i/N`` line.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

from hindsight_hooks.chat.terminal_ui import TerminalUI, progress_bar

from ..chat.conftest import SCRIPT, write_project
from ..chat.ptyproc import PtyProcess
from ..importer.conftest import install
from .conftest import Cli


def project_with_session(root: Path) -> Path:
    write_project(root)
    with (root / ".hindsight" / "config.toml").open("a", encoding="utf-8") as f:
        f.write("\n[import]\nturns_per_document = 1\n")
    return install("decisions.jsonl", root / "sessions", cwd=root)


def test_import_progress_is_one_bar_on_a_terminal(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    session = project_with_session(root)
    env = Cli(tmp_path, root).env
    proc = PtyProcess([str(SCRIPT), "import-file", str(session), "--yes"], env, root)
    try:
        proc.expect(r"completed 3, queued 0", timeout=60)
        assert proc.wait() == 0
    finally:
        proc.close()
    log = proc.log
    bars = re.findall(r"\r\x1b\[2K\[hindsight\] import \[([#.]{24})\] (\d)/3 document\(s\) delivered", log)
    assert [(b.count("#"), n) for b, n in bars] == [(8, "1"), (16, "2"), (24, "3")]
    assert "import: 1/3" not in log  # no plain progress lines on a terminal
    # the bar is redrawn in place: no newline until the last step
    first, last = log.index("] 1/3"), log.index("] 3/3")
    assert "\n" not in log[first:last].replace("\r\x1b[2K", "")


def test_import_progress_is_plain_lines_through_a_pipe(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    session = project_with_session(root)
    result = Cli(tmp_path, root)("import-file", str(session), "--yes")
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("[hindsight] import: ")]
    assert [line.split(" document")[0] for line in lines] == [f"[hindsight] import: {i}/3" for i in (1, 2, 3)]
    assert "\r" not in result.stderr


class _FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_notice_or_question_during_the_bar_starts_on_a_new_line() -> None:
    out = _FakeTty()
    ui = TerminalUI(out=out, inp=io.StringIO("1\n"), tag="")
    ui.notify("import: 1/4 document(s) delivered to b")
    ui.notify("server slow", "warning")
    ui.notify("import: 2/4 document(s) delivered to b")
    assert ui.select("Continue?", ["Import", "Cancel"]) == "Import"
    text = out.getvalue()
    assert "delivered to b\nwarning: server slow\n" in text
    assert "2/4 document(s) delivered to b\nContinue?" in text
    assert progress_bar(5, 4, "x") == "import [########################] 4/4 x"  # clamped
    assert progress_bar(0, 0, "x").startswith("import [........................] 0/1")
