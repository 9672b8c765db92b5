"""The ``[semantic]`` extra's embedder: WordLlama's static model, loaded from its own wheel (ADR 116).

``pip install 'hindsight-hooks[semantic]'`` brings ``wordllama``, whose wheel ships its model (token
embeddings distilled from a large language model, 256 dimensions, 16 MB) and its tokenizer. A
text's vector is the average of its tokens' vectors: no neural network runs, so a query embeds in
~0.1 ms and a unit in ~0.05 ms on one core, and nothing is ever downloaded — the files are opened
from the installed package with downloads disabled, so a machine without network (or with
``HF_HUB_OFFLINE=1``) works the same.

Nothing here is imported by ``import hindsight_hooks``: ``available()`` only asks importlib whether
the package is installed; the library is imported when the model is loaded, on a background thread
(:meth:`StaticEmbedder.start_loading`), so a hook never waits for it — until it is ready, recall is
lexical (:meth:`StaticEmbedder.query_vector` returns None).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float32]

LIBRARY = "wordllama"
CONFIG = "l2_supercat"
DIM = 256
MODEL_LABEL = f"{LIBRARY}-{CONFIG}-{DIM}"
# A unit found by its vector alone must be at least this similar to the query. Averaged token
# vectors of unrelated texts are not orthogonal: between a question and random units of a
# synthetic coding conversation (the quality bench's generator, seed 7 — not the held-out default
# seed) the cosine's 95th percentile is 0.234, while the median question-evidence cosine is 0.57.
# Without a floor every recall would return its `limit` nearest units however far they are.
DENSE_FLOOR = 0.25
DENSE_FLOORS = {256: DENSE_FLOOR, 128: 0.29}  # the same rule at 128 dimensions: 95th percentile 0.285
_QUERY_CACHE = 32
_TERM_CACHE = 12 * _QUERY_CACHE  # the terms of that many queries (at most 12 each)
LAZY_LOAD_S = 2.0  # a recall starts the model load only in a process older than this
_BATCH = 64


class _Recent:
    """The newest ``size`` vectors by text (a thread-safe LRU): the banks of one turn share them."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._items: OrderedDict[str, Matrix] = OrderedDict()

    def get(self, key: str) -> Matrix | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: str, value: Matrix) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)


def available() -> bool:
    """True when the ``[semantic]`` extra is installed (checked without importing it)."""
    return importlib.util.find_spec(LIBRARY) is not None and importlib.util.find_spec("numpy") is not None


def _import_quietly() -> Any:
    """Import the library without letting it configure the host's logging.

    ``wordllama.inference`` calls ``logging.basicConfig(level=INFO)`` at import time, which would
    give a host that has not set up logging a root handler printing every library's INFO lines.
    A root logger we found without handlers is put back as it was.
    """
    # Tokenizing runs in small batches; the library's thread pool would only add threads to the
    # host and warn after every fork. A value the user set is kept.
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    module = importlib.import_module(LIBRARY)
    if not handlers and root.handlers != handlers:
        for handler in list(root.handlers):
            root.removeHandler(handler)
        root.setLevel(level)
    return module


