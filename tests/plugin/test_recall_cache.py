"""The recall cache (docs/recall.md#cache): key, first-seen timestamp reuse, TTL, LRU, no all-failed entries."""

from __future__ import annotations

import threading
from typing import Any

from hindsight_hooks.backends.base import MemoryHit
from hindsight_hooks.plugin.recall.recall_cache import RecallCache, last_user_content
from hindsight_hooks.plugin.recall.render import BankBlock


class FakeClock:
    """An injected millisecond clock (our own test double, not a patch)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


SCOPES: list[list[Any]] = [["hh-project-x", [{"tags": ["repo:x"], "match": "any_strict"}]], ["user", None]]
BLOCKS = [BankBlock("hh-project-x", "q", [MemoryHit(text="m")])]
FAILURE = {"bank_id": "user", "query": "q", "error": "down", "kind": "timeout"}


def test_key_is_stable_hex_and_sensitive_to_scopes_and_content() -> None:
    k = RecallCache.key(SCOPES, "hello")
    assert len(k) == 64 and int(k, 16) >= 0
    assert k == RecallCache.key([list(s) for s in SCOPES], "hello")
    assert k != RecallCache.key(SCOPES, "hello!")
    assert k != RecallCache.key(SCOPES[:1], "hello")
    assert k != RecallCache.key(SCOPES, [{"type": "text", "text": "hello"}])
    # Key order inside dicts and None fields do not change the key (canonical JSON).
    a = RecallCache.key([{"b": 1, "a": None, "c": [1, {"y": 2, "x": 1}]}], {"q": 1, "z": None})
    b = RecallCache.key([{"c": [1, {"x": 1, "y": 2}], "b": 1}], {"q": 1})
    assert a == b


def test_key_never_contains_the_content() -> None:
    assert "secret words" not in RecallCache.key(SCOPES, "secret words")


def test_hit_reuses_render_blocks_failures_and_first_seen_timestamp() -> None:
    clock = FakeClock()
    cache = RecallCache(clock=clock)
    key = cache.key(SCOPES, "hi")
    assert cache.get(key) is None
    stored = cache.put(key, render="<hindsight-memory>…", blocks=BLOCKS, failures=[FAILURE], timestamp_ms=111, count=1)
    assert stored is not None
    clock.now += 30_000
    hit = cache.get(key)
    assert hit is not None
    assert (hit.render, hit.blocks, hit.failures, hit.timestamp_ms, hit.count) == (
        "<hindsight-memory>…",
        BLOCKS,
        [FAILURE],
        111,
        1,
    )
    assert cache.get(key) is hit  # the same entry, so the block stays byte-identical


def test_ttl_expiry() -> None:
    clock = FakeClock()
    cache = RecallCache(ttl_ms=60_000, clock=clock)
    key = cache.key(SCOPES, "hi")
    cache.put(key, render="r", blocks=BLOCKS, failures=[], timestamp_ms=1)
    clock.now += 59_999
    assert cache.get(key) is not None
    clock.now += 1
    assert cache.get(key) is None
    assert key not in cache and len(cache) == 0


def test_lru_keeps_32_entries_and_evicts_least_recently_used() -> None:
    cache = RecallCache(clock=FakeClock())
    keys = [cache.key(SCOPES, f"msg {i}") for i in range(33)]
    for i, key in enumerate(keys[:32]):
        cache.put(key, render=f"r{i}", blocks=BLOCKS, failures=[], timestamp_ms=i)
    assert len(cache) == 32
    assert cache.get(keys[0]) is not None  # touch: key 0 is now the most recent
    cache.put(keys[32], render="r32", blocks=BLOCKS, failures=[], timestamp_ms=32)
    assert len(cache) == 32
    assert keys[0] in cache
    assert keys[1] not in cache
    assert all(k in cache for k in keys[2:])


def test_all_failed_recall_is_never_cached() -> None:
    cache = RecallCache(clock=FakeClock())
    key = cache.key(SCOPES, "hi")
    assert cache.put(key, render="", blocks=[], failures=[FAILURE, FAILURE], timestamp_ms=5) is None
    assert cache.get(key) is None and len(cache) == 0
    # A partial failure is cached (with its failures), and so is an empty, failure-free recall.
    assert cache.put(key, render="r", blocks=BLOCKS, failures=[FAILURE], timestamp_ms=5) is not None
    other = cache.key(SCOPES, "nothing")
    assert cache.put(other, render="", blocks=[BankBlock("b", "q", [])], failures=[], timestamp_ms=6) is not None
    assert len(cache) == 2


def test_last_user_content_skips_injected_and_other_roles() -> None:
    msgs: list[dict[str, Any]] = [
        {"role": "user", "content": "first"},
        {"role": "user", "content": [{"type": "text", "text": "second"}]},
        {"role": "user", "content": "<hindsight-memory>\nold\n</hindsight-memory>", "customType": "hindsight-recall"},
        {"role": "assistant", "content": [{"type": "text", "text": "reply"}]},
        {"role": "toolResult", "content": [{"type": "text", "text": "out"}]},
    ]
    assert last_user_content(msgs) == [{"type": "text", "text": "second"}]
    assert last_user_content(msgs[2:]) is None
    assert last_user_content([]) is None


def test_concurrent_use_is_safe_and_bounded() -> None:
    cache = RecallCache(max_entries=8, clock=FakeClock())
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            for i in range(300):
                key = cache.key(SCOPES, f"{n}-{i % 20}")
                if cache.get(key) is None:
                    cache.put(key, render="r", blocks=BLOCKS, failures=[], timestamp_ms=i)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(cache) == 8
