"""Batching and shuffling of traces from several providers before their sessions open.

If the node opened a session the moment a provider submitted, the timing and order of
sessions on chain would tell who submitted what. Instead traces wait in a pool and leave
in batches (`size` traces, or fewer once the oldest has waited `max_wait_s`), in an order
drawn by a CSPRNG shuffle, so neither position nor timing within a batch links a session
(and its segments) to a provider. Tests inject a seeded `random.Random` and a fake clock.
"""

from __future__ import annotations

import random
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from trustnode.config import BatchSettings

T = TypeVar("T")


@dataclass(frozen=True)
class Submission(Generic[T]):
    """One queued trace; `provider` never leaves the node (only used for batch statistics)."""

    provider: str
    item: T
    submitted_at: float


@dataclass
class Batch(Generic[T]):
    """Traces released together, already shuffled; open their sessions in `items` order."""

    seq: int
    items: list[T]
    providers: int
    released_at: float
    reason: str  # "full" | "max_wait" | "flush"
    _subs: list[Submission[T]] = field(default_factory=list, repr=False)

    def __len__(self) -> int:
        return len(self.items)

    @property
    def submissions(self) -> list[Submission[T]]:
        """The shuffled submissions (node-internal: carries providers for bookkeeping)."""
        return list(self._subs)


class TraceBatcher(Generic[T]):
    """Thread-safe pool that releases shuffled batches by size or by age of the oldest trace."""

    def __init__(
        self,
        size: int,
        max_wait_s: float,
        *,
        rng: random.Random | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if size < 1:
            raise ValueError("batch size must be at least 1")
        if max_wait_s < 0:
            raise ValueError("max_wait_s must be >= 0")
        self.size = size
        self.max_wait_s = max_wait_s
        self._rng: random.Random = rng if rng is not None else secrets.SystemRandom()
        self._clock = clock
        self._pool: list[Submission[T]] = []
        self._seq = 0
        self._cond = threading.Condition()

    @classmethod
    def from_settings(
        cls,
        settings: BatchSettings,
        *,
        rng: random.Random | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> TraceBatcher[T]:
        return cls(settings.size, settings.max_wait_s, rng=rng, clock=clock)

    def __len__(self) -> int:
        with self._cond:
            return len(self._pool)

    def submit(self, provider: str, item: T) -> None:
        """Queue a trace; wakes a waiting `next_batch` when a batch becomes due."""
        if not provider:
            raise ValueError("provider must be a non-empty identifier")
        with self._cond:
            self._pool.append(Submission(provider, item, self._clock()))
            self._cond.notify_all()

    def _due_reason(self, now: float) -> str | None:
        if len(self._pool) >= self.size:
            return "full"
        if self._pool and now - self._pool[0].submitted_at >= self.max_wait_s:
            return "max_wait"
        return None

    def time_until_due(self) -> float | None:
        """Seconds until the pending traces are due (0 if due now), None if the pool is empty."""
        with self._cond:
            if not self._pool:
                return None
            if len(self._pool) >= self.size:
                return 0.0
            return max(0.0, self._pool[0].submitted_at + self.max_wait_s - self._clock())

    def _release(self, reason: str) -> Batch[T]:
        # Oldest first, so nothing starves; the shuffle then hides arrival order.
        taken, self._pool = self._pool[: self.size], self._pool[self.size :]
        self._rng.shuffle(taken)
        self._seq += 1
        return Batch(
            seq=self._seq,
            items=[s.item for s in taken],
            providers=len({s.provider for s in taken}),
            released_at=self._clock(),
            reason=reason,
            _subs=taken,
        )

    def poll(self) -> Batch[T] | None:
        """The next batch if one is due now, else None (never blocks)."""
        with self._cond:
            reason = self._due_reason(self._clock())
            return self._release(reason) if reason else None

    def flush(self) -> list[Batch[T]]:
        """Release everything queued now (shutdown), in shuffled batches of at most `size`."""
        out: list[Batch[T]] = []
        with self._cond:
            while self._pool:
                out.append(self._release("flush"))
        return out

    def next_batch(self, timeout: float | None = None) -> Batch[T] | None:
        """Block until a batch is due (or `timeout` real seconds pass: then None)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while True:
                now = self._clock()
                reason = self._due_reason(now)
                if reason:
                    return self._release(reason)
                wait = (
                    None if not self._pool else max(0.0, self._pool[0].submitted_at + self.max_wait_s - now)
                )
                if deadline is not None:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        return None
                    wait = remaining if wait is None else min(wait, remaining)
                # Bounded waits: re-check at least every second so an injected clock is honoured too.
                self._cond.wait(timeout=1.0 if wait is None else min(max(wait, 0.001), 1.0))
