"""unique_tool_ids: a call id is used by one call, and answered by one result.

Bad:  [assistant calls a] [tool a] [assistant calls a]  → id `a` reused (finding at 2)
Bad:  [assistant calls a] [tool a] [tool a]             → two results for `a` (finding at 2)
Good: ids unique among calls and among results.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from frayproof_audit.checks.base import Check, CheckSettings, Condition
from frayproof_audit.report import Violation

if TYPE_CHECKING:
    from frayproof_audit.contract import Contract
    from frayproof_audit.loaded import Loaded
    from frayproof_audit.prepared import BeforeFacts
    from frayproof_audit.recheck.base import PairContext
    from frayproof_audit.recheck.mutant import Effects, Mutant

NAME = "unique_tool_ids"
REUSED = Condition("UID-REUSED", "Tool call id is already used by an earlier call.")
MULTI = Condition("UID-MULTI", "Tool call id already has an earlier tool result.", repairable=True)


def find(
    after: Loaded, contract: Contract, before: BeforeFacts | None, settings: CheckSettings
) -> list[Violation]:
    severity = settings.severity
    seen_calls: set[str] = set()
    seen_results: set[str] = set()
    found: list[Violation] = []
    for index, view in enumerate(after.views):
        if view.role == "assistant":
            for call in view.calls:
                if not call.id:
                    continue
                if call.id in seen_calls:
                    found.append(REUSED.violation(NAME, severity, "after", index, tool_call_id=call.id))
                else:
                    seen_calls.add(call.id)
        elif view.role == "tool" and view.tool_call_id:
            if view.tool_call_id in seen_results:
                found.append(MULTI.violation(NAME, severity, "after", index,
                                             tool_call_id=view.tool_call_id))
            else:
                seen_results.add(view.tool_call_id)
    return found


class _Recheck:
    """Mutation's re-check (O = original output, M = mutant; "clean" = no finding on O).

    An edit that only changes call arguments keeps every view, so M's findings are O's, clean
    or not. O clean: deleting messages or calls, reordering messages and editing text or a
    content block never create a repeated id; only repeating a call can, and then, the check
    judging each id on its own, M's findings are those of the ids the edit touches
    (`recheck.local`).
    """

    __slots__ = ("check", "found", "pair", "settings")

    def __init__(self, pair: PairContext, check: Check, settings: CheckSettings,
                 found: list[Violation]) -> None:
        self.pair, self.check, self.settings, self.found = pair, check, settings, found

    def findings(self, effects: Effects, mutant: Mutant) -> list[Violation] | None:
        if effects.only_arguments:
            return self.found
        if self.found:
            return None
        if not effects.call_repeated:
            return self.found
        pair = self.pair
        return pair.carriers.id_local(self.check.find, effects, mutant, pair.contract, pair.facts,
                                      self.settings, with_tail=False)


CHECK = Check(
    name=NAME,
    key="unique_tool_ids",
    conditions=(REUSED, MULTI),
    find=find,
    summary="A call id is used by one call and answered by one result.",
    recheck=_Recheck,
)
