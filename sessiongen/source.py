"""Where a generator's choices come from: a seeded `random.Random`, or hypothesis.

Session builders are written once against `Source` and run two ways: `RandomSource` (seeded,
reproducible, fast: benchmarks, corpus fixtures, the batched differential tests) and
`sessiongen.strategies.DrawSource` (hypothesis draws, so a failing example shrinks). Every
`Source` choice shrinks towards its first option / lowest value / `False`, so put the simplest
alternative first.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Protocol, TypeVar

T = TypeVar("T")


class Source(Protocol):
    """The choices a session builder may make."""

    def chance(self, p: float) -> bool:
        """True with probability `p` (shrinks to False)."""

    def fraction(self) -> float:
        """A number in [0, 1) for cumulative thresholds (shrinks to 0)."""

    def integer(self, low: int, high: int) -> int:
        """An integer in [low, high], both included (shrinks to `low`)."""

    def pick(self, options: Sequence[T]) -> T:
        """One of `options`, uniformly (shrinks to the first)."""

    def weighted(self, options: Sequence[T], weights: Sequence[float]) -> T:
        """One of `options` with the given relative weights (shrinks to the first)."""

    def shuffled(self, items: Sequence[T]) -> list[T]:
        """The items in a random order (shrinks to the given order)."""

    def bits(self, n: int) -> int:
        """A random `n`-bit integer (ids, tokens)."""


class RandomSource:
    """`Source` over a `random.Random`; each method is exactly one call of the same name, so
    generators that used the `Random` directly keep their output for a seed."""

    def __init__(self, seed: int | random.Random) -> None:
        self.rng = seed if isinstance(seed, random.Random) else random.Random(seed)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def fraction(self) -> float:
        return self.rng.random()

    def integer(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)

    def pick(self, options: Sequence[T]) -> T:
        return self.rng.choice(options)

    def weighted(self, options: Sequence[T], weights: Sequence[float]) -> T:
        return self.rng.choices(options, weights=weights)[0]

    def shuffled(self, items: Sequence[T]) -> list[T]:
        out = list(items)
        self.rng.shuffle(out)
        return out

    def bits(self, n: int) -> int:
        return self.rng.getrandbits(n)
