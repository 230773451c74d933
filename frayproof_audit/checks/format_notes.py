"""format_notes: what the input format read leniently, so a user sees where their data was bent.

Formats tolerate known variations of exported data (an `otel-genai` tool response written with
`result` instead of `response`, an id with surrounding spaces) and record each one in
`Loaded.notes`. Verdicts are computed on the normalised reading; this check makes that reading
visible instead of silent. It is a warning by default (the pair still passes) and inert for
`openai`, which normalises nothing, so frayproof's verdicts are unchanged.

Notes of after come first, then those of before (`check` only). A note names its place in the
wire data itself (`messages[3].parts[0]: ...`), so findings carry no message index.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from frayproof_audit.checks.base import Check, CheckSettings, Condition
from frayproof_audit.loaded import Loaded
from frayproof_audit.report import Violation

if TYPE_CHECKING:
    from frayproof_audit.contract import Contract
    from frayproof_audit.prepared import BeforeFacts
    from frayproof_audit.recheck.base import PairContext
    from frayproof_audit.recheck.mutant import Effects, Mutant

NAME = "format_notes"
KEY = "format_notes"
NORMALIZED = Condition("FMT-NORMALIZED", "Input read leniently: {note}.")


def prepare(before: Loaded, contract: Contract) -> tuple[str, ...]:
    """The check's before facts: what the format normalised while reading before."""
    return before.notes


def find(
    after: Loaded, contract: Contract, before: BeforeFacts | None, settings: CheckSettings
) -> list[Violation]:
    severity = settings.severity
    found = [NORMALIZED.violation(NAME, severity, "after", None, note=note) for note in after.notes]
    if before is not None:
        found += [NORMALIZED.violation(NAME, severity, "before", None, note=note)
                  for note in cast("tuple[str, ...]", before.of(KEY))]
    return found


class _Noteless:
    """Mutation's re-check: a mutant carries no notes (it is built from neutral messages, not
    read from wire data), so the check reads only the before snapshot's notes there, exactly as
    on the fully built mutant; it is run once per pair on an empty snapshot instead of
    assembling each mutant, and that is every mutant's findings."""

    __slots__ = ("found",)

    def __init__(self, pair: PairContext, check: Check, settings: CheckSettings,
                 found: list[Violation]) -> None:
        self.found = check.find(Loaded([], [], pair.after.format), pair.contract, pair.facts,
                                settings)

    def findings(self, effects: Effects, mutant: Mutant) -> list[Violation] | None:
        return self.found


CHECK = Check(
    name=NAME,
    key=KEY,
    conditions=(NORMALIZED,),
    find=find,
    summary="Reports what the input format normalised while reading (a warning by default).",
    default_severity="warning",
    prepare=prepare,
    recheck=_Noteless,
)
