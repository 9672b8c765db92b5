"""``hindsight-hooks memories …``: the catalog command as a subcommand, in process (``cli.main``).

The forget question is answered by ``--yes``; without a terminal and without ``--yes`` the
command stops, changes nothing and exits 1 saying what to pass.
"""

from __future__ import annotations

import json

import pytest

from hindsight_hooks import cli

from ..plugin.cmdkit import Kit, local_kit_fixture  # noqa: F401  (fixtures)


def run(kit: Kit, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main([*args, "--cwd", str(kit.root), "--session-file", str(kit.session_file())])
    out, err = capsys.readouterr()
    return code, out, err


def test_list_forget_needs_yes_then_forgets(local_kit: Kit, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(local_kit, capsys, "retain", "The otter deploy runs on Fridays.")
    assert code == 0, err
    code, out, err = run(local_kit, capsys, "memories", "list", "text=otter", "--json")
    assert code == 0, err
    listed = json.loads(out)
    assert listed["total"] == 1 and listed["memories"][0]["text"] == "The otter deploy runs on Fridays."
    code, out, err = run(local_kit, capsys, "memories", "forget", "query", "otter")
    assert code == 1 and "--yes" in err
    assert local_kit.texts(local_kit.project_bank) == ["The otter deploy runs on Fridays."]
    code, out, err = run(local_kit, capsys, "memories", "forget", "query", "otter", "--dry-run")
    assert code == 0 and "would forget 1 memories" in out and "(dry run: nothing was changed)" in out
    code, out, err = run(local_kit, capsys, "memories", "forget", "query", "otter", "--yes")
    assert code == 0, err
    assert out.startswith("forgot 1 memories from bank ") and local_kit.texts(local_kit.project_bank) == []
    code, out, err = run(local_kit, capsys, "memories", "frobnicate")
    assert code == 2 and "usage: hindsight-hooks memories" in err
