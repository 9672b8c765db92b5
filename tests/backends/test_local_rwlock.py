"""The read/write lock the vector index is searched under (ADR 177), with real threads."""

from __future__ import annotations

import threading
import time

from hindsight_hooks.backends.local_rwlock import ReadWriteLock


def in_thread(fn: object) -> tuple[threading.Thread, list[object]]:
    out: list[object] = []
    thread = threading.Thread(target=lambda: out.append(fn()))  # type: ignore[operator]
    thread.start()
    return thread, out


def until_a_writer_waits(lock: ReadWriteLock) -> None:
    end = time.monotonic() + 10
    while not lock._writers_waiting and time.monotonic() < end:  # bounded
        time.sleep(0.001)
    assert lock._writers_waiting == 1


def held_by_a_reader_with_a_writer_waiting(
    writer_timeout: float,
) -> tuple[ReadWriteLock, threading.Thread, list[object]]:
    """A lock this thread reads under, and a thread that waits up to ``writer_timeout`` to write."""
    lock = ReadWriteLock()
    assert lock.acquire_read(1)
    writer, wrote = in_thread(lambda: lock.acquire_write(writer_timeout))
    until_a_writer_waits(lock)
    return lock, writer, wrote


def test_readers_share_the_lock() -> None:
    lock = ReadWriteLock()
    assert lock.acquire_read(1)
    thread, got = in_thread(lambda: lock.acquire_read(1))
    thread.join(5)
    assert got == [True]
    lock.release_read()
    lock.release_read()


def test_a_writer_has_it_alone() -> None:
    lock = ReadWriteLock()
    assert lock.acquire_write(1)
    for attempt in (lambda: lock.acquire_read(0.05), lambda: lock.acquire_write(0.05)):
        thread, got = in_thread(attempt)
        thread.join(5)
        assert got == [False]
    lock.release_write()
    assert lock.acquire_read(0.05)
    lock.release_read()


def test_a_writer_waits_for_the_readers_and_holds_new_ones_back() -> None:
    lock, writer, wrote = held_by_a_reader_with_a_writer_waiting(5)
    assert wrote == []
    late, late_got = in_thread(lambda: lock.acquire_read(0.1))
    late.join(5)
    assert late_got == [False]  # held back: a stream of searches cannot starve a refresh
    lock.release_read()
    writer.join(5)
    assert wrote == [True]
    lock.release_write()


def test_a_writer_that_gives_up_lets_the_readers_it_held_back_go_on() -> None:
    lock, writer, wrote = held_by_a_reader_with_a_writer_waiting(0.5)
    started = time.monotonic()
    reader, read = in_thread(lambda: lock.acquire_read(3))
    writer.join(5)
    reader.join(5)
    assert wrote == [False] and read == [True]
    assert time.monotonic() - started < 2  # let go when the writer gave up, not at its own timeout
    lock.release_read()
    lock.release_read()
    assert lock.acquire_write(0.05)
    lock.release_write()
