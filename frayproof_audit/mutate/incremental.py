"""Judge a mutant by running only what its edit can change (the fast path's evaluator).

Every check is still run by its registered `find`; what decides *which* checks run on a mutant,
and on what part of it, is each check's own re-check (`Check.recheck`, `recheck.base`), which
reads only the edit's declared `Effects` and facts of the real output (the "original", whose
per-check findings are computed once per pair), never an operator's name. This module knows no
check: it asks each enabled check's re-check, once per pair and then per mutant, and reruns in
full on the assembled mutant every check that has none, whose re-check declines the pair or
the edit, and every check for an edit that declares nothing (`Effects()`). So a new operator
is covered by the lemmas its edits fall under, and a new check is correct before it is fast.

The lemmas rely on the baseline having passed (mutants are only built then) and most, for
after-indexed checks, on the original having no finding at all from that check (*clean*).
Each is stated with its check's re-check; a hypothesis test compares this evaluator with a
full recheck for every registered operator (`tests/test_mutation_equivalence.py`), and
`--verify` runs both.
"""

from __future__ import annotations

from collections.abc import Mapping

import frayproof_audit.checks as registry
from frayproof_audit.checks.base import Check, CheckSettings
from frayproof_audit.contract import Contract
from frayproof_audit.loaded import Loaded
from frayproof_audit.mutate.edits import Edit
from frayproof_audit.mutate.shape import Original, Shape
from frayproof_audit.prepared import BeforeFacts
from frayproof_audit.recheck.base import PairContext, Recheck
from frayproof_audit.report import Report, Violation


class IncrementalEvaluator:
    """Per pair: the original output's findings and each enabled check's re-check; per mutant,
    the report."""

    def __init__(self, after: Loaded, contract: Contract, facts: BeforeFacts,
                 original: Original | None = None,
                 found: Mapping[str, list[Violation]] | None = None) -> None:
        self.after = after
        self.contract = contract
        self.facts = facts
        enabled: list[tuple[Check, CheckSettings]] = [
            (check, settings)
            for check in registry.CHECKS
            if (settings := contract.settings(check.key)).enabled
        ]
        # The original's findings per check: the baseline's, when the caller has them.
        self.original: dict[str, list[Violation]] = {
            check.name: list(found[check.name]) if found is not None
            else check.find(after, contract, facts, settings)
            for check, settings in enabled
        }
        if original is None:
            original = Original(after.wire, after.views, after.format,
                                [after.known_identity(i) for i in range(len(after))])
        self.pair = PairContext(after, original, contract, facts)
        self.rechecks: dict[str, Recheck | None] = {
            check.name: None if check.recheck is None
            else check.recheck(self.pair, check, settings, self.original[check.name])
            for check, settings in enabled
        }
        """Each enabled check's re-check for this pair (None: rerun in full on every mutant)."""
        self.enabled = [(check, settings, self.rechecks[check.name]) for check, settings in enabled]

    def evaluate(self, edit: Edit, mutant: Shape) -> Report:
        """The mutant's report; the whole mutant is assembled only if some check needs it."""
        effects = edit.effects()
        declared = effects.declared
        found: list[Violation] = []
        for check, settings, recheck in self.enabled:
            judged = recheck.findings(effects, mutant) if declared and recheck is not None else None
            if judged is None:
                judged = check.find(mutant.loaded, self.contract, self.facts, settings)
            found += judged
        return Report(tuple(found))
