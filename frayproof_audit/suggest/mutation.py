"""Measuring bite with the real mutation runner: which rule catches each mutant first.

Each sampled good pair is mutated once, with the whole suggested contract (`mutate_pair`, the
corpus path). A caught mutant's report holds the findings of every rule that rejects it; the
first of those rules in contract order is the one that *newly* catches it over the rules
before it. Every rule is judged on its own by the engine, so this equals running the contract
cut after each rule, for the price of one run.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

from frayproof_audit.contract import Contract
from frayproof_audit.mutate import MutationReport, mutate_pair
from frayproof_audit.snapshot import load_list
from frayproof_audit.suggest.pairs import Pair
from frayproof_audit.suggest.result import MutationScore, OperatorScore
from frayproof_audit.suggest.settings import Setting

_SAMPLE_SALT = b"frayproof-audit suggest mutation\0"


def sample(pairs: Sequence[Pair], size: int) -> list[Pair]:
    """`size` pairs spread over the logs by a hash of their keys (the same pairs every run)."""
    ordered = sorted(pairs, key=lambda pair: (
        hashlib.sha256(_SAMPLE_SALT + pair.key.encode("utf-8", "surrogatepass")).digest(), pair.index))
    return ordered[:size]


def mutate(pairs: Sequence[Pair], contract_for: Callable[[Pair], Contract],
           operators: tuple[str, ...] | None, max_mutants: int | None) -> dict[int, MutationReport]:
    """Each pair's mutation report (its baseline failing means no mutants)."""
    reports = {}
    for pair in pairs:
        before = load_list(pair.before, pair.format)
        after = load_list(pair.after, pair.format)
        reports[pair.index] = mutate_pair(before, after, contract_for(pair), operators,
                                          max_mutants=max_mutants)
    return reports


def score(reports: Sequence[MutationReport]) -> MutationScore:
    """The runner's counts summed per operator, in the order operators first appear."""
    counts: dict[str, list[int]] = {}
    measured = 0
    for report in reports:
        if not report.baseline.passed:
            continue
        measured += 1
        for name, by_status in report.operators.items():
            total = counts.setdefault(name, [0, 0, 0])
            total[0] += by_status.get("caught", 0)
            total[1] += by_status.get("survived", 0)
            total[2] += by_status.get("skipped", 0)
    return MutationScore(measured, tuple(OperatorScore(name, *values) for name, values in counts.items()))


def first_catchers(reports: Sequence[MutationReport],
                   settings: Sequence[Setting]) -> tuple[dict[str, int], int]:
    """Per setting key, the mutants it catches before any earlier setting; and the applicable
    mutants in all. A caught mutant no setting owns (none in practice) is left uncounted."""
    credit = {setting.key: 0 for setting in settings}
    applicable = 0
    for report in reports:
        for mutant in report.mutants:
            if mutant.status == "survived":
                applicable += 1
            elif mutant.status == "caught":
                applicable += 1
                violations = mutant.report.violations if mutant.report is not None else ()
                for setting in settings:
                    if any(setting.owns(violation) for violation in violations):
                        credit[setting.key] += 1
                        break
    return credit, applicable
