"""Text without spaces (Chinese, Japanese, Korean, Thai) and emoji are searchable (ADR 115).

Everything runs against real SQLite files through ``LocalBackend``, except the property, which
checks the bigram scheme against a real FTS5 table with the store's tokenizer.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from hindsight_hooks.backends.base import RecallRequest
from hindsight_hooks.backends.local_script import index_terms, normal_text
from hindsight_hooks.backends.local_text import StemFinder, match_expression, query_terms, term_key
from tests.backends.test_local_support import item, make, raw

NOTES = [
    "東京サーバーを再起動した",
    "deploy finished 🚀 all green",
    "我们的数据库是 Postgres 16",
    "서버를 재시작했습니다",
    "ร้านอาหารไทยเปิดตอนเที่ยง",
    "猫が好きです",
    "the plain english note about kestrels",
]


def _store(tmp_path: Path) -> object:
    backend = make(tmp_path)
    backend.retain_batch("b", [item(text, f"d{i}") for i, text in enumerate(NOTES)], operation_id="op")
    return backend


def _found(backend: object, query: str) -> list[str]:
    return [h.text for h in backend.recall("b", RecallRequest(query=query)).hits]  # type: ignore[attr-defined]


def test_a_word_inside_text_without_spaces_is_found(tmp_path: Path) -> None:
    backend = _store(tmp_path)
    assert _found(backend, "東京") == ["東京サーバーを再起動した"]
    assert _found(backend, "サーバー") == ["東京サーバーを再起動した"]
    assert _found(backend, "再起動") == ["東京サーバーを再起動した"]
    assert _found(backend, "数据库") == ["我们的数据库是 Postgres 16"]
    assert _found(backend, "서버") == ["서버를 재시작했습니다"]  # a Korean word with its particle attached
    assert _found(backend, "อาหาร") == ["ร้านอาหารไทยเปิดตอนเที่ยง"]
    assert _found(backend, "猫") == ["猫が好きです"]  # a one-character word


def test_emoji_are_searchable(tmp_path: Path) -> None:
    backend = _store(tmp_path)
    assert _found(backend, "🚀") == ["deploy finished 🚀 all green"]
    assert _found(backend, "🔥") == []


def test_a_question_in_the_script_finds_its_answer(tmp_path: Path) -> None:
    backend = _store(tmp_path)
    assert _found(backend, "東京のサーバーはどこ?")[0] == "東京サーバーを再起動した"
    assert _found(backend, "我们用什么数据库?")[0] == "我们的数据库是 Postgres 16"


def test_half_width_katakana_and_mixed_queries(tmp_path: Path) -> None:
    backend = _store(tmp_path)
    assert _found(backend, "ｻｰﾊﾞｰ") == ["東京サーバーを再起動した"]
    assert set(_found(backend, "kestrels 東京")) == {
        "東京サーバーを再起動した",
        "the plain english note about kestrels",
    }


def test_word_queries_are_unchanged() -> None:
    assert query_terms("Which port is the billing service on?") == ["port", "billing", "service"]
    assert match_expression(query_terms("deploy 🚀")) == '"deploy" OR script_terms : "\U000ff680"'


def test_update_forget_and_delete_keep_the_index_in_step(tmp_path: Path) -> None:
    backend = make(tmp_path)
    (uid,) = backend.retain_batch("b", [item("大阪のメモ", "d")], operation_id="op").unit_ids
    assert _found(backend, "大阪") == ["大阪のメモ"]
    assert backend.update_unit("b", uid, content="名古屋のメモ 🎉")
    assert _found(backend, "大阪") == []
    assert _found(backend, "名古屋") == ["名古屋のメモ 🎉"]
    assert _found(backend, "🎉") == ["名古屋のメモ 🎉"]
    assert backend.quick_check() == []
    assert backend.forget_unit("b", uid)
    assert _found(backend, "名古屋") == []
    assert backend.quick_check() == []


def test_only_units_with_such_text_carry_script_terms(tmp_path: Path) -> None:
    backend = _store(tmp_path)
    rows = dict(raw(backend.path).execute("SELECT content, script_terms FROM units").fetchall())  # type: ignore[attr-defined]
    assert rows["the plain english note about kestrels"] == ""
    assert rows["猫が好きです"] == "猫が が好 好き きで です す"


def test_coverage_counts_a_script_term_by_its_text() -> None:
    terms = query_terms("東京 サーバー 大阪")
    finder = StemFinder(frozenset(k for t in terms for k in term_key(t)))
    assert finder.found("東京サーバー") == frozenset({term_key(terms[0])[0], term_key(terms[1])[0]})


def test_a_reply_is_found_by_its_prompt_in_the_script(tmp_path: Path) -> None:
    """ADR 052's turn terms reach the script column too: the answer is found by the question."""
    import json

    backend = make(tmp_path)
    turn = json.dumps(
        [{"role": "user", "content": "東京のポート番号は?"}, {"role": "assistant", "content": "8080です"}]
    )
    backend.retain_batch("b", [item(turn, "s", source="auto")], operation_id="op")
    assert "assistant: 8080です" in _found(backend, "東京")


_CJK = st.text(
    alphabet=st.sampled_from("東京大阪サーバー再起動のをがはデータベース数据库我们猫🚀🎉"), min_size=1, max_size=12
)


@settings(max_examples=200, deadline=None)
@given(text=_CJK, data=st.data())
def test_every_piece_of_a_run_is_found_by_fts5(text: str, data: st.DataObject) -> None:
    """Any substring of a unit's text, asked alone, matches that unit in a real FTS5 index."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(script_terms, tokenize='porter unicode61')")
    conn.execute("INSERT INTO t(rowid, script_terms) VALUES (1, ?)", (index_terms(text),))
    start = data.draw(st.integers(0, len(text) - 1))
    piece = text[start : data.draw(st.integers(start + 1, len(text)))]
    terms = query_terms(piece)
    if not terms:  # hiragana particles and lone kana are no terms
        return
    for term in terms:
        found = conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (match_expression([term]),)).fetchall()
        assert found == [(1,)], (text, piece, term)
    assert normal_text(piece) in normal_text(text)
