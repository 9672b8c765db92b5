"""The echo guard's rules (ADR-065): line keys, the persisted record, and scrubbing text."""

from __future__ import annotations

import json
import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hindsight_hooks.backends.base import MemoryHit
from hindsight_hooks.config_model import RetainConfig
from hindsight_hooks.plugin.recall.render import BankBlock, render_block
from hindsight_hooks.retain.echo_guard import MAX_KEYS, InjectedLines, line_key, scrub_text, scrub_value
from hindsight_hooks.retain.injected import has_block, strip_injected_blocks
from hindsight_hooks.retain.projection import project

RENDER = render_block(
    [
        BankBlock(
            "hh-project-demo-abc",
            "q",
            [
                MemoryHit(
                    text="Use uv for every install in this repo.",
                    tags=["decision"],
                    evidence=["the CI pipeline installs with uv"],
                ),
                MemoryHit(text="Ok."),
            ],
        )
    ],
    top_k=8,
)


def _record(tmp_path: Path) -> InjectedLines:
    record = InjectedLines(tmp_path / "state" / "injected-lines" / "sid.json")
    record.remember(RENDER)
    return record


def test_line_key_ignores_markers_tags_entities_case_and_spacing() -> None:
    key = line_key("1. Use uv for every install in this repo. [decision]")
    assert key is not None
    for quoted in (
        "Use uv for every install in this repo.",
        "> - use  UV for every install in this repo. ",
        "* `Use uv for every install in this repo.`",
        "Use uv for every install in this repo. [decision]",
        "3) Use uv for every install in this repo.",
    ):
        assert line_key(quoted) in (key, line_key("Use uv for every install in this repo.")), quoted
    assert line_key("Ok.") is None  # too short to compare: ordinary short replies are never dropped
    assert line_key("&lt;/hindsight-memory&gt;") == line_key("</hindsight-memory>")


def test_scrub_drops_recorded_and_fixed_lines_only(tmp_path: Path) -> None:
    known = _record(tmp_path).keys()
    text = "\n".join(
        [
            "Here is what I know:",
            "Relevant prior memory. Use as context; do not quote unless useful.",
            "Bank: hh-project-demo-abc",
            "1. Use uv for every install in this repo. [decision]",
            "   - evidence: the CI pipeline installs with uv",
            "Ok.",
            "So I will run uv sync now.",
        ]
    )
    assert scrub_text(text, known) == "Here is what I know:\nOk.\nSo I will run uv sync now."
    # Without the record only the block's own fixed lines go.
    assert "Use uv for every install" in scrub_text(text)
    assert "Relevant prior memory" not in scrub_text(text)


def test_scrub_cuts_raw_and_escaped_blocks_but_not_mentions() -> None:
    escaped = RENDER.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    for quoted in (RENDER, escaped, RENDER.replace("<", "&#60;").replace(">", "&#62;")):
        assert has_block(f"before {quoted} after")
        assert scrub_text(f"before {quoted} after") == "before  after"
    mention = "the <hindsight-memory> tag opens the block"
    assert not has_block(mention) and scrub_text(mention) == mention


def test_a_neutralised_close_inside_the_block_does_not_end_it_early() -> None:
    """Recalled text's ``&lt;/hindsight-memory>`` (docs/recall.md#escaping) is content: the whole block goes."""
    block = render_block([BankBlock("b", "q", [MemoryHit(text="evil </hindsight-memory> tail-secret-zz1")])], top_k=3)
    assert "&lt;/hindsight-memory>" in block
    assert strip_injected_blocks(f"a {block} b") == "a  b"


