"""The ``[semantic]`` extra: real WordLlama vectors in the store's own file, hybrid recall (ADR 116, 117).

Everything is real: the model the wheel ships, SQLite files, child processes. The tests need the
extra installed (``scripts/test`` installs it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import warnings
from pathlib import Path
from typing import Any

import pytest

from hindsight_hooks.backends.base import BackendError, RecallRequest, ReflectRequest
from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.backends.local_embedding import BATCH, count_missing, embed_text
from hindsight_hooks.backends.semantic import DIM, MODEL_LABEL, StaticEmbedder, available
from tests.backends.test_local_support import item, raw

ROOT = Path(__file__).resolve().parents[2]
FACTS = ["we run Postgres 16", "the deploy script lives in ops", "I like pizza on fridays", "Redis is our cache"]

# One embedder for the module: loading it is the slow part, and it is stateless once loaded.
_EMBEDDER = StaticEmbedder()


def semantic_store(path: Path, texts: list[str] = FACTS, **kw: object) -> LocalBackend:
    backend = LocalBackend(path, semantic=_EMBEDDER, **kw)  # type: ignore[arg-type]
    backend.retain_batch("b", [item(t, f"d{i}") for i, t in enumerate(texts)], operation_id="facts")
    assert backend.wait_for_vectors(120)
    return backend


def found(backend: LocalBackend, query: str, **kw: object) -> list[str]:
    return [h.text for h in backend.recall("b", RecallRequest(query=query, **kw)).hits]  # type: ignore[arg-type]


def read_into_memory(backend: LocalBackend) -> LocalBackend:
    """The bank's vectors read into the process's index: a recall of a cold bank hands the read
    to the worker (and answers by words), the wait lets it finish."""
    found(backend, "database")
    assert backend.wait_for_vectors(120)
    return backend


def test_the_extra_is_installed_for_these_tests() -> None:
    assert available()


def test_database_finds_postgres_and_reflect_answers_with_it(tmp_path: Path) -> None:
    backend = semantic_store(tmp_path / "memory.db")
    assert found(backend, "database") == ["we run Postgres 16"]
    assert "dense" in backend.last_search_mode
    assert found(backend, "what database do we use?") == ["we run Postgres 16"]
    text = backend.reflect("b", ReflectRequest(query="what database do we use?")).text
    assert "we run Postgres 16" in text.split("## Top Facts")[1].splitlines()[1]
    # A word query still finds its words, and nothing far away comes with it.
    assert found(backend, "pizza") == ["I like pizza on fridays"]


def test_a_greeting_that_shares_only_a_name_does_not_outrank_the_answer(tmp_path: Path) -> None:
    # A static model's vector of a short greeting is little more than the name's vector, so the
    # question naming Kevin found the greeting closest; short texts are discounted (ADR 160).
    texts = [
        "Hi Kevin! How are you?",
        "Kevin plays football every weekend and trains with his club for the cup final",
        *FACTS,
    ]
    backend = semantic_store(tmp_path / "memory.db", texts)
    found(backend, "warm up")  # the first recall hands the matrix load to the worker
    assert backend.wait_for_vectors(120)
    hits = found(backend, "What sports does Kevin like?")
    assert "dense" in backend.last_search_mode
    assert hits[0] == texts[1]


def test_a_word_the_bank_says_everywhere_pulls_the_query_vector_less(tmp_path: Path) -> None:
    # The query vector weighs each term by its rarity in the bank (ADR 160). With equal weights it
    # is the model's own vector of the terms (raw token vectors summed, as the model pools them).
    import numpy as np

    from hindsight_hooks.backends.local_query_vector import weighted_query

    rows = _EMBEDDER.term_vectors(["database", "use"])
    assert rows is not None
    same = weighted_query(rows, [0, 0], 10)
    assert float(same @ _EMBEDDER.embed_array(["database use"])[0]) == pytest.approx(1.0, abs=1e-5)
    common = weighted_query(rows, [0, 9], 10)  # "use" in 9 of 10 units: "database" leads
    rare = weighted_query(rows, [9, 0], 10)
    assert float(common @ rows[0]) > float(same @ rows[0]) > float(rare @ rows[0])
    assert np.isclose(np.linalg.norm(common), 1.0)


def test_a_word_the_bank_never_says_is_searched_on_its_own(tmp_path: Path) -> None:
    """In a longer question the one word that carries the meaning is one voice in the average:
    "which database engine should I tune?" is far from "we run Postgres 16" (0.18, under the
    floor) while "database" alone is near it. Searched on its own, it finds it (ADR 176)."""
    backend = read_into_memory(semantic_store(tmp_path / "memory.db"))
    assert found(backend, "which database engine should I tune?") == ["we run Postgres 16"]
    assert found(backend, "where is the deployment tooling kept?") == ["the deploy script lives in ops"]
    assert found(backend, "zxqv flurb blorp") == []  # words nobody says find nothing far away


def test_only_terms_no_unit_says_get_a_search_of_their_own() -> None:
    import numpy as np

    from hindsight_hooks.backends.local_query_vector import UNSAID_PROBES, unsaid_term_vectors

    rows = _EMBEDDER.term_vectors(["database", "use", "engine", "tune", "cache"])
    assert rows is not None
    probes = unsaid_term_vectors(rows, [0, 4, 0, 0, 0])  # "use" is said by 4 units
    assert len(probes) == UNSAID_PROBES == 3  # the first three unsaid ones, in query order
    for probe, row in zip(probes, (rows[0], rows[2], rows[3]), strict=True):
        assert np.isclose(np.linalg.norm(probe), 1.0) and float(probe @ row) > 0.999 * float(np.linalg.norm(row))
    assert unsaid_term_vectors(rows[:1], [0]) == []  # one term: its vector is the query's own
    assert unsaid_term_vectors(rows[:2], [3, 1]) == []  # every word is said: the lexical side has them
    assert unsaid_term_vectors(np.zeros((2, DIM), dtype=np.float32), [0, 0]) == []  # no known token


def test_a_word_the_bank_says_everywhere_does_not_fill_a_hybrid_recall(tmp_path: Path) -> None:
    """ADR 181 in hybrid recall: the notes that say only "use" are neither near the question by
    meaning nor matched by a rare word, so they do not fill the limit."""
    from tests.backends.test_local_ranking import COMMON_WORD_NOTES, DATABASE_NOTES

    backend = read_into_memory(semantic_store(tmp_path / "memory.db", COMMON_WORD_NOTES + DATABASE_NOTES))
    assert set(found(backend, "which database do we use?")) == set(DATABASE_NOTES)
    assert backend.last_search_mode.endswith("+dense")


def test_without_the_extra_recall_is_lexical_as_before(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path / "memory.db")
    backend.retain_batch("b", [item(t, f"d{i}") for i, t in enumerate(FACTS)], operation_id="facts")
    assert found(backend, "database") == []
    assert raw(backend.path).execute("SELECT count(*) FROM unit_vectors").fetchone()[0] == 0


def test_vectors_are_float16_blobs_in_the_same_file(tmp_path: Path) -> None:
    backend = semantic_store(tmp_path / "memory.db")
    rows = raw(backend.path).execute("SELECT model, length(vector) FROM unit_vectors").fetchall()
    assert rows == [(MODEL_LABEL, 2 * DIM)] * len(FACTS)


def test_a_recall_never_waits_for_the_model(tmp_path: Path) -> None:
    """Before the model is loaded the hook gets the lexical answer at once."""
    cold = StaticEmbedder()
    backend = LocalBackend(tmp_path / "memory.db", semantic=cold)
    backend.retain_batch("b", [item("we run Postgres 16", "d")], operation_id="op")
    if not cold.ready:  # the load started in the background when the backend opened
        assert found(backend, "Postgres") == ["we run Postgres 16"]
        assert "dense" not in backend.last_search_mode
    assert backend.wait_for_vectors(120)
    found(backend, "database")  # the first recall of a bank may still find its matrix loading
    assert backend.wait_for_vectors(120)
    assert found(backend, "database") == ["we run Postgres 16"]


def test_changed_and_forgotten_units_follow_in_vector_search(tmp_path: Path) -> None:
    backend = semantic_store(tmp_path / "memory.db")
    uid = next(h.id for h in backend.list_units("b", 10, 0) if h.text == "we run Postgres 16")
    assert uid is not None
    assert backend.update_unit("b", uid, content="we moved the team lunch to thursdays")
    assert backend.wait_for_vectors(120)
    assert found(backend, "database") == []
    assert backend.forget_unit("b", next(h.id for h in backend.list_units("b", 10, 0) if "Redis" in h.text) or "")
    assert found(backend, "cache") == []


def test_a_damaged_vector_is_left_out_and_the_others_still_rank(tmp_path: Path) -> None:
    """A flipped bit can turn a stored vector into NaN or inf, or the row may hold something else:
    that unit is found by its words only, the bank's other vectors still rank, and nothing is
    printed into the host's stderr (a RuntimeWarning would be)."""
    import numpy as np

    path = tmp_path / "memory.db"
    semantic_store(path).close()
    damage = {
        "the deploy script lives in ops": np.full(DIM, np.nan, dtype=np.float16).tobytes(),
        "I like pizza on fridays": np.full(DIM, np.inf, dtype=np.float16).tobytes(),
        "Redis is our cache": "x" * (2 * DIM),  # text of a vector's size, not a blob
    }
    conn = raw(path)
    for text, blob in damage.items():
        conn.execute(
            "UPDATE unit_vectors SET vector = ? WHERE unit_id = (SELECT id FROM units WHERE content = ?)", (blob, text)
        )
    conn.close()
    backend = LocalBackend(path, semantic=_EMBEDDER)
    found(backend, "warm up")  # the first recall of a bank hands its matrix load to the worker
    assert backend.wait_for_vectors(120)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert found(backend, "database") == ["we run Postgres 16"]  # the sound vector still ranks
        assert "dense" in backend.last_search_mode
        for words, text in [("deploy script", "the deploy script lives in ops"), ("pizza", "I like pizza on fridays"),
                            ("Redis", "Redis is our cache")]:  # fmt: skip
            assert found(backend, words) == [text]  # the damaged ones by their words
    backend.close()