class StaticEmbedder:
    """Embeds texts with the bundled WordLlama model; loads it once, in the background if asked."""

    # Embedding is a table lookup and an average: bounded, never waits on I/O, so recall may run
    # it on the hook's own thread (ADR 053's rule is for foreign embedders).
    bounded = True

    def __init__(self, dim: int = DIM, lazy_load_s: float = LAZY_LOAD_S) -> None:
        self.dim = dim
        self.lazy_load_s = lazy_load_s
        self.floor = DENSE_FLOORS[dim]
        self.model = MODEL_LABEL if dim == DIM else f"{LIBRARY}-{CONFIG}-{DIM}-trunc{dim}"
        self._lock = threading.Lock()  # the thread handle (never held while loading)
        self._load_lock = threading.Lock()
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self._inner: Any = None
        self.error: str | None = None
        self._queries = _Recent(_QUERY_CACHE)
        self._terms = _Recent(_TERM_CACHE)
        self._born = time.monotonic()

    @property
    def ready(self) -> bool:
        return self._ready.is_set()

    def start_loading(self) -> None:
        """Load the model on a daemon thread (idempotent); the caller never waits."""
        with self._lock:
            if self._thread is not None or self._ready.is_set():
                return
            self._thread = threading.Thread(target=self._load_quietly, name="hindsight-embedder-load", daemon=True)
            self._thread.start()

    @property
    def settled(self) -> bool:
        """Has this process lived ``lazy_load_s`` since the embedder was made (it is no one-hook process)?"""
        return time.monotonic() - self._born >= self.lazy_load_s

    def start_loading_if_settled(self) -> None:
        """``start_loading``, unless this process is younger than ``lazy_load_s``.

        A process that young may be a hook process that exits in a moment: importing the library
        next to the hook's work would only slow it down (the backend's worker loads the model a
        little later anyway, in a process that lives long enough to use it).
        """
        if self.settled:
            self.start_loading()

    def _load_quietly(self) -> None:
        try:
            self.load()
        except Exception as exc:  # a broken install costs vectors, never a hook
            self.error = f"{type(exc).__name__}: {exc}"[:300]

    def load(self) -> None:
        """Load the model from the installed package now (blocking); downloads are disabled."""
        if self._ready.is_set():
            return
        with self._load_lock:
            if self._ready.is_set():
                return
            library = _import_quietly()
            package = Path(library.__file__).resolve().parent
            # The wheel keeps weights in weights/ and the tokenizer in tokenizers/; pointing the
            # cache folder at the package makes the library find both there and never fetch.
            self._inner = library.WordLlama.load(
                config=CONFIG,
                dim=DIM,
                trunc_dim=None if self.dim == DIM else self.dim,
                cache_dir=package,
                disable_download=True,
            )
            self._ready.set()

    def wait_ready(self, timeout: float | None = None) -> bool:
        self.start_loading()
        return self._ready.wait(timeout)

    def embed_array(self, texts: list[str]) -> Matrix:
        """Unit-length float32 vectors, one row per text (a text with no known token: zeros)."""
        import numpy as np

        self.load()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = np.asarray(self._inner.embed(texts, norm=False, batch_size=_BATCH), dtype=np.float32)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        out[~np.isfinite(out).all(axis=1)] = 0.0
        return out

    def embed(self, texts: list[str]) -> list[list[float]]:
        """The ``Embedder`` protocol of ``local_vectors`` (lists of floats)."""
        return [list(map(float, row)) for row in self.embed_array(texts)]

    def query_vector(self, text: str) -> Matrix | None:
        """The query's vector, computed once per distinct query (the banks of one turn share it).

        None while the model is still loading: recall is then lexical, the hook does not wait.
        """
        if not self._ready.is_set():
            self.start_loading_if_settled()
            return None
        cached = self._queries.get(text)
        if cached is not None:
            return cached
        vector: Matrix = self.embed_array([text])[0]
        self._queries.put(text, vector)
        return vector

    def term_vectors(self, terms: list[str]) -> Matrix | None:
        """One row per query term, *not* normalised (zeros for a term without a known token),
        embedded once per distinct term and kept with the query cache: the banks of one turn
        share them.

        Not normalised because the model's own pooling averages raw token vectors, whose lengths
        differ ("database" ~16, "use" ~6): their plain sum is the model's vector of the terms,
        and hybrid recall weighs each row by the term's rarity in the bank (ADR 160). None while
        the model is still loading.
        """
        import numpy as np

        if not self._ready.is_set():
            self.start_loading_if_settled()
            return None
        have: dict[str, Matrix] = {}
        for term in dict.fromkeys(terms):
            row = self._terms.get(term)
            if row is not None:
                have[term] = row
        missing = [t for t in dict.fromkeys(terms) if t not in have]
        if missing:
            raw = np.asarray(self._inner.embed(missing, norm=False, batch_size=_BATCH), dtype=np.float32)
            raw[~np.isfinite(raw).all(axis=1)] = 0.0
            for term, row in zip(missing, raw, strict=True):
                have[term] = row
                self._terms.put(term, row)
        if not terms:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([have[t] for t in terms])