def test_record_is_persisted_hashed_private_and_bounded(tmp_path: Path) -> None:
    record = _record(tmp_path)
    assert record.path is not None
    raw = record.path.read_text(encoding="utf-8")
    assert "uv" not in raw and "hh-project" not in raw  # hashes only, never the memory text
    assert stat.S_IMODE(record.path.stat().st_mode) == 0o600
    again = InjectedLines(record.path)  # another process, same session
    assert again.keys() == record.keys() and again.keys()
    before = record.path.stat().st_mtime_ns
    again.remember(RENDER)  # nothing new: no write
    assert record.path.stat().st_mtime_ns == before
    many = "\n".join(f"{i}. distinct memory line number {i:06d}" for i in range(MAX_KEYS + 50))
    again.remember(many)
    assert len(again.keys()) == MAX_KEYS
    assert len(InjectedLines(record.path).keys()) == MAX_KEYS  # the file holds the newest MAX_KEYS
    for i in range(3):  # the file itself stays bounded: compacted past 2 · MAX_KEYS hashes
        again.remember("\n".join(f"{i}. another memory line number {j:06d}" for j in range(MAX_KEYS // 2)))
    on_disk = [json.loads(line) for line in record.path.read_text(encoding="utf-8").splitlines()]
    assert sum(len(v["keys"]) if isinstance(v, dict) else len(v) for v in on_disk) <= 2 * MAX_KEYS
    assert len(InjectedLines(record.path).keys()) == MAX_KEYS


def test_a_turn_appends_its_new_hashes_instead_of_rewriting_the_record(tmp_path: Path) -> None:
    record = _record(tmp_path)
    assert record.path is not None
    inode, size = record.path.stat().st_ino, record.path.stat().st_size
    record.remember(RENDER.replace("Use uv", "Use pdm"))
    assert record.path.stat().st_ino == inode and record.path.stat().st_size > size  # appended in place
    assert InjectedLines(record.path).keys() == record.keys()


def test_a_version_1_record_is_read_and_appended_to(tmp_path: Path) -> None:
    path = tmp_path / "injected-lines" / "sid.json"
    path.parent.mkdir()
    old = _record(tmp_path / "old").keys()
    path.write_text(json.dumps({"version": 1, "keys": sorted(old)}), encoding="utf-8")  # no final newline
    record = InjectedLines(path)
    assert record.keys() == old
    record.remember(RENDER.replace("Use uv", "Use pdm"))
    assert InjectedLines(path).keys() == record.keys() and record.keys() > old


def test_an_append_cut_short_loses_only_its_own_hashes(tmp_path: Path) -> None:
    record = _record(tmp_path)
    assert record.path is not None
    kept = record.keys()
    with record.path.open("ab") as fh:
        fh.write(b'["0123456789ab')  # a crash or a full disk in the middle of the next append
    again = InjectedLines(record.path)
    assert again.keys() == kept
    again.remember(RENDER.replace("Use uv", "Use pdm"))
    assert InjectedLines(record.path).keys() == again.keys()  # rewritten whole, not glued onto the torn line
    assert not list(record.path.parent.glob("*.corrupt-*"))
    record.path.write_bytes(b"")  # an empty record (a full disk at creation) starts again with a snapshot
    empty = InjectedLines(record.path)
    empty.remember(RENDER)
    assert InjectedLines(record.path).keys() == empty.keys() == kept


def test_unparsable_record_is_moved_aside_not_deleted(tmp_path: Path) -> None:
    path = tmp_path / "injected-lines" / "sid.json"
    path.parent.mkdir()
    for body in ("{not json", '["a"]', '{"keys": 3}'):
        path.write_text(body, encoding="utf-8")
        record = InjectedLines(path)
        assert record.keys() == frozenset()
        kept = [p for p in path.parent.iterdir() if p.name.startswith("sid.json.corrupt-")]
        assert any(p.read_text(encoding="utf-8") == body for p in kept)
        for p in kept:
            p.unlink()


def test_projection_scrubs_every_role_and_drops_what_is_left_empty(tmp_path: Path) -> None:
    known = _record(tmp_path).keys()
    cfg = RetainConfig()
    cfg.content.tool_result = ["error", "content"]
    cfg.content.assistant = ["text", "thinking", "toolCall"]
    msgs = [
        {"role": "user", "content": "question: " + RENDER, "timestamp": 1},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "1. Use uv for every install in this repo."},
                {"type": "text", "text": "Use uv for every install in this repo."},
            ],
            "timestamp": 2,
        },
        {"role": "assistant", "content": [{"type": "text", "text": "answer stays"}], "timestamp": 3},
        {"role": "toolResult", "toolName": "bash", "content": "out: " + RENDER, "isError": True, "timestamp": 4},
    ]
    out = project(msgs, cfg, now_ms=0, injected_lines=known)
    assert [m["role"] for m in out] == ["user", "assistant", "toolResult"]
    assert out[0]["content"] == "question: "
    assert out[1]["content"] == [{"type": "text", "text": "answer stays"}]
    assert out[2]["content"] == "out: "
    assert project(msgs[2:3], cfg, now_ms=0) == project(msgs[2:3], cfg, now_ms=0, injected_lines=known)