def test_vector_hits_obey_tag_filters(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path / "memory.db", semantic=_EMBEDDER)
    backend.retain_batch(
        "b",
        [item("we run Postgres 16", "a", tags=["repo:a"]), item("we run MySQL 8", "b", tags=["repo:b"])],
        operation_id="op",
    )
    assert backend.wait_for_vectors(120)
    groups = [{"tags": ["repo:b"], "match": "any_strict"}]
    assert found(backend, "database", tag_groups=groups) == ["we run MySQL 8"]


def test_backfill_is_resumable_after_an_interruption(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    lexical = LocalBackend(path)
    texts = [f"note {i}: the database cluster {i} runs Postgres" for i in range(600)]
    lexical.retain_batch("b", [item(t, f"d{i}") for i, t in enumerate(texts)], operation_id="bulk")
    lexical.close()
    backend = LocalBackend(path, semantic=_EMBEDDER)
    assert backend._worker is not None
    backend._worker.wait_idle(120)  # the worker's own catch-up may already have done part of it
    conn = raw(path)
    conn.execute("DELETE FROM unit_vectors")  # start from none, whatever the worker did
    stop = threading.Event()
    progress = []
    for done, missing in backend.backfill(stop):
        progress.append((done, missing))
        if done:
            stop.set()  # interrupted after the first batch
    assert progress[0] == (0, 600) and 0 < progress[-1][0] < 600
    after_first = count_missing(conn, MODEL_LABEL)[0]
    assert 0 < after_first < 600
    final = list(backend.backfill())
    assert final[0] == (0, after_first) and final[-1][0] == after_first
    assert count_missing(conn, MODEL_LABEL) == (0, 600)


def test_the_backfill_and_the_workers_catch_up_embed_each_unit_once(tmp_path: Path) -> None:
    """``hindsight-hooks embed`` runs ``backfill`` while the backend's worker would catch up on the
    same units: the worker leaves them to it (at most the batch in hand is done twice)."""
    path = tmp_path / "memory.db"
    lexical = LocalBackend(path)
    texts = [f"note {i}: the database cluster {i} runs Postgres" for i in range(2000)]
    lexical.retain_batch("b", [item(t, f"d{i}") for i, t in enumerate(texts)], operation_id="bulk")
    lexical.close()
    embedder = StaticEmbedder()
    real = embedder.embed_array
    embedded: list[int] = []

    def counting(batch: list[str]) -> Any:
        embedded.append(len(batch))
        return real(batch)

    embedder.embed_array = counting  # type: ignore[method-assign]
    backend = LocalBackend(path, semantic=embedder)
    progress = list(backend.backfill())
    assert progress[0] == (0, 2000) and progress[-1][0] == 2000
    assert backend.wait_for_vectors(120)
    assert count_missing(raw(path), MODEL_LABEL) == (0, 2000)
    assert 2000 <= sum(embedded) <= 2000 + BATCH
    backend.close()


def test_a_process_that_exits_at_once_leaves_vectors_to_the_next(tmp_path: Path) -> None:
    """A short-lived hook process retains and exits; the next process's worker catches up."""
    path = tmp_path / "memory.db"
    script = (
        "import sys, os\n"
        "from hindsight_hooks.backends.local import LocalBackend\n"
        "from hindsight_hooks.backends.semantic import StaticEmbedder\n"
        "b = LocalBackend(sys.argv[1], semantic=StaticEmbedder())\n"
        "b.retain_batch('b', [{'content': 'we run Postgres 16', 'document_id': 'd'}], operation_id='op')\n"
        "os._exit(0)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    subprocess.run([sys.executable, "-c", script, str(path)], check=True, env=env, timeout=120)
    backend = LocalBackend(path, semantic=_EMBEDDER)
    assert backend.wait_for_vectors(120)
    assert count_missing(raw(path), MODEL_LABEL) == (0, 1)
    assert found(backend, "database") == ["we run Postgres 16"]


_OFFLINE_PROBE = r"""
import json, os, socket, sys
def refuse(*a, **k):
    raise OSError("network use attempted")
socket.socket.connect = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
import hindsight_hooks, hindsight_hooks.plugin
light = not any(m in sys.modules for m in ("numpy", "wordllama", "tokenizers"))
from hindsight_hooks.backends.semantic import StaticEmbedder
e = StaticEmbedder()
e.load()
v = e.embed_array(["we run Postgres 16"])
print(json.dumps({"light": light, "shape": list(v.shape)}))
"""


def test_the_model_loads_from_the_wheel_without_network(tmp_path: Path) -> None:
    """HF_HUB_OFFLINE=1, sockets refused, an empty HOME: the bundled files are all it needs."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env["PYTHONPATH"] = str(ROOT / "src")
    out = subprocess.run(
        [sys.executable, "-c", _OFFLINE_PROBE], capture_output=True, text=True, env=env, timeout=120, check=True
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"light": True, "shape": [1, DIM]}
    assert list(tmp_path.iterdir()) == []  # nothing cached or downloaded


def test_what_a_unit_is_embedded_from() -> None:
    assert embed_text("assistant: Use 4821; the lower ones are taken", "ctx\x1eport billing service") == (
        "Use 4821 lower ones taken port billing service"
    )
    assert embed_text("a plain note: with a colon", "") == "plain note colon"


@pytest.mark.parametrize("query", ["what do we use?", ""])
def test_a_query_without_words_finds_nothing_far_away(tmp_path: Path, query: str) -> None:
    backend = semantic_store(tmp_path / "memory.db")
    assert found(backend, query) == []


def test_re_embedding_the_newest_vector_is_seen_by_a_warm_process(tmp_path: Path) -> None:
    """The newest vector row is deleted and written again: its number must not come back (schema 4)."""
    backend = semantic_store(tmp_path / "memory.db")
    assert found(backend, "cache") == ["Redis is our cache"]  # the bank's matrix is in memory now
    newest = raw(backend.path).execute("SELECT unit_id FROM unit_vectors ORDER BY seq DESC LIMIT 1").fetchone()[0]
    assert backend.update_unit("b", newest, content="we moved the team lunch to thursdays")
    assert backend.wait_for_vectors(120)
    changed = next(h.text for h in backend.list_units("b", 10, 0) if h.id == newest)
    assert changed not in found(backend, "cache")
    assert changed in found(backend, "team lunch")


def test_vectors_wait_while_retains_keep_arriving(tmp_path: Path) -> None:
    """The worker writes once the store is quiet, so its transaction never delays a hook's write."""
    backend = LocalBackend(tmp_path / "memory.db", semantic=_EMBEDDER, vector_quiet_s=3600.0)
    backend.retain_batch("b", [item("we run Postgres 16", "d")], operation_id="op")
    assert backend._worker is not None
    assert not backend._worker.wait_idle(0.5)  # work is waiting for a quiet moment, not done
    assert raw(backend.path).execute("SELECT count(*) FROM unit_vectors").fetchone()[0] == 0
    assert backend.wait_for_vectors(120)  # hurries it
    assert raw(backend.path).execute("SELECT count(*) FROM unit_vectors").fetchone()[0] == 1


_ONE_HOOK = r"""
import json, sys
from hindsight_hooks.backends.base import RecallRequest
from hindsight_hooks.backends.local import LocalBackend
from hindsight_hooks.backends.semantic import StaticEmbedder
backend = LocalBackend(sys.argv[1], semantic=StaticEmbedder(lazy_load_s=3600), vector_startup_s=3600)
backend.retain_batch("b", [{"content": "we run Postgres 16", "document_id": "d"}], operation_id="op")
hits = backend.recall("b", RecallRequest(query="Postgres")).hits
print(json.dumps({"hits": [h.text for h in hits], "loaded": [m for m in ("numpy", "wordllama") if m in sys.modules]}))
"""


def test_a_process_that_runs_one_hook_never_loads_the_model(tmp_path: Path) -> None:
    """The model loads only after a delay: a hook process gets its lexical answer without it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    out = subprocess.run([sys.executable, "-c", _ONE_HOOK, str(tmp_path / "memory.db")], capture_output=True,
                         text=True, env=env, timeout=120, check=True)  # fmt: skip
    assert json.loads(out.stdout) == {"hits": ["we run Postgres 16"], "loaded": []}


def test_a_second_backend_on_the_file_starts_with_its_vectors_in_memory(tmp_path: Path) -> None:
    """A new session in a long-lived process opens its own backend: its first recall is by meaning
    too, from the matrix an earlier backend on the same file read (ADR 175)."""
    first = semantic_store(tmp_path / "memory.db")
    assert found(first, "database") in ([], ["we run Postgres 16"])  # this recall reads the bank's vectors
    assert first.wait_for_vectors(120)
    assert found(first, "database") == ["we run Postgres 16"]

    second = LocalBackend(tmp_path / "memory.db", semantic=_EMBEDDER)
    assert found(second, "database") == ["we run Postgres 16"]  # its first recall
    assert "dense" in second.last_search_mode
    other = LocalBackend(tmp_path / "other.db", semantic=_EMBEDDER)  # another file shares nothing
    other.retain_batch("b", [item("we run Postgres 16", "d")], operation_id="op")
    assert found(other, "database") == []
    assert "dense" not in other.last_search_mode


def test_warm_meaning_loads_a_banks_vectors_before_its_first_recall(tmp_path: Path) -> None:
    semantic_store(tmp_path / "memory.db").close()
    fresh = StaticEmbedder()  # a process that has just started: the model is not loaded yet
    backend = LocalBackend(tmp_path / "memory.db", semantic=fresh)
    assert not backend.warm_meaning(["b"], long_lived=False)  # a one-hook process is left alone
    assert backend.warm_meaning(["b", "no-such-bank"], long_lived=True)
    assert fresh.wait_ready(120) and backend.wait_for_vectors(120)
    assert found(backend, "database") == ["we run Postgres 16"]  # the first recall of this backend


def test_a_store_file_copied_back_from_an_older_backup_is_read_anew(tmp_path: Path) -> None:
    """A restored copy numbers its vectors from where the backup stopped: a process that had read
    the newer file must not give the restored file's new units the vectors of the units it lost."""
    import shutil

    path = tmp_path / "memory.db"
    backend = semantic_store(path, ["Redis is our cache"])
    backup = tmp_path / "backup.db"
    conn = raw(path)
    conn.execute("VACUUM INTO ?", (str(backup),))  # a consistent copy, as a user's backup tool would make
    conn.close()
    backend.retain_batch("b", [item("we run Postgres 16 as our database", "later")], operation_id="later")
    assert backend.wait_for_vectors(120)
    read_into_memory(backend)  # the matrix holds the later unit's vector now
    assert "we run Postgres 16 as our database" in found(backend, "database")
    backend.close()

    shutil.copyfile(backup, path)  # over the same file: same path, same inode
    for leftover in (tmp_path / "memory.db-wal", tmp_path / "memory.db-shm"):
        leftover.unlink(missing_ok=True)
    restored = LocalBackend(path, semantic=_EMBEDDER)
    restored.retain_batch("b", [item("I like pizza on fridays", "pizza")], operation_id="pizza")
    assert restored.wait_for_vectors(120)
    assert found(restored, "database") == []
    assert found(restored, "pizza") == ["I like pizza on fridays"]


def test_a_recall_does_not_wait_for_another_sessions_read_of_the_vectors(tmp_path: Path) -> None:
    """The index is shared by every backend of the process on the file; reading a large bank into
    it takes ~0.3 s at 100k. A turn of another session answers by words meanwhile (ADR 175)."""
    read_into_memory(semantic_store(tmp_path / "memory.db"))
    second = LocalBackend(tmp_path / "memory.db", semantic=_EMBEDDER)
    index = second._dense
    held, release, let_go = threading.Event(), threading.Event(), threading.Event()

    def reading_a_large_bank() -> None:  # holds the index alone, as a long read does
        assert index._lock.acquire_write(10)
        try:
            held.set()
            release.wait(30)
        finally:
            index._lock.release_write()
        let_go.set()

    reader = threading.Thread(target=reading_a_large_bank)
    reader.start()
    assert held.wait(10)
    try:
        assert found(second, "Postgres") == ["we run Postgres 16"]  # answered while the read goes on
        assert "dense" not in second.last_search_mode
        answered_during_the_read = not let_go.is_set()
    finally:
        release.set()
        reader.join()
    assert answered_during_the_read
    assert found(second, "database") == ["we run Postgres 16"]  # by meaning again once it is done


def test_sessions_recall_while_another_backend_on_the_file_adds_vectors(tmp_path: Path) -> None:
    """One index, many threads: recalls of two sessions run while a third backend keeps retaining
    and its worker keeps growing and re-indexing the shared matrix. No recall fails, and each finds
    what it asked for, by words or by meaning (ADR 175)."""
    path = tmp_path / "memory.db"
    semantic_store(path).close()
    writer = LocalBackend(path, semantic=_EMBEDDER, vector_quiet_s=0.0)
    readers = [LocalBackend(path, semantic=_EMBEDDER) for _ in range(2)]
    read_into_memory(readers[0])
    errors: list[BaseException] = []
    stop = threading.Event()

    def recall_in_turns(backend: LocalBackend) -> None:
        try:
            while not stop.is_set():
                assert found(backend, "Postgres") == ["we run Postgres 16"]
        except BaseException as exc:  # reported below
            errors.append(exc)
            stop.set()

    threads = [threading.Thread(target=recall_in_turns, args=(b,)) for b in readers]
    for t in threads:
        t.start()
    for n in range(60):  # bounded: 60 retains of 30 units (the matrix outgrows its first 1,024 rows)
        if stop.is_set():
            break
        writer.retain_batch("b", [item(f"note {n}.{k} about the garden and the weather", f"n{n}.{k}")
                                  for k in range(30)], operation_id=f"grow-{n}")  # fmt: skip
    assert writer.wait_for_vectors(120)
    stop.set()
    for t in threads:
        t.join(30)
    assert errors == []
    # Each reader's worker may still be reading the new vectors into the index it shares (a recall
    # that found the index busy handed it that read, ADR 175); once they are done, by meaning again.
    for reader in readers:
        assert reader.wait_for_vectors(120)
    assert found(readers[1], "database") == ["we run Postgres 16"]


GARDEN = [f"note {i}: the tomatoes in the garden need water after the hot weather" for i in range(3000)]


def _helpers_at_work() -> list[str]:
    """The helper threads whose stack is inside a recall's vector search right now."""
    frames = sys._current_frames()
    return [
        t.name
        for t in threading.enumerate()
        if t.name.startswith("hindsight-recall") and t.ident in frames and "_meaning_apart" in _stack(frames[t.ident])
    ]


def _stack(frame: Any) -> str:
    names = []
    while frame is not None:
        names.append(frame.f_code.co_name)
        frame = frame.f_back
    return " ".join(names)


def test_a_hybrid_recall_cut_at_any_moment_leaves_the_store_answering(tmp_path: Path) -> None:
    """A hybrid recall's vector search runs on a helper thread while the recall ranks by bm25, and
    the helper waits for the lexical candidates to score them (ADR 177, 227). Deadlines from 0.1 ms
    to 40 ms cut it before, during and after the statement: each recall either answers or fails as
    a timeout, no helper is left waiting or searching once it returned, and the next recall on the
    same connection answers in full."""
    backend = read_into_memory(semantic_store(tmp_path / "memory.db", [*FACTS, *GARDEN]))
    outcomes: set[str] = set()
    for step in range(40):
        timeout = 0.0001 * 1.17**step  # 0.1 ms … ~46 ms
        try:
            backend.recall("b", RecallRequest(query="do the tomatoes in the garden need water?"), timeout_s=timeout)
            outcomes.add("answered")
        except BackendError as exc:
            assert exc.kind == "timeout", exc
            outcomes.add("timed out")
        assert _helpers_at_work() == []
        assert found(backend, "database")[0] == "we run Postgres 16"
        assert "dense" in backend.last_search_mode
    assert outcomes == {"answered", "timed out"}


def test_a_hybrid_recall_over_many_matches_finds_by_meaning_on_a_helper_thread(tmp_path: Path) -> None:
    """Over 256 matches the vectors are searched on a helper thread while the recall ranks by bm25
    (ADR 227): a unit no word of the question says ("database") still comes back by its meaning."""
    backend = read_into_memory(semantic_store(tmp_path / "memory.db", [*FACTS, *GARDEN]))
    hits = backend.recall("b", RecallRequest(query="tomatoes garden water database", limit=12)).hits
    assert "we run Postgres 16" in [h.text for h in hits]
    assert "dense" in backend.last_search_mode
    assert any(t.name.startswith("hindsight-recall") for t in threading.enumerate())
    assert _helpers_at_work() == []


def test_hybrid_recalls_from_many_threads_answer_as_one_at_a_time_does(tmp_path: Path) -> None:
    """Eight threads over four backends on one file, each recall's statement on a helper thread:
    every thread gets exactly the hits a lone recall gets for the same question (ADR 177)."""
    path = tmp_path / "memory.db"
    read_into_memory(semantic_store(path, [*FACTS, *GARDEN[:500]])).close()
    backends = [read_into_memory(LocalBackend(path, semantic=_EMBEDDER)) for _ in range(4)]
    questions = ["database", "what database do we use?", "tomatoes water", "where is the deploy script?", "cache"]
    alone = {q: found(backends[0], q) for q in questions}
    assert alone["database"][0] == "we run Postgres 16"
    answers: list[tuple[str, list[str]]] = []
    errors: list[BaseException] = []

    def ask(backend: LocalBackend) -> None:
        try:
            for _ in range(10):  # bounded
                for q in questions:
                    answers.append((q, found(backend, q)))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=ask, args=(backends[n % 4],)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == []
    assert len(answers) == 8 * 10 * len(questions)
    wrong = [(q, hits) for q, hits in answers if hits != alone[q]]
    assert wrong == [], (len(wrong), wrong[:3], alone)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX-only; this machine and CI are Linux")
def test_a_forked_child_recalls_by_meaning_with_threads_of_its_own(tmp_path: Path) -> None:
    """The helper threads are per process: a child forked after a hybrid recall has none of its
    parent's, and its own recall still answers by words and meaning (ADR 177)."""
    backend = read_into_memory(semantic_store(tmp_path / "memory.db"))
    assert found(backend, "database") == ["we run Postgres 16"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # "fork() in a multi-threaded process"
        child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through its exit code
        try:
            ok = found(backend, "database") == ["we run Postgres 16"] and "dense" in backend.last_search_mode
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_a_recall_whose_snapshot_is_older_than_the_index_searches_by_words_and_reads_nothing(tmp_path: Path) -> None:
    """A recall's snapshot can be older than another session's refresh of the shared index. Its
    newest vector row is then older than the index's, as a file copied back from a backup would
    look. Reading the bank anew would cost a hook ~0.3 s at 100k vectors; instead the recall gets
    no matrix (by words this once) and the index stays as it was (ADR 177)."""
    from hindsight_hooks.backends.local_schema import slot_range

    path = tmp_path / "memory.db"
    backend = read_into_memory(semantic_store(path))
    index, model = backend._dense, _EMBEDDER.model
    lo, hi = slot_range(int(raw(path).execute("SELECT slot FROM banks WHERE bank_id = 'b'").fetchone()[0]))
    older = raw(path)
    older.execute("BEGIN")
    older.execute("SELECT count(*) FROM unit_vectors").fetchone()  # the snapshot starts here
    backend.retain_batch("b", [item("the garden needs water", "later")], operation_id="later")
    assert backend.wait_for_vectors(120)
    found(backend, "database")  # a newer snapshot: the index reads the new vector
    bank = index._banks[(lo, model)]
    read = (bank.count, bank.last_vector_rowid)
    with index.searching(older, lo, hi, model, _EMBEDDER.dim, 1.0) as searched:
        assert searched is None
    assert index._banks[(lo, model)] is bank and (bank.count, bank.last_vector_rowid) == read
    older.execute("COMMIT")
    with index.searching(older, lo, hi, model, _EMBEDDER.dim, 1.0) as searched:
        assert searched is bank  # a snapshot as new as the index's: searched as it is


def test_a_store_searched_by_words_only_starts_no_helper_thread(tmp_path: Path) -> None:
    """The helper threads are for hybrid recall (ADR 177): a process on a store without vectors
    ranks 400 matches on its own thread and never imports ``concurrent.futures``."""
    script = (
        "import json, sys, threading\n"
        "from hindsight_hooks.backends.base import RecallRequest\n"
        "from hindsight_hooks.backends.local import LocalBackend\n"
        "b = LocalBackend(sys.argv[1])\n"
        "items = [{'content': f'note {i}: water the tomatoes', 'document_id': f'd{i}'} for i in range(400)]\n"
        "b.retain_batch('b', items, operation_id='op')\n"
        "hits = b.recall('b', RecallRequest(query='tomatoes water'), 1.0).hits\n"
        "print(json.dumps({'hits': len(hits), 'futures': 'concurrent.futures' in sys.modules,\n"
        "                  'threads': threading.active_count()}))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path / "memory.db")], capture_output=True,
                         text=True, env=env, timeout=120, check=True)  # fmt: skip
    seen = json.loads(out.stdout)
    assert seen["hits"] > 0
    assert (seen["futures"], seen["threads"]) == (False, 1)


def test_an_inflection_the_stemmer_does_not_know_is_found_by_its_beginning_in_hybrid_too(tmp_path: Path) -> None:
    """ADR 185 with the extra: the vectors do not place "déploie" near "déploiements", the word
    search's prefix does, while the vector side keeps the word itself."""
    # no "deploy" here: Porter stems it as it stems "déploie", and a word the bank says is not widened
    texts = [
        "Les déploiements se font uniquement le mardi.",
        "Wir verwenden Redis für die Sitzungen.",
        FACTS[0],
        FACTS[3],
    ]
    backend = read_into_memory(semantic_store(tmp_path / "memory.db", texts))
    assert found(backend, "quand est-ce qu'on déploie ?")[:1] == [texts[0]]
    assert "dense" in backend.last_search_mode
    assert found(backend, "Sitzung")[:1] == [texts[1]]


POLISH = [
    "user: Musimy wybrać bazę danych dla modułu rozliczeń. Co jest lepsze, Postgres czy MySQL?",
    "user: Dobrze, to bierzemy Postgres 16, bo zespół go już zna i mamy do niego kopie zapasowe.",
    "user: Dlaczego CI jest znowu czerwony? Wczoraj wszystko działało.",
    "user: Aha, test integracyjny nie miał dostępu do bazy, bo zmienna DATABASE_URL nie była ustawiona.",
    "user: Jak wdrażamy frontend? Czy to jest na Vercel?",
    "user: Tak, frontend jest na Vercel, a API wdrażamy na Fly.io przez GitHub Actions.",
    "user: Logi są w Loki i trzymamy je przez 30 dni, potem się same usuwają.",
]


def test_where_the_model_puts_every_unit_near_the_question_nearness_finds_nothing(tmp_path: Path) -> None:
    """Trial Q (ADR 200): the English model puts Polish texts near each other, so a Polish question
    about nothing stored passed the fixed floor with every unit. Measured against the bank's mean
    cosine with the question, only what is clearly nearer than the rest is found by meaning."""
    sessions = [f"{text} (sesja {n})" for n in range(1, 4) for text in POLISH]  # 21 units: a bank to tell by
    backend = read_into_memory(semantic_store(tmp_path / "memory.db", sessions))
    try:
        # before: 8 hits, of 4 of the 7 texts; now one text at most (its copies in each session)
        assert len(texts(backend, "Czy możesz mi przetłumaczyć README na angielski?")) <= 1
        assert texts(backend, "Ile dni trzymamy logi?") == [POLISH[6]]  # the answer, and only it
        assert texts(backend, "Gdzie wdrażamy frontend?") == [POLISH[4], POLISH[5]]
    finally:
        backend.close()


def texts(backend: LocalBackend, query: str) -> list[str]:
    """The distinct texts found, in order, without the session they were said in."""
    return list(dict.fromkeys(hit.rsplit(" (sesja", 1)[0] for hit in found(backend, query)))
