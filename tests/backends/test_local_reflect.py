"""Local reflect: recall + the docs/tools.md#hindsight_reflect sandwich, character for character."""

from __future__ import annotations

from pathlib import Path

from hindsight_hooks.backends.base import MemoryHit, ReflectRequest
from hindsight_hooks.backends.local_reflect import NO_REFLECTION, reflect_query, sandwich, sandwich_line
from tests.backends.test_local_support import Clock, item, make


def hit(n: int, score: float | None = 0.5, **kw: object) -> MemoryHit:
    # One day each: the spec's format, with the day alone (same-day facts show the time, ADR 180).
    base: dict[str, object] = {"text": f"fact {n}", "score": score, "created_at": f"2024-03-{n:02d}T10:00:00.000Z",
                               "source": "tool", "importance": 0.75}  # fmt: skip
    base.update(kw)
    return MemoryHit(**base)  # type: ignore[arg-type]


def test_empty_gives_the_no_information_text() -> None:
    assert sandwich([]) == NO_REFLECTION == "No relevant information found to reflect on."


def test_one_to_three_results_put_one_on_top() -> None:
    text = sandwich([hit(1, 0.93), hit(2, 0.41), hit(3, 0.05)])
    assert text == (
        "Based on recalled memories:\n\n"
        "## Top Facts\n"
        "- fact 1 (2024-03-01, tool, c:0.9)\n"
        "\n"
        "## Supporting Context\n"
        "- fact 2 (2024-03-02, tool, c:0.4)\n"
        "- fact 3 (2024-03-03, tool, c:0.1)\n"
        "\n"
        "_(3 memories retrieved)_"
    )
    assert sandwich([hit(1)]) == (
        "Based on recalled memories:\n\n## Top Facts\n- fact 1 (2024-03-01, tool, c:0.5)\n\n_(1 memories retrieved)_"
    )


def test_twelve_results_fill_all_three_sections() -> None:
    text = sandwich([hit(i) for i in range(1, 13)])
    lines = text.split("\n")
    assert lines[:2] == ["Based on recalled memories:", ""]
    assert lines[2] == "## Top Facts" and lines[3:6] == [sandwich_line(hit(i)) for i in (1, 2, 3)]
    assert lines[6:8] == ["", "## Supporting Context"]
    assert lines[8:13] == [sandwich_line(hit(i)) for i in range(4, 9)]
    assert lines[13:15] == ["", "## Recent Signals"]
    assert lines[15:18] == [sandwich_line(hit(i)) for i in (9, 10, 11)]
    assert lines[18:] == ["", "_(12 memories retrieved)_"]


def test_line_format_fallbacks_and_cut() -> None:
    long = "word " * 100
    line = sandwich_line(hit(1, score=None, text=long + "\n\nmore", created_at=None, source=None, importance=0.65))
    body = line[2 : line.index(" (?, unknown, c:0.7)")]
    assert len(body) == 200 and body.endswith("…")
    assert line.endswith("(?, unknown, c:0.7)")


def test_reflect_query_appends_trimmed_context() -> None:
    assert reflect_query("q", "  ctx  ") == "q\n\nAdditional context:\nctx"
    assert reflect_query("q", "   ") == "q"
    assert reflect_query("q", None) == "q"


def test_backend_reflect_end_to_end(tmp_path: Path) -> None:
    backend = make(tmp_path, Clock())
    backend.retain_batch(
        "b",
        [item("postgres is the primary database", "d1"), item("redis caches sessions", "d2", source="auto")],
        operation_id="op",
    )
    assert backend.reflect("b", ReflectRequest(query="kubernetes")).text == NO_REFLECTION
    text = backend.reflect("b", ReflectRequest(query="postgres", context="  and redis  ")).text
    assert text.startswith("Based on recalled memories:\n\n## Top Facts\n- ")
    # Both said on one day: each shows its time too (ADR 180).
    assert "postgres is the primary database (2023-11-14 22:13 UTC, tool, c:" in text
    assert "redis caches sessions (2023-11-14 22:13 UTC, transcript, c:" in text
    assert text.endswith("_(2 memories retrieved)_")


def test_facts_said_on_one_day_show_their_time_among_those_shown() -> None:
    """Two facts of one day would show two equal dates (ADR 180); a day said once stays plain, and
    a fact past the sections (not shown) does not make its day timed."""
    text = sandwich(
        [
            hit(1, created_at="2024-03-05T16:40:00Z"),
            hit(2, created_at="2024-03-05T09:15:00Z"),
            hit(3, created_at="2024-03-07T10:00:00Z"),
        ]
    )
    assert "- fact 1 (2024-03-05 16:40 UTC, tool, c:0.5)" in text
    assert "- fact 2 (2024-03-05 09:15 UTC, tool, c:0.5)" in text
    assert "- fact 3 (2024-03-07, tool, c:0.5)" in text
    unseen = [hit(i) for i in range(1, 12)] + [hit(12, created_at="2024-03-01T11:00:00Z")]
    assert "- fact 1 (2024-03-01, tool, c:0.5)" in sandwich(unseen)


def test_a_fact_is_dated_when_it_was_said() -> None:
    """A server's hit carries when it was said apart from when it was stored (ADR 174)."""
    said = MemoryHit(
        text="rotate the staging certificates", created_at="2025-03-20T11:00:00Z", mentioned_at="2025-03-14T16:00:00Z"
    )
    assert "(2025-03-14, " in sandwich_line(said)
    assert "(2025-03-20, " in sandwich_line(MemoryHit(text="no message time", created_at="2025-03-20T11:00:00Z"))
