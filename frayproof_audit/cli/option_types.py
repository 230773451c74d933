"""Click types for numeric options: integers bounded by what they count (`frayproof_audit.bounds`),
and floats that must be finite numbers.

Every integer option of every command uses one of these, so a value past what the option can
mean (`--shard-bytes 99999999999999999999999`) is a usage error naming the range (exit 2)
before any work, never a crash after it. Every float option is a `FiniteRange`: click's
`FloatRange` lets `nan` through (every comparison with it is false), and a gate given
`--fail-on-regression nan` could then never fire. Imports nothing but click.
"""

from __future__ import annotations

import math
from typing import Any

import click

from frayproof_audit.bounds import MAX_BYTES, MAX_COUNT


def count(low: int) -> click.IntRange:
    """An option that counts something (workers, results, mutants, nights, pairs, messages,
    tokens): `low` to `MAX_COUNT`."""
    return click.IntRange(min=low, max=MAX_COUNT)


BYTES = click.IntRange(min=1, max=MAX_BYTES)
"""An option that is a size in bytes: 1 to `MAX_BYTES` (1 TiB)."""


class FiniteRange(click.FloatRange):
    """A `FloatRange` that refuses `nan` and the infinities: a rate or a number of points."""

    name = "finite float range"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number


RATE = FiniteRange(0.0, 1.0)
"""A share of something (failure rates): 0 to 1."""
POINTS = FiniteRange(min=0)
"""Percentage points of a regression: 0 or more, finite."""


class ScopedRate(FiniteRange):
    """`R`, or `NAME=R`: a rate from 0 to 1 for the whole run, or for what NAME names (a check,
    `compactor:NAME`). Converts to `(NAME or None, R)`; the command checks NAME."""

    name = "rate or NAME=rate"

    def __init__(self) -> None:
        super().__init__(0.0, 1.0)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, tuple):
            return value
        subject, equals, number = str(value).rpartition("=")
        if equals and not subject.strip():
            self.fail(f"{value!r}: name a check or compactor:NAME before '='.", param, ctx)
        return (subject.strip() or None, super().convert(number, param, ctx))


SCOPED_RATE = ScopedRate()
"""`--max-failure-rate`: `0.25`, `retention=0.05`, `compactor:summarize=0.1`."""