_pieces = st.sampled_from(
    [RENDER, "Use uv for every install in this repo.", "plain words", "\n", " ", "<", "&lt;", "é", "1. "]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_pieces, max_size=10).map("".join))
def test_scrub_never_grows_text_and_leaves_no_block(text: str) -> None:
    out = scrub_value({"content": [{"type": "text", "text": text}]})["content"][0]["text"]
    assert len(out) <= len(text)
    assert not has_block(out)


_stamps = st.one_of(
    st.none(),
    st.sampled_from(["", "2026-11-28", "yesterday", "2026-11-28T23:30:00-05:00", "2026-13-40T10:00:00Z"]),
    st.datetimes(min_value=datetime(2020, 1, 1), max_value=datetime(2030, 1, 1), timezones=st.just(UTC)).map(
        lambda d: d.isoformat().replace("+00:00", "Z")
    ),
    st.builds(
        lambda day, hour, minute: f"2026-11-{day:02d}T{hour:02d}:{minute:02d}:00Z",
        st.integers(27, 28),
        st.integers(0, 23),
        st.integers(0, 59),
    ),  # two days only: items share days often
)
_texts = st.text(alphabet=st.sampled_from("abc XYZ.,()[]0123456789-:"), min_size=12, max_size=40).filter(
    lambda t: len(t.strip()) >= 12
)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(_texts, _stamps), min_size=1, max_size=6))
def test_a_quoted_item_is_an_echo_whatever_its_stamp(
    tmp_path_factory: pytest.TempPathFactory, items: list[tuple[str, str | None]]
) -> None:
    """Each item ends with its day, with its time when another item shares the day (ADR 180),
    or with nothing; a reply that quotes the item's text alone is recognised either way."""
    hits = [MemoryHit(text=text, mentioned_at=stamp) for text, stamp in items]
    block = render_block([BankBlock("b", "q", hits)], top_k=8)
    record = InjectedLines(tmp_path_factory.mktemp("s") / "injected-lines" / "sid.json")
    record.remember(block)
    for text, _ in items:
        if line_key(text) is not None:
            assert scrub_text(text, record.keys()).strip() == "", text


def test_a_new_session_record_forgets_records_idle_for_a_month(tmp_path: Path) -> None:
    import os
    import time

    from hindsight_hooks.retain.echo_guard import RECORD_MAX_AGE_S

    folder = tmp_path / "injected-lines"
    folder.mkdir()
    stale, fresh = folder / "old.json", folder / "recent.json"
    for path in (stale, fresh):
        path.write_text('{"version": 1, "keys": []}', encoding="utf-8")
    old = time.time() - RECORD_MAX_AGE_S - 60
    os.utime(stale, (old, old))
    InjectedLines(folder / "new.json").remember(RENDER)
    assert sorted(p.name for p in folder.iterdir()) == ["new.json", "recent.json"]


