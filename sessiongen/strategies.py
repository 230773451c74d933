"""Hypothesis strategies over the `sessiongen.small` builders: drawn, so failures shrink.

`DrawSource` implements `Source` with hypothesis draws. Every choice shrinks towards its first
option, its lowest value or `False`, so a failing session shrinks to fewer turns, fewer calls,
no decorations and the first text.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from typing import Any, TypeVar

from hypothesis import strategies as st

from sessiongen import small

T = TypeVar("T")
_STEPS = 10_000


class DrawSource:
    """`Source` over a hypothesis `draw` (use inside `@st.composite`)."""

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw

    def chance(self, p: float) -> bool:
        # Integers shrink to 0, which must mean False: true only in the top `p` of the range.
        return self.draw(st.integers(0, _STEPS - 1)) >= _STEPS - round(p * _STEPS)

    def fraction(self) -> float:
        return self.draw(st.integers(0, _STEPS - 1)) / _STEPS

    def integer(self, low: int, high: int) -> int:
        return self.draw(st.integers(low, high))

    def pick(self, options: Sequence[T]) -> T:
        return self.draw(st.sampled_from(options))

    def weighted(self, options: Sequence[T], weights: Sequence[float]) -> T:
        bounds = list(itertools.accumulate(weights))
        return options[bisect.bisect_right(bounds, self.fraction() * bounds[-1])]

    def shuffled(self, items: Sequence[T]) -> list[T]:
        return list(self.draw(st.permutations(items))) if len(items) > 1 else list(items)

    def bits(self, n: int) -> int:
        return self.draw(st.integers(0, 2**n - 1))


@st.composite
def well_formed_sessions(draw: st.DrawFn) -> list[dict[str, Any]]:
    """`small.well_formed`: valid transcripts, on which every check passes."""
    return small.well_formed(DrawSource(draw))


@st.composite
def mutation_cases(draw: st.DrawFn) -> small.MutationCase:
    """`small.mutation_case`: (noisy before, plausible after, contract YAML)."""
    return small.mutation_case(DrawSource(draw))


@st.composite
def clean_mutation_cases(draw: st.DrawFn) -> small.MutationCase:
    """`small.clean_mutation_case`: well-formed agent sessions under a strict contract."""
    return small.clean_mutation_case(DrawSource(draw))


@st.composite
def contract_documents(draw: st.DrawFn) -> dict[str, Any]:
    """`small.contract_document`: contract mappings as users write them."""
    return small.contract_document(DrawSource(draw))


@st.composite
def reordered(draw: st.DrawFn, value: Any) -> Any:
    """`value` with the keys of every object, at any depth, in a drawn order."""
    if isinstance(value, dict):
        items = draw(st.permutations(list(value.items())))
        return {key: draw(reordered(item)) for key, item in items}
    if isinstance(value, list):
        return [draw(reordered(item)) for item in value]
    return value
