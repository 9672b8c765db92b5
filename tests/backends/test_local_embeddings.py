"""Optional embeddings: float32 blobs, the dense formula, dense-only hits, and failure tolerance."""

from __future__ import annotations

import math
from pathlib import Path

from hindsight_hooks.backends.base import RecallRequest
from hindsight_hooks.timefmt import iso_from_epoch
from tests.backends.test_local_support import T0, Clock, item, make, raw

TOPICS = {"dog": 0, "puppy": 0, "leash": 0, "cat": 1, "kitten": 1, "car": 2, "engine": 2}


class TopicEmbedder:
    """Deterministic 3-d "meaning": counts of topic words (dogs, cats, cars) per text."""

    model = "topic-test-v1"

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        out = []
        for text in texts:
            vec = [0.0, 0.0, 0.0]
            for word in text.lower().replace(":", " ").split():
                if word in TOPICS:
                    vec[TOPICS[word]] += 1.0
            out.append(vec)
        return out


class BrokenEmbedder:
    def embed(self, texts: list[str]) -> list[list[float]]:
        raise RuntimeError("model server down")


def test_vectors_are_float32_blobs_of_unit_length(tmp_path: Path) -> None:
    backend = make(tmp_path, embedder=TopicEmbedder())
    backend.retain_batch("b", [item("puppy leash training", "d")], operation_id="op")
    model, blob = raw(backend.path).execute("SELECT model, vector FROM unit_vectors").fetchone()
    assert model == "topic-test-v1" and len(blob) == 3 * 4
    import array

    vec = array.array("f", blob).tolist()
    assert math.isclose(vec[0], 1.0, rel_tol=1e-6) and vec[1:] == [0.0, 0.0]


def test_dense_formula_and_dense_only_hits(tmp_path: Path) -> None:
    backend = make(tmp_path, Clock(T0), embedder=TopicEmbedder())
    stamp = iso_from_epoch(T0)
    backend.retain_batch(
        "b",
        [
            item("puppy leash training notes", "pup", timestamp=stamp),
            item("dog walking schedule", "dog", timestamp=stamp, source="auto"),
            item("engine oil for the car", "car", timestamp=stamp),
        ],
        operation_id="op",
    )
    hits = {h.text: h.score for h in backend.recall("b", RecallRequest(query="dog")).hits}
    # lexical + dense: fts 1 (only lexical hit), dense 1, importance .65, recency 1
    assert hits["dog walking schedule"] == round(0.5 * 1 + 0.3 * 1 + 0.2 * 0.65, 4)
    # dense only (no FTS match for "dog"): fts 0, dense 1, importance .75
    assert hits["puppy leash training notes"] == round(0.5 * 1 + 0.2 * 0.75, 4)
    assert "engine oil for the car" not in hits  # cosine 0 is no hit


def test_update_re_embeds(tmp_path: Path) -> None:
    backend = make(tmp_path, embedder=TopicEmbedder())
    (uid,) = backend.retain_batch("b", [item("kitten photos", "d")], operation_id="op").unit_ids
    assert [h.id for h in backend.recall("b", RecallRequest(query="cat")).hits] == [uid]
    backend.update_unit("b", uid, content="car engine photos")
    assert backend.recall("b", RecallRequest(query="cat")).hits == []
    assert [h.id for h in backend.recall("b", RecallRequest(query="car")).hits] == [uid]


def test_broken_embedder_never_costs_a_memory(tmp_path: Path) -> None:
    backend = make(tmp_path, Clock(T0), embedder=BrokenEmbedder())
    backend.retain_batch("b", [item("plain lexical fact", "d", timestamp=iso_from_epoch(T0))], operation_id="op")
    assert raw(backend.path).execute("SELECT count(*) FROM unit_vectors").fetchone()[0] == 0
    hits = backend.recall("b", RecallRequest(query="lexical")).hits
    assert [(h.text, h.score) for h in hits] == [("plain lexical fact", 0.95)]  # the plain lexical formula


def test_a_damaged_vector_of_a_foreign_embedder_is_no_match(tmp_path: Path) -> None:
    """A vector row that is not a whole float32 vector (cut short, or text) gives that unit no
    similarity, instead of an error from every recall that meets it."""
    backend = make(tmp_path, embedder=TopicEmbedder())
    backend.retain_batch("b", [item("puppy leash training", "pup"), item("dog walking schedule", "dog")],
                         operation_id="op")  # fmt: skip
    conn = raw(backend.path)
    conn.execute(
        "UPDATE unit_vectors SET vector = x'000102' WHERE unit_id = (SELECT id FROM units WHERE document_id = 'pup')"
    )
    conn.close()
    assert [h.text for h in backend.recall("b", RecallRequest(query="dog")).hits] == ["dog walking schedule"]
    conn = raw(backend.path)
    conn.execute(
        "UPDATE unit_vectors SET vector = 'abcd' WHERE unit_id = (SELECT id FROM units WHERE document_id = 'pup')"
    )
    conn.close()
    assert [h.text for h in backend.recall("b", RecallRequest(query="dog")).hits] == ["dog walking schedule"]
    assert "puppy leash training" in [h.text for h in backend.recall("b", RecallRequest(query="puppy")).hits]