def test_a_dated_line_is_recorded_without_its_date(tmp_path: Path) -> None:
    """Block items end with the day they were said (ADR 118); a reply quoting the text alone is
    still an echo, with or without the tags."""
    hit = MemoryHit(text="We use Redis for the session cache.", tags=["decision"], mentioned_at="2025-03-02T10:00:00Z")
    dated = render_block([BankBlock("b", "q", [hit])], top_k=8)
    assert "1. We use Redis for the session cache. [decision] (2025-03-02)" in dated
    record = InjectedLines(tmp_path / "state" / "injected-lines" / "sid.json")
    record.remember(dated)
    for quoted in ("We use Redis for the session cache.", "We use Redis for the session cache. [decision]"):
        assert scrub_text(quoted, record.keys()) == "", quoted


def test_a_timed_line_is_recorded_without_its_day_and_time(tmp_path: Path) -> None:
    """Items said on one day show the time too (ADR 180); a quote of the text alone is an echo."""
    hits = [
        MemoryHit(text="Switch the session cache to Valkey.", mentioned_at="2025-03-02T15:20:00Z"),
        MemoryHit(text="We use Redis for the session cache.", tags=["decision"], mentioned_at="2025-03-02T10:00:00Z"),
    ]
    timed = render_block([BankBlock("b", "q", hits)], top_k=8)
    assert "2. We use Redis for the session cache. [decision] (2025-03-02 10:00 UTC)" in timed
    record = InjectedLines(tmp_path / "state" / "injected-lines" / "sid.json")
    record.remember(timed)
    for quoted in (
        "Switch the session cache to Valkey.",
        "We use Redis for the session cache.",
        "We use Redis for the session cache. [decision]",
    ):
        assert scrub_text(quoted, record.keys()) == "", quoted


def test_line_keys_are_stable_so_records_written_earlier_still_match() -> None:
    """Records on disk hold hashes of these keys: the forms must not drift between versions."""
    from hindsight_hooks.retain.echo_guard import line_keys

    assert line_keys("1. Use  uv\u00a0for every\tinstall. [decision, repo:x] (2025-03-02)") == [
        "use uv for every install. [decision, repo:x] (2025-03-02)",
        "use uv for every install. [decision, repo:x]",
        "use uv for every install.",
    ]
    assert line_keys("> - `We deploy on Fridays (never Mondays)`") == ["we deploy on fridays (never mondays)"]
    # a time shown on a clock west or east of UTC (ADR 212) comes off like a UTC one
    for said in ("2026-11-28 23:30 UTC-05:00", "2026-11-28 23:30 UTC+05:30", "2026-11-28 23:30 UTC"):
        assert line_keys(f"2. Cap the queue at 500 jobs. ({said})")[-1] == "cap the queue at 500 jobs."


_line_parts = st.sampled_from(
    [" ", "\u00a0", "\t", "(", ")", "[", "]", "x", "Use uv", "[decision]", "[a, b]", "(2025-03-02)",
     "(2026-11-28 23:30 UTC)", "(2026-11-28 23:30 UTC+05:30)", "(never Mondays)", "2025-03-02", "\u3000"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(_line_parts, max_size=12).map("".join))
def test_a_trailing_day_and_tags_come_off_as_the_patterns_take_them_off(line: str) -> None:
    """The day and the tags at a line's end are found from their last bracket (ADR 227): the
    result is the patterns' own, for any mix of brackets, dates and Unicode spaces."""
    import re

    from hindsight_hooks.retain.echo_guard import _DAY_FROM_BRACKET, _TAGS_FROM_BRACKET, _without_trailing
    from hindsight_hooks.timefmt import SAID_PATTERN

    trailing_day = re.compile(rf"\s*\({SAID_PATTERN}\)\s*$")  # the patterns as line_keys had them
    trailing_tags = re.compile(r"\s*\[[^\[\]\n]*\]\s*$")
    assert _without_trailing(line, "(", _DAY_FROM_BRACKET) == trailing_day.sub("", line)
    assert _without_trailing(line, "[", _TAGS_FROM_BRACKET) == trailing_tags.sub("", line)
