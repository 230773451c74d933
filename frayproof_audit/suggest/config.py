"""`SuggestConfig`: every option of `suggest`, checked once, so a command only builds one.

The values are plain (strings, numbers, tuples), so a config can be printed, compared and
written into a report; the good-pair selector and the contract to compare with are parsed when
the run starts (`selector.parse_good`), where a bad one is an input error naming itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from frayproof_audit.errors import InputError
from frayproof_audit.formats import FORMAT_NAMES


class SuggestError(InputError):
    """An option of `suggest` (or the pairs it was given) cannot be used as asked."""


@dataclass(frozen=True, slots=True)
class SuggestConfig:
    """What `suggest` learns from and how hard it looks.

    * `good`: which pairs the user trusts (`all`, `compactor=NAME[,NAME…]`,
      `night=DAY[..DAY]`, `passes=CONTRACT`); see `selector.parse_good`.
    * `min_support`: the share of the good pairs learned from that a rule (and the whole
      contract) must pass to be proposed.
    * `holdout`: the share of good pairs set aside (by a hash of the pair id) to measure false
      alarms on pairs the contract never saw.
    * `compare_with`: a contract (path, YAML text is not accepted) to set side by side.
    * `input_format`: the format of records without a `format` field (and the contract's).
    * `min_sessions`: a pin, an enum value or a retention window needs evidence from at least
      this many distinct sessions, so nothing one session says becomes a rule.
    * `max_text_pins`: the most `contains` pins proposed.
    * `infer_tools`: infer tool schemas from the calls when no record carries `tools`.
    * `mutation_pairs` / `max_mutants` / `operators`: the mutation sample measuring each
      rule's bite (0 pairs: no mutation), the per-pair site budget and the operators.
    """

    good: str = "all"
    min_support: float = 0.99
    holdout: float = 0.2
    compare_with: Any = None
    input_format: str = "openai"
    min_sessions: int = 2
    max_text_pins: int = 12
    infer_tools: bool = True
    mutation_pairs: int = 25
    max_mutants: int | None = 200
    operators: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.good, str) or not self.good.strip():
            raise SuggestError("good: a selector is required (all, compactor=NAME, night=DAY[..DAY], "
                               "passes=CONTRACT)")
        _rate("min_support", self.min_support, low_open=True, high_open=False)
        _rate("holdout", self.holdout, low_open=False, high_open=True)
        if self.input_format not in FORMAT_NAMES:
            raise SuggestError(f"input_format: unknown format {self.input_format!r} "
                               f"(known: {', '.join(FORMAT_NAMES)})")
        _count("min_sessions", self.min_sessions, 1)
        _count("max_text_pins", self.max_text_pins, 0)
        _count("mutation_pairs", self.mutation_pairs, 0)
        if self.max_mutants is not None:
            _count("max_mutants", self.max_mutants, 1)
        if type(self.infer_tools) is not bool:
            raise SuggestError("infer_tools: must be true or false")
        if self.operators is not None and (
                not isinstance(self.operators, tuple)
                or not all(isinstance(name, str) for name in self.operators)):
            raise SuggestError("operators: must be a tuple of operator names")

    @property
    def allowed_false_alarms(self) -> float:
        """The held-out failure rate the training support promises at most (1 - min_support)."""
        return max(0.0, 1.0 - self.min_support)

    def to_dict(self) -> dict[str, Any]:
        compare = self.compare_with
        return {
            "good": self.good,
            "min_support": self.min_support,
            "holdout": self.holdout,
            "compare_with": compare if compare is None or isinstance(compare, str) else "<contract>",
            "input_format": self.input_format,
            "min_sessions": self.min_sessions,
            "max_text_pins": self.max_text_pins,
            "infer_tools": self.infer_tools,
            "mutation_pairs": self.mutation_pairs,
            "max_mutants": self.max_mutants,
            "operators": list(self.operators) if self.operators is not None else None,
        }


def _rate(name: str, value: Any, *, low_open: bool, high_open: bool) -> None:
    if type(value) not in (int, float) or not math.isfinite(value):
        raise SuggestError(f"{name}: must be a finite number, got {value!r}")
    low_bad = value <= 0 if low_open else value < 0
    high_bad = value >= 1 if high_open else value > 1
    if low_bad or high_bad:
        interval = f"{'(' if low_open else '['}0, 1{')' if high_open else ']'}"
        raise SuggestError(f"{name}: must be in {interval}, got {value!r}")


def _count(name: str, value: Any, low: int) -> None:
    if type(value) is not int or value < low:
        raise SuggestError(f"{name}: must be an integer of at least {low}, got {value!r}")
