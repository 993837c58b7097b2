"""Batching and shuffling: release by size or age, mixed providers, CSPRNG or injected RNG order."""

from __future__ import annotations

import random
import threading
import time

import pytest

from trustnode.config import BatchSettings
from trustnode.storage.batching import TraceBatcher


class FakeClock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_full_batch_released_shuffled_and_deterministic_under_seed() -> None:
    def run(seed: int) -> list[str]:
        clock = FakeClock()
        b: TraceBatcher[str] = TraceBatcher(size=6, max_wait_s=60, rng=random.Random(seed), clock=clock)
        for i in range(6):
            assert b.poll() is None  # fewer than `size` queued and none has waited max_wait_s
            b.submit(f"provider{i % 3}", f"trace{i}")
        batch = b.poll()
        assert batch is not None and batch.reason == "full" and batch.providers == 3
        assert sorted(batch.items) == [f"trace{i}" for i in range(6)]
        assert len(b) == 0
        return batch.items

    assert run(1) == run(1)
    orders = {tuple(run(s)) for s in range(20)}
    assert len(orders) > 10  # the order really is shuffled, and differs by seed


def test_partial_batch_waits_for_max_wait() -> None:
    clock = FakeClock()
    b: TraceBatcher[int] = TraceBatcher(size=4, max_wait_s=5.0, rng=random.Random(0), clock=clock)
    b.submit("p1", 1)
    clock.t += 2
    b.submit("p2", 2)
    assert b.poll() is None
    assert b.time_until_due() == pytest.approx(3.0)
    clock.t += 3
    batch = b.poll()
    assert batch is not None and batch.reason == "max_wait" and sorted(batch.items) == [1, 2]
    assert b.time_until_due() is None


def test_overflow_goes_to_next_batch_oldest_first() -> None:
    clock = FakeClock()
    b: TraceBatcher[int] = TraceBatcher(size=3, max_wait_s=10, rng=random.Random(0), clock=clock)
    for i in range(7):
        b.submit("p", i)
    first, second = b.poll(), b.poll()
    assert first is not None and second is not None
    assert sorted(first.items) == [0, 1, 2] and sorted(second.items) == [3, 4, 5]
    assert b.poll() is None and len(b) == 1
    rest = b.flush()
    assert [sorted(x.items) for x in rest] == [[6]] and rest[0].reason == "flush"
    assert [first.seq, second.seq, rest[0].seq] == [1, 2, 3]


def test_shuffle_hides_provider_position() -> None:
    """Over many batches, provider A's first trace is not stuck at position 0."""
    positions = set()
    b: TraceBatcher[str] = TraceBatcher(size=4, max_wait_s=10)  # real CSPRNG
    for _ in range(40):
        b.submit("A", "a")
        for p in ("B", "C", "D"):
            b.submit(p, p.lower())
        batch = b.poll()
        assert batch is not None
        positions.add(batch.items.index("a"))
    assert positions == {0, 1, 2, 3}


def test_next_batch_blocks_until_due() -> None:
    b: TraceBatcher[int] = TraceBatcher(size=2, max_wait_s=30)
    assert b.next_batch(timeout=0.05) is None
    threading.Timer(0.1, lambda: (b.submit("x", 1), b.submit("y", 2))).start()
    t0 = time.monotonic()
    batch = b.next_batch(timeout=5)
    assert batch is not None and sorted(batch.items) == [1, 2]
    assert time.monotonic() - t0 < 4


def test_next_batch_releases_partial_after_max_wait() -> None:
    b: TraceBatcher[int] = TraceBatcher(size=10, max_wait_s=0.2)
    b.submit("x", 1)
    batch = b.next_batch(timeout=5)
    assert batch is not None and batch.reason == "max_wait" and batch.items == [1]


def test_from_settings_and_validation() -> None:
    b: TraceBatcher[int] = TraceBatcher.from_settings(BatchSettings(size=3, max_wait_s=1.5))
    assert (b.size, b.max_wait_s) == (3, 1.5)
    with pytest.raises(ValueError):
        TraceBatcher(size=0, max_wait_s=1)
    with pytest.raises(ValueError):
        TraceBatcher(size=1, max_wait_s=-1)
    with pytest.raises(ValueError):
        b.submit("", 1)
