"""docs/governance.md#session-meta–docs/governance.md#next-opt-out: the session meta file, fail-closed reads, setters,
tags and the effective mode."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hindsight_hooks.governance import session_meta as sm
from hindsight_hooks.governance.session_meta import (
    DEFAULT_META,
    FAIL_CLOSED_META,
    ModeError,
    SessionMeta,
    SessionMetaStore,
    TagError,
)

SID = "0123456789abcdef"


@pytest.fixture
def store(tmp_path: Path) -> SessionMetaStore:
    return SessionMetaStore(tmp_path / ".hindsight" / "session-meta", SID)


def write_raw(store: SessionMetaStore, data: bytes | str | Any) -> None:
    store.path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        store.path.write_bytes(data)
    elif isinstance(data, str):
        store.path.write_text(data)
    else:
        store.path.write_text(json.dumps(data))


GOOD = {
    "retained": True,
    "recall_mode": "normal",
    "retain_mode": "off",
    "next_retain_mode": "off",
    "mode": "read-only",
    "tags": ["team:x"],
    "created_at": "2024-01-01T00:00:00.000Z",
    "updated_at": "2024-01-02T00:00:00.000Z",
}


# -- reading -------------------------------------------------------------------------------------


def test_missing_file_reads_as_defaults(store: SessionMetaStore) -> None:
    read = store.read()
    assert read.record == DEFAULT_META
    assert read.missing and not read.failed_closed and read.warning is None
    assert store.path == store.meta_dir / f"{SID}.json"


def test_good_file_round_trips(store: SessionMetaStore) -> None:
    write_raw(store, GOOD)
    read = store.read()
    assert not read.failed_closed
    assert read.record == SessionMeta(
        True, "normal", "off", "off", "read-only", ("team:x",), "2024-01-01T00:00:00.000Z", "2024-01-02T00:00:00.000Z"
    )


def test_missing_next_retain_mode_is_normal_and_extra_keys_are_ignored(store: SessionMetaStore) -> None:
    data = {k: v for k, v in GOOD.items() if k != "next_retain_mode"}
    data["future_field"] = {"x": 1}
    write_raw(store, data)
    read = store.read()
    assert not read.failed_closed
    assert read.record.next_retain_mode == "normal"


CORRUPT: list[tuple[str, bytes | str | Any]] = [
    ("invalid json", "{not json"),
    ("empty file", b""),
    ("not utf-8", b"\xff\xfe\x00garbage"),
    ("array", [GOOD]),
    ("string", '"normal"'),
    ("unknown mode enum", {**GOOD, "mode": "bogus"}),
    ("reserved mode", {**GOOD, "mode": "tools-only"}),
    ("unknown recall enum", {**GOOD, "recall_mode": "maybe"}),
    ("unknown next enum", {**GOOD, "next_retain_mode": "skip"}),
    ("retained as string", {**GOOD, "retained": "yes"}),
    ("retained as int", {**GOOD, "retained": 1}),
    ("missing mode", {k: v for k, v in GOOD.items() if k != "mode"}),
    ("missing retain_mode", {k: v for k, v in GOOD.items() if k != "retain_mode"}),
    ("tags not a list", {**GOOD, "tags": "a,b"}),
    ("reserved tag", {**GOOD, "tags": ["repo:elsewhere-123"]}),
    ("untrimmed tag", {**GOOD, "tags": [" x"]}),
    ("duplicate tag", {**GOOD, "tags": ["x", "x"]}),
    ("control char tag", {**GOOD, "tags": ["a\u0007"]}),
    ("too many tags", {**GOOD, "tags": [f"t{i}" for i in range(33)]}),
    ("timestamp not a string", {**GOOD, "updated_at": 5}),
]


@pytest.mark.parametrize(("label", "data"), CORRUPT, ids=[c[0] for c in CORRUPT])
def test_corrupt_or_wrong_shape_fails_closed(store: SessionMetaStore, label: str, data: Any) -> None:
    write_raw(store, data)
    read = store.read()
    assert read.failed_closed, label
    assert read.record == FAIL_CLOSED_META
    assert read.record.retained is False and read.record.mode == "ignored"
    assert read.record.recall_mode == "off" and read.record.retain_mode == "off"
    assert read.record.next_retain_mode == "normal" and read.record.tags == ()
    eff = sm.effective(read.record)
    assert not eff.recall and not eff.retain
    assert read.warning is not None and store.path.name in read.warning


def test_directory_in_place_of_the_file_fails_closed(store: SessionMetaStore) -> None:
    store.path.mkdir(parents=True)
    read = store.read()
    assert read.failed_closed and read.record == FAIL_CLOSED_META
    assert "folder" in (read.reason or "")


def test_warning_carries_no_file_content(store: SessionMetaStore) -> None:
    write_raw(store, '{"mode": "sk-proj-SECRETSECRETSECRET0123456789"}')
    read = store.read()
    assert read.failed_closed
    assert read.warning is not None and "SECRET" not in read.warning


# -- writing ----------------------------------------------------------------------------------------


def test_setter_writes_atomically_with_private_modes(store: SessionMetaStore) -> None:
    rec = store.set_mode("read-only")
    assert rec.mode == "read-only"
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(store.meta_dir).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(store.meta_dir.parent).st_mode) == 0o700
    assert (store.meta_dir.parent / ".gitignore").read_text() == "*\n!.gitignore\n!config.toml\n"
    assert [p.name for p in store.meta_dir.iterdir()] == [f"{SID}.json"]  # no temp files left
    data = json.loads(store.path.read_text())
    assert list(data) == [
        "retained",
        "recall_mode",
        "retain_mode",
        "next_retain_mode",
        "mode",
        "tags",
        "created_at",
        "updated_at",
    ]
    assert data["updated_at"].endswith("Z") and len(data["updated_at"]) == 24
    assert store.read().record == rec


def test_updated_at_moves_and_created_at_stays(store: SessionMetaStore) -> None:
    first = store.set_retain(False)
    second = store.add_tag("x")
    assert second.created_at == first.created_at
    assert second.updated_at is not None and first.updated_at is not None
    assert second.updated_at >= first.updated_at


def test_setter_repairs_a_corrupt_file_and_keeps_it_aside(store: SessionMetaStore) -> None:
    write_raw(store, "{corrupt")
    rec = store.add_tag("keep")
    # started from the fail-closed record: the repair does not silently re-enable memory
    assert rec.mode == "ignored" and rec.tags == ("keep",)
    read = store.read()
    assert not read.failed_closed and read.record.tags == ("keep",)
    aside = [p for p in store.meta_dir.iterdir() if p.name.startswith(f"{SID}.json.corrupt-")]
    assert len(aside) == 1 and aside[0].read_text() == "{corrupt"


def test_setter_moves_a_directory_aside(store: SessionMetaStore) -> None:
    store.path.mkdir(parents=True)
    (store.path / "inner").write_text("kept")
    rec = store.set_mode("normal")
    assert rec.mode == "normal" and rec.retained and rec.retain_mode == "normal"
    assert store.path.is_file() and not store.read().failed_closed
    aside = [p for p in store.meta_dir.iterdir() if ".corrupt-" in p.name]
    assert len(aside) == 1 and (aside[0] / "inner").read_text() == "kept"


def test_failed_setter_writes_nothing(store: SessionMetaStore) -> None:
    with pytest.raises(TagError):
        store.add_tag("source:evil")
    assert not store.path.exists()
    with pytest.raises(ModeError, match="reserved"):
        store.set_mode("tools-only")
    assert not store.path.exists()


def test_bad_session_ids_are_refused(tmp_path: Path) -> None:
    for bad in ("", "../x", "a/b", ".hidden", "x" * 129):
        with pytest.raises(ValueError):
            SessionMetaStore(tmp_path, bad)


# -- setters: the matrix -------------------------------------------------------------------------------

NORMAL = DEFAULT_META
RETAIN_OFF = replace(DEFAULT_META, retained=False, retain_mode="off")


@pytest.mark.parametrize(
    ("start", "steps", "expected"),
    [
        # set_mode
        (NORMAL, [("mode", "read-only")], replace(NORMAL, mode="read-only")),
        (NORMAL, [("mode", "ignored")], replace(NORMAL, mode="ignored")),
        (replace(NORMAL, recall_mode="off"), [("mode", "read-only")], replace(NORMAL, mode="read-only")),
        (replace(NORMAL, recall_mode="off"), [("mode", "normal")], NORMAL),
        (replace(NORMAL, recall_mode="off"), [("mode", "ignored")], replace(NORMAL, recall_mode="off", mode="ignored")),
        # normal on a fail-closed(-looking) record restores retained
        (FAIL_CLOSED_META, [("mode", "normal")], NORMAL),
        (FAIL_CLOSED_META, [("mode", "read-only")], replace(FAIL_CLOSED_META, mode="read-only", recall_mode="normal")),
        # an explicit retain-off survives read-only → normal
        (RETAIN_OFF, [("mode", "read-only"), ("mode", "normal")], RETAIN_OFF),
        (RETAIN_OFF, [("mode", "ignored"), ("mode", "normal")], RETAIN_OFF),
        # set_retain
        (NORMAL, [("retain", False)], RETAIN_OFF),
        (RETAIN_OFF, [("retain", True)], NORMAL),
        (FAIL_CLOSED_META, [("retain", True)], replace(FAIL_CLOSED_META, retained=True, retain_mode="normal")),
        # next-opt-out
        (NORMAL, [("next", None)], replace(NORMAL, next_retain_mode="off")),
        (NORMAL, [("next", None), ("consume", None)], NORMAL),
        (NORMAL, [("next", None), ("mode", "ignored"), ("mode", "normal")], replace(NORMAL, next_retain_mode="off")),
        # tags pass through every mode change
        (
            NORMAL,
            [("add", " a "), ("mode", "ignored"), ("add", "b"), ("remove", "a")],
            replace(NORMAL, mode="ignored", tags=("b",)),
        ),
    ],
)
def test_setter_matrix(
    store: SessionMetaStore, start: SessionMeta, steps: list[tuple[str, Any]], expected: SessionMeta
) -> None:
    write_raw(store, start.to_json())
    for op, arg in steps:
        if op == "mode":
            store.set_mode(arg)
        elif op == "retain":
            store.set_retain(arg)
        elif op == "next":
            store.set_next_opt_out()
        elif op == "consume":
            store.consume_next_opt_out()
        elif op == "add":
            store.add_tag(arg)
        else:
            store.remove_tag(arg)
    got = store.read().record
    assert replace(got, created_at=None, updated_at=None) == replace(expected, created_at=None, updated_at=None)


def test_normal_on_an_actually_failed_closed_file_restores_retained(store: SessionMetaStore) -> None:
    write_raw(store, {**GOOD, "mode": "bogus"})
    assert store.read().failed_closed
    rec = store.set_mode("normal")
    assert (rec.mode, rec.retained, rec.recall_mode, rec.retain_mode) == ("normal", True, "normal", "normal")
    assert sm.effective(rec).retain and sm.effective(rec).recall


def test_unknown_mode_is_refused() -> None:
    with pytest.raises(ModeError, match="unknown mode"):
        sm.apply_mode(DEFAULT_META, "loud")
    with pytest.raises(ModeError, match="reserved"):
        sm.apply_mode(DEFAULT_META, "tools-only")


# -- effective mode -------------------------------------------------------------------------------------

# (mode, recall_mode, retain_mode, retained) -> (recall, retain), written out from docs/governance.md#modes's rules.
EFFECTIVE = [
    ("normal", "normal", "normal", True, True, True),
    ("normal", "normal", "normal", False, True, False),
    ("normal", "normal", "off", True, True, False),
    ("normal", "off", "normal", True, False, True),
    ("normal", "off", "off", False, False, False),
    ("read-only", "normal", "normal", True, True, False),
    ("read-only", "off", "normal", True, False, False),
    ("ignored", "normal", "normal", True, False, False),
    ("ignored", "off", "off", False, False, False),
]


@pytest.mark.parametrize(("mode", "recall_mode", "retain_mode", "retained", "recall", "retain"), EFFECTIVE)
def test_effective(mode: Any, recall_mode: Any, retain_mode: Any, retained: bool, recall: bool, retain: bool) -> None:
    meta = SessionMeta(retained=retained, recall_mode=recall_mode, retain_mode=retain_mode, mode=mode, tags=("t",))
    eff = sm.effective(meta)
    assert (eff.recall, eff.retain, eff.mode, eff.next_retain) == (recall, retain, mode, "normal")
    assert eff.retain_this_run == retain
    assert sm.effective(replace(meta, next_retain_mode="off")).retain_this_run is False


def test_labels() -> None:
    assert sm.mode_label("normal") == "Automatic recall/retain follow config."
    assert sm.mode_label("read-only") == "Recall can read; automatic retain is off."
    assert sm.mode_label("ignored") == "Automatic recall and retain are off."


# -- tags ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tag", "reason"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("x" * 81, "80"),
        ("a\nb", "control"),
        ("a\x7fb", "control"),
        ("source:me", "reserved"),
        ("harness:me", "reserved"),
        ("repo:other-123", "reserved"),
        ("session:abc", "reserved"),
        ("  Repo:other", "reserved"),
        ("ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "secret"),
        ("password=hunter2x9", "secret"),
    ],
)
def test_bad_tags(tag: str, reason: str) -> None:
    with pytest.raises(TagError) as info:
        sm.apply_add_tag(DEFAULT_META, tag)
    assert reason in info.value.reason


def test_tag_rules_unique_limit_and_trim() -> None:
    meta = sm.apply_add_tag(DEFAULT_META, "  team:core  ")
    assert meta.tags == ("team:core",)
    assert sm.apply_add_tag(DEFAULT_META, "topic:token-budget").tags == ("topic:token-budget",)
    assert sm.apply_add_tag(DEFAULT_META, "x" * 80).tags == ("x" * 80,)
    with pytest.raises(TagError, match="already"):
        sm.apply_add_tag(meta, "team:core")
    for i in range(31):
        meta = sm.apply_add_tag(meta, f"t{i}")
    assert len(meta.tags) == 32
    with pytest.raises(TagError, match="32"):
        sm.apply_add_tag(meta, "one-more")
    with pytest.raises(TagError, match="not set"):
        sm.apply_remove_tag(meta, "absent")
    assert "team:core" not in sm.apply_remove_tag(meta, " team:core ").tags


OPS = st.one_of(
    st.tuples(st.just("mode"), st.sampled_from(["normal", "read-only", "ignored", "tools-only", "bogus"])),
    st.tuples(st.just("retain"), st.booleans()),
    st.tuples(st.just("next"), st.none()),
    st.tuples(st.just("consume"), st.none()),
    st.tuples(st.just("add"), st.text(max_size=12)),
    st.tuples(st.just("remove"), st.text(max_size=12)),
)


PURE_SETTERS: dict[str, Callable[[SessionMeta, Any], SessionMeta]] = {
    "mode": sm.apply_mode,
    "retain": sm.apply_retain,
    "add": sm.apply_add_tag,
    "remove": sm.apply_remove_tag,
}


@settings(max_examples=60, deadline=None)
@given(ops=st.lists(OPS, max_size=12))
def test_any_setter_sequence_leaves_a_valid_file(tmp_path_factory: pytest.TempPathFactory, ops: list[Any]) -> None:
    store = SessionMetaStore(tmp_path_factory.mktemp("meta") / "session-meta", SID)
    expected = DEFAULT_META
    for op, arg in ops:
        fn = PURE_SETTERS.get(op)
        try:
            if op == "mode":
                store.set_mode(arg)
            elif op == "retain":
                store.set_retain(arg)
            elif op == "next":
                store.set_next_opt_out()
            elif op == "consume":
                store.consume_next_opt_out()
            elif op == "add":
                store.add_tag(arg)
            else:
                store.remove_tag(arg)
        except (TagError, ModeError):
            continue
        if fn is not None:
            expected = fn(expected, arg)
        elif op == "next":
            expected = sm.apply_next_opt_out(expected)
        else:
            expected = sm.apply_consume_next_opt_out(expected)
    read = store.read()
    assert not read.failed_closed
    assert replace(read.record, created_at=None, updated_at=None) == expected
