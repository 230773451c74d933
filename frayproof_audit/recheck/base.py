"""What a check's re-check is: the optional part of a check that judges a mutant from what its
edit changed, instead of from the whole mutant.

Mutation judges every mutant of a pair with every enabled check. A check whose `Check.recheck`
is set is asked once per pair for a `Recheck` (`RecheckFactory`: given the pair, its settings
and its findings on the original output; None when no lemma of it applies to this pair), and
then per mutant for the mutant's findings (None: its lemmas do not cover this edit). Whatever
a re-check declines, and every check without one, is rerun in full on the assembled mutant, as
is every check for an edit that declares no `Effects`: a new check is correct before it is fast.
Each lemma is stated with its check, and a hypothesis test holds every re-check equal to a
full recheck (`tests/test_mutation_equivalence.py`).
"""

from __future__ import annotations

from collections import Counter
from functools import cached_property
from typing import TYPE_CHECKING, Protocol

from frayproof_audit.loaded import Loaded
from frayproof_audit.recheck.local import IdCarriers
from frayproof_audit.recheck.mutant import Effects, Mutant, Output
from frayproof_audit.report import Violation

if TYPE_CHECKING:
    from frayproof_audit.checks.base import Check, CheckSettings
    from frayproof_audit.contract import Contract
    from frayproof_audit.prepared import BeforeFacts


class Recheck(Protocol):
    """One check's re-check of the mutants of one pair."""

    def findings(self, effects: Effects, mutant: Mutant) -> list[Violation] | None:
        """The check's findings on `mutant` (the original's edited as `effects` declares,
        never empty), or None when no lemma covers the edit: then it is rerun in full. The
        list is read, never changed, by the caller."""
        ...


class RecheckFactory(Protocol):
    """Builds a check's `Recheck` for one pair, or None when none of its lemmas applies (for
    example when the original output has a finding of the check: most lemmas need it clean).
    `found` is the check's findings on the original output; `check` is the registered record,
    whose `find` a re-check calls when it runs the check on part of a mutant."""

    def __call__(self, pair: PairContext, check: Check, settings: CheckSettings,
                 found: list[Violation]) -> Recheck | None: ...


class PairContext:
    """What every check's re-check of one pair may read: the original output as a snapshot
    (`after`) and as the layout every mutant shares (`output`), the contract, the before facts,
    and tables of the output built on first use and shared by the re-checks that read them."""

    def __init__(self, after: Loaded, output: Output, contract: Contract, facts: BeforeFacts) -> None:
        self.after = after
        self.output = output
        self.contract = contract
        self.facts = facts
        self._identities_kept = False

    @cached_property
    def roles(self) -> list[str]:
        """Each original message's role."""
        return [view.role for view in self.after.views]

    @cached_property
    def call_uses(self) -> Counter[str]:
        """How many assistant calls of the original use each call id."""
        return Counter(call.id for view in self.after.views if view.role == "assistant"
                       for call in view.calls if call.id)

    @cached_property
    def carriers(self) -> IdCarriers:
        """Which original messages carry each id (`recheck.local`)."""
        return IdCarriers(self.output)

    def keep_identities(self) -> None:
        """Compute every original message's identity now, into the layout every mutant reuses,
        for a check that compares mutants' messages by identity (else each mutant would compute
        the identities of the messages it kept)."""
        if self._identities_kept:
            return
        after, identities = self.after, self.output.identities
        for index in range(len(after)):
            identities[index] = after.identity(index)
        self._identities_kept = True
