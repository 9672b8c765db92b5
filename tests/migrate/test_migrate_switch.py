"""``--switch-config``: the project's config points at the server, everything else kept, a backup made."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hindsight_hooks.config import load_config
from hindsight_hooks.migrate.switch import SwitchError, dumps, switch_project_config

URL = "https://memory.example.com:8443/"


def test_a_project_without_a_config_gets_one_that_selects_the_server(tmp_path: Path) -> None:
    done = switch_project_config(tmp_path, URL)
    assert done.backup is None and done.path == tmp_path / ".hindsight" / "config.toml"
    cfg = load_config(tmp_path, env={"HOME": str(tmp_path / "home")}).config
    assert cfg.effective_backend() == "hindsight"
    assert cfg.hindsight_base_url() == "https://memory.example.com:8443"


def test_other_keys_stay_and_the_old_file_is_kept_as_a_backup(tmp_path: Path) -> None:
    path = tmp_path / ".hindsight" / "config.toml"
    path.parent.mkdir()
    old = (
        '# mine\nbackend = "local"\nrecall = { budget = "high" }\n\n[hindsight]\ntimeout_ms = 9000\n\n'
        '[banks.project]\nbank_id = "my \\"proj\\""\n\n[retain]\nskip_tools = ["Bash", "Read"]\n'
    )
    path.write_text(old)
    done = switch_project_config(tmp_path, URL)
    assert done.backup is not None and done.backup.read_text() == old
    data = tomllib.loads(path.read_text())
    assert data == {
        "backend": "hindsight",
        "recall": {"budget": "high"},
        "hindsight": {"timeout_ms": 9000, "base_url": "https://memory.example.com:8443"},
        "banks": {"project": {"bank_id": 'my "proj"'}},
        "retain": {"skip_tools": ["Bash", "Read"]},
    }


def test_a_file_that_does_not_parse_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / ".hindsight" / "config.toml"
    path.parent.mkdir()
    path.write_text("backend = = 1\n")
    with pytest.raises(SwitchError, match="does not parse"):
        switch_project_config(tmp_path, URL)
    assert path.read_text() == "backend = = 1\n"
    assert list(path.parent.iterdir()) == [path]


def test_the_writer_round_trips_what_a_config_holds() -> None:
    data = {
        "enabled": True,
        "n": 3,
        "x": 0.25,
        "s": 'tab\tquote" back\\ nl\n bell\x07 é',
        "weird key": [1, 2],
        "entities": [{"name": "a", "labels": ["x"]}],
        "a": {"b": {"c": "d"}, "e": False},
    }
    assert tomllib.loads(dumps(data)) == data


def test_a_url_with_credentials_is_never_written_to_the_project(tmp_path: Path) -> None:
    with pytest.raises(SwitchError, match="user name or password"):
        switch_project_config(tmp_path, "https://bob:hunter22@memory.example.com")
    assert not (tmp_path / ".hindsight").exists()


_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
_scalar = st.one_of(
    st.booleans(), st.integers(-(2**63), 2**63 - 1), st.floats(allow_nan=False, allow_infinity=False), _text
)
_value = st.recursive(
    _scalar,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_text, inner, max_size=3)),
    max_leaves=12,
)


@given(st.dictionaries(_text, _value, max_size=6))
def test_any_config_shaped_data_reads_back_the_same(data: dict[str, object]) -> None:
    assert tomllib.loads(dumps(data)) == data
