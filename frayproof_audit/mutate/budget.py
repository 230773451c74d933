"""A per-pair budget of mutation sites, so no single huge record can dominate a night.

Without a budget, or when a pair has no more candidate sites (over all operators, before
identical mutants merge) than the budget, nothing changes: every site is judged, and the report
is exactly what it would be without one. Otherwise:

- **Allocation.** Each operator with sites gets one site (in registry order, while the budget
  lasts), and the rest of the budget is shared in proportion to each operator's remaining sites
  (largest remainders, ties to the earlier operator). So every operator that applies is
  represented, and none gets more sites than it has.
- **Sampling.** Within an operator the judged sites are a uniform random sample without
  replacement, seeded by the SHA-256 of the output's canonical JSON and the operator's name.
  Rerunning on the same pair gives the same sample, hence identical tables; and since every
  site of an operator is equally likely to be judged, its survival rate over the sample is an
  unbiased estimate of its survival rate over all its sites. Sampled sites keep their order.
- **Record.** Each operator with sites left out gets one `skipped` entry after its judged
  entries, whose reason starts with `Budget:` and gives how many of its sites were not judged;
  `MutantOutcome.budget_skipped` carries that count for the corpus tally. One entry per
  operator (not one per site) keeps the mutants table small for the records the budget exists
  for.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from frayproof_audit.errors import InputError
from frayproof_audit.jsonio import canonical
from frayproof_audit.mutate.operators import Candidate

Groups = list[tuple[str, list[Candidate]]]


@dataclass(frozen=True, slots=True)
class Left:
    """Sites of one operator the budget left out."""

    operator: str
    not_judged: int
    sites: int
    budget: int

    @property
    def reason(self) -> str:
        return (f"Budget: {self.not_judged} of {self.sites} sites not judged "
                f"(at most {self.budget} mutants per pair).")


BUDGET_REASON = re.compile(r"Budget: (\d+) of \d+ sites not judged ")
"""The start of `Left.reason`: the `mutants` table's record of the sites a budget left out."""


def budget_not_judged(reason: str | None) -> int:
    """How many sites a budget entry of the `mutants` table says were not judged (0: none, or
    no budget entry)."""
    found = BUDGET_REASON.match(reason or "")
    return int(found.group(1)) if found else 0


def check_budget(max_mutants: int | None) -> int | None:
    """None (no budget) or a positive number of sites; anything else is an input error."""
    if max_mutants is None:
        return None
    if type(max_mutants) is not int or max_mutants < 1:
        raise InputError("The mutant budget (max mutants per pair) must be a positive integer")
    return max_mutants


def allocate(sizes: Sequence[int], budget: int) -> list[int]:
    """Sites to judge per operator: at most `sizes[i]`, summing to min(budget, sum(sizes))."""
    total = sum(sizes)
    if total <= budget:
        return list(sizes)
    shares = [0] * len(sizes)
    left = budget
    for index, size in enumerate(sizes):
        if size and left:
            shares[index] = 1
            left -= 1
    rest = [size - share for size, share in zip(sizes, shares, strict=True)]
    pool = sum(rest)
    if left and pool:  # left < pool here, so every share stays below its size
        floors = [left * extra // pool for extra in rest]
        remainders = [left * extra % pool for extra in rest]
        spare = left - sum(floors)
        order = sorted(range(len(sizes)), key=lambda i: (-remainders[i], i))
        for index in order[:spare]:
            floors[index] += 1
        shares = [share + extra for share, extra in zip(shares, floors, strict=True)]
    return shares


def apply_budget(groups: Groups, budget: int | None, wire: list[Any]) -> tuple[Groups, dict[str, Left]]:
    """The candidates to judge per operator, and what each operator left out (if anything)."""
    if budget is None:
        return groups, {}
    sizes = [len(candidates) for _, candidates in groups]
    shares = allocate(sizes, budget)
    if shares == sizes:
        return groups, {}
    seed = hashlib.sha256(canonical(wire)).hexdigest()
    chosen: Groups = []
    left: dict[str, Left] = {}
    for (name, candidates), share in zip(groups, shares, strict=True):
        if share == len(candidates):
            chosen.append((name, candidates))
            continue
        picked = sorted(random.Random(f"{seed}:{name}").sample(range(len(candidates)), share))
        chosen.append((name, [candidates[index] for index in picked]))
        left[name] = Left(name, len(candidates) - share, len(candidates), budget)
    return chosen, left
